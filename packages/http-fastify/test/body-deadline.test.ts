/**
 * The body deadline's cost per request on the plugin (issue 18): a request adds no timer of its
 * own — the pipeline's one sweeper per handler checks the requests whose body is still to come,
 * and stops once none is left. The deadline itself (408, `Connection: close`) is tested over real
 * sockets in the HTTP kit (`slowBodiesSuite`, conformance.test.ts and plugin-conformance.test.ts).
 */
import { PlatformService, ProjectInboxService, createIdGenerator, createLocalEventBus, systemClock, type ServiceDeps } from '@inbox-kit/core';
import { createMemoryStore } from '@inbox-kit/core/memory';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { inboxKit } from '../src/index.js';

afterEach(() => {
  vi.restoreAllMocks();
});

/** The plugin with (`bodyTimeoutMs` 30 s) or without (0) a body deadline, and an API key. */
async function appWith(deadline: boolean): Promise<{ app: FastifyInstance; key: string }> {
  const deps: ServiceDeps = { store: createMemoryStore(), bus: createLocalEventBus(), clock: systemClock, ids: createIdGenerator() };
  const platform = new PlatformService(deps);
  await platform.createWorkspace({ id: 'ws_1', name: 'One' });
  await platform.createAccount({ id: 'acc_1', name: 'Ada', workspace_ids: ['ws_1'] });
  const { secret } = await platform.issueApiKey({ workspace_id: 'ws_1', account_id: 'acc_1' });
  const app = Fastify();
  await app.register(inboxKit, { services: { platform, projectInbox: new ProjectInboxService(deps) }, bodyTimeoutMs: deadline ? 30_000 : 0, openapi: false });
  await app.ready();
  return { app, key: secret };
}

/** Timers started while `n` body requests (read whole, then refused 400) and `n` requests without a body are answered one by one. */
async function timersOf(app: FastifyInstance, key: string, n: number): Promise<{ timeouts: number; intervals: number }> {
  const timeouts = vi.spyOn(globalThis, 'setTimeout');
  const intervals = vi.spyOn(globalThis, 'setInterval');
  const authorization = `Bearer ${key}`;
  for (let i = 0; i < n; i++) {
    expect((await app.inject({ method: 'POST', url: '/projects', headers: { authorization }, payload: { i } })).statusCode).toBe(400);
    expect((await app.inject({ method: 'GET', url: '/me', headers: { authorization } })).statusCode).toBe(200);
  }
  const counts = { timeouts: timeouts.mock.calls.length, intervals: intervals.mock.calls.length };
  vi.restoreAllMocks();
  return counts;
}

describe('body deadline', () => {
  it('adds no timer per request (one interval while bodies are pending)', async () => {
    const bare = await appWith(false);
    const timed = await appWith(true);
    const without = await timersOf(bare.app, bare.key, 50);
    const withDeadline = await timersOf(timed.app, timed.key, 50);
    expect(withDeadline.timeouts).toBe(without.timeouts);
    // Requests answered one by one: the interval stops when none is pending and starts again with
    // the next body, so at most one per body request — and never one per request at once.
    expect(withDeadline.intervals - without.intervals).toBeLessThanOrEqual(50);
    await bare.app.close();
    await timed.app.close();
  });

  it('stops its interval once no body is pending', async () => {
    const { app, key } = await appWith(true);
    const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    await app.inject({ method: 'POST', url: '/projects', headers: { authorization: `Bearer ${key}` }, payload: { a: 1 } });
    await app.close();
    expect(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length).toBeLessThanOrEqual(before);
  });
});
