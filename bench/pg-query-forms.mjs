#!/usr/bin/env node
/**
 * `node bench/pg-query-forms.mjs`: what one PostgreSQL list page costs this process (CPU and
 * garbage collection per page), read four ways from the same throw-away database (10,000 items,
 * the bench's seed): `pool` — `pg.Pool#query` (node-postgres's callback form inside); `promise` —
 * `pool.connect()` then `client.query(config)`, the promise form; `callback` — the same with a
 * callback; `store` — `@inbox-kit/storage-kysely`'s `listInboxItems` (Kysely over the store's own
 * pool). Each page, as the list route does: 51 rows read, their payloads parsed, 50 of them
 * stringified. 10 concurrent loops (the server's pool size), 1.5 s warm-up + 4 s per form, each
 * form twice, interleaved; one process, no HTTP. Needs the PostgreSQL binaries (scripts/postgres.mjs).
 * Run it as the demo runs (`node --max-semi-space-size=4 bench/pg-query-forms.mjs`): with Node's
 * default young generation every form collects less often.
 *
 * Why it exists: node-postgres's promise form cost a page ~100–150 µs more CPU than its callback
 * form on this machine, most of it in the collector, and the store paid it (and a Kysely
 * connection per checkout) on every statement until `openPostgres` used the callback form
 * (storage-kysely README, "PostgreSQL").
 */
import { PerformanceObserver, performance } from 'node:perf_hooks';
import pg from 'pg';
import { startPostgres } from '../scripts/postgres.mjs';
import { seedPostgresItems } from './lib/seed.mjs';

// `--storage <checkout>`: the store of another checkout (its built packages/storage-kysely), for a before/after.
const storageArg = process.argv.indexOf('--storage');
const { openStore } = await import(storageArg > 0 ? `${process.argv[storageArg + 1]}/packages/storage-kysely/dist/index.js` : '@inbox-kit/storage-kysely');
const only = process.argv.includes('--store-only');
const server = await startPostgres();
if (server === null) {
  console.log('pg-query-forms: no PostgreSQL binaries here (scripts/postgres.mjs); nothing measured');
  process.exit(0);
}
const opened = await openStore({ databaseUrl: server.url });
const now = Date.now();
const setup = new pg.Client({ connectionString: server.url });
await setup.connect();
await setup.query(`insert into workspaces (id, name, created_at) values ('ws_demo', 'bench', $1)`, [now]);
await setup.query(`insert into accounts (id, name, created_at) values ('acc_owner', 'owner', $1), ('acc_deriver', 'deriver', $1)`, [now]);
await setup.query(`insert into projects (id, workspace_id, account_id, name, status, created_at, updated_at) values ('proj_main', 'ws_demo', 'acc_owner', 'main', 'active', $1, $1)`, [now]);
await setup.end();
await seedPostgresItems(server.url, { project: 'proj_main', tag: 'q', to: 10_000, base: now - 1e6 });

// The store's own statement: its text and parameters, as it sends them.
let statement;
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function capture(config, values, callback) {
  if (statement === undefined && typeof config === 'object' && config.text?.includes('project_inbox_items')) statement = { text: config.text, values: config.values };
  return query.call(this, config, values, callback);
};
await opened.store.listInboxItems({ project_id: 'proj_main', limit: 51 });
pg.Client.prototype.query = query;

const types = { getTypeParser: (oid, format) => (oid === 20 && format !== 'binary' ? Number : pg.types.getTypeParser(oid, format)) };
const pool = new pg.Pool({ connectionString: server.url, max: 10, types });
const named = () => ({ name: 'bench_list', text: statement.text, values: statement.values });
const page = (rows) => {
  for (const row of rows) row.payload = JSON.parse(row.payload);
  return JSON.stringify({ items: rows.slice(0, 50), next_cursor: null });
};
const forms = {
  pool: async () => page((await pool.query(named())).rows),
  promise: async () => {
    const client = await pool.connect();
    try { return page((await client.query(named())).rows); } finally { client.release(); }
  },
  callback: async () => {
    const client = await pool.connect();
    try {
      return page((await new Promise((resolve, reject) => client.query(named(), (error, result) => (error ? reject(error) : resolve(result))))).rows);
    } finally { client.release(); }
  },
  store: async () => JSON.stringify({ items: (await opened.store.listInboxItems({ project_id: 'proj_main', limit: 51 })).slice(0, 50), next_cursor: null }),
};

let gcMs = 0;
new PerformanceObserver((list) => { for (const entry of list.getEntries()) gcMs += entry.duration; }).observe({ entryTypes: ['gc'] });
const loop = async (form, ms) => {
  let pages = 0;
  const end = performance.now() + ms;
  await Promise.all(Array.from({ length: 10 }, async () => { while (performance.now() < end) { await form(); pages++; } }));
  return pages;
};
console.log(`node ${process.version}, 10,000 items, pages of 50 (51 rows read), 10 concurrent loops`);
console.log('form       pages/s   CPU µs/page   GC µs/page');
try {
  for (const round of [1, 2]) {
    for (const [name, form] of Object.entries(forms).filter(([n]) => !only || n === 'store')) {
      await loop(form, 1500);
      gcMs = 0;
      const before = process.cpuUsage();
      const pages = await loop(form, 4000);
      const cpu = process.cpuUsage(before);
      await new Promise((resolve) => setImmediate(resolve)); // the last GC entries
      console.log(`${name.padEnd(9)} ${String(Math.round(pages / 4)).padStart(8)} ${String(Math.round((cpu.user + cpu.system) / pages)).padStart(13)} ${String(Math.round((gcMs * 1000) / pages)).padStart(12)}`);
    }
  }
} finally {
  await pool.end();
  await opened.close();
  await server.stop();
}
