/**
 * The same black-box steering scenario on every DEMO_RUNTIME — `native`, `ai-sdk`, `langgraph`,
 * `openai-agents` — over real HTTP against the built demo as a real process: on SQLite (one
 * process), and on PostgreSQL with two routed processes (the Run on A, steered through B on Hono)
 * when INBOX_KIT_TEST_PG_URL is set. The `assistant` agent calls its host tool `wait`; during the
 * tool round two messages are queued, reordered, one replaced and the other withdrawn: exactly the
 * replaced one is committed as `{run_id}-inbox-0` right after the tool result and acknowledged by
 * the next step; durable input sent during the Run gets a follow-up Run on the same runtime.
 * The cases run concurrently, each on its own processes and database.
 */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PG_ADMIN_URL, callDemo, credentialsOf, freePort, freshPostgresDatabase, startDemoProcess, stopDemoProcess, waitUntil, type DemoProcess } from './demo-process.js';

const RUNTIMES = ['native', 'ai-sdk', 'langgraph', 'openai-agents'] as const;
const SECRET = `secret-${Math.random().toString(36).slice(2)}`;
const text = (t: string) => [{ type: 'text', text: t }];
const textOf = (content: unknown): string => (Array.isArray(content) ? content.map((b: { text?: string }) => b.text ?? '').join('') : '');
/** A model step of 400 ms: steering sent as soon as the attempt is open lands during the first step (or its tool round). */
const MODEL = { DEMO_MODEL_STEP_MS: '400', DEMO_MODEL_STEPS: '1' };

const call = callDemo;

const processes: DemoProcess[] = [];
const cleanup: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  await Promise.all(processes.map((p) => stopDemoProcess(p)));
  for (const c of cleanup) await c();
}, 60_000);

/** The scenario: the Run executes on `runOn`, is steered (and read) through `steerVia`. */
async function scenario(runOn: DemoProcess, steerVia: DemoProcess, key: string): Promise<void> {
  const created = await call(runOn, key, 'POST', '/v1/sessions', { agent: 'assistant', environment_id: 'env_runtimes' });
  expect(created.status).toBe(200);
  const sid = created.body.id as string;
  const LI = `/v1/awaken/sessions/${sid}/live-inbox`;
  const history = async () => (await call(steerVia, key, 'GET', `/v1/sessions/${sid}/events?limit=1000`)).body.data as any[];
  expect((await call(runOn, key, 'POST', `/v1/sessions/${sid}/events`, { events: [{ type: 'user.message', content: text('wait 3000 then answer') }] })).status).toBe(200);
  await waitUntil(async () => (await call(steerVia, key, 'GET', LI)).body?.active === true, 'the Live Inbox is active through the other process');
  const a = await call(steerVia, key, 'POST', LI, { content: text('use the cache') });
  const b = await call(steerVia, key, 'POST', LI, { content: text('also check logs') });
  expect([a.status, b.status]).toEqual([200, 200]);
  expect((await call(steerVia, key, 'PUT', `${LI}/order`, { order: [b.body.id, a.body.id] })).status).toBe(204);
  expect((await call(steerVia, key, 'PUT', `${LI}/${a.body.id}`, { content: text('use the cache, not the database') })).status).toBe(204);
  expect((await call(steerVia, key, 'DELETE', `${LI}/${b.body.id}`)).status).toBe(204);
  // The native order on every runtime: the step's tool use is in the ledger while the tool runs (3 s).
  await waitUntil(async () => (await history()).some((e) => e.type === 'agent.tool_use'), 'the tool use is committed');
  expect((await history()).map((e) => e.type)).not.toContain('agent.tool_result');
  // Durable input during the Run: committed, a follow-up Run on the same runtime answers it.
  expect((await call(steerVia, key, 'POST', `/v1/sessions/${sid}/events`, { events: [{ type: 'user.message', content: text('and then?') }] })).status).toBe(200);
  await waitUntil(async () => (await history()).filter((e) => e.type === 'session.status_idle').length >= 2, 'both Runs ended', 30_000);
  const events = await history();
  const runs = events.filter((e) => e.type === 'session.status_running').map((e) => e.run_id);
  expect(runs).toHaveLength(2);
  const [first, second] = runs;
  const mine = events.filter((e) => e.run_id === first);
  const types = mine.map((e) => e.type);
  const steered = mine.filter((e) => e.type === 'user.message' && e.message_id !== null);
  expect(steered.map((e) => [e.message_id, textOf(e.content)])).toEqual([[`${first}-inbox-0`, 'use the cache, not the database']]);
  // Right after the tool result, before the next model step, which acknowledges it.
  expect(types[types.indexOf('user.message', types.indexOf('agent.tool_result'))]).toBe('user.message');
  expect(types.indexOf('user.message', 1)).toBe(types.indexOf('agent.tool_result') + 1);
  const after = mine.slice(types.indexOf('agent.tool_result') + 2).find((e) => e.type === 'agent.message');
  expect(textOf(after?.content)).toContain('Steering received: "use the cache, not the database"');
  expect(textOf(after?.content)).toContain('wait said: "waited 3000 ms"');
  expect(mine.at(-1)).toMatchObject({ type: 'session.status_idle', outcome: 'completed' });
  const follow = events.filter((e) => e.run_id === second);
  expect(textOf(follow.find((e) => e.type === 'agent.message')?.content)).toContain('on "and then?"');
  expect(follow.at(-1)).toMatchObject({ type: 'session.status_idle', outcome: 'completed' });
}

// Every case has its own processes, data directory and database, and mostly waits (the 3 s tool,
// the model's steps): the cases run concurrently (vitest's maxConcurrency, 5 by default).
describe.concurrent.each(RUNTIMES)('DEMO_RUNTIME=%s', (runtime) => {
  it('SQLite, one process: the steering scenario', async () => {
    const dir = mkdtempSync(join(tmpdir(), `inbox-kit-rt-${runtime}-`));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const p = await startDemoProcess({ DATA_DIR: dir, DEMO_RUNTIME: runtime, ...MODEL });
    processes.push(p);
    await scenario(p, p, credentialsOf(dir).acc_owner!);
    await stopDemoProcess(p);
  }, 90_000);

  it('DEMO_TOOL_POLICY=always_ask: the Run parks on the framework\'s approval (requires_action), a confirmation resumes it, a denial answers the model', async () => {
    const dir = mkdtempSync(join(tmpdir(), `inbox-kit-rt-ask-${runtime}-`));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const p = await startDemoProcess({ DATA_DIR: dir, DEMO_RUNTIME: runtime, DEMO_TOOL_POLICY: 'always_ask', DEMO_MODEL_STEP_MS: '20', DEMO_MODEL_STEPS: '1' });
    processes.push(p);
    const key = credentialsOf(dir).acc_owner!;
    for (const answer of ['allow', 'deny'] as const) {
      const created = await call(p, key, 'POST', '/v1/sessions', { agent: 'assistant', environment_id: 'env_runtimes' });
      const sid = created.body.id as string;
      const history = async () => (await call(p, key, 'GET', `/v1/sessions/${sid}/events?limit=1000`)).body.data as any[];
      expect((await call(p, key, 'POST', `/v1/sessions/${sid}/events`, { events: [{ type: 'user.message', content: text('wait 200 then answer') }] })).status).toBe(200);
      await waitUntil(async () => (await history()).some((e) => e.type === 'session.status_idle'), 'the Run parks');
      const parked = await history();
      const use = parked.find((e) => e.type === 'agent.tool_use');
      expect(use).toMatchObject({ name: 'wait', input: { ms: 200 }, evaluated_permission: 'ask' });
      expect(parked.at(-1)).toMatchObject({ type: 'session.status_idle', outcome: null, stop_reason: { type: 'requires_action', event_ids: [use.id] } });
      expect((await call(p, key, 'GET', `/v1/awaken/sessions/${sid}/live-inbox`)).body.active).toBe(false);
      const confirmation = answer === 'allow' ? { result: 'allow' } : { result: 'deny', deny_message: 'Not now.' };
      expect((await call(p, key, 'POST', `/v1/sessions/${sid}/events`, { events: [{ type: 'user.tool_confirmation', tool_use_id: use.id, ...confirmation }] })).status).toBe(200);
      await waitUntil(async () => (await history()).at(-1)?.outcome === 'completed', 'the resumed Run completes');
      const events = await history();
      expect(events.map((e) => e.type)).toEqual([
        'user.message', 'session.status_running', 'agent.message', 'agent.tool_use', 'session.status_idle', 'user.tool_confirmation',
        'session.status_running', 'agent.tool_result', 'agent.message', 'session.status_idle',
      ]);
      expect(new Set(events.filter((e) => e.run_id !== null && e.type !== 'user.tool_confirmation').map((e) => e.run_id)).size).toBe(1);
      const result = events.find((e) => e.type === 'agent.tool_result');
      const reply = textOf(events.findLast((e) => e.type === 'agent.message')?.content);
      if (answer === 'allow') {
        expect(result).toMatchObject({ tool_use_id: use.id, is_error: false, content: text('waited 200 ms') });
        expect(reply).toContain('wait said: "waited 200 ms"');
      } else {
        expect(result).toMatchObject({ tool_use_id: use.id, is_error: true, content: text('Not now.') });
        expect(reply).toContain('wait failed: "Not now."');
      }
    }
    await stopDemoProcess(p);
  }, 90_000);

  it.skipIf(!PG_ADMIN_URL)('PostgreSQL, two routed processes: the Run on A steered through B', async () => {
    const database = await freshPostgresDatabase(`inbox_kit_rt_${runtime.replace('-', '_')}`);
    cleanup.push(() => database.drop());
    const [portA, portB] = [await freePort(), await freePort()];
    const dirA = mkdtempSync(join(tmpdir(), 'inbox-kit-rt-a-'));
    const dirB = mkdtempSync(join(tmpdir(), 'inbox-kit-rt-b-'));
    cleanup.push(() => rmSync(dirA, { recursive: true, force: true }), () => rmSync(dirB, { recursive: true, force: true }));
    const common = { DATABASE_URL: database.url, INBOX_KIT_FORWARD_SECRET: SECRET, DEMO_RUNTIME: runtime, ...MODEL };
    const a = await startDemoProcess({ ...common, DATA_DIR: dirA, PORT: String(portA), INBOX_KIT_ADVERTISE_URL: `http://127.0.0.1:${portA}` });
    processes.push(a);
    copyFileSync(join(dirA, 'credentials.json'), join(dirB, 'credentials.json'));
    const b = await startDemoProcess({ ...common, DATA_DIR: dirB, PORT: String(portB), INBOX_KIT_ADVERTISE_URL: `http://127.0.0.1:${portB}`, HTTP_ADAPTER: 'hono' });
    processes.push(b);
    await scenario(a, b, credentialsOf(dirA).acc_owner!);
    await Promise.all([stopDemoProcess(a), stopDemoProcess(b)]);
  }, 90_000);
});
