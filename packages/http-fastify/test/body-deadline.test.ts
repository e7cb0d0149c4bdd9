/**
 * The body deadline's cost per request (issue 18): a request adds no timer and no listener of its
 * own — one interval per server checks the requests whose body is still to come, and stops once
 * none is left. The deadline itself (408, `Connection: close`) is tested over real sockets in
 * slow-bodies.test.ts.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { registerBodyDeadline } from '../src/body-deadline.js';

afterEach(() => {
  vi.restoreAllMocks();
});

/** An app with a POST echo and a GET route; `listeners` gets the request's `end` + `close` listener count in each handler. */
async function appWith(deadline: boolean): Promise<{ app: FastifyInstance; listeners: number[] }> {
  const app = Fastify();
  if (deadline) registerBodyDeadline(app, 30_000);
  const listeners: number[] = [];
  app.post('/echo', async (request) => {
    listeners.push(request.raw.listenerCount('end') + request.raw.listenerCount('close'));
    return request.body;
  });
  app.get('/ping', async (request) => {
    listeners.push(request.raw.listenerCount('end') + request.raw.listenerCount('close'));
    return { ok: true };
  });
  await app.ready();
  return { app, listeners };
}

/** Timers started while `n` body requests and `n` requests without a body are answered one by one. */
async function timersOf(app: FastifyInstance, n: number): Promise<{ timeouts: number; intervals: number }> {
  const timeouts = vi.spyOn(globalThis, 'setTimeout');
  const intervals = vi.spyOn(globalThis, 'setInterval');
  for (let i = 0; i < n; i++) {
    expect((await app.inject({ method: 'POST', url: '/echo', payload: { i } })).json()).toEqual({ i });
    expect((await app.inject({ method: 'GET', url: '/ping' })).statusCode).toBe(200);
  }
  const counts = { timeouts: timeouts.mock.calls.length, intervals: intervals.mock.calls.length };
  vi.restoreAllMocks();
  return counts;
}

describe('body deadline', () => {
  it('adds no timer and no listener per request (one interval while bodies are pending)', async () => {
    const bare = await appWith(false);
    const timed = await appWith(true);
    const without = await timersOf(bare.app, 50);
    const withDeadline = await timersOf(timed.app, 50);
    expect(withDeadline.timeouts).toBe(without.timeouts);
    // Requests answered one by one: the interval stops when none is pending and starts again with
    // the next body, so at most one per body request — and never one per request at once.
    expect(withDeadline.intervals - without.intervals).toBeLessThanOrEqual(50);
    expect(timed.listeners).toEqual(bare.listeners);
    await bare.app.close();
    await timed.app.close();
  });

  it('stops its interval once no body is pending', async () => {
    const { app } = await appWith(true);
    const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    await app.inject({ method: 'POST', url: '/echo', payload: { a: 1 } });
    // The answer forgot the request; the interval ends at its next check (or when the app closes).
    await app.close();
    expect(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length).toBeLessThanOrEqual(before);
  });
});
