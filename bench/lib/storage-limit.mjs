/**
 * The storage limit: the fastest the database can commit what one Project Inbox create writes —
 * one transaction of the same four statements (insert the item, append the Operation Log row,
 * bump the project's event sequence, insert the Project Event) — with no HTTP, no validation and
 * no Kysely in between. Forked by run.mjs.
 *
 * - SQLite: a fresh file migrated by `@inbox-kit/storage-kysely` (same schema and indexes), the
 *   journal mode and `synchronous` level read from a connection opened by the adapter's own
 *   `openSqlite` (so the loop commits exactly as durably as the server), then a raw
 *   better-sqlite3 loop of `BEGIN IMMEDIATE … COMMIT` with prepared statements.
 * - PostgreSQL: `connections` clients (the server's pool size) each looping
 *   `BEGIN … COMMIT` on one project of the given database, so they queue on its sequence row
 *   exactly as the server's creates do.
 *
 * Job: `{ engine: 'sqlite' | 'postgres', duration (s), warmup (s), url?, connections? }`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import pg from 'pg';
import { sql } from 'kysely';
import { openStore } from '@inbox-kit/storage-kysely';
import { openSqlite } from '@inbox-kit/storage-kysely/sqlite';
import { childMain, summarize } from './util.mjs';

const SYNCHRONOUS = ['OFF', 'NORMAL', 'FULL', 'EXTRA'];

const ITEM_SQL = `insert into project_inbox_items (id, workspace_id, project_id, account_id, sender_account_id, type, title, payload,
  source_event_id, source_session_id, source_floor_id, source_page_id, status, decided_by_account_id, decided_at, created_at, updated_at)
  values (?, ?, ?, ?, ?, ?, ?, ?, null, ?, null, null, 'pending', null, null, ?, ?)`;
const LOG_SQL = `insert into operation_logs (id, workspace_id, project_id, actor_account_id, action, target_type, target_id, request_id, metadata, created_at)
  values (?, ?, ?, ?, 'project_inbox_item.create', 'project_inbox_item', ?, ?, ?, ?)`;
const SEQ_SQL = 'update projects set event_sequence = event_sequence + 1 where id = ? returning event_sequence';
const EVENT_SQL = `insert into project_events (id, workspace_id, project_id, sequence, type, actor_account_id, session_id, floor_id, page_id,
  operation_log_id, correlation_id, causation_event_id, payload, created_at)
  values (?, ?, ?, ?, 'project_inbox.item.created', ?, ?, null, null, ?, ?, null, ?, ?)`;

/** The values of create number `n` (ids of the server's length: prefix + 21 characters). */
function createValues(n, project) {
  const suffix = String(n).padStart(21, '0');
  const now = Date.now();
  const item = `pinbox_${suffix}`;
  const log = `oplog_${suffix}`;
  const event = `evt_${suffix}`;
  const request = `req_${suffix}`;
  const payload = JSON.stringify({ derived_output_id: `dout_${n}`, suggested_action: 'review' });
  const eventPayload = JSON.stringify({
    inbox_item_id: item, type: 'derived_output.review', title: `候选摘要待确认 #${n}`, status: 'pending', sender_account_id: 'acc_deriver',
    source_event_id: null, source_session_id: 'sess_001', source_floor_id: null, source_page_id: null,
  });
  return {
    item: [item, 'ws_demo', project, 'acc_owner', 'acc_deriver', 'derived_output.review', `候选摘要待确认 #${n}`, payload, 'sess_001', now, now],
    log: [log, 'ws_demo', project, 'acc_deriver', item, request, JSON.stringify({ payload_byte_count: payload.length }), now],
    event: (sequence) => [event, 'ws_demo', project, sequence, 'acc_deriver', 'sess_001', log, request, eventPayload, now],
  };
}

/** Base rows every statement refers to. */
function baseRows(project, now = Date.now()) {
  return [
    ['insert into workspaces (id, name, created_at) values (?, ?, ?) on conflict do nothing', ['ws_demo', 'Demo workspace', now]],
    ['insert into accounts (id, name, created_at) values (?, ?, ?) on conflict do nothing', ['acc_owner', 'Olivia Owner', now]],
    ['insert into accounts (id, name, created_at) values (?, ?, ?) on conflict do nothing', ['acc_deriver', 'Derek Deriver', now]],
    ['insert into projects (id, workspace_id, account_id, name, status, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?) on conflict do nothing',
      [project, 'ws_demo', 'acc_owner', 'Storage limit', 'active', now, now]],
  ];
}

async function sqliteLimit({ duration, warmup }) {
  const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-bench-limit-'));
  const file = join(dir, 'limit.sqlite');
  try {
    const opened = await openStore({ sqliteFile: file });
    await opened.close();
    // The durability the server's connections run at, read from the adapter's own open.
    const probe = openSqlite(file);
    const sync = (await sql`pragma synchronous`.execute(probe)).rows[0];
    const mode = (await sql`pragma journal_mode`.execute(probe)).rows[0];
    await probe.destroy();
    const synchronous = SYNCHRONOUS[Number(Object.values(sync)[0])] ?? String(Object.values(sync)[0]);
    const journalMode = String(Object.values(mode)[0]).toUpperCase();

    const db = new Database(file, { timeout: 5000 });
    db.pragma(`journal_mode = ${journalMode}`);
    db.pragma('foreign_keys = ON');
    db.pragma('busy_timeout = 5000');
    db.pragma(`synchronous = ${synchronous}`);
    for (const [text, values] of baseRows('proj_limit')) db.prepare(text).run(...values);
    const insertItem = db.prepare(ITEM_SQL);
    const appendLog = db.prepare(LOG_SQL);
    const bump = db.prepare(SEQ_SQL);
    const appendEvent = db.prepare(EVENT_SQL);
    const create = db.transaction((n) => {
      const v = createValues(n, 'proj_limit');
      insertItem.run(...v.item);
      appendLog.run(...v.log);
      const { event_sequence } = bump.get('proj_limit');
      appendEvent.run(...v.event(event_sequence));
    }).immediate;

    let n = 0;
    const loop = (seconds, latencies) => {
      const end = performance.now() + seconds * 1000;
      const started = performance.now();
      let count = 0;
      for (;;) {
        const t0 = performance.now();
        if (t0 >= end) break;
        create(n++);
        latencies?.push(performance.now() - t0);
        count++;
      }
      return { count, elapsed: (performance.now() - started) / 1000 };
    };
    loop(warmup);
    const latencies = [];
    const { count, elapsed } = loop(duration, latencies);
    db.close();
    return {
      engine: 'sqlite', journal_mode: journalMode, synchronous, transactions_per_s: Math.round(count / elapsed),
      latency_ms: summarize(latencies), statements: 4,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function postgresLimit({ url, duration, warmup, connections = 10 }) {
  const pool = new pg.Pool({ connectionString: url, max: connections });
  try {
    for (const [text, values] of baseRows('proj_limit')) {
      let i = 0;
      await pool.query(text.replace(/\?/g, () => `$${++i}`), values);
    }
    const numbered = (text) => {
      let i = 0;
      return text.replace(/\?/g, () => `$${++i}`);
    };
    const [itemSql, logSql, seqSql, eventSql] = [ITEM_SQL, LOG_SQL, SEQ_SQL, EVENT_SQL].map(numbered);
    const setting = async (name) => (await pool.query('select setting from pg_settings where name = $1', [name])).rows[0]?.setting;
    const synchronousCommit = await setting('synchronous_commit');
    const fsync = await setting('fsync');
    // Every client of the pool, each running its own loop (queries through `pool` would now wait forever).
    const clients = await Promise.all(Array.from({ length: connections }, () => pool.connect()));
    let n = 0;
    const run = async (seconds, latencies) => {
      const end = performance.now() + seconds * 1000;
      const started = performance.now();
      let count = 0;
      await Promise.all(clients.map(async (client) => {
        while (performance.now() < end) {
          const t0 = performance.now();
          const v = createValues(n++, 'proj_limit');
          await client.query('begin isolation level read committed');
          try {
            await client.query({ name: 'limit-item', text: itemSql, values: v.item });
            await client.query({ name: 'limit-log', text: logSql, values: v.log });
            const seq = await client.query({ name: 'limit-seq', text: seqSql, values: ['proj_limit'] });
            await client.query({ name: 'limit-event', text: eventSql, values: v.event(Number(seq.rows[0].event_sequence)) });
            await client.query('commit');
          } catch (error) {
            await client.query('rollback');
            throw error;
          }
          latencies?.push(performance.now() - t0);
          count++;
        }
      }));
      return { count, elapsed: (performance.now() - started) / 1000 };
    };
    await run(warmup);
    const latencies = [];
    const { count, elapsed } = await run(duration, latencies);
    for (const client of clients) client.release();
    return {
      engine: 'postgres', connections, synchronous_commit: synchronousCommit, fsync,
      transactions_per_s: Math.round(count / elapsed), latency_ms: summarize(latencies), statements: 4,
    };
  } finally {
    await pool.end();
  }
}

childMain((job) => (job.engine === 'postgres' ? postgresLimit(job) : sqliteLimit(job)));
