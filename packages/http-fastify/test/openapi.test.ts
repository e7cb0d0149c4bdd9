/**
 * The OpenAPI document: served publicly at /openapi.json, a valid OpenAPI 3.1 description, with
 * every registered route, the error envelope on every status of an operation's declared codes, and
 * response schemas that the real responses satisfy. Also the offline API reference at /docs.
 */
import { compileErrors, validate } from '@readme/openapi-parser';
import { createMemoryStore } from '@inbox-kit/core/testing';
import {
  LiveInboxHost, PlatformService, ProjectInboxService, SessionRuntimeService, createIdGenerator, createLocalEventBus, systemClock,
} from '@inbox-kit/core';
import type { ErrorCode } from '@inbox-kit/core';
import { declaredErrorCodes, HTTP_ROUTES, STATUS_BY_CODE } from '@inbox-kit/core/http';
import { Ajv2020 } from 'ajv/dist/2020.js';
import Fastify, { type RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inboxKit } from '../src/index.js';
import { openApiServer, type OpenApiServer } from './openapi-server.js';

type Json = Record<string, any>;
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/** `/projects/:id/inbox/:item_id` → `/projects/{id}/inbox/{item_id}`. */
const toTemplate = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

let server: OpenApiServer;
let doc: Json;

beforeAll(async () => {
  server = await openApiServer();
  const res = await server.app.inject({ url: '/openapi.json' });
  expect(res.statusCode).toBe(200);
  doc = res.json();
});
afterAll(async () => {
  await server?.close();
});

function operations(): Array<{ method: string; path: string; op: Json }> {
  const out: Array<{ method: string; path: string; op: Json }> = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const method of METHODS) if (item[method]) out.push({ method, path, op: item[method] });
  }
  return out;
}

/** Follows a local `$ref` (`#/components/…`). */
function deref<T = Json>(value: Json): T {
  let v = value;
  while (v && typeof v.$ref === 'string') {
    v = v.$ref.replace(/^#\//, '').split('/').reduce((o: Json, k: string) => o?.[k], doc);
  }
  return v as T;
}

/** `value` with every `$ref` of the document replaced by what it names (the document has no cycles). */
function inlineRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(inlineRefs);
  if (value === null || typeof value !== 'object') return value;
  const ref = (value as Json).$ref;
  if (typeof ref === 'string') return inlineRefs(deref(value as Json));
  return Object.fromEntries(Object.entries(value as Json).map(([k, v]) => [k, inlineRefs(v)]));
}

describe('GET /openapi.json', () => {
  it('is public JSON and carries x-request-id', async () => {
    const res = await server.app.inject({ url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['x-request-id']).toMatch(/^req_/);
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.title).toBe('inbox-kit');
    const result = await validate(structuredClone(doc) as never);
    expect(result.valid ? '' : compileErrors(result)).toBe('');
    expect(result.warnings).toEqual([]);
  });

  it('declares bearer and x-api-key security, and public routes need none', () => {
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.components.securitySchemes.apiKeyHeader).toMatchObject({ type: 'apiKey', in: 'header', name: 'x-api-key' });
    expect(doc.security).toEqual([{ bearerAuth: [] }, { apiKeyHeader: [] }]);
    expect(doc.paths['/health'].get.security).toEqual([]);
    expect(doc.paths['/openapi.json'].get.security).toEqual([]);
    expect(doc.paths['/me'].get.security).toBeUndefined();
  });

  it('has every registered route (the same document as createServer\'s)', async () => {
    // The same plugin on a bare Fastify instance, recording every route as it is added.
    const store = createMemoryStore();
    const deps = { store, bus: createLocalEventBus(), clock: systemClock, ids: createIdGenerator() };
    const runtime = new SessionRuntimeService({ ...deps, host: new LiveInboxHost(), model: { step: async () => ({ content: [], continue: false }) } });
    const app = Fastify();
    const routes: RouteOptions[] = [];
    app.addHook('onRoute', (route) => {
      routes.push(route);
    });
    await app.register(inboxKit, { services: { platform: new PlatformService(deps), projectInbox: new ProjectInboxService(deps), runtime } });
    await app.ready();
    try {
      const expected = routes
        .flatMap((r) => (Array.isArray(r.method) ? r.method : [r.method]).map((m) => ({ method: m.toLowerCase(), url: r.url })))
        .filter((r) => r.method !== 'head' && !r.url.startsWith('/docs'));
      expect(expected.length).toBeGreaterThan(20);
      const missing = expected.filter((r) => !doc.paths[toTemplate(r.url)]?.[r.method]).map((r) => `${r.method.toUpperCase()} ${r.url}`);
      expect(missing).toEqual([]);
      const documented = operations().length;
      expect(documented).toBe(expected.length);
      expect((await app.inject({ url: '/openapi.json' })).json()).toEqual(doc);
    } finally {
      await app.close();
      await runtime.close();
    }
  });

  it('gives every operation the error envelope on exactly the statuses of its declared codes', () => {
    const envelope = doc.components.schemas.ErrorEnvelope;
    expect(envelope.properties.type).toMatchObject({ const: 'error' });
    expect(envelope.properties.error.required).toEqual(['type', 'code', 'message', 'details', 'request_id']);
    const routes = new Map(HTTP_ROUTES.map((r) => [r.operationId, r]));
    for (const { method, path, op } of operations()) {
      const where = `${method.toUpperCase()} ${path}`;
      const errors = Object.entries(op.responses as Json).filter(([status]) => /^[45]/.test(status));
      expect(errors.map(([s]) => s), where).toEqual(expect.arrayContaining(['400', '500', '503']));
      const isPublic = Array.isArray(op.security) && op.security.length === 0;
      if (!isPublic) expect(Object.keys(op.responses), where).toEqual(expect.arrayContaining(['401', '403']));
      if (op.requestBody) expect(Object.keys(op.responses), where).toEqual(expect.arrayContaining(['413', '415']));
      const listed: string[] = [];
      for (const [status, response] of errors) {
        const [base, narrowed] = response.content['application/json'].schema.allOf;
        expect(base, `${where} ${status}`).toEqual({ $ref: '#/components/schemas/ErrorEnvelope' });
        const codes = narrowed.properties.error.properties.code.enum as ErrorCode[];
        for (const code of codes) expect(`${code} ${STATUS_BY_CODE[code]}`, where).toBe(`${code} ${status}`);
        listed.push(...codes);
      }
      const route = routes.get(op.operationId);
      if (route !== undefined) expect(listed.sort(), where).toEqual(declaredErrorCodes(route).sort());
    }
  });

  it('documents the success response of every operation (SSE as text/event-stream)', () => {
    const api = operations().filter(({ path }) => path !== '/health' && path !== '/ready' && path !== '/openapi.json');
    expect(api.length).toBe(42);
    for (const { method, path, op } of api) {
      const where = `${method.toUpperCase()} ${path}`;
      const successes = Object.entries(op.responses as Json).filter(([s]) => /^2/.test(s));
      expect(successes, where).toHaveLength(1);
      const [status, response] = successes[0]!;
      if (status === '204') {
        expect(response.content, where).toBeUndefined();
        continue;
      }
      const [media, { schema }] = Object.entries(response.content as Record<string, Json>)[0]!;
      expect(media, where).toBe(path.endsWith('/stream') ? 'text/event-stream' : 'application/json');
      expect(schema.type, where).toBe('object');
      expect(response.description, where).not.toBe('Default Response');
    }
  });

  it('describes request bodies from the zod schemas (optional text accepts a string or null)', () => {
    const body = doc.paths['/projects/{id}/inbox'].post.requestBody.content['application/json'].schema;
    expect(body.additionalProperties).toBe(false);
    expect(body.required).toEqual(['type']);
    // `type: [null, string]`, or (the string with its rules) `anyOf` the two.
    const title = body.properties.title;
    expect([...(title.type ?? title.anyOf.map((s: Json) => s.type))].sort()).toEqual(['null', 'string']);
    const decide = doc.paths['/projects/{id}/inbox/{item_id}'].patch.requestBody.content['application/json'].schema;
    expect(decide.properties.decision.enum).toEqual(['accept', 'reject', 'archive']);
    const query = (doc.paths['/projects/{id}/inbox'].get.parameters as Json[]).filter((p) => p.in === 'query').map((p) => p.name);
    expect(query).toEqual(['status', 'type', 'sender_account_id', 'source_session_id', 'limit', 'cursor']);
  });
});

describe('responses match the document', () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true });

  /** Sends a request and checks the answer against the documented response for its status. */
  async function call(method: string, url: string, opts: { body?: unknown; key?: string | null; expect: number }): Promise<Json> {
    const headers: Record<string, string> = {};
    if (opts.key !== null) headers['authorization'] = `Bearer ${opts.key ?? server.ownerKey}`;
    const res = await server.app.inject({ method: method as 'GET', url, headers, ...(opts.body !== undefined ? { payload: opts.body as Json } : {}) });
    expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(opts.expect);
    expect(res.headers['x-request-id']).toBeTruthy();
    const pathname = url.split('?')[0]!;
    const match = operations().find(({ method: m, path }) => m === method.toLowerCase() && new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(pathname)
      && !(path.endsWith('/{message_id}') && pathname.endsWith('/order')));
    expect(match, `${method} ${pathname} is documented`).toBeDefined();
    const responses = match!.op.responses as Json;
    const documented = responses[String(res.statusCode)] ?? responses[`${String(res.statusCode)[0]}XX`];
    expect(documented, `${method} ${url} documents ${res.statusCode}`).toBeDefined();
    const content = deref(documented).content;
    if (res.statusCode === 204) {
      expect(content).toBeUndefined();
      expect(res.body).toBe('');
      return {};
    }
    const body = res.json();
    const schema = content?.['application/json']?.schema;
    if (schema) {
      const check = ajv.compile(inlineRefs(schema) as Json);
      expect(check(body), `${method} ${url}: ${JSON.stringify(check.errors)} for ${res.body}`).toBe(true);
    }
    return body;
  }

  it('for every platform and Project Inbox route, and for errors', async () => {
    const me = await call('GET', '/me', { expect: 200 });
    expect(me).toMatchObject({ account: { id: 'acc_owner' }, workspace_id: 'ws_test', key_kind: 'standard' });
    const { project } = await call('POST', '/projects', { body: { name: 'Docs' }, expect: 201 });
    await call('GET', '/projects', { expect: 200 });
    expect(await call('GET', `/projects/${project.id}`, { expect: 200 })).toMatchObject({ role: 'owner' });
    await call('POST', `/projects/${project.id}/members`, { body: { account_id: 'acc_deriver', role: 'deriver' }, expect: 201 });
    expect((await call('GET', `/projects/${project.id}/members`, { expect: 200 })).items).toHaveLength(1);
    const { session } = await call('POST', '/sessions', { body: { project_id: project.id, title: 'S' }, expect: 201 });
    await call('GET', `/sessions?project_id=${project.id}`, { expect: 200 });
    await call('GET', `/sessions/${session.id}`, { expect: 200 });
    const turn = await call('POST', `/sessions/${session.id}/floors`, { body: { content: { text: 'hello', n: [1, 2] } }, expect: 201 });
    expect(turn.page.content).toEqual({ text: 'hello', n: [1, 2] });
    await call('GET', `/sessions/${session.id}/floors`, { expect: 200 });
    await call('POST', `/sessions/${session.id}/floors/${turn.floor.id}/pages`, { body: { content: 'v2' }, expect: 201 });
    expect((await call('GET', `/sessions/${session.id}/floors/${turn.floor.id}/pages`, { expect: 200 })).items).toHaveLength(2);

    const payload = { nested: { list: [1, 'two', null, true], empty: {} } };
    const { item } = await call('POST', `/projects/${project.id}/inbox`, {
      body: { type: 'derived_output.review', title: '  Review  ', payload, source_session_id: session.id }, expect: 201,
    });
    expect(item).toMatchObject({ title: 'Review', payload, status: 'pending', source_session_id: session.id, decided_at: null });
    const page = await call('GET', `/projects/${project.id}/inbox?status=pending&limit=10`, { expect: 200 });
    expect(page).toMatchObject({ items: [{ id: item.id }], next_cursor: null });
    await call('GET', `/projects/${project.id}/inbox/${item.id}`, { expect: 200 });
    const decided = await call('PATCH', `/projects/${project.id}/inbox/${item.id}`, { body: { decision: 'accept', note: 'ok' }, expect: 200 });
    expect(decided.item).toMatchObject({ status: 'accepted', decided_by_account_id: 'acc_owner' });

    const events = await call('GET', `/projects/${project.id}/events?after=0&limit=100`, { expect: 200 });
    expect(events.items.length).toBeGreaterThan(3);
    expect(events).toMatchObject({ has_more: false });
    const logs = await call('GET', `/projects/${project.id}/operation-logs?limit=2`, { expect: 200 });
    expect(logs.items).toHaveLength(2);
    expect(typeof logs.next_cursor).toBe('string');
    await call('DELETE', `/projects/${project.id}/members/acc_deriver`, { expect: 204 });
    expect((await call('POST', `/projects/${project.id}/archive`, { expect: 200 })).project.status).toBe('archived');

    // Errors: the envelope, as documented.
    await call('GET', '/me', { key: null, expect: 401 });
    await call('GET', '/me', { key: 'ik_wrong', expect: 401 });
    await call('GET', '/projects/proj_missing', { expect: 404 });
    await call('POST', '/projects', { body: { name: '' }, expect: 400 });
    await call('POST', `/projects/${project.id}/inbox`, { body: { type: 'x' }, expect: 409 });
    // The runtime's read routes.
    await call('GET', `/v1/sessions/${session.id}/events`, { expect: 200 });
    await call('GET', `/v1/awaken/sessions/${session.id}/live-inbox`, { expect: 200 });
  });
});

describe('the API reference at /docs', () => {
  it('is public and loads only from this server', async () => {
    const page = await server.app.inject({ url: '/docs/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const init = await server.app.inject({ url: '/docs/static/swagger-initializer.js' });
    expect(init.statusCode).toBe(200);
    for (const text of [page.body, init.body]) {
      // Every script, stylesheet and image is relative (served here); nothing from a CDN.
      expect(text).not.toMatch(/(src|href)=["']?(https?:)?\/\//i);
      expect(text).not.toMatch(/validator\.swagger\.io/);
    }
    expect(init.body).toContain("resolveUrl('./json')");
    const bundle = await server.app.inject({ url: '/docs/static/swagger-ui-bundle.js' });
    expect(bundle.statusCode).toBe(200);
    expect(bundle.body.length).toBeGreaterThan(100_000);
    const json = await server.app.inject({ url: '/docs/json' });
    expect(json.statusCode).toBe(200);
    expect(json.json().openapi).toBe('3.1.0');
  });

  it('is left out of the document', () => {
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/docs'))).toEqual([]);
  });

  it('and the document can be turned off', async () => {
    const deps = { store: createMemoryStore(), bus: createLocalEventBus(), clock: systemClock, ids: createIdGenerator() };
    const app = Fastify();
    await app.register(inboxKit, { services: { platform: new PlatformService(deps), projectInbox: new ProjectInboxService(deps) }, openapi: false });
    expect((await app.inject({ url: '/openapi.json' })).statusCode).toBe(404);
    expect((await app.inject({ url: '/docs/' })).statusCode).toBe(404);
    await app.close();
  });
});
