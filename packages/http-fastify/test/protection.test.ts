/**
 * Overload, rate limits and graceful shutdown of `createServer` over real HTTP: a process under
 * pressure (failing health check, blocked event loop) answers 503 `overloaded` with `Retry-After`
 * in the envelope and recovers; per-key rate limits answer 429 `rate_limited` with `Retry-After`
 * for that key only; `app.close()` lets an in-flight request finish (and closes its connection),
 * refuses new connections, and answers requests that still arrive on an open connection with 503
 * in the envelope.
 * Deadlines only, no timing assertions.
 */
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  PlatformService, ProjectInboxService, createIdGenerator, createLocalEventBus, systemClock, type ServiceDeps,
} from '@inbox-kit/core';
import { createMemoryStore } from '@inbox-kit/core/testing';
import { createServer } from '../src/entry-server.js';
import { engines, expectError, startHarness, type Harness } from './harness.js';

/** Polls `check` until it holds; throws after `timeoutMs` (a deadline, not a measurement). */
async function waitUntil(check: () => boolean | Promise<boolean>, label: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${label}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** True when a new TCP connection to `url` is refused. */
function connectionRefused(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = http.get(`${url}/health`, { agent: false }, (res) => {
      res.resume();
      resolve(false);
    });
    probe.on('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

/** Keeps the event loop busy for `ms` (the test shares the process with the server). */
function block(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) { /* busy */ }
}

describe.each(engines)('load shedding with @fastify/under-pressure (%s)', (engine) => {
  const health = { ok: true };
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(engine, { protection: { underPressure: { healthCheck: async () => health.ok, healthCheckInterval: 20, retryAfter: 7 } } });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('a failing health check → 503 overloaded with Retry-After in the envelope, before authentication, nothing written; then recovers', async () => {
    expect((await h.request('GET', '/projects/proj_main/inbox', { as: 'acc_owner' })).status).toBe(200);
    const before = await h.inboxRows();
    health.ok = false;
    try {
      await waitUntil(async () => (await h.request('GET', '/health')).status === 503, 'the server to shed load');
      const shed = [
        await h.request('POST', '/projects/proj_main/inbox', { as: 'acc_deriver', body: { type: 'shed' } }),
        await h.request('GET', '/projects/proj_main/inbox', { as: 'acc_owner', headers: { 'x-request-id': 'my-request-1' } }),
        await h.request('GET', '/projects/proj_main/inbox'), // no key: still 503, not 401
        await h.request('GET', '/health'),
      ];
      for (const res of shed) {
        const env = expectError(res, 503, 'overloaded');
        expect(env.error.type).toBe('overloaded_error');
        expect(res.headers.get('retry-after')).toBe('7');
      }
      expect(shed[1]!.headers.get('x-request-id')).toBe('my-request-1');
      expect(await h.inboxRows()).toEqual(before);
    } finally {
      health.ok = true;
    }
    await waitUntil(async () => (await h.request('GET', '/health')).status === 200, 'the server to serve again');
    expect((await h.request('POST', '/projects/proj_main/inbox', { as: 'acc_deriver', body: { type: 'after' } })).status).toBe(201);
  });
});

describe('load shedding on event-loop delay', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(engines[0]!, { protection: { underPressure: { maxEventLoopDelay: 50, sampleInterval: 20 } } });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('a blocked event loop → 503 overloaded with the default Retry-After (10); served again once the loop is free', async () => {
    await waitUntil(async () => (await h.request('GET', '/health')).status === 200, 'a calm start', 20_000);
    let shed: Awaited<ReturnType<Harness['request']>> | undefined;
    await waitUntil(async () => {
      // The server's event loop too, in two samples (one long block alone is not an overload).
      block(300);
      await new Promise((r) => setTimeout(r, 1)); // a turn of the loop: its sample sees the first
      block(300);
      await new Promise((r) => setTimeout(r, 30));
      const res = await h.request('GET', '/projects/proj_main/inbox', { as: 'acc_owner' });
      if (res.status === 503) shed = res;
      return shed !== undefined;
    }, 'a 503 under a blocked event loop', 20_000);
    expectError(shed!, 503, 'overloaded');
    expect(shed!.headers.get('retry-after')).toBe('10');
    await waitUntil(async () => (await h.request('GET', '/projects/proj_main/inbox', { as: 'acc_owner' })).status === 200, 'recovery', 20_000);
  });
});

describe.each(engines)('per-key rate limits with @fastify/rate-limit (%s)', (engine) => {
  let h: Harness;
  let plain: Harness;
  beforeAll(async () => {
    [h, plain] = await Promise.all([
      startHarness(engine, { protection: { rateLimit: { max: 3, timeWindowMs: 60_000 } } }),
      startHarness(engine),
    ]);
  });
  afterAll(async () => {
    await Promise.all([h?.close(), plain?.close()]);
  });

  it('past max requests a key gets 429 rate_limited with Retry-After; other keys, and the service key acting as the same account, are unaffected', async () => {
    const list = (as: string, accountId?: string) => h.request('GET', '/projects/proj_main/inbox', { as, ...(accountId ? { accountId } : {}) });
    for (let i = 0; i < 3; i++) {
      const ok = await list('acc_deriver');
      expect(ok.status).toBe(200);
      expect(ok.headers.get('x-ratelimit-limit')).toBe('3');
      expect(ok.headers.get('x-ratelimit-remaining')).toBe(String(2 - i));
    }
    const before = await h.inboxRows();
    for (const res of [await list('acc_deriver'), await h.request('POST', '/projects/proj_main/inbox', { as: 'acc_deriver', body: { type: 'limited' } })]) {
      const env = expectError(res, 429, 'rate_limited');
      expect(env.error.type).toBe('rate_limit_error');
      expect(env.error.message).toMatch(/3 requests per 60000 ms/);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(Number(res.headers.get('retry-after'))).toBeLessThanOrEqual(60);
      expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
    }
    expect(await h.inboxRows()).toEqual(before);
    // Other keys have their own windows.
    expect((await list('acc_owner')).status).toBe(200);
    expect((await list('service', 'acc_deriver')).status).toBe(200);
    expect((await h.request('POST', '/projects/proj_main/inbox', { as: 'acc_deriver2', body: { type: 'other key' } })).status).toBe(201);
  });

  it('public routes are limited per client IP; requests refused with 401 are not counted', async () => {
    for (let i = 0; i < 5; i++) expectError(await h.request('GET', '/projects/proj_main/inbox', { as: 'ik_not_a_key' }), 401, 'invalid_credentials');
    for (let i = 0; i < 3; i++) expect((await h.request('GET', '/health')).status).toBe(200);
    const limited = expectError(await h.request('GET', '/health'), 429, 'rate_limited');
    expect(limited.error.request_id).toMatch(/^req_/);
  });

  it('is off by default', async () => {
    const answers = await Promise.all(Array.from({ length: 40 }, () => plain.request('GET', '/projects/proj_main/inbox', { as: 'acc_owner' })));
    expect(answers.map((a) => a.status)).toEqual(Array(40).fill(200));
    expect(answers[0]!.headers.get('x-ratelimit-limit')).toBeNull();
  });
});

describe('a rate-limit window ends', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(engines[0]!, { protection: { rateLimit: { max: 2, timeWindowMs: 300 } } });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('after the window the key is served again', async () => {
    const list = () => h.request('GET', '/projects/proj_main/inbox', { as: 'acc_owner' });
    await waitUntil(async () => (await list()).status === 429, 'the limit to be reached');
    await waitUntil(async () => (await list()).status === 200, 'the next window');
  });

  it('rejects a nonsensical configuration', async () => {
    await expect(startHarness(engines[0]!, { protection: { rateLimit: { max: 0, timeWindowMs: 1000 } } })).rejects.toThrow(/rateLimit.max/);
  });
});

/** A raw HTTP/1.1 connection: write bytes, read everything the server sends. */
async function rawConnection(url: string): Promise<{ socket: net.Socket; received: () => string; ended: Promise<void> }> {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    text += chunk;
  });
  const ended = new Promise<void>((resolve) => {
    socket.on('close', () => resolve());
    socket.on('error', () => resolve());
  });
  return { socket, received: () => text, ended };
}

describe.each(engines)('graceful shutdown (%s)', (engine) => {
  it('app.close() refuses new connections, lets an in-flight request finish with 201 (Connection: close, so close() need not wait for the keep-alive timeout), then returns', async () => {
    const h = await startHarness(engine);
    try {
      const body = JSON.stringify({ type: 'in-flight', title: 'sent while closing' });
      const half = Math.floor(body.length / 2);
      const conn = await rawConnection(h.url);
      // Head + half the body; `Expect: 100-continue` tells us the server has the request.
      conn.socket.write(
        `POST /projects/proj_main/inbox HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${h.keys.acc_deriver}\r\n`
        + `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\n\r\n`,
      );
      await waitUntil(() => conn.received().startsWith('HTTP/1.1 100'), 'the server to take the request');
      conn.socket.write(body.slice(0, half));

      let closed = false;
      const closing = h.app.close().then(() => {
        closed = true;
      });
      await waitUntil(() => connectionRefused(h.url), 'new connections to be refused');
      expect(closed).toBe(false); // still draining the in-flight request

      conn.socket.write(body.slice(half)); // the client would keep its socket open (keep-alive)
      // Fastify keeps idle sockets 72 s; the server closes this one itself once it has answered.
      await waitUntil(() => closed, 'close() to return once the in-flight request is answered', 10_000);
      await closing;
      await conn.ended;
      const text = conn.received();
      const final = text.slice(text.lastIndexOf('HTTP/1.1 '));
      expect(final).toMatch(/^HTTP\/1\.1 201 /);
      expect(final.toLowerCase()).toContain('connection: close\r\n');
      const created = JSON.parse(final.slice(final.indexOf('\r\n\r\n') + 4));
      expect(created.item).toMatchObject({ type: 'in-flight', title: 'sent while closing', status: 'pending' });
      expect(await h.count('project_inbox_items', `id = '${created.item.id}'`)).toBe(1);
      expect(await h.count('operation_logs', `target_id = '${created.item.id}'`)).toBe(1);
      expect(h.published.filter((e) => e.payload.inbox_item_id === created.item.id)).toHaveLength(1);
    } finally {
      await h.close();
    }
  });
});

describe('a request that arrives on an open connection while the server closes', () => {
  it('gets 503 overloaded in the envelope with Retry-After: 1 and Connection: close (not Fastify\'s bare 503)', async () => {
    const deps: ServiceDeps = { store: createMemoryStore(), bus: createLocalEventBus(), clock: systemClock, ids: createIdGenerator() };
    const app = await createServer({ services: { platform: new PlatformService(deps), projectInbox: new ProjectInboxService(deps) } });
    // A slow shutdown step (flushing, deregistering…) holds close() while idle connections are still open.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let holding = false;
    app.addHook('preClose', async () => {
      holding = true;
      await held;
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    try {
      const conn = await rawConnection(url);
      conn.socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
      await waitUntil(() => /HTTP\/1\.1 200 [^]*\r\n\r\n\{"status":"ok"\}$/.test(conn.received()), 'the first answer (keep-alive)');
      const closing = app.close();
      await waitUntil(() => holding, 'close() to reach the slow step');
      conn.socket.write('GET /health HTTP/1.1\r\nHost: x\r\nx-request-id: late-one\r\n\r\n');
      await waitUntil(() => conn.received().includes('late-one"}}'), 'the answer to the late request');
      release();
      await closing;
      await conn.ended;
      const late = conn.received().slice(conn.received().lastIndexOf('HTTP/1.1 '));
      expect(late).toMatch(/^HTTP\/1\.1 503 /);
      expect(late.toLowerCase()).toContain('retry-after: 1\r\n');
      expect(late.toLowerCase()).toContain('connection: close\r\n');
      expect(late.toLowerCase()).toContain('x-request-id: late-one\r\n');
      expect(JSON.parse(late.slice(late.indexOf('\r\n\r\n') + 4))).toEqual({
        type: 'error', error: { type: 'overloaded_error', code: 'overloaded', message: 'The server is shutting down; retry shortly', details: [], request_id: 'late-one' },
      });
    } finally {
      release();
      await app.close();
    }
  });
});
