/**
 * Crash safety of the demo process (`node apps/demo/dist/main.js`): concurrent clients file inbox
 * items while the process is killed with SIGKILL mid-stream, twice (the second time after a
 * restart on the same data). Read afterwards with raw SQL (better-sqlite3 / pg, not the store):
 * every acknowledged (201) item is stored; every item has exactly one create Operation Log row
 * and exactly one created event pointing at that row, and no log row or event lacks its item;
 * each project's event sequences are exactly 1..n and its sequence counter is n. The restarted
 * process then serves every item and continues at n + 1. On SQLite and, with
 * INBOX_KIT_TEST_PG_URL, PostgreSQL. Needs the built demo.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import {
  PG_ADMIN_URL, credentialsOf, freshPostgresDatabase, startDemoProcess, stopDemoProcess, waitUntil, type DemoProcess,
} from './demo-process.js';

type Query = (text: string) => Promise<Array<Record<string, unknown>>>;

/** Raw SQL reader of the demo's database, per engine. */
interface Raw {
  query: Query;
  /** SQL of a JSON field of `project_events.payload` as text. */
  payloadField(field: string): string;
  close(): Promise<void>;
}

function sqliteRaw(file: string): Raw {
  // Opened read-write after the process died, so SQLite recovers the WAL as any next opener would.
  const db = new SqliteDatabase(file, { fileMustExist: true });
  return {
    query: async (text) => db.prepare(text).all() as Array<Record<string, unknown>>,
    payloadField: (field) => `json_extract(payload, '$.${field}')`,
    close: async () => {
      db.close();
    },
  };
}

async function postgresRaw(url: string): Promise<Raw> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return {
    query: async (text) => (await client.query(text)).rows as Array<Record<string, unknown>>,
    payloadField: (field) => `(payload::json ->> '${field}')`,
    close: () => client.end(),
  };
}

/** Clients filing items as fast as they can until the server goes away; returns the acknowledged ids. */
function fileItemsUntilGone(url: string, keys: Record<string, string>, tag: string, clients = 6) {
  const acknowledged: string[] = [];
  let stop = false;
  const run = async (client: number) => {
    const key = client % 2 === 0 ? keys.acc_deriver! : keys.acc_owner!;
    for (let i = 0; !stop && i < 10_000; i++) {
      try {
        const res = await fetch(`${url}/projects/proj_main/inbox`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ type: 'crash.test', title: `${tag}-${client}-${i}`, payload: { client, i }, source_session_id: 'sess_001' }),
          signal: AbortSignal.timeout(10_000),
        });
        if (res.status !== 201) throw new Error(`create answered ${res.status}: ${await res.text()}`);
        acknowledged.push(((await res.json()) as { item: { id: string } }).item.id);
      } catch (error) {
        if (stop) return;
        // The server was killed: connection refused or reset. Anything else is a failure.
        const code = (error as { cause?: { code?: string } }).cause?.code;
        if (code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE') return;
        throw error;
      }
    }
  };
  const done = Promise.all(Array.from({ length: clients }, (_, c) => run(c)));
  return { acknowledged, done, stop: () => { stop = true; } };
}

/** The invariants, read with raw SQL. Returns the number of events of proj_main. */
async function checkInvariants(raw: Raw, acknowledged: string[]): Promise<number> {
  const items = await raw.query(`SELECT id FROM project_inbox_items`);
  const itemIds = new Set(items.map((r) => String(r.id)));
  for (const id of acknowledged) expect(itemIds.has(id), `acknowledged item ${id} is stored`).toBe(true);

  const logs = await raw.query(`SELECT id, target_id FROM operation_logs WHERE action = 'project_inbox_item.create'`);
  const events = await raw.query(
    `SELECT id, project_id, sequence, operation_log_id, ${raw.payloadField('inbox_item_id')} AS item_id FROM project_events WHERE type = 'project_inbox.item.created'`,
  );
  const logsByItem = new Map<string, string[]>();
  for (const l of logs) logsByItem.set(String(l.target_id), [...(logsByItem.get(String(l.target_id)) ?? []), String(l.id)]);
  const eventsByItem = new Map<string, Array<Record<string, unknown>>>();
  for (const e of events) eventsByItem.set(String(e.item_id), [...(eventsByItem.get(String(e.item_id)) ?? []), e]);
  for (const id of itemIds) {
    expect(logsByItem.get(id), `item ${id}: one create log row`).toHaveLength(1);
    expect(eventsByItem.get(id), `item ${id}: one created event`).toHaveLength(1);
    expect(eventsByItem.get(id)![0]!.operation_log_id, `item ${id}: its event points at its log row`).toBe(logsByItem.get(id)![0]);
  }
  for (const target of logsByItem.keys()) expect(itemIds.has(target), `log row of ${target} has its item`).toBe(true);
  for (const target of eventsByItem.keys()) expect(itemIds.has(target), `event of ${target} has its item`).toBe(true);

  // Every project's sequences are exactly 1..n, and its counter says n.
  const projects = await raw.query(`SELECT id, event_sequence FROM projects`);
  let main = 0;
  for (const p of projects) {
    const seqs = (await raw.query(`SELECT sequence FROM project_events WHERE project_id = '${String(p.id)}' ORDER BY sequence`)).map((r) => Number(r.sequence));
    expect(seqs, `sequences of ${String(p.id)}`).toEqual(seqs.map((_, i) => i + 1));
    expect(Number(p.event_sequence), `sequence counter of ${String(p.id)}`).toBe(seqs.length);
    if (p.id === 'proj_main') main = seqs.length;
  }
  return main;
}

async function crashCycles(env: Record<string, string>, dataDir: string, openRaw: () => Promise<Raw>): Promise<void> {
  const processes: DemoProcess[] = [];
  try {
    const acknowledged: string[] = [];
    let keys: Record<string, string> | undefined;
    for (const cycle of [1, 2]) {
      const p = await startDemoProcess(env);
      processes.push(p);
      keys ??= credentialsOf(dataDir);
      const writers = fileItemsUntilGone(p.url, keys, `cycle${cycle}`);
      const target = acknowledged.length + 40;
      await waitUntil(() => acknowledged.length + writers.acknowledged.length >= target, `40 acknowledged creates in cycle ${cycle}`, 60_000);
      p.child.kill('SIGKILL'); // mid-stream: the clients still have requests in flight
      expect((await p.exited).signal).toBe('SIGKILL');
      writers.stop();
      await writers.done;
      acknowledged.push(...writers.acknowledged);
      const raw = await openRaw();
      try {
        await checkInvariants(raw, acknowledged);
      } finally {
        await raw.close();
      }
    }

    // A restart serves every item and goes on at the next sequence.
    const p = await startDemoProcess(env);
    processes.push(p);
    const auth = { authorization: `Bearer ${keys!.acc_owner}` };
    const listed = new Set<string>();
    for (let cursor: string | null = ''; cursor !== null;) {
      const res = await fetch(`${p.url}/projects/proj_main/inbox?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { headers: auth });
      const page = (await res.json()) as { items: Array<{ id: string }>; next_cursor: string | null };
      for (const item of page.items) listed.add(item.id);
      cursor = page.next_cursor;
    }
    for (const id of acknowledged) expect(listed.has(id), `item ${id} is served after the restart`).toBe(true);
    const before = await openRaw();
    const n = await checkInvariants(before, acknowledged).finally(() => before.close());
    const res = await fetch(`${p.url}/projects/proj_main/inbox`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ type: 'after.restart' }) });
    expect(res.status).toBe(201);
    const events = await fetch(`${p.url}/projects/proj_main/events?after=${n}&limit=10`, { headers: auth });
    const page = (await events.json()) as { items: Array<{ sequence: number; type: string }> };
    expect(page.items.map((e) => [e.sequence, e.type])).toEqual([[n + 1, 'project_inbox.item.created']]);
    await stopDemoProcess(p);
    expect(await p.exited).toEqual({ code: 0, signal: null });
  } finally {
    for (const p of processes) await stopDemoProcess(p);
  }
}

describe('SIGKILL mid-stream, restart: nothing half-written, no sequence gap', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('on SQLite', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-crash-'));
    dirs.push(dir);
    await crashCycles({ DATA_DIR: dir }, dir, async () => sqliteRaw(join(dir, 'inbox-kit.sqlite')));
  }, 180_000);

  if (PG_ADMIN_URL) {
    it('on PostgreSQL', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-crash-pg-'));
      dirs.push(dir);
      const database = await freshPostgresDatabase('inbox_kit_crash');
      try {
        await crashCycles({ DATA_DIR: dir, DATABASE_URL: database.url }, dir, () => postgresRaw(database.url));
      } finally {
        await database.drop();
      }
    }, 180_000);
  } else {
    it('on PostgreSQL: INBOX_KIT_TEST_PG_URL is available', (ctx) => {
      const why = 'INBOX_KIT_TEST_PG_URL is not set: crash safety on PostgreSQL was not tested. '
        + 'Start a server with `node scripts/postgres.mjs` and export the URL it prints.';
      if (process.env.CI) expect.fail(why);
      ctx.skip(why); // counted as skipped, not passed
    });
  }
});
