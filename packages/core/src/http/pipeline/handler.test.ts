/**
 * The request pipeline (`createHttpHandler`) in-process, as an adapter drives it: the answers
 * every adapter gets from it without a socket — request ids, 404/405, the CORS preflight, the
 * body limit and deadline with `Connection: close`, the response policy's 500 (reported, never
 * shown), route parameters, HEAD, and the OpenAPI document under a mount. The same rules over
 * real sockets on every adapter: the HTTP kit (`runHttpConformance`).
 */
import { describe, expect, it } from 'vitest';
import { createIdGenerator, systemClock } from '../../ports/clock.js';
import { createLocalEventBus } from '../../ports/event-bus.js';
import { PlatformService } from '../../platform/service.js';
import { ProjectInboxService } from '../../project-inbox/service.js';
import { createMemoryStore } from '../../testing/memory-store.js';
import { createHttpHandler } from './handler.js';
import type { HttpHandlerOptions, PipelineAnswer, PipelineRequest } from './types.js';
import { createRouter } from './router.js';

async function world(options: Partial<HttpHandlerOptions> = {}) {
  const deps = { store: createMemoryStore(), bus: createLocalEventBus(), clock: systemClock, ids: createIdGenerator() };
  const platform = new PlatformService(deps);
  await platform.createWorkspace({ id: 'ws_1', name: 'One' });
  await platform.createAccount({ id: 'acc_1', name: 'Ada', workspace_ids: ['ws_1'] });
  const { secret } = await platform.issueApiKey({ workspace_id: 'ws_1', account_id: 'acc_1' });
  const handler = createHttpHandler({ services: { platform, projectInbox: new ProjectInboxService(deps) }, loadShedding: false, ...options });
  return { handler, secret, platform };
}

const request = (method: string, url: string, headers: Record<string, string> = {}, body?: AsyncIterable<Uint8Array>): PipelineRequest => ({ method, url, headers, body: body ?? null });
const json = (answer: PipelineAnswer) => JSON.parse(String(answer.body));
async function* chunks(...parts: string[]): AsyncIterable<Uint8Array> {
  for (const part of parts) yield new TextEncoder().encode(part);
}
async function* never(): AsyncIterable<Uint8Array> {
  yield new TextEncoder().encode('{"na');
  await new Promise(() => {});
}

describe('createHttpHandler', () => {
  it('answers with request ids, the caller’s safe x-request-id kept; 401 in the envelope with x-should-retry: false', async () => {
    const { handler } = await world();
    const health = await handler.handle(request('GET', '/health'));
    expect(health.status).toBe(200);
    expect(health.headers['x-request-id']).toMatch(/^req_[A-Za-z0-9_-]{21}$/);
    expect(health.headers['request-id']).toBe(health.headers['x-request-id']);
    const me = await handler.handle(request('GET', '/me', { 'x-request-id': 'mine-1' }));
    expect(me.status).toBe(401);
    expect(me.headers).toMatchObject({ 'x-request-id': 'mine-1', 'x-should-retry': 'false', 'content-type': 'application/json; charset=utf-8' });
    expect(json(me)).toMatchObject({ type: 'error', error: { code: 'authentication_required', request_id: 'mine-1' } });
    handler.close();
  });

  it('405 with Allow on a known path under another method, 404 elsewhere (with the mount in the message), 400 for a malformed path', async () => {
    const { handler } = await world();
    const wrong = await handler.handle(request('DELETE', '/me'));
    expect(wrong.status).toBe(405);
    expect(wrong.headers['allow']).toBe('GET, HEAD');
    const missing = await handler.handle({ ...request('GET', '/nope?x=1'), mount: '/inbox' });
    expect(missing.status).toBe(404);
    expect(json(missing).error.message).toBe('Route GET /inbox/nope not found');
    expect((await handler.handle(request('GET', '/projects/%zz'))).status).toBe(400);
    handler.close();
  });

  it('answers an allowed origin’s preflight 204 before authentication; other answers to it carry the CORS headers, others none', async () => {
    const { handler } = await world({ cors: { origins: ['http://app.example'] } });
    const preflight = await handler.handle(request('OPTIONS', '/projects', { origin: 'http://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' }));
    expect(preflight.status).toBe(204);
    expect(preflight.headers).toMatchObject({ 'access-control-allow-origin': 'http://app.example', 'access-control-allow-headers': 'authorization,content-type', 'access-control-max-age': '600' });
    const refused = await handler.handle(request('GET', '/me', { origin: 'http://app.example' }));
    expect(refused.status).toBe(401);
    expect(refused.headers).toMatchObject({ 'access-control-allow-origin': 'http://app.example', vary: 'Origin' });
    expect((await handler.handle(request('GET', '/me', { origin: 'http://evil.example' }))).headers['access-control-allow-origin']).toBeUndefined();
    handler.close();
  });

  it('refuses a body over the limit 413 and one past the deadline 408 request_timeout, each with Connection: close; a read body keeps the connection', async () => {
    const { handler, secret } = await world({ bodyLimit: 64, bodyTimeoutMs: 50 });
    const auth = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' };
    const big = await handler.handle(request('POST', '/projects', { ...auth, 'content-length': '65' }, chunks('x'.repeat(65))));
    expect(big.status).toBe(413);
    expect(big.headers['connection']).toBe('close');
    const counted = await handler.handle(request('POST', '/projects', { ...auth, 'transfer-encoding': 'chunked' }, chunks('x'.repeat(40), 'x'.repeat(40))));
    expect(counted.status).toBe(413);
    // The answer names the limit, announced or counted.
    for (const refused of [big, counted]) expect(json(refused).error).toMatchObject({ code: 'payload_too_large', message: 'Request body is too large; the limit is 64 bytes' });
    const slow = await handler.handle(request('POST', '/projects', { ...auth, 'content-length': '20' }, never()));
    expect(slow.status).toBe(408);
    expect(slow.headers).toMatchObject({ connection: 'close', 'x-should-retry': 'true' });
    expect(json(slow).error.code).toBe('request_timeout');
    const made = await handler.handle(request('POST', '/projects', { ...auth, 'content-length': '14' }, chunks('{"name":', '"P"}')));
    expect(made.status).toBe(201);
    expect(made.headers['connection']).toBeUndefined();
    handler.close();
  });

  it('a response its schema would change is a 500 showing nothing, reported with the request id; HEAD has no body', async () => {
    const reported: Array<[unknown, string]> = [];
    const { handler, secret, platform } = await world({ responseValidation: true, reportError: (error, id) => reported.push([error, id]) });
    // The route calls the identity aggregate (`platform.identity`).
    const whoami = platform.identity.whoami.bind(platform.identity);
    platform.identity.whoami = async (...args: Parameters<typeof whoami>) => ({ ...(await whoami(...args)), secret_field: 'leak' }) as Awaited<ReturnType<typeof whoami>>;
    const answer = await handler.handle(request('GET', '/me', { authorization: `Bearer ${secret}`, 'x-request-id': 'r1' }));
    expect(answer.status).toBe(500);
    expect(String(answer.body)).not.toContain('leak');
    expect(reported.map(([error, id]) => [(error as Error).name, id])).toEqual([['ResponseSchemaError', 'r1']]);
    const head = await handler.handle(request('HEAD', '/health'));
    expect(head.status).toBe(200);
    expect(head.body).toBeUndefined();
    handler.close();
  });

  it('serves the OpenAPI document with its paths under the mount', async () => {
    const { handler } = await world();
    const doc = json(await handler.handle({ ...request('GET', '/openapi.json'), mount: '/inbox' }));
    expect(Object.keys(doc.paths)).toContain('/inbox/me');
    expect(Object.keys(doc.paths)).toContain('/inbox/projects/{id}');
    handler.close();
  });
});

describe('createRouter', () => {
  it('finds static and parameter routes (HEAD finds GET), decodes parameters, folds no trailing slash', () => {
    const router = createRouter([{ method: 'GET' as const, path: '/me' }, { method: 'GET' as const, path: '/projects/:id/inbox/:item_id' }]);
    expect(router.match('HEAD', '/me')?.params).toEqual({});
    expect(router.match('GET', '/projects/p%201/inbox/i1')?.params).toEqual({ id: 'p 1', item_id: 'i1' });
    expect(router.match('GET', '/me/')).toBeUndefined();
    expect(router.match('GET', '/projects//inbox/i1')).toBeUndefined();
    expect(router.match('POST', '/me')).toBeUndefined();
  });

  it('tries parameter routes in table order; a route that does not fit leaves no parameter behind; a static path wins', () => {
    const router = createRouter([
      { method: 'DELETE' as const, path: '/s/:session/inbox/:id' }, { method: 'DELETE' as const, path: '/s/:other/queue/:message' },
      { method: 'DELETE' as const, path: '/s/:session/queue/all' }, { method: 'DELETE' as const, path: '/s/x/queue/all' },
    ]);
    expect(router.match('DELETE', '/s/a/queue/m1')).toEqual({ route: { method: 'DELETE', path: '/s/:other/queue/:message' }, params: { other: 'a', message: 'm1' } });
    expect(router.match('DELETE', '/s/a/inbox/i%2F1')?.params).toEqual({ session: 'a', id: 'i/1' });
    expect(router.match('DELETE', '/s/x/queue/all')?.route.path).toBe('/s/x/queue/all');
    expect(router.match('DELETE', '/s/a/other/m1')).toBeUndefined();
    expect(router.match('GET', '/s/a/queue/m1')).toBeUndefined();
    expect(router.match('DELETE', '/s/a/queue')).toBeUndefined();
  });
});
