/**
 * The page floor: the fastest one process can produce a list answer's two unavoidable parts —
 * reading the page from the database and serialising the response body — with no HTTP, no
 * authentication, no validation and no Kysely. Forked by run.mjs, while the server is idle.
 *
 * 1. The store's own list query: `createKyselyStore` over a Kysely instance that logs its SQL runs
 *    `listInboxItems` once as the route does (limit + 1 rows, no filters), and the SQL text and
 *    parameters it sent are captured — so the loop runs the very statement of the server, with
 *    the same query plan (printed as `plan`).
 * 2. The response body: `body` is the text the server answered to `GET …/inbox?limit=<n>`; the
 *    floor stringifies its parsed value, whose `JSON.stringify` (returned as `body`) is the same
 *    value, with the server's white space and key order only where the store built the page's
 *    JSON itself (`listInboxItemsJson`: PostgreSQL prints a `jsonb` payload with spaces).
 * 3. The loop, for `duration` s after a `warmup`. SQLite: the prepared statement in better-sqlite3's
 *    raw mode (arrays, as the adapter reads named columns), then `JSON.stringify` of the body
 *    object. PostgreSQL: `connections` raw `pg` clients (the server's pool size), each looping the
 *    statement as a named prepared statement (`rowMode: 'array'`, the driver's own type parsing)
 *    then `JSON.stringify` of the body object — one process, as the server is. Also timed apart
 *    (SQLite), to say where a floor page's time goes.
 *
 * Job: `{ engine?: 'sqlite' | 'postgres', file?, url?, connections?, project, limit, body, duration, warmup }`
 * → `{ pages_per_s, read_us, stringify_us, plan, sql, parameters, rows, body_bytes, body }`.
 */
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { createKyselyStore } from '@inbox-kit/storage-kysely';
import { childMain } from './util.mjs';

/** The SQL and parameters of the store's list query for `project` (limit + 1, as the service asks). */
async function listQueryOf({ engine = 'sqlite', file, url }, project, limit) {
  const captured = [];
  const db = new Kysely({
    dialect: engine === 'postgres'
      ? new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) })
      : new SqliteDialect({ database: new Database(file, { readonly: true }) }),
    log: (event) => { if (event.level === 'query') captured.push(event.query); },
  });
  try {
    const store = createKyselyStore(db, { dialect: engine });
    const rows = await store.listInboxItems({ project_id: project, limit: limit + 1 });
    const query = captured.find((q) => /from "project_inbox_items"/i.test(q.sql));
    if (!query) throw new Error('page floor: the store ran no list query');
    return { sql: query.sql, parameters: [...query.parameters], ids: rows.map((r) => r.id) };
  } finally {
    await db.destroy();
  }
}

/** Runs `fn` in a loop for `seconds`; returns calls per second. */
function loop(seconds, fn) {
  const end = performance.now() + seconds * 1000;
  let n = 0;
  let now = performance.now();
  const started = now;
  while (now < end) {
    for (let i = 0; i < 20; i++) fn();
    n += 20;
    now = performance.now();
  }
  return n / ((now - started) / 1000);
}

/** The PostgreSQL loop: `connections` clients reading and stringifying pages for `seconds`; pages per second. */
async function pgLoop(clients, seconds, page) {
  const end = performance.now() + seconds * 1000;
  const started = performance.now();
  let n = 0;
  await Promise.all(clients.map(async (client) => {
    while (performance.now() < end) {
      await page(client);
      n++;
    }
  }));
  return n / ((performance.now() - started) / 1000);
}

async function postgresFloor({ url, connections = 10, duration, warmup }, { sql, parameters }, value, body) {
  // int8 columns (created_at, …) as numbers, as the store's pool reads them.
  const types = { getTypeParser: (oid, format) => (oid === 20 && format !== 'binary' ? Number : pg.types.getTypeParser(oid, format)) };
  const pool = new pg.Pool({ connectionString: url, max: connections, types });
  const clients = await Promise.all(Array.from({ length: connections }, () => pool.connect()));
  try {
    const statement = { name: 'page_floor', text: sql, values: parameters, rowMode: 'array' };
    let sink = 0;
    const page = async (client) => {
      const { rows } = await client.query(statement);
      sink += rows.length + JSON.stringify(value).length;
    };
    await pgLoop(clients, warmup, page);
    const pagesPerS = await pgLoop(clients, duration, page);
    const plan = (await clients[0].query({ text: `EXPLAIN ${sql}`, values: parameters })).rows.map((r) => r['QUERY PLAN'].trim()).join('; ');
    const rows = (await clients[0].query(statement)).rows.length;
    if (sink === 0) throw new Error('page floor: nothing read');
    return { pages_per_s: Math.round(pagesPerS), read_us: null, stringify_us: null, rows, body_bytes: Buffer.byteLength(body), plan, sql, parameters, connections };
  } finally {
    for (const client of clients) client.release();
    await pool.end();
  }
}

childMain(async (job) => {
  const { file, project, limit, body, duration, warmup } = job;
  const query = await listQueryOf(job, project, limit);
  const { sql, parameters, ids } = query;
  const value = JSON.parse(body);
  const text = JSON.stringify(value);
  const answered = value.items.map((item) => item.id);
  if (JSON.stringify(answered) !== JSON.stringify(ids.slice(0, limit))) throw new Error('page floor: the store query and the response list other items');
  if (job.engine === 'postgres') return { ...(await postgresFloor(job, query, value, text)), body: text };

  const sqlite = new Database(file, { readonly: true });
  try {
    const statement = sqlite.prepare(sql).raw(true);
    const plan = sqlite.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...parameters).map((r) => r.detail).join('; ');
    let sink = 0;
    const page = () => {
      const rows = statement.all(...parameters);
      sink += rows.length + JSON.stringify(value).length;
    };
    loop(warmup, page);
    const pagesPerS = loop(duration, page);
    const readPerS = loop(Math.max(1, duration / 2), () => { sink += statement.all(...parameters).length; });
    const stringifyPerS = loop(Math.max(1, duration / 2), () => { sink += JSON.stringify(value).length; });
    if (sink === 0) throw new Error('page floor: nothing read');
    return {
      pages_per_s: Math.round(pagesPerS),
      read_us: Math.round((1e6 / readPerS) * 10) / 10,
      stringify_us: Math.round((1e6 / stringifyPerS) * 10) / 10,
      rows: statement.all(...parameters).length,
      body_bytes: Buffer.byteLength(text),
      body: text,
      plan,
      sql,
      parameters,
    };
  } finally {
    sqlite.close();
  }
});
