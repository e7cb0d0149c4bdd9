/**
 * The route floor: a bare Fastify server (same Fastify, same Node, logging off) that does for the
 * get and Live Inbox queue / withdraw routes only what any implementation of them must do, on the
 * bench's own database, so `route ÷ floor` says how much of a route's cost is inbox-kit's:
 *
 * - the bearer key: SHA-256 of the secret, looked up in an in-memory map (the demo's key cache hit);
 * - one primary-key read with the raw driver as a prepared statement (better-sqlite3; on PostgreSQL
 *   a named statement on a `pg` pool of the server's size): the item (`GET /projects/:project/inbox/:id`,
 *   every column, its JSON payload parsed) or the Session (`POST` / `DELETE /v1/awaken/sessions/:session/live-inbox…`);
 * - the body parsed by Fastify's own JSON parser, the message kept in a `Map`, a JSON answer.
 *
 * No access rules (project membership, roles), no schema validation, no hooks, no ids beyond a
 * counter: what it leaves out is most of what a route adds (the floor is also a fresh process,
 * while the route's server has run the earlier scenarios). Its Live Inbox queue starts empty, so a
 * run "at 1,000 queued" measures the same as one at 10. Same paths as the demo, so lib/drive.mjs
 * drives both with the same scenarios. Prints `route floor listening on <url>` when ready.
 *
 * argv[2]: JSON `{ engine: 'sqlite' | 'postgres', file?, url?, key, connections? }`.
 */
import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import pg from 'pg';

const { engine, file, url, key, connections = 10 } = JSON.parse(process.argv[2]);
const sha256 = (text) => createHash('sha256').update(text).digest('hex');
const keys = new Map([[sha256(key), 'acc_owner']]);

const ITEM_SQL = {
  sqlite: 'SELECT * FROM project_inbox_items WHERE id = ? AND project_id = ?',
  postgres: 'SELECT * FROM project_inbox_items WHERE id = $1 AND project_id = $2',
};
const SESSION_SQL = {
  sqlite: 'SELECT id, project_id FROM sessions WHERE id = ?',
  postgres: 'SELECT id, project_id FROM sessions WHERE id = $1',
};

/** `read(name, sql, values)` → the first row or undefined. */
let read;
let close = async () => {};
if (engine === 'sqlite') {
  const db = new Database(file, { readonly: true });
  const statements = new Map();
  read = (name, text, values) => {
    let statement = statements.get(name);
    if (!statement) statements.set(name, (statement = db.prepare(text)));
    return statement.get(...values);
  };
  close = async () => db.close();
} else {
  const pool = new pg.Pool({ connectionString: url, max: connections });
  read = async (name, text, values) => (await pool.query({ name, text, values })).rows[0];
  close = () => pool.end();
}

const caller = (request) => {
  const header = request.headers.authorization;
  return typeof header === 'string' && header.startsWith('Bearer ') ? keys.get(sha256(header.slice(7))) : undefined;
};

const app = Fastify({ logger: false });
const queue = new Map();
let queued = 0;

app.get('/projects/:project/inbox/:id', async (request, reply) => {
  if (!caller(request)) return reply.code(401).send({ error: 'unauthorized' });
  const row = await read('floor_item', ITEM_SQL[engine], [request.params.id, request.params.project]);
  if (!row) return reply.code(404).send({ error: 'not_found' });
  // Every column, the JSON payload parsed (node-postgres parses `json` columns itself).
  return { item: typeof row.payload === 'string' ? { ...row, payload: JSON.parse(row.payload) } : row };
});

app.post('/v1/awaken/sessions/:session/live-inbox', async (request, reply) => {
  if (!caller(request)) return reply.code(401).send({ error: 'unauthorized' });
  const session = await read('floor_session', SESSION_SQL[engine], [request.params.session]);
  if (!session) return reply.code(404).send({ error: 'not_found' });
  const id = `lim_floor_${++queued}`;
  queue.set(id, request.body.content);
  return { id, session_id: session.id, status: 'queued', position: queue.size };
});

app.delete('/v1/awaken/sessions/:session/live-inbox/:id', async (request, reply) => {
  if (!caller(request)) return reply.code(401).send({ error: 'unauthorized' });
  const session = await read('floor_session', SESSION_SQL[engine], [request.params.session]);
  if (!session || !queue.delete(request.params.id)) return reply.code(404).send({ error: 'not_found' });
  return { id: request.params.id, session_id: session.id, status: 'withdrawn' };
});

await app.listen({ port: 0, host: '127.0.0.1' });
const { port } = app.server.address();
console.log(`route floor listening on http://127.0.0.1:${port}`);
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => app.close().then(close).then(() => process.exit(0)));
