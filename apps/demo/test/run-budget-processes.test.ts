/**
 * Per-caller Run budget of the demo (issue 26, platform.md "Per-caller bounds"), on both HTTP
 * adapters, on SQLite and (when configured) PostgreSQL: one key with no project role starts 1,000
 * Runs at once on Sessions outside projects; its account's budget (8 by default) runs, every other
 * start gets 429 `too_many_runs` with `Retry-After` and writes nothing, another account's Run
 * still starts, and the server's resident memory stays bounded. Counts and states only.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { credentialsOf, freshPostgresDatabase, PG_ADMIN_URL, startDemoProcess, stopDemoProcess, type DemoProcess } from './demo-process.js';

const ADAPTERS = ['fastify', 'hono'] as const;
const ENGINES = PG_ADMIN_URL ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const);

/** The resident set of a process, in bytes (Linux /proc). */
function rssOf(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) * 1024;
}

async function inBatches<T>(n: number, width: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n; i += width) out.push(...(await Promise.all(Array.from({ length: Math.min(width, n - i) }, (_, j) => task(i + j)))));
  return out;
}

describe.each(ENGINES.flatMap((engine) => ADAPTERS.map((adapter) => [engine, adapter] as const)))('1,000 Run starts from one key (%s, %s)', (engine, adapter) => {
  let demo: DemoProcess | undefined;
  let dir: string | undefined;
  let db: { url: string; drop(): Promise<void> } | undefined;
  afterEach(async () => {
    await stopDemoProcess(demo);
    demo = undefined;
    await db?.drop();
    db = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the account\'s budget runs; the rest get 429 too_many_runs, nothing written; another account still starts; RSS stays bounded', async () => {
    dir = mkdtempSync(join(tmpdir(), 'inbox-kit-runs-'));
    if (engine === 'postgres') db = await freshPostgresDatabase('runs');
    // Steps that outlast the test: every started Run stays running. Session creates unthrottled, to set up quickly.
    demo = await startDemoProcess({ DATA_DIR: dir, HTTP_ADAPTER: adapter, DATABASE_URL: db?.url ?? '', DEMO_MODEL_STEP_MS: '600000', SESSIONS_PER_MINUTE: '0' });
    const keys = credentialsOf(dir);
    const call = async (method: string, path: string, key: string, body?: unknown) => {
      const res = await fetch(`${demo!.url}${path}`, {
        method, headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }), signal: AbortSignal.timeout(30_000),
      });
      return { status: res.status, headers: res.headers, body: await res.json() as any };
    };
    // acc_outsider has no role in any project: Sessions outside projects are open to it.
    const outsider = keys.acc_outsider!;
    const sessions = await inBatches(1_000, 50, async () => (await call('POST', '/sessions', outsider, { title: 'flood' })).body.session.id as string);
    expect(new Set(sessions).size).toBe(1_000);
    const rssBefore = rssOf(demo.child.pid!);
    const message = { events: [{ type: 'user.message', content: [{ type: 'text', text: 'start a Run' }] }] };
    const starts = await inBatches(1_000, 50, (i) => call('POST', `/v1/sessions/${sessions[i]}/events`, outsider, message));
    const started = starts.filter((r) => r.status === 200);
    const refused = starts.filter((r) => r.status === 429);
    expect(started).toHaveLength(8);
    expect(refused).toHaveLength(992);
    for (const r of refused) {
      expect(r.body.error.code).toBe('too_many_runs');
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    // A refused start wrote nothing: its Session has no event and is idle.
    const sample = sessions.filter((_, i) => starts[i]!.status === 429).slice(0, 20);
    for (const sid of sample) {
      const events = await call('GET', `/v1/sessions/${sid}/events`, outsider);
      expect(events.body.data).toEqual([]);
      expect((await call('GET', `/v1/sessions/${sid}`, outsider)).body.status).toBe('idle');
    }
    // Another account is not held back by it.
    const own = (await call('POST', '/sessions', keys.acc_owner!, { project_id: 'proj_main', title: 'mine' })).body.session.id as string;
    expect((await call('POST', `/v1/sessions/${own}/events`, keys.acc_owner!, message)).status).toBe(200);
    // 8 running Runs, 992 refusals: the server holds no more than a bounded amount for them.
    const grown = rssOf(demo.child.pid!) - rssBefore;
    expect(grown).toBeLessThan(128 * 1024 * 1024);
    expect(demo.child.exitCode).toBeNull();
  }, 180_000);
});
