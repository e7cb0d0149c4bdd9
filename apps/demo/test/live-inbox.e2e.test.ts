/**
 * The Live Inbox end to end, over real HTTP against the demo (SQLite, scripted model at 300 ms a
 * step, 3 steps per user message). Nothing asserts a duration: every wait polls a condition with
 * a deadline, and an edit sequence that must fit between two loop boundaries is retried on a
 * fresh Run when a boundary happened to pass in the middle of it (detected from the ledger).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { collectSseFrames, type SseFrame } from '@inbox-kit/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDemo, loadConfig, type Demo } from '../src/index.js';
import { closeDemo, listen } from './listen.js';

type Json = any;
interface Reply {
  status: number;
  body: Json;
}

const text = (t: string) => [{ type: 'text', text: t }];
const SESSION = 'sess_001';
const LI = (session = SESSION) => `/v1/awaken/sessions/${session}/live-inbox`;
const EV = (session = SESSION) => `/v1/sessions/${session}/events`;

let demo: Demo;
let base: string;
let dataDir: string;
let keys: Record<string, string>;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'inbox-kit-live-inbox-'));
  demo = await buildDemo(loadConfig({ DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent', DEMO_MODEL_STEP_MS: '300', DEMO_MODEL_STEPS: '3' }));
  base = await listen(demo);
  keys = demo.credentials;
});

afterAll(async () => {
  await closeDemo(demo);
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

async function api(who: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  const key = keys[who];
  if (key === undefined) throw new Error(`no credential for ${who}`);
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const raw = await res.text();
  return { status: res.status, body: raw === '' ? undefined : JSON.parse(raw) };
}

async function waitFor<T>(probe: () => Promise<T>, what: string, ms = 30_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The whole committed history of a Session (paged through `next_page`, passed as `page`). */
async function history(session = SESSION, who = 'acc_owner'): Promise<Json[]> {
  const out: Json[] = [];
  let page: string | undefined;
  for (;;) {
    const res = await api(who, 'GET', `${EV(session)}?limit=1000${page === undefined ? '' : `&page=${encodeURIComponent(page)}`}`);
    expect(res.status).toBe(200);
    out.push(...res.body.data);
    if (!res.body.has_more) return out;
    page = res.body.next_page;
  }
}

const textOf = (content: Json): string => (Array.isArray(content) ? content.map((b: Json) => b.text ?? '').join('') : '');
const agentSteps = async (session = SESSION) => (await history(session)).filter((e) => e.type === 'agent.message').length;

async function waitIdle(session = SESSION): Promise<void> {
  await waitFor(async () => {
    const events = await history(session);
    const inbox = await api('acc_owner', 'GET', LI(session));
    return (events.length === 0 || events.at(-1).type === 'session.status_idle') && inbox.body.active === false;
  }, `${session} to be idle`);
}

/** Sends a durable user.message to an idle Session and waits until its Run's native attempt accepts live input. */
async function startRun(content: string, session = SESSION, who = 'acc_owner'): Promise<string> {
  const sent = await api(who, 'POST', EV(session), { events: [{ type: 'user.message', content: text(content) }] });
  expect(sent.status).toBe(200);
  expect(sent.body.data).toEqual([expect.objectContaining({ id: expect.any(String), type: 'user.message', processed_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/) })]);
  const committed = (await history(session)).find((e) => e.id === sent.body.data[0].id);
  expect(committed).toMatchObject({ type: 'user.message', message_id: null, content: text(content) });
  expect(committed.run_id).toMatch(/^run_/);
  await waitFor(async () => (await api(who, 'GET', LI(session))).body.active === true, 'the native attempt');
  return committed.run_id as string;
}

/**
 * Runs `fn` on a fresh Run and checks from the ledger that no loop boundary passed while it ran
 * (the agent committed no step in between). If one did, the outcome says nothing about the queue
 * semantics: wait for the Session to be idle and try again on a new Run.
 */
async function withinOneStep<T>(label: string, fn: (run_id: string) => Promise<T>, session = SESSION): Promise<{ run_id: string; result: T }> {
  for (let attempt = 1; attempt <= 5; attempt++) {
    await waitIdle(session);
    const run_id = await startRun(`${label} (attempt ${attempt})`, session);
    const before = await agentSteps(session);
    let result: T | undefined;
    let error: unknown;
    try {
      result = await fn(run_id);
    } catch (e) {
      error = e;
    }
    if ((await agentSteps(session)) === before) {
      if (error !== undefined) throw error;
      return { run_id, result: result as T };
    }
  }
  throw new Error(`${label}: a loop boundary passed during every attempt`);
}

/** Every Live Inbox and Session event route, each with a valid body. */
const everyRoute = (session = SESSION): [string, string, unknown?][] => [
  ['GET', LI(session)],
  ['POST', LI(session), { content: text('x') }],
  ['PUT', `${LI(session)}/order`, { order: [1] }],
  ['PUT', `${LI(session)}/1`, { content: text('x') }],
  ['DELETE', `${LI(session)}/1`],
  ['POST', EV(session), { events: [{ type: 'user.message', content: text('x') }] }],
  ['GET', EV(session)],
  ['GET', `${EV(session)}/stream`],
];

describe('Live Inbox end to end (demo, real HTTP)', () => {
  it('idle Session: GET active:false, every mutation 410 invalid_request_error', async () => {
    const get = await api('acc_owner', 'GET', LI());
    expect(get).toEqual({ status: 200, body: { active: false, version: 0, messages: [] } });
    for (const [method, path, body] of everyRoute().slice(1, 5)) {
      const res = await api('acc_owner', method, path, body);
      expect(res.status, `${method} ${path}`).toBe(410);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'live_inbox_inactive' });
    }
  });

  it('steers a running Run: queue two, reorder, replace, withdraw (twice → 404), stale order 409; the rest commits with a Run-scoped id before the next output', async () => {
    const { run_id, result: kept } = await withinOneStep('plan a trip', async () => {
      expect((await api('acc_owner', 'GET', LI())).body).toMatchObject({ active: true, messages: [] });
      const a = await api('acc_owner', 'POST', LI(), { content: text('prefer trains') });
      const b = await api('acc_owner', 'POST', LI(), { content: text('budget is tight') });
      expect([a.status, b.status]).toEqual([200, 200]);
      expect(b.body.id).toBe(a.body.id + 1);
      const [first, second] = [a.body.id as number, b.body.id as number];
      expect((await api('acc_owner', 'PUT', `${LI()}/order`, { order: [second, first] })).status).toBe(204);
      expect((await api('acc_owner', 'PUT', `${LI()}/${first}`, { content: text('prefer night trains') })).status).toBe(204);
      expect((await api('acc_owner', 'DELETE', `${LI()}/${second}`)).status).toBe(204);
      const again = await api('acc_owner', 'DELETE', `${LI()}/${second}`);
      expect(again.status).toBe(404);
      expect(again.body.error).toMatchObject({ type: 'not_found_error', code: 'live_inbox_message_not_found' });
      const snapshot = (await api('acc_owner', 'GET', LI())).body;
      expect(snapshot.messages).toEqual([{ id: first, content: text('prefer night trains') }]);
      const stale = await api('acc_owner', 'PUT', `${LI()}/order`, { order: [second, first] });
      expect(stale.status).toBe(409);
      expect(stale.body.error).toMatchObject({ type: 'invalid_request_error', code: 'live_inbox_order_conflict' });
      expect((await api('acc_owner', 'GET', LI())).body).toEqual(snapshot);
      return 'prefer night trains';
    });

    // The remaining message is drained at the next boundary, committed with a Run-scoped id, and
    // the model's next output (a later seq) acknowledges it.
    const committed = await waitFor(async () => (await history()).find((e) => e.type === 'user.message' && e.run_id === run_id && e.message_id !== null), 'the drained message');
    expect(committed.message_id).toMatch(new RegExp(`^${run_id}-inbox-\\d+$`));
    expect(committed.content).toEqual(text(kept));
    expect(committed.floor_id).toMatch(/^floor_/);
    const ack = await waitFor(async () => (await history()).find((e) => e.type === 'agent.message' && e.seq > committed.seq), 'the next model output');
    expect(ack.run_id).toBe(run_id);
    expect(textOf(ack.content)).toContain(`Steering received: "${kept}"`);
    const earlier = (await history()).filter((e) => e.run_id === run_id && e.type === 'agent.message' && e.seq < committed.seq);
    expect(earlier.every((e) => !textOf(e.content).includes(kept))).toBe(true);
    await waitIdle();
    expect((await history()).filter((e) => e.type === 'user.message' && e.message_id === committed.message_id)).toHaveLength(1);
  });

  it('a message queued and then interrupted is committed ahead of the interrupt and reaches the next Run before the newer message', async () => {
    const { run_id } = await withinOneStep('write a poem', async () => {
      const queued = await api('acc_owner', 'POST', LI(), { content: text('make it rhyme') });
      expect(queued.status).toBe(200);
      const interrupted = await api('acc_owner', 'POST', EV(), { events: [{ type: 'user.interrupt' }] });
      expect(interrupted.status).toBe(200);
      expect(interrupted.body.data).toEqual([expect.objectContaining({ id: expect.any(String), type: 'user.interrupt', processed_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/) })]);
    });
    await waitIdle();
    const events = await history();
    expect(events.at(-1)).toMatchObject({ type: 'session.status_idle', run_id, outcome: 'cancelled', stop_reason: { type: 'end_turn' } });
    // Acknowledgement order: the steering queued before the interrupt is committed just before it.
    const rhyme = events.findIndex((e) => textOf(e.content) === 'make it rhyme');
    expect(events[rhyme]).toMatchObject({ type: 'user.message', run_id: null, message_id: null });
    expect(events[rhyme + 1]).toMatchObject({ type: 'user.interrupt', run_id });

    const next = await startRun('go on');
    expect(next).not.toBe(run_id);
    const ack = await waitFor(async () => (await history()).find((e) => e.type === 'agent.message' && e.run_id === next), 'the next Run\'s output');
    expect(textOf(ack.content)).toContain('"go on"');
    const order = (await history()).filter((e) => e.type === 'user.message').map((e) => textOf(e.content));
    expect(order.slice(-2)).toEqual(['make it rhyme', 'go on']);
    await waitIdle();
  });

  it('derivers and observers read (200) and get 403 on every mutation', async () => {
    const { result } = await withinOneStep('permission check', async () => {
      const statuses: Record<string, number[]> = {};
      for (const who of ['acc_deriver', 'acc_observer']) {
        const seen: number[] = [];
        for (const [method, path, body] of everyRoute().filter(([m, p]) => !(m === 'GET' && p.endsWith('/stream')))) {
          const res = await api(who, method, path, body);
          seen.push(res.status);
          if (res.status === 403) expect(res.body.error.type).toBe('permission_error');
        }
        statuses[who] = seen;
      }
      return statuses;
    });
    // GET live-inbox, POST, PUT order, PUT id, DELETE id, POST events, GET events.
    expect(result).toEqual({ acc_deriver: [200, 403, 403, 403, 403, 403, 200], acc_observer: [200, 403, 403, 403, 403, 403, 200] });
    await waitIdle();
  });

  it('a foreign workspace gets 404 on every route and leaves no trace: the owner\'s next queued id is still 1', async () => {
    await withinOneStep('tenant isolation', async () => {
      for (const [method, path, body] of everyRoute()) {
        const res = await api('acc_stranger', method, path, body);
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(res.body.error).toMatchObject({ type: 'not_found_error', code: 'session_not_found' });
      }
      expect((await api('acc_owner', 'GET', LI())).body).toMatchObject({ active: true, version: 0, messages: [] });
      expect(await api('acc_owner', 'POST', LI(), { content: text('still mine') })).toEqual({ status: 200, body: { id: 1 } });
    });
    await waitIdle();
    expect((await history()).some((e) => textOf(e.content) === 'x')).toBe(false);
    // Same answer for a Session that does not exist at all.
    expect((await api('acc_owner', 'GET', LI('sess_does_not_exist'))).body.error.code).toBe('session_not_found');
  });

  it('a Session outside any Project is open to every account of its workspace', async () => {
    const created = await api('acc_outsider', 'POST', '/sessions', { title: 'no project' });
    expect(created.status).toBe(201);
    const free = created.body.session.id as string;
    await withinOneStep('open session', async () => {
      expect(await api('acc_observer', 'POST', LI(free), { content: text('observer steers') })).toMatchObject({ status: 200, body: { id: 1 } });
      expect((await api('acc_deriver', 'GET', LI(free))).body).toMatchObject({ active: true, messages: [{ id: 1 }] });
      expect((await api('acc_deriver', 'DELETE', `${LI(free)}/1`)).status).toBe(204);
      for (const [method, path, body] of everyRoute(free)) {
        expect((await api('acc_stranger', method, path, body)).status, `${method} ${path}`).toBe(404);
      }
    }, free);
    await waitIdle(free);
    expect((await history(free, 'acc_observer')).filter((e) => e.type === 'agent.message').length).toBeGreaterThanOrEqual(3);
  });

  it('streams committed Session events as SSE: stored first, then live', async () => {
    await waitIdle();
    const stored = await history();
    const controller = new AbortController();
    const res = await fetch(`${base}${EV()}/stream`, { headers: { authorization: `Bearer ${keys.acc_observer}` }, signal: controller.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const frames: SseFrame[] = [];
    const reading = collectSseFrames(res.body!, frames);
    await waitFor(async () => frames.length >= stored.length, 'the stored events');
    expect(frames.map((f) => f.id)).toEqual(stored.map((e) => e.seq));

    const run_id = await startRun('stream this');
    await waitIdle();
    const all = await history();
    await waitFor(async () => frames.length >= all.length, 'the live events');
    controller.abort();
    await reading;
    expect(frames.map((f) => f.id)).toEqual(all.map((e) => e.seq));
    expect(frames.map((f) => f.event)).toEqual(all.map((e) => e.type));
    const live = frames.slice(stored.length);
    expect(live[0]).toMatchObject({ event: 'user.message', data: { run_id, content: text('stream this') } });
    expect(live.at(-1)).toMatchObject({ event: 'session.status_idle', data: { run_id, outcome: 'completed', stop_reason: { type: 'end_turn' } } });
    expect(live.filter((f) => f.event === 'agent.message').map((f) => f.data.message_id)).toEqual([`${run_id}-step-0`, `${run_id}-step-1`, `${run_id}-step-2`]);
  });
});
