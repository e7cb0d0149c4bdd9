/**
 * The route floor: a bare Fastify server (same Fastify, same Node, logging off) that does for a
 * route only what any implementation of it must do, on the bench's own database, so
 * `route ÷ floor` says how much of a route's cost is inbox-kit's. Routes (the demo's paths, so
 * lib/drive.mjs drives both with the same scenarios):
 *
 * - `GET /projects/:project/inbox/:id` (get): one primary-key read of the item, every column, its
 *   JSON payload parsed;
 * - `GET /projects/:project/inbox` (list, over HTTP: the page floor plus what any HTTP answer of it
 *   costs): the store's own list statement (`list.sql`, `list.parameters`, captured by
 *   lib/page-floor.mjs) read raw, then `JSON.stringify` of the page the route answered (`list.body`,
 *   a file);
 * - `POST /projects/:project/inbox` (create): one write transaction of the four statements a
 *   create writes (the project's event sequence bumped — which also gives its workspace and owner —,
 *   the item, the Operation Log row, the Project Event), the item answered 201;
 * - `PATCH /projects/:project/inbox/:id` (decide, accept only): one write transaction — the
 *   conditional update of the pending item (`RETURNING *`), the Operation Log row, the sequence,
 *   the Project Event —, the item answered;
 * - `POST` / `DELETE /v1/awaken/sessions/:session/live-inbox…` (Live Inbox queue / withdraw) and
 *   `GET /v1/awaken/sessions/:session/live-inbox` (Live Inbox GET): the Live Inbox is process-local,
 *   so the floor's one read is the Session's ownership read (`id, project_id` by primary key); the
 *   queue is a `Map`, the GET answers the snapshot the route answered (`snapshots`, read from a file).
 *
 * Every request: the bearer key's SHA-256 looked up in an in-memory map (the demo's key cache hit),
 * Fastify's own JSON body parser, `JSON.stringify` of the answer. SQLite: better-sqlite3 prepared
 * statements; writes commit at the server's journal mode and `synchronous` level, the writes that
 * arrive in one event-loop turn in one `BEGIN IMMEDIATE … COMMIT` (each in a savepoint: the group
 * commit the SQLite store does, one sync per group). PostgreSQL: a `pg` pool of the server's size,
 * named prepared statements; each write is one statement (data-modifying CTEs: one round trip, one
 * implicit transaction).
 *
 * No access rules (project membership, roles), no schema validation, no hooks, no idempotency,
 * ids from a counter: what it leaves out is most of what a route adds (the floor is also a fresh
 * process, while the route's server has run the earlier scenarios). Its Live Inbox queue starts
 * empty, so a queue run "at 1,000 queued" measures the same as one at 10. Prints
 * `route floor listening on <url>` when ready.
 *
 * argv[2]: JSON `{ engine: 'sqlite' | 'postgres', file?, url?, keys: { <account id>: <secret> },
 * connections?, journal_mode?, synchronous?, snapshots? (a JSON file: session id → snapshot text),
 * list? ({ sql, parameters, body }) }`.
 */
import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import pg from 'pg';
import { sha256Hex } from './util.mjs';

const job = JSON.parse(process.argv[2]);
const { engine, file, url, connections = 10 } = job;
const keys = new Map(Object.entries(job.keys).map(([account, secret]) => [sha256Hex(secret), account]));
const snapshots = new Map(Object.entries(job.snapshots ? JSON.parse(readFileSync(job.snapshots, 'utf8')) : {}).map(([id, text]) => [id, JSON.parse(text)]));

/** `?` placeholders → `$1…` for PostgreSQL. */
const numbered = (text) => {
  let i = 0;
  return text.replace(/\?/g, () => `$${++i}`);
};

const ITEM_SQL = 'SELECT * FROM project_inbox_items WHERE id = ? AND project_id = ?';
const SESSION_SQL = 'SELECT id, project_id FROM sessions WHERE id = ?';
const ITEM_COLUMNS = `id, workspace_id, project_id, account_id, sender_account_id, type, title, payload,
  source_event_id, source_session_id, source_floor_id, source_page_id, status, decided_by_account_id, decided_at, created_at, updated_at`;
const LOG_COLUMNS = 'id, workspace_id, project_id, actor_account_id, action, target_type, target_id, request_id, metadata, created_at';
const EVENT_COLUMNS = `id, workspace_id, project_id, sequence, type, actor_account_id, session_id, floor_id, page_id,
  operation_log_id, correlation_id, causation_event_id, payload, created_at`;

// SQLite: four statements per write, in the group's transaction.
const SQLITE = {
  bump: 'UPDATE projects SET event_sequence = event_sequence + 1 WHERE id = ? RETURNING event_sequence, workspace_id, account_id',
  insertItem: `INSERT INTO project_inbox_items (${ITEM_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', NULL, NULL, ?, ?)`,
  decideItem: `UPDATE project_inbox_items SET status = 'accepted', decided_by_account_id = ?, decided_at = ?, updated_at = ?
    WHERE id = ? AND project_id = ? AND status = 'pending' RETURNING *`,
  log: `INSERT INTO operation_logs (${LOG_COLUMNS}) VALUES (?, ?, ?, ?, ?, 'project_inbox_item', ?, ?, ?, ?)`,
  event: `INSERT INTO project_events (${EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?, ?, NULL, ?, ?)`,
};

// PostgreSQL: one statement per write.
const PG_CREATE = `WITH seq AS (UPDATE projects SET event_sequence = event_sequence + 1 WHERE id = $1 RETURNING event_sequence, workspace_id, account_id),
  item AS (INSERT INTO project_inbox_items (${ITEM_COLUMNS})
    SELECT $2, seq.workspace_id, $1, seq.account_id, $3, $4, $5, $6::json, $7, $8, $9, $10, 'pending', NULL, NULL, $11, $11 FROM seq RETURNING *),
  log AS (INSERT INTO operation_logs (${LOG_COLUMNS})
    SELECT $12, seq.workspace_id, $1, $3, 'project_inbox_item.create', 'project_inbox_item', $2, $13, $14::json, $11 FROM seq),
  ev AS (INSERT INTO project_events (${EVENT_COLUMNS})
    SELECT $15, seq.workspace_id, $1, seq.event_sequence, 'project_inbox.item.created', $3, $8, NULL, NULL, $12, $13, NULL, $16::json, $11 FROM seq)
  SELECT * FROM item`;
const PG_DECIDE = `WITH item AS (UPDATE project_inbox_items SET status = 'accepted', decided_by_account_id = $3, decided_at = $4, updated_at = $4
    WHERE id = $1 AND project_id = $2 AND status = 'pending' RETURNING *),
  seq AS (UPDATE projects SET event_sequence = event_sequence + 1 WHERE id = $2 AND EXISTS (SELECT 1 FROM item) RETURNING event_sequence),
  log AS (INSERT INTO operation_logs (${LOG_COLUMNS})
    SELECT $5, item.workspace_id, $2, $3, 'project_inbox_item.decide', 'project_inbox_item', $1, $6, $7::json, $4 FROM item),
  ev AS (INSERT INTO project_events (${EVENT_COLUMNS})
    SELECT $8, item.workspace_id, $2, seq.event_sequence, 'project_inbox.item.accepted', $3, item.source_session_id, NULL, NULL, $5, $6, NULL,
      json_build_object('inbox_item_id', item.id, 'status', item.status, 'decision', 'accept'), $4 FROM item, seq)
  SELECT * FROM item`;

let n = 0;
/** An id of the server's length (prefix + 21 characters), unique in this process and run. */
const nextId = (prefix) => `${prefix}_floor${String(Date.now() % 1e9).padStart(9, '0')}${String(++n).padStart(7, '0')}`;

/** `read(sql, values)` → the first row or undefined; `create(project, account, body)`, `decide(project, id, account, body)` → the item row or undefined. */
let read;
/** `page()` → the rows of the list statement (raw arrays). */
let page = () => [];
let create;
let decide;
let close = async () => {};
if (engine === 'sqlite') {
  const db = new Database(file, { timeout: 5000 });
  db.pragma(`journal_mode = ${job.journal_mode ?? 'WAL'}`);
  db.pragma(`synchronous = ${job.synchronous ?? 'FULL'}`);
  db.pragma('foreign_keys = ON');
  const statements = new Map();
  const prepared = (text) => {
    let statement = statements.get(text);
    if (!statement) statements.set(text, (statement = db.prepare(text)));
    return statement;
  };
  read = (text, values) => prepared(text).get(...values);
  if (job.list) {
    const statement = db.prepare(job.list.sql).raw(true);
    page = () => statement.all(...job.list.parameters);
  }
  // Group commit: the writes of one event-loop turn in one transaction, each in its own savepoint.
  let group = [];
  const commitGroup = () => {
    const writes = group;
    group = [];
    db.exec('BEGIN IMMEDIATE');
    const results = writes.map(({ work }) => {
      db.exec('SAVEPOINT w');
      try {
        const row = work();
        db.exec('RELEASE w');
        return { row };
      } catch (error) {
        db.exec('ROLLBACK TO w');
        db.exec('RELEASE w');
        return { error };
      }
    });
    try {
      db.exec('COMMIT');
    } catch (error) {
      if (db.inTransaction) db.exec('ROLLBACK');
      for (const w of writes) w.reject(error);
      return;
    }
    writes.forEach((w, i) => (results[i].error ? w.reject(results[i].error) : w.resolve(results[i].row)));
  };
  const write = (work) => new Promise((resolve, reject) => {
    group.push({ work, resolve, reject });
    if (group.length === 1) setImmediate(commitGroup);
  });
  const audit = (seq, project, actor, action, target, requestId, metadata, eventType, sessionId, eventPayload, now) => {
    const logId = nextId('oplog');
    prepared(SQLITE.log).run(logId, seq.workspace_id, project, actor, action, target, requestId, metadata, now);
    prepared(SQLITE.event).run(nextId('evt'), seq.workspace_id, project, seq.event_sequence, eventType, actor, sessionId, logId, requestId, eventPayload, now);
  };
  create = (project, account, body) => write(() => {
    const now = Date.now();
    const seq = prepared(SQLITE.bump).get(project);
    if (!seq) return undefined;
    const id = nextId('pinbox');
    const payload = JSON.stringify(body.payload ?? {});
    const item = {
      id, workspace_id: seq.workspace_id, project_id: project, account_id: seq.account_id, sender_account_id: account, type: body.type, title: body.title,
      payload: body.payload ?? {}, source_event_id: body.source_event_id ?? null, source_session_id: body.source_session_id ?? null,
      source_floor_id: body.source_floor_id ?? null, source_page_id: body.source_page_id ?? null, status: 'pending',
      decided_by_account_id: null, decided_at: null, created_at: now, updated_at: now,
    };
    prepared(SQLITE.insertItem).run(id, item.workspace_id, project, item.account_id, account, item.type, item.title, payload,
      item.source_event_id, item.source_session_id, item.source_floor_id, item.source_page_id, now, now);
    const requestId = nextId('req');
    audit(seq, project, account, 'project_inbox_item.create', id, requestId, JSON.stringify({ payload_byte_count: payload.length }),
      'project_inbox.item.created', item.source_session_id,
      JSON.stringify({ inbox_item_id: id, type: item.type, title: item.title, status: 'pending', sender_account_id: account }), now);
    return item;
  });
  decide = (project, id, account, body) => write(() => {
    const now = Date.now();
    const row = prepared(SQLITE.decideItem).get(account, now, now, id, project);
    if (!row) return undefined;
    const seq = prepared(SQLITE.bump).get(project);
    audit(seq, project, account, 'project_inbox_item.decide', id, nextId('req'), JSON.stringify({ decision: 'accept', note: body.note ?? null }),
      'project_inbox.item.accepted', row.source_session_id, JSON.stringify({ inbox_item_id: id, status: row.status, decision: 'accept' }), now);
    return { ...row, payload: JSON.parse(row.payload) };
  });
  close = async () => db.close();
} else {
  const pool = new pg.Pool({ connectionString: url, max: connections });
  const names = new Map();
  const query = async (text, values) => {
    let name = names.get(text);
    if (!name) names.set(text, (name = `floor_${names.size}`));
    return (await pool.query({ name, text, values })).rows[0];
  };
  read = (text, values) => query(numbered(text), values);
  if (job.list) {
    const statement = { name: 'floor_list', text: job.list.sql, values: job.list.parameters, rowMode: 'array' };
    page = async () => (await pool.query(statement)).rows;
  }
  create = (project, account, body) => {
    const now = Date.now();
    const payload = JSON.stringify(body.payload ?? {});
    const id = nextId('pinbox');
    const sources = [body.source_event_id ?? null, body.source_session_id ?? null, body.source_floor_id ?? null, body.source_page_id ?? null];
    return query(PG_CREATE, [project, id, account, body.type, body.title, payload, ...sources, now, nextId('oplog'), nextId('req'),
      JSON.stringify({ payload_byte_count: payload.length }), nextId('evt'),
      JSON.stringify({ inbox_item_id: id, type: body.type, title: body.title, status: 'pending', sender_account_id: account })]);
  };
  decide = (project, id, account, body) => query(PG_DECIDE, [id, project, account, Date.now(), nextId('oplog'), nextId('req'),
    JSON.stringify({ decision: 'accept', note: body.note ?? null }), nextId('evt')]);
  close = () => pool.end();
}

const caller = (request) => {
  const header = request.headers.authorization;
  return typeof header === 'string' && header.startsWith('Bearer ') ? keys.get(sha256Hex(header.slice(7))) : undefined;
};
/** A row as the API answers it: the JSON payload parsed (node-postgres parses `json` columns itself). */
const itemOf = (row) => (typeof row.payload === 'string' ? { ...row, payload: JSON.parse(row.payload) } : row);

const app = Fastify({ logger: false });
const queue = new Map();
let queued = 0;

app.get('/projects/:project/inbox/:id', async (request, reply) => {
  if (!caller(request)) return reply.code(401).send({ error: 'unauthorized' });
  const row = await read(ITEM_SQL, [request.params.id, request.params.project]);
  if (!row) return reply.code(404).send({ error: 'not_found' });
  return { item: itemOf(row) };
});

const listBody = job.list ? JSON.parse(readFileSync(job.list.body, 'utf8')) : undefined;
app.get('/projects/:project/inbox', async (request, reply) => {
  if (!caller(request)) return reply.code(401).send({ error: 'unauthorized' });
  if (!listBody) return reply.code(404).send({ error: 'no list statement given' });
  const rows = await page();
  if (rows.length === 0) return reply.code(404).send({ error: 'not_found' });
  return listBody;
});

app.post('/projects/:project/inbox', async (request, reply) => {
  const account = caller(request);
  if (!account) return reply.code(401).send({ error: 'unauthorized' });
  const item = await create(request.params.project, account, request.body);
  if (!item) return reply.code(404).send({ error: 'not_found' });
  return reply.code(201).send({ item });
});

app.patch('/projects/:project/inbox/:id', async (request, reply) => {
  const account = caller(request);
  if (!account) return reply.code(401).send({ error: 'unauthorized' });
  if (request.body?.decision !== 'accept') return reply.code(400).send({ error: 'the floor decides accept only' });
  const item = await decide(request.params.project, request.params.id, account, request.body);
  if (!item) return reply.code(409).send({ error: 'not pending' });
  return { item };
});

app.get('/v1/awaken/sessions/:session/live-inbox', async (request, reply) => {
  if (!caller(request)) return reply.code(401).send({ error: 'unauthorized' });
  const session = await read(SESSION_SQL, [request.params.session]);
  if (!session) return reply.code(404).send({ error: 'not_found' });
  // The snapshot the route answered (its parsed value, stringified again per request).
  return snapshots.get(session.id) ?? { active: true, version: queued, messages: [...queue].map(([id, content]) => ({ id, content })) };
});

app.post('/v1/awaken/sessions/:session/live-inbox', async (request, reply) => {
  if (!caller(request)) return reply.code(401).send({ error: 'unauthorized' });
  const session = await read(SESSION_SQL, [request.params.session]);
  if (!session) return reply.code(404).send({ error: 'not_found' });
  const id = ++queued;
  queue.set(id, request.body.content);
  return { id };
});

app.delete('/v1/awaken/sessions/:session/live-inbox/:id', async (request, reply) => {
  if (!caller(request)) return reply.code(401).send({ error: 'unauthorized' });
  const session = await read(SESSION_SQL, [request.params.session]);
  if (!session || !queue.delete(Number(request.params.id))) return reply.code(404).send({ error: 'not_found' });
  return reply.code(204).send();
});

await app.listen({ port: 0, host: '127.0.0.1' });
const { port } = app.server.address();
console.log(`route floor listening on http://127.0.0.1:${port}`);
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => app.close().then(close).then(() => process.exit(0)));
