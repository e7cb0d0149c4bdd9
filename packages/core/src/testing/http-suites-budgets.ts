/**
 * Per-caller budgets over HTTP (platform.md "Per-caller bounds"): the bad-credential throttle per
 * remote address (at the adapter's defaults), request bodies in flight per API key, a flood of big
 * bodies from one key next to another key's requests, concurrent Runs per account and per key,
 * and Sessions created per minute. Every refusal is a 429 in the envelope with `Retry-After`, and
 * writes nothing. Counts and states only (no timing).
 */
import net from 'node:net';
import { expect } from 'vitest';
import { registerSuite, type HttpSuiteBase, type HttpSuiteGroup } from './http-suites-kit.js';
import type { HttpConformanceOptions } from './http-conformance-checks.js';
import { rawRequest } from './http-raw.js';
import { expectError, heldModel, startHttpWorld, type HeldModel, type HttpWorld, type WorldResponse } from './http-world.js';

const text = (t: string) => [{ type: 'text', text: t }];

/** `Retry-After` is a whole number of seconds, at least 1. */
function expectRetryAfter(res: WorldResponse): number {
  const value = res.headers.get('retry-after');
  expect(value, 'a 429 carries Retry-After').toMatch(/^\d+$/);
  expect(Number(value)).toBeGreaterThanOrEqual(1);
  return Number(value);
}

/** Runs `tasks` with at most `width` at once; resolves with every result in order. */
async function inBatches<T>(tasks: (() => Promise<T>)[], width: number): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < tasks.length; i += width) out.push(...(await Promise.all(tasks.slice(i, i + width).map((t) => t()))));
  return out;
}

/** A request whose headers and part of its body are sent, the rest held until `finish()`. */
function heldBody(base: string, path: string, key: string, body: string): Promise<{ finish(): Promise<string>; socket: net.Socket }> {
  const url = new URL(base);
  const bytes = Buffer.from(body);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname);
    const parts: Buffer[] = [];
    socket.on('data', (d) => parts.push(d));
    socket.on('error', reject);
    const closed = new Promise<void>((ok) => socket.on('close', () => ok()));
    socket.on('connect', () => {
      socket.write(`POST ${path} HTTP/1.1\r\nhost: ${url.host}\r\nauthorization: Bearer ${key}\r\ncontent-type: application/json\r\ncontent-length: ${bytes.byteLength}\r\nconnection: close\r\n\r\n`);
      socket.write(bytes.subarray(0, 1));
      resolve({
        socket,
        finish: async () => {
          socket.write(bytes.subarray(1));
          await closed;
          return Buffer.concat(parts).toString('utf8');
        },
      });
    });
  });
}

/** A block's world (and its held model, for the Runs budget). */
type BudgetCtx = HttpSuiteBase & { h: HttpWorld; model?: HeldModel };

/** The per-caller budgets (see the file comment), as data: a world of its own settings per block, over sockets (wire layer). */
export const budgetsGroup: HttpSuiteGroup<BudgetCtx> = {
  name: 'per-caller budgets over HTTP',
  layer: 'wire',
  blocks: [
  {
    name: 'the bad-credential throttle (the adapter\'s defaults)',
    open: async (base: HttpSuiteBase) => ({ ...base, h: await startHttpWorld(base.kit, { settings: { credentialThrottle: {} } }) }),
    async close(ctx) {
      await ctx?.h.close();
    },
    checks: [
    {
      name: '2,000 unknown keys from one address: 401 until the budget, then 429 authentication_throttled with Retry-After; another address with a good key is served', timeout: 120_000,
      async run(c) {
        const { h } = c;
        const base = h.url;
        const bad = (i: number) => () => rawRequest(base, { method: 'GET', path: '/me', headers: { authorization: `Bearer ik_bad_${i}_${Math.random().toString(36).slice(2)}` } });
        const answers = await inBatches(Array.from({ length: 2_000 }, (_, i) => bad(i)), 50);
        const unauthorized = answers.filter((r) => r.status === 401);
        const throttled = answers.filter((r) => r.status === 429);
        expect(unauthorized.length + throttled.length, 'every answer is a 401 or a 429').toBe(2_000);
        // The default budget is 100 per minute; requests in flight together may pass the check at once.
        expect(unauthorized.length).toBeGreaterThanOrEqual(100);
        expect(unauthorized.length).toBeLessThan(100 + 50);
        for (const r of unauthorized) expectError(r, 401, 'invalid_credentials');
        for (const r of throttled.slice(0, 20)) {
          expectError(r, 429, 'authentication_throttled');
          expect(expectRetryAfter(r)).toBeLessThanOrEqual(60);
        }
        expect(throttled.every((r) => r.body.error.code === 'authentication_throttled')).toBe(true);
        // The throttled address is refused even with a good key (no lookup is made for it) …
        expectError(await rawRequest(base, { method: 'GET', path: '/me', headers: { authorization: `Bearer ${h.keys.acc_owner}` } }), 429, 'authentication_throttled');
        // … while another address is served, and public routes stay open.
        const other = await rawRequest(base, { method: 'GET', path: '/me', localAddress: '127.0.0.2', headers: { authorization: `Bearer ${h.keys.acc_owner}` } });
        expect(other.status, other.text).toBe(200);
        expect(other.body.account.id).toBe('acc_owner');
        expect((await rawRequest(base, { method: 'GET', path: '/health' })).status).toBe(200);
        // A bad key from the other address is a plain 401: its own budget.
        expectError(await rawRequest(base, { method: 'GET', path: '/me', localAddress: '127.0.0.2', headers: { authorization: 'Bearer ik_bad_other' } }), 401, 'invalid_credentials');
      },
    },
    ],
  },
  {
    name: 'request bodies in flight per API key',
    open: async (base: HttpSuiteBase) => ({ ...base, h: await startHttpWorld(base.kit, { settings: { maxBodiesPerKey: 3 } }) }),
    async close(ctx) {
      await ctx?.h.close();
    },
    checks: [
    {
      name: 'a key with 3 bodies arriving gets 429 too_many_bodies for a 4th (nothing written); another key is served; the slots come back once answered', timeout: 60_000,
      async run(c) {
        const { h } = c;
        const path = '/projects/proj_main/inbox';
        const held = await Promise.all([1, 2, 3].map((i) => heldBody(h.url, path, h.keys.acc_deriver!, JSON.stringify({ type: `held_${i}` }))));
        const before = await h.inboxRows();
        let refused: WorldResponse | undefined;
        for (const deadline = Date.now() + 10_000; refused === undefined;) {
          const res = await h.request('POST', path, { as: 'acc_deriver', body: { type: 'fourth' } });
          if (res.status === 429) refused = res;
          if (Date.now() > deadline) throw new Error(`the 4th body was never refused (last answer ${res.status})`);
        }
        expectError(refused, 429, 'too_many_bodies');
        expectRetryAfter(refused);
        expect(await h.inboxRows()).toEqual(before);
        expect((await h.request('POST', path, { as: 'acc_owner', body: { type: 'another key' } })).status).toBe(201);
        const finished = await Promise.all(held.map((x) => x.finish()));
        for (const raw of finished) expect(raw).toMatch(/^HTTP\/1\.1 201 /);
        expect((await h.request('POST', path, { as: 'acc_deriver', body: { type: 'after' } })).status).toBe(201);
      },
    },
    ],
  },
  {
    name: 'a flood of big bodies from one key (the adapter\'s defaults)',
    open: async (base: HttpSuiteBase) => ({ ...base, h: await startHttpWorld(base.kit, { settings: { bodyBytesPerSecondPerKey: undefined } }) }),
    async close(ctx) {
      await ctx?.h.close();
    },
    checks: [
    {
      name: 'a flood of big bodies from one key (refused 413 or 429, never 5xx) leaves every request of another key answered', timeout: 120_000,
      async run(c) {
        const { h } = c;
        const path = '/projects/proj_main/inbox';
        // ~1 MB each: over the inbox payload limit, so each is read and parsed, then refused 413.
        const big = JSON.stringify({ type: 'big', payload: { blob: 'x'.repeat(1_000_000) } });
        const flood = Array.from({ length: 24 }, () => rawRequest(h.url, { method: 'POST', path, headers: { authorization: `Bearer ${h.keys.acc_deriver}`, 'content-type': 'application/json' }, body: big }));
        const other = Array.from({ length: 20 }, (_, i) => (i % 4 === 0
          ? h.request('POST', path, { as: 'acc_owner', body: { type: `other_${i}` } })
          : h.request('GET', `${path}?limit=5`, { as: 'acc_owner' })));
        const [floodAnswers, otherAnswers] = await Promise.all([Promise.all(flood), Promise.all(other)]);
        for (const r of floodAnswers) expect([413, 429], r.text.slice(0, 200)).toContain(r.status);
        for (const r of otherAnswers) expect([200, 201], r.text.slice(0, 200)).toContain(r.status);
      },
    },
    ],
  },
  {
    name: 'concurrent Runs per account and per API key',
    open: async (base: HttpSuiteBase) => {
      const model = heldModel();
      return { ...base, model, h: await startHttpWorld(base.kit, { model, budgets: { runsPerAccount: 3, runsPerKey: 2, sessionsPerMinute: 0 } }) };
    },
    async close(ctx) {
      ctx?.model?.release();
      await ctx?.h.close();
    },
    checks: [
    {
      name: 'past its key\'s or its account\'s budget a message that would start a Run gets 429 too_many_runs, nothing written; others keep theirs; ended Runs give slots back', timeout: 60_000,
      async run(c) {
        const { h } = c;
        const model = c.model!;
        const sessions: string[] = [];
        for (let i = 0; i < 5; i++) sessions.push((await h.request('POST', '/sessions', { as: 'acc_owner', body: { project_id: 'proj_main', title: `run ${i}` } })).body.session.id);
        const send = (sid: string, as: string, accountId?: string) => h.request('POST', `/v1/sessions/${sid}/events`, { as, ...(accountId ? { accountId } : {}), body: { events: [{ type: 'user.message', content: text('go') }] } });
        const ledger = async (sid: string) => (await h.store.listSessionEvents({ session_id: sid, after: 0, limit: 100 })).length;
        // acc_owner's own key: 2 Runs (its key's budget), then 429.
        const first = await Promise.all(sessions.slice(0, 3).map((sid) => send(sid, 'acc_owner')));
        expect(first.map((r) => r.status).sort()).toEqual([200, 200, 429]);
        const refused = first.find((r) => r.status === 429)!;
        expectError(refused, 429, 'too_many_runs');
        expectRetryAfter(refused);
        const refusedSession = sessions[first.indexOf(refused)]!;
        expect(await ledger(refusedSession)).toBe(0);
        expect(await h.store.getRunningRun(refusedSession)).toBeUndefined();
        // The service key acting as acc_owner: the account has 2 of 3, so one more, then 429 (the account's budget).
        expect((await send(refusedSession, 'service', 'acc_owner')).status).toBe(200);
        expectError(await send(sessions[3]!, 'service', 'acc_owner'), 429, 'too_many_runs');
        // Another account is not slowed by any of it.
        const loose = (await h.request('POST', '/sessions', { as: 'acc_outsider', body: {} })).body.session.id as string;
        expect((await send(loose, 'acc_outsider')).status).toBe(200);
        // A message to a Session whose Run runs starts none, so it needs no slot.
        expect((await send(sessions[first.findIndex((r) => r.status === 200)]!, 'acc_owner')).status).toBe(200);
        // Ended Runs give their slots back.
        model.release();
        for (const deadline = Date.now() + 20_000; ;) {
          const running = await Promise.all([...sessions, loose].map((sid) => h.store.getRunningRun(sid)));
          if (running.every((r) => r === undefined)) break;
          if (Date.now() > deadline) throw new Error('the Runs did not end');
          await new Promise((r) => setTimeout(r, 10));
        }
        expect((await send(sessions[4]!, 'acc_owner')).status).toBe(200);
      },
    },
    ],
  },
  {
    name: 'Sessions created per minute per API key',
    open: async (base: HttpSuiteBase) => ({ ...base, h: await startHttpWorld(base.kit, { budgets: { sessionsPerMinute: 5 } }) }),
    async close(ctx) {
      await ctx?.h.close();
    },
    checks: [
    {
      name: 'past the budget POST /sessions gets 429 rate_limited with Retry-After, nothing written; another key creates on',
      async run(c) {
        const { h } = c;
        for (let i = 0; i < 5; i++) expect((await h.request('POST', '/sessions', { as: 'acc_owner', body: { project_id: 'proj_main' } })).status).toBe(201);
        const count = async () => (await h.store.listSessions('ws_demo', {})).length;
        const before = await count();
        const refused = await h.request('POST', '/sessions', { as: 'acc_owner', body: { project_id: 'proj_main' } });
        const env = expectError(refused, 429, 'rate_limited');
        expect(env.error.details.map((d) => d.code)).toEqual(['sessions_per_minute']);
        expectRetryAfter(refused);
        expect(await count()).toBe(before);
        expect((await h.request('POST', '/sessions', { as: 'acc_deriver', body: { project_id: 'proj_main' } })).status).toBe(201);
      },
    },
    ],
  },
  ] as HttpSuiteGroup<BudgetCtx>[],
};

/** The per-caller budgets. */
export function budgetsSuite(kit: HttpConformanceOptions): void {
  registerSuite(kit, budgetsGroup);
}
