/**
 * Embedding with the host's own authentication and documentation (platform.md "Embedding"): the
 * plugin's `authenticate` option (a principal → served, `null` → 401 in the envelope, a throw →
 * 500 without a stack, an `InboxKitError` → its own status, a non-principal → 500), the checks
 * that still apply (project roles), which host hooks run on inbox-kit's routes (a root
 * `onRequest` does, before `authenticate`; a sibling scope's does not), and a host's own
 * `@fastify/swagger` document (with `@fastify/swagger-ui` at `/documentation`) without inbox-kit's
 * paths or zod internals — or with them as clean JSON Schema when `inHostDocument` is set.
 * Real sockets and a real SQLite file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import { InboxKitError, PlatformService, ProjectInboxService, createIdGenerator, createLocalEventBus, systemClock, type Principal, type ServiceDeps } from '@inbox-kit/core';
import { openStore, type OpenedStore } from '@inbox-kit/storage-kysely';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inboxKit } from '../src/index.js';

declare module 'fastify' {
  interface FastifyRequest {
    hostUser?: string;
  }
}

const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-host-auth-'));
let opened: OpenedStore;
let deps: ServiceDeps;
const principalOf = (account_id: string): Principal => ({ workspace_id: 'ws_host', account_id, key_id: `host_${account_id}`, key_kind: 'standard' });

/** The host's own users (header `x-host-user`, read by the host's root hook) and what its authenticate answers for each. */
function hostAuthenticate(request: FastifyRequest): Principal | null {
  switch (request.hostUser) {
    case undefined: return null;
    case 'crash': throw new Error('host auth backend down at /srv/secret/auth.js:12');
    case 'banned': throw new InboxKitError('permission_denied', 'Banned by the host');
    case 'broken': return { account_id: 'acc_owner' } as Principal;
    default: return principalOf(request.hostUser);
  }
}

interface Started {
  app: FastifyInstance;
  url: string;
  rootHookRuns: string[];
  siblingHookRuns: string[];
}

async function start(options: { inHostDocument?: boolean } = {}): Promise<Started> {
  const app = Fastify();
  const rootHookRuns: string[] = [];
  const siblingHookRuns: string[] = [];
  app.decorateRequest('hostUser', undefined);
  // The host's own auth plugin at the root: its onRequest hook runs before inbox-kit's.
  app.addHook('onRequest', async (request) => {
    rootHookRuns.push(request.url);
    const user = request.headers['x-host-user'];
    if (typeof user === 'string') request.hostUser = user;
  });
  await app.register(fastifySwagger, { openapi: { info: { title: 'Host API', version: '1.0.0' } } });
  await app.register(fastifySwaggerUi, { routePrefix: '/documentation' });
  await app.register(async (scope) => {
    scope.addHook('onRequest', async (request) => {
      siblingHookRuns.push(request.url);
    });
    scope.get('/hello', { schema: { tags: ['host'], response: { 200: { type: 'object', properties: { hello: { type: 'string' } } } } } }, async () => ({ hello: 'host' }));
  });
  await app.register(inboxKit, {
    prefix: '/inbox',
    services: { platform: new PlatformService(deps), projectInbox: new ProjectInboxService(deps) },
    authenticate: hostAuthenticate,
    ...(options.inHostDocument !== undefined ? { inHostDocument: options.inHostDocument } : {}),
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  return { app, url: `http://127.0.0.1:${address.port}`, rootHookRuns, siblingHookRuns };
}

const as = (user: string | undefined, init: RequestInit = {}): RequestInit => ({
  ...init, headers: { ...(user !== undefined ? { 'x-host-user': user } : {}), ...(init.body ? { 'content-type': 'application/json' } : {}), ...(init.headers as Record<string, string>) },
});

let host: Started;
let secret: string;
beforeAll(async () => {
  opened = await openStore({ sqliteFile: join(dir, 'host.sqlite') });
  deps = { store: opened.store, bus: createLocalEventBus(), clock: systemClock, ids: createIdGenerator() };
  const platform = new PlatformService(deps);
  await platform.createWorkspace({ id: 'ws_host', name: 'Host' });
  await platform.createAccount({ id: 'acc_owner', name: 'Owner', workspace_ids: ['ws_host'] });
  await platform.createAccount({ id: 'acc_stranger', name: 'Stranger', workspace_ids: ['ws_host'] });
  secret = (await platform.issueApiKey({ workspace_id: 'ws_host', account_id: 'acc_owner' })).secret;
  host = await start();
});
afterAll(async () => {
  await host?.app.close();
  await opened?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('authenticate: the host authenticates every inbox-kit request', () => {
  it('serves the principal it answers; the project roles still apply', async () => {
    const me = await fetch(`${host.url}/inbox/me`, as('acc_owner'));
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ account: { id: 'acc_owner' }, workspace_id: 'ws_host' });
    const created = await fetch(`${host.url}/inbox/projects`, as('acc_owner', { method: 'POST', body: JSON.stringify({ name: 'Host project' }) }));
    expect(created.status).toBe(201);
    const { project } = await created.json() as { project: { id: string } };
    expect((await fetch(`${host.url}/inbox/projects/${project.id}`, as('acc_owner'))).status).toBe(200);
    // Not a member of the project: refused as for an API key of that account.
    const stranger = await fetch(`${host.url}/inbox/projects/${project.id}`, as('acc_stranger'));
    expect(stranger.status).toBe(404);
    expect(await stranger.json()).toMatchObject({ type: 'error', error: { code: 'project_not_found' } });
  });

  it('null → 401 authentication_required in the envelope; an inbox-kit API key is not looked at', async () => {
    for (const init of [as(undefined), as(undefined, { headers: { authorization: `Bearer ${secret}` } })]) {
      const res = await fetch(`${host.url}/inbox/me`, init);
      expect(res.status).toBe(401);
      expect(res.headers.get('x-request-id')).toMatch(/^req_/);
      expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error', code: 'authentication_required' } });
    }
  });

  it('a throw → 500 internal_error without a stack or its message; an InboxKitError → its own status; a non-principal → 500', async () => {
    const crash = await fetch(`${host.url}/inbox/me`, as('crash'));
    expect(crash.status).toBe(500);
    const text = await crash.text();
    expect(JSON.parse(text)).toMatchObject({ type: 'error', error: { type: 'api_error', code: 'internal_error' } });
    expect(text).not.toMatch(/secret|auth\.js|at |stack/);
    const banned = await fetch(`${host.url}/inbox/me`, as('banned'));
    expect(banned.status).toBe(403);
    expect(await banned.json()).toMatchObject({ error: { code: 'permission_denied', message: 'Banned by the host' } });
    const broken = await fetch(`${host.url}/inbox/me`, as('broken'));
    expect(broken.status).toBe(500);
    expect(await broken.json()).toMatchObject({ error: { code: 'internal_error' } });
  });

  it('public routes are not authenticated', async () => {
    expect((await fetch(`${host.url}/inbox/health`)).status).toBe(200);
  });
});

describe("the host's hooks on inbox-kit's routes (as the README's embedding section says)", () => {
  it("a root onRequest hook runs on inbox-kit's routes (before authenticate); a sibling scope's does not", async () => {
    host.rootHookRuns.length = 0;
    host.siblingHookRuns.length = 0;
    expect((await fetch(`${host.url}/inbox/me`, as('acc_owner'))).status).toBe(200);
    expect((await fetch(`${host.url}/hello`)).status).toBe(200);
    expect(host.rootHookRuns).toEqual(['/inbox/me', '/hello']);
    expect(host.siblingHookRuns).toEqual(['/hello']);
  });
});

describe("a host's own @fastify/swagger document", () => {
  const fetchJson = async (url: string) => {
    const res = await fetch(url);
    expect(res.status, url).toBe(200);
    return (await res.json()) as { paths: Record<string, Record<string, unknown>> };
  };

  it('does not list inbox-kit paths nor zod internals; inbox-kit serves its own document', async () => {
    const doc = await fetchJson(`${host.url}/documentation/json`);
    expect(Object.keys(doc.paths)).toEqual(['/hello']);
    expect(JSON.stringify(doc)).not.toMatch(/~standard|"_zod"|"def":|inbox/);
    const own = await fetchJson(`${host.url}/inbox/openapi.json`);
    expect(Object.keys(own.paths)).toContain('/inbox/me');
    expect(Object.keys(own.paths)).not.toContain('/hello');
  });

  it('with inHostDocument: true, lists them with clean JSON Schemas', async () => {
    const other = await start({ inHostDocument: true });
    try {
      const doc = await fetchJson(`${other.url}/documentation/json`);
      const paths = Object.keys(doc.paths);
      expect(paths).toContain('/hello');
      expect(paths).toContain('/inbox/me');
      expect(paths).toContain('/inbox/projects/{id}/inbox');
      const text = JSON.stringify(doc);
      expect(text).not.toMatch(/~standard|"_zod"|"def":/);
      const create = doc.paths['/inbox/projects/{id}/inbox']!['post'] as { requestBody: { content: Record<string, { schema: { type: string; properties: Record<string, unknown> } }> } };
      expect(create.requestBody.content['application/json']!.schema).toMatchObject({ type: 'object', properties: { title: expect.objectContaining({ description: expect.stringContaining('200 code points') }), type: expect.any(Object) } });
    } finally {
      await other.app.close();
    }
  });
});
