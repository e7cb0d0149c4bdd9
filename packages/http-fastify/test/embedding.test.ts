/**
 * Embedding the routes plugin in a host's own Fastify app (issue 14): the plugin is encapsulated,
 * so the host's routes before and after it, its parsers, validator, 404 and error handler stay
 * exactly as they were, and `prefix` puts every inbox-kit route (and the OpenAPI document) under
 * it. Real sockets, a real SQLite file and (when configured) PostgreSQL.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PlatformService, ProjectInboxService, createIdGenerator, createLocalEventBus, systemClock, type ServiceDeps } from '@inbox-kit/core';
import { createMemoryStore } from '@inbox-kit/core/memory';
import { openStore, type OpenedStore } from '@inbox-kit/storage-kysely';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { swaggerUi } from '../src/docs.js';
import { inboxKit } from '../src/index.js';
import { createPgDatabase, engines } from './harness.js';

interface Host {
  url: string;
  key: string;
  close(): Promise<void>;
}

/** The host app: its own hooks-free routes, text parser, ajv validation, 404 and error handler. */
async function startHost(engine: (typeof engines)[number], prefix: string | undefined): Promise<Host> {
  const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-embed-'));
  const pgDb = engine === 'postgres' ? await createPgDatabase() : undefined;
  const opened: OpenedStore = await openStore(pgDb ? { databaseUrl: pgDb.url } : { sqliteFile: join(dir, 'embed.sqlite') });
  const deps: ServiceDeps = { store: opened.store, bus: createLocalEventBus(), clock: systemClock, ids: createIdGenerator() };
  const platform = new PlatformService(deps);
  await platform.createWorkspace({ id: 'ws_host', name: 'Host' });
  await platform.createAccount({ id: 'acc_host', name: 'Host owner', workspace_ids: ['ws_host'] });
  const { secret } = await platform.issueApiKey({ workspace_id: 'ws_host', account_id: 'acc_host' });

  const app: FastifyInstance = Fastify();
  app.setNotFoundHandler((request, reply) => reply.code(404).send({ host: 'not-found', url: request.url }));
  app.setErrorHandler((error: Error & { statusCode?: number }, _request, reply) => reply.code(error.statusCode ?? 500).send({ host: 'error', message: error.message }));
  app.addContentTypeParser('text/plain', { parseAs: 'string' }, (_request, body, done) => done(null, `host:${body as string}`));
  app.get('/before', async () => ({ host: 'before' }));
  app.post('/echo', { schema: { body: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } } } }, async (request) => ({ host: 'echo', body: request.body }));
  app.post('/text', async (request) => ({ host: 'text', body: request.body }));
  await app.register(inboxKit, { services: { platform, projectInbox: new ProjectInboxService(deps) }, ...(prefix !== undefined ? { prefix } : {}) });
  app.get('/after', async () => ({ host: 'after' }));
  app.get('/boom', async () => {
    throw new Error('host failure');
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  return {
    url: `http://127.0.0.1:${address.port}`,
    key: secret,
    close: async () => {
      await app.close();
      await opened.close();
      await pgDb?.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const call = async (host: Host, path: string, init: RequestInit = {}) => {
  const res = await fetch(`${host.url}${path}`, init);
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text === '' ? undefined : JSON.parse(text) };
};

describe.each(engines)('embedding on %s', (engine) => {
  describe.each([undefined, '/inbox'])('with prefix %s', (prefix) => {
    const p = prefix ?? '';
    let host: Host;
    beforeAll(async () => {
      host = await startHost(engine, prefix);
    });
    afterAll(async () => host?.close());

    it('leaves the host routes registered before and after the plugin public and unchanged', async () => {
      for (const path of ['/before', '/after']) {
        const res = await call(host, path);
        expect(res.status, path).toBe(200);
        expect(res.body).toEqual({ host: path.slice(1) });
        expect(res.headers.get('x-request-id'), path).toBeNull();
      }
    });

    it("keeps the host's parsers and validator", async () => {
      const ok = await call(host, '/echo', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ n: 2, extra: 1 }) });
      expect(ok).toMatchObject({ status: 200, body: { host: 'echo', body: { n: 2, extra: 1 } } });
      const bad = await call(host, '/echo', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ n: 'x' }) });
      expect(bad.status).toBe(400);
      expect(bad.body.host).toBe('error');
      const text = await call(host, '/text', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hi' });
      expect(text).toMatchObject({ status: 200, body: { host: 'text', body: 'host:hi' } });
      // Invalid UTF-8 reaches the host's JSON parser as before (inbox-kit refuses it only on its own routes).
      const latin = await call(host, '/echo', { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.from('{"n":1,"s":"\xe9"}', 'latin1') });
      expect(latin.status).toBe(200);
    });

    it("keeps the host's 404 and error handler", async () => {
      const missing = await call(host, '/nowhere');
      expect(missing).toMatchObject({ status: 404, body: { host: 'not-found', url: '/nowhere' } });
      const boom = await call(host, '/boom');
      expect(boom).toMatchObject({ status: 500, body: { host: 'error', message: 'host failure' } });
    });

    it('serves inbox-kit under the prefix, authenticated, in the envelope', async () => {
      const health = await call(host, `${p}/health`);
      expect(health).toMatchObject({ status: 200, body: { status: 'ok' } });
      expect(health.headers.get('x-request-id')).toMatch(/^req_/);
      const me = await call(host, `${p}/me`, { headers: { authorization: `Bearer ${host.key}` } });
      expect(me).toMatchObject({ status: 200, body: { workspace_id: 'ws_host', account: { id: 'acc_host' } } });
      const anonymous = await call(host, `${p}/me`);
      expect(anonymous).toMatchObject({ status: 401, body: { type: 'error', error: { type: 'authentication_error', code: 'authentication_required' } } });
      const bad = await call(host, `${p}/projects`, { method: 'POST', headers: { authorization: `Bearer ${host.key}`, 'content-type': 'application/json' }, body: '{"name":' });
      expect(bad).toMatchObject({ status: 400, body: { type: 'error', error: { code: 'validation_error' } } });
      const doc = await call(host, `${p}/openapi.json`);
      expect(doc.status).toBe(200);
      expect(Object.keys(doc.body.paths)).toContain(`${p}/me`);
      expect(Object.keys(doc.body.paths).some((path: string) => /before|after|echo|boom/.test(path))).toBe(false);
    });

    if (prefix !== undefined) it('answers unknown paths under the prefix in the envelope, and nothing outside it', async () => {
      const under = await call(host, `${p}/nowhere`, { headers: { authorization: `Bearer ${host.key}` } });
      expect(under).toMatchObject({ status: 404, body: { type: 'error', error: { code: 'not_found' } } });
      const outside = await call(host, '/me', { headers: { authorization: `Bearer ${host.key}` } });
      expect(outside).toMatchObject({ status: 404, body: { host: 'not-found' } });
    });
  });
});

describe.each([
  [undefined, undefined],
  ['/inbox', undefined],
  [undefined, '/api-docs'],
  ['/inbox', '/api-docs'],
])('the API reference embedded with `openapi.docs: swaggerUi` (prefix %s, docsPrefix %s)', (prefix, docsPrefix) => {
  const p = prefix ?? '';
  const docs = `${p}${docsPrefix ?? '/docs'}`;
  let app: FastifyInstance;
  const hostErrors: unknown[] = [];
  beforeAll(async () => {
    const deps: ServiceDeps = { store: createMemoryStore(), bus: createLocalEventBus(), clock: systemClock, ids: createIdGenerator() };
    app = Fastify();
    app.setErrorHandler((error, _request, reply) => {
      hostErrors.push(error);
      return reply.code(500).send({ host: 'error' });
    });
    await app.register(inboxKit, {
      services: { platform: new PlatformService(deps), projectInbox: new ProjectInboxService(deps) },
      ...(prefix !== undefined ? { prefix } : {}),
      openapi: docsPrefix !== undefined ? { docs: swaggerUi, docsPrefix } : { docs: swaggerUi },
    });
    await app.ready();
  });
  afterAll(async () => app?.close());

  it('serves every docs page with a request id, never reaching the host error handler', async () => {
    for (const url of [docs, `${docs}/`, `${docs}/static/index.html`, `${docs}/json`, `${p}/openapi.json`]) {
      const res = await app.inject({ url, headers: { 'x-request-id': 'docs-check' } });
      expect(res.statusCode, url).toBeLessThan(400);
      expect(res.headers['x-request-id'], url).toBe('docs-check');
      expect(res.headers['request-id'], url).toBe('docs-check');
      const fresh = await app.inject({ url });
      expect(fresh.headers['x-request-id'], url).toMatch(/^req_/);
    }
    const json = JSON.parse((await app.inject({ url: `${docs}/json` })).body) as { paths: Record<string, unknown> };
    expect(Object.keys(json.paths)).toContain(`${p}/me`);
    expect(hostErrors).toEqual([]);
  });

  it('answers a missing docs asset with a 404, not a 500', async () => {
    const res = await app.inject({ url: `${docs}/static/nope.js` });
    expect(res.statusCode).toBe(404);
    expect(res.headers['x-request-id']).toMatch(/^req_/);
    expect(hostErrors).toEqual([]);
  });
});

describe('the API reference is opt-in on the plugin', () => {
  const services = () => {
    const deps: ServiceDeps = { store: createMemoryStore(), bus: createLocalEventBus(), clock: systemClock, ids: createIdGenerator() };
    return { platform: new PlatformService(deps), projectInbox: new ProjectInboxService(deps) };
  };

  it('without `openapi.docs` the plugin serves the document but no /docs, though @fastify/swagger-ui is installed', async () => {
    const app = Fastify();
    await app.register(inboxKit, { services: services(), prefix: '/inbox' });
    expect((await app.inject({ url: '/inbox/openapi.json' })).statusCode).toBe(200);
    expect((await app.inject({ url: '/inbox/docs/' })).statusCode).toBe(404);
    expect((await app.inject({ url: '/inbox/docs/json' })).statusCode).toBe(404);
    await app.close();
  });

  it('a `docsPrefix` without `openapi.docs` fails the registration, naming the entry to import', async () => {
    const app = Fastify();
    await expect(app.register(inboxKit, { services: services(), openapi: { docsPrefix: '/api-docs' } }).ready())
      .rejects.toThrow("openapi.docsPrefix needs openapi.docs: import { swaggerUi } from '@inbox-kit/http-fastify/docs'");
    await app.close();
  });
});
