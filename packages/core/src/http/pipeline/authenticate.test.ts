/**
 * `HttpHandler.authenticate` in-process: the authentication step alone, for an adapter that needs
 * the caller before `handle` (the Fastify preset's rate limiter keys on the API key); the promise
 * passed on as `request.caller` is used as it is (the credential checked and throttled once), a
 * rejection answered as `handle`'s own refusal. And `request.requestId`, the adapter's own id.
 */
import { describe, expect, it } from 'vitest';
import { createIdGenerator, systemClock } from '../../ports/clock.js';
import { createLocalEventBus } from '../../ports/event-bus.js';
import { PlatformService } from '../../platform/service.js';
import { ProjectInboxService } from '../../project-inbox/service.js';
import { createMemoryStore } from '../../testing/memory-store.js';
import { createHttpHandler } from './handler.js';
import type { PipelineRequest } from './types.js';

async function world() {
  const deps = { store: createMemoryStore(), bus: createLocalEventBus(), clock: systemClock, ids: createIdGenerator() };
  const platform = new PlatformService(deps);
  await platform.createWorkspace({ id: 'ws_1', name: 'One' });
  await platform.createAccount({ id: 'acc_1', name: 'Ada', workspace_ids: ['ws_1'] });
  const { secret } = await platform.issueApiKey({ workspace_id: 'ws_1', account_id: 'acc_1' });
  // One bad credential per address and window: a second check of the same request would be throttled.
  const handler = createHttpHandler({
    services: { platform, projectInbox: new ProjectInboxService(deps) }, loadShedding: false, credentialThrottle: { maxFailures: 1, windowMs: 60_000 },
  });
  return { handler, secret };
}

const request = (method: string, url: string, headers: Record<string, string> = {}): PipelineRequest => ({ method, url, headers, body: null, remoteAddress: '10.0.0.1' });

describe('HttpHandler.authenticate', () => {
  it('resolves the caller of a route; none on a public route, an unknown path or a malformed one', async () => {
    const { handler, secret } = await world();
    const caller = await handler.authenticate(request('GET', '/me', { authorization: `Bearer ${secret}` }));
    expect(caller).toMatchObject({ forwarded: false, principal: { workspace_id: 'ws_1', account_id: 'acc_1' } });
    for (const url of ['/health', '/nope', '/projects/%zz']) expect(await handler.authenticate(request('GET', url))).toEqual({ principal: null, forwarded: false });
    handler.close();
  });

  it('handle uses the caller it is given, without checking the credential again', async () => {
    const { handler, secret } = await world();
    const first = request('GET', '/me', { authorization: `Bearer ${secret}` });
    const answer = await handler.handle({ ...first, caller: handler.authenticate(first) });
    expect(answer.status).toBe(200);
    expect(JSON.parse(String(answer.body))).toMatchObject({ account: { id: 'acc_1' } });
    // A bad key: checked once by `authenticate` (one failure, the throttle's whole budget), answered 401 by `handle`, not 429.
    const bad = request('GET', '/me', { authorization: 'Bearer ik_not_a_key' });
    const refused = await handler.handle({ ...bad, caller: handler.authenticate(bad) });
    expect(refused.status).toBe(401);
    expect(JSON.parse(String(refused.body))).toMatchObject({ error: { code: 'invalid_credentials' } });
    // The next bad check from that address is past the budget.
    expect((await handler.handle(bad)).status).toBe(429);
    handler.close();
  });

  it('answers with the request id the adapter chose', async () => {
    const { handler } = await world();
    const answer = await handler.handle({ ...request('GET', '/health'), requestId: 'req_ABCDEFGHIJKLMNOPQRSTU' });
    expect(answer.headers['x-request-id']).toBe('req_ABCDEFGHIJKLMNOPQRSTU');
    handler.close();
  });
});

describe('HttpHandler.document', () => {
  it('is the text GET /openapi.json serves, under a mount too; undefined without a document', async () => {
    const { handler } = await world();
    const served = await handler.handle({ ...request('GET', '/openapi.json'), mount: '/inbox' });
    expect(handler.document('/inbox')).toBe(served.body);
    expect(Object.keys(JSON.parse(handler.document()!).paths)).toContain('/me');
    handler.close();
    const none = createHttpHandler({ services: {} as never, loadShedding: false, openapi: false });
    expect(none.document()).toBeUndefined();
    none.close();
  });
});
