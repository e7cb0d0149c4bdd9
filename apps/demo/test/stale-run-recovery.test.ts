/**
 * Start-up recovery of Runs left running by a killed demo process (`node apps/demo/dist/main.js`):
 * a Run is started with a long model step, the process is killed with SIGKILL mid-Run, and a new
 * process on the same data — before anyone sends input — ends that Run `failed`: the Session's
 * history ends with `session.status_idle` (`outcome: 'failed'`), `GET …/live-inbox` answers
 * `active: false`, and the next durable message starts a new Run that completes normally; killed
 * while a host tool runs, the restart also closes the open tool round with an error result. With
 * INBOX_KIT_RECOVER_STALE_RUNS=false the leftover is kept until input arrives (the lazy path). On
 * SQLite and, with INBOX_KIT_TEST_PG_URL, PostgreSQL. Needs the built demo.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  PG_ADMIN_URL, callDemo, credentialsOf, freshPostgresDatabase, startDemoProcess, stopDemoProcess, waitUntil, type DemoProcess,
} from './demo-process.js';

const SESSION = 'sess_001';
const EV = `/v1/sessions/${SESSION}/events`;
const LI = `/v1/awaken/sessions/${SESSION}/live-inbox`;
const text = (t: string) => [{ type: 'text', text: t }];

interface HistoryEvent {
  type: string;
  run_id: string | null;
  content?: unknown;
  outcome?: string | null;
  stop_reason?: unknown;
}

const call = callDemo;

const history = async (p: DemoProcess, key: string) => (await call(p, key, 'GET', `${EV}?limit=1000`)).body.data as HistoryEvent[];

/** Starts a Run, SIGKILLs the process mid-step, restarts on the same data and checks the recovery. */
async function killAndRecover(env: Record<string, string>, dataDir: string): Promise<void> {
  const processes: DemoProcess[] = [];
  try {
    // One model step takes a minute: the Run is certainly still running when the process dies.
    const first = await startDemoProcess({ ...env, DEMO_MODEL_STEP_MS: '60000', DEMO_MODEL_STEPS: '3' });
    processes.push(first);
    const owner = credentialsOf(dataDir).acc_owner!;
    expect((await call(first, owner, 'POST', EV, { events: [{ type: 'user.message', content: text('A long task.') }] })).status).toBe(200);
    await waitUntil(async () => (await call(first, owner, 'GET', LI)).body?.active === true, 'the attempt is open');
    const before = await history(first, owner);
    expect(before.at(-1)?.type).toBe('session.status_running');
    const lostRun = before.at(-1)!.run_id!;

    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');

    const second = await startDemoProcess({ ...env, DEMO_MODEL_STEP_MS: '20', DEMO_MODEL_STEPS: '1' });
    processes.push(second);
    expect(second.output()).toContain('Ended 1 Run left running by a previous process (outcome failed)');
    // No input sent: the leftover is already ended.
    const after = await history(second, owner);
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.slice(before.length)).toEqual([
      expect.objectContaining({ type: 'session.status_idle', run_id: lostRun, outcome: 'failed', stop_reason: { type: 'retries_exhausted' } }),
    ]);
    expect((await call(second, owner, 'GET', LI)).body).toEqual({ active: false, version: 0, messages: [] });

    // The next durable message starts a new Run, which completes normally.
    expect((await call(second, owner, 'POST', EV, { events: [{ type: 'user.message', content: text('Again, please.') }] })).status).toBe(200);
    await waitUntil(async () => (await history(second, owner)).at(-1)?.type === 'session.status_idle', 'the new Run ends', 15_000);
    const final = (await history(second, owner)).slice(after.length);
    const newRun = final.find((e) => e.type === 'session.status_running')?.run_id;
    expect(newRun).toBeTruthy();
    expect(newRun).not.toBe(lostRun);
    expect(final.map((e) => e.type)).toEqual(['user.message', 'session.status_running', 'agent.message', 'session.status_idle']);
    expect(final.at(-1)).toMatchObject({ run_id: newRun, outcome: 'completed', stop_reason: { type: 'end_turn' } });

    // A graceful stop leaves nothing running: the next start ends nothing.
    await stopDemoProcess(second);
    const third = await startDemoProcess({ ...env, DEMO_MODEL_STEP_MS: '20', DEMO_MODEL_STEPS: '1' });
    processes.push(third);
    expect(third.output()).not.toContain('left running by a previous process');
  } finally {
    for (const p of processes) await stopDemoProcess(p);
  }
}

/**
 * SIGKILL while the host tool `wait` runs (the scripted model called it for "wait 10000"): the
 * restart closes the open tool round — an error `agent.tool_result` for the unanswered tool use —
 * and ends the Run `failed`; the next message's Run starts from a valid transcript and completes.
 */
async function killMidTool(env: Record<string, string>, dataDir: string): Promise<void> {
  const processes: DemoProcess[] = [];
  try {
    const first = await startDemoProcess({ ...env, DEMO_MODEL_STEP_MS: '20', DEMO_MODEL_STEPS: '1' });
    processes.push(first);
    const owner = credentialsOf(dataDir).acc_owner!;
    expect((await call(first, owner, 'POST', EV, { events: [{ type: 'user.message', content: text('wait 10000 then answer') }] })).status).toBe(200);
    await waitUntil(async () => (await history(first, owner)).some((e) => e.type === 'agent.tool_use'), 'the tool runs');
    const before = await history(first, owner);
    const use = before.find((e) => e.type === 'agent.tool_use') as HistoryEvent & { id: string; name: string };
    expect(use).toMatchObject({ name: 'wait', input: { ms: 10000 } });
    expect(before.at(-1)?.type).toBe('agent.tool_use');

    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');

    const second = await startDemoProcess({ ...env, DEMO_MODEL_STEP_MS: '20', DEMO_MODEL_STEPS: '1' });
    processes.push(second);
    expect(second.output()).toContain('Ended 1 Run left running by a previous process (outcome failed)');
    const after = await history(second, owner);
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.slice(before.length)).toEqual([
      expect.objectContaining({ type: 'agent.tool_result', run_id: use.run_id, tool_use_id: use.id, is_error: true,
        content: text('The Run ended before this call got a result: the process running it stopped.') }),
      expect.objectContaining({ type: 'session.status_idle', run_id: use.run_id, outcome: 'failed', stop_reason: { type: 'retries_exhausted' } }),
    ]);

    expect((await call(second, owner, 'POST', EV, { events: [{ type: 'user.message', content: text('Again, please.') }] })).status).toBe(200);
    await waitUntil(async () => (await history(second, owner)).at(-1)?.type === 'session.status_idle', 'the new Run ends', 15_000);
    const final = (await history(second, owner)).slice(after.length);
    expect(final.map((e) => e.type)).toEqual(['user.message', 'session.status_running', 'agent.message', 'session.status_idle']);
    expect(final.at(-1)).toMatchObject({ outcome: 'completed' });
  } finally {
    for (const p of processes) await stopDemoProcess(p);
  }
}

/** With INBOX_KIT_RECOVER_STALE_RUNS=false the killed process's Run stays running until input arrives. */
async function killWithoutRecovery(env: Record<string, string>, dataDir: string): Promise<void> {
  const processes: DemoProcess[] = [];
  try {
    const first = await startDemoProcess({ ...env, DEMO_MODEL_STEP_MS: '60000' });
    processes.push(first);
    const owner = credentialsOf(dataDir).acc_owner!;
    await call(first, owner, 'POST', EV, { events: [{ type: 'user.message', content: text('A long task.') }] });
    await waitUntil(async () => (await call(first, owner, 'GET', LI)).body?.active === true, 'the attempt is open');
    first.child.kill('SIGKILL');
    await first.exited;
    const second = await startDemoProcess({ ...env, INBOX_KIT_RECOVER_STALE_RUNS: 'false' });
    processes.push(second);
    expect(second.output()).not.toContain('left running by a previous process');
    expect((await history(second, owner)).at(-1)?.type).toBe('session.status_running');
  } finally {
    for (const p of processes) await stopDemoProcess(p);
  }
}

describe('SIGKILL mid-Run, restart: the leftover Run is ended at start-up, before any input', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-recover-'));
    dirs.push(dir);
    return dir;
  };

  it('on SQLite', async () => {
    const dir = tempDir();
    await killAndRecover({ DATA_DIR: dir }, dir);
  }, 120_000);

  it('on SQLite, killed while a host tool runs: its round is closed with an error result', async () => {
    const dir = tempDir();
    await killMidTool({ DATA_DIR: dir }, dir);
  }, 120_000);

  it('on SQLite with INBOX_KIT_RECOVER_STALE_RUNS=false: nothing is ended at start-up', async () => {
    const dir = tempDir();
    await killWithoutRecovery({ DATA_DIR: dir }, dir);
  }, 120_000);

  if (PG_ADMIN_URL) {
    it('on PostgreSQL', async () => {
      const dir = tempDir();
      const database = await freshPostgresDatabase('inbox_kit_recover');
      try {
        await killAndRecover({ DATA_DIR: dir, DATABASE_URL: database.url }, dir);
      } finally {
        await database.drop();
      }
    }, 120_000);

    it('on PostgreSQL, killed while a host tool runs: its round is closed with an error result', async () => {
      const dir = tempDir();
      const database = await freshPostgresDatabase('inbox_kit_recover_tool');
      try {
        await killMidTool({ DATA_DIR: dir, DATABASE_URL: database.url }, dir);
      } finally {
        await database.drop();
      }
    }, 120_000);
  } else {
    it('on PostgreSQL: INBOX_KIT_TEST_PG_URL is available', (ctx) => {
      const why = 'INBOX_KIT_TEST_PG_URL is not set: start-up Run recovery on PostgreSQL was not tested. '
        + 'Start a server with `node scripts/postgres.mjs` and export the URL it prints.';
      if (process.env.CI) expect.fail(why);
      ctx.skip(why); // counted as skipped, not passed
    });
  }
});
