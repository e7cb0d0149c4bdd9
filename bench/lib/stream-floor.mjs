/**
 * The stream floor: a bare `node:http` server (no framework, no storage, logging off; the demo's
 * Node flags) that does for an event stream only what any Node implementation of it must, so the
 * fan-out run (lib/streams.mjs, the same driver, the same number of streams) says how much of a
 * stream's memory and of an event's fan-out is inbox-kit's and how much is Node's and the kernel's:
 *
 * - `GET /projects/:project/events/stream?after=N`: the bearer key's SHA-256 looked up in an
 *   in-memory map (401 otherwise), the event-stream head (the demo's headers), the `retry:` hint;
 *   the response kept in a set until the client leaves. The first stream's `after` is the
 *   sequence the events go on from.
 * - `POST /projects/:project/inbox`: the key checked the same way, the JSON body read and parsed,
 *   the next sequence taken, one Project Event-shaped frame built once (`id:`, `event:`, `data:` with
 *   the body as the item) and written to every open stream, the item answered 201.
 *
 * No access rules, no re-check before a delivery, no heartbeats, no back-pressure cut-off: what it
 * leaves out is what a route adds. Prints `stream floor listening on <url>` when ready.
 *
 * argv[2]: JSON `{ keys: { <account id>: <secret> } }`.
 */
import http from 'node:http';
import { sha256Hex } from './util.mjs';

const job = JSON.parse(process.argv[2]);
const keys = new Map(Object.entries(job.keys).map(([account, secret]) => [sha256Hex(secret), account]));

const HEAD = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'close',
  'x-accel-buffering': 'no',
};

const streams = new Set();
let sequence;
let counter = 0;

/** The caller's account, or undefined (the request answered 401). */
function caller(req, res) {
  const header = req.headers.authorization;
  const account = typeof header === 'string' && header.startsWith('Bearer ') ? keys.get(sha256Hex(header.slice(7))) : undefined;
  if (account === undefined) {
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end('{"error":{"code":"invalid_credentials"}}');
  }
  return account;
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://floor');
  const parts = url.pathname.split('/');
  const account = caller(req, res);
  if (account === undefined) return;
  if (req.method === 'GET' && parts[3] === 'events' && parts[4] === 'stream') {
    sequence ??= Number(url.searchParams.get('after') ?? 0);
    res.useChunkedEncodingByDefault = false;
    res.writeHead(200, { ...HEAD, 'x-request-id': `req_${++counter}` });
    res.write('retry: 2000\n\n');
    streams.add(res);
    res.on('close', () => streams.delete(res));
    return;
  }
  if (req.method === 'POST' && parts[3] === 'inbox') {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const now = Date.now();
      const item = { id: `pii_${++counter}`, project_id: parts[2], account_id: account, status: 'pending', ...JSON.parse(body), created_at: now, updated_at: now };
      sequence = (sequence ?? 0) + 1;
      const event = { id: `pe_${counter}`, project_id: parts[2], sequence, type: 'inbox.item.created', actor_account_id: account, payload: { item }, created_at: now };
      const frame = `id: ${sequence}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
      for (const stream of streams) stream.write(frame);
      const text = JSON.stringify(item);
      res.writeHead(201, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    });
    return;
  }
  res.writeHead(404, { 'content-type': 'application/json' });
  res.end('{"error":{"code":"not_found"}}');
});
server.maxConnections = Infinity;
server.listen(0, '127.0.0.1', () => console.log(`stream floor listening on http://127.0.0.1:${server.address().port}`));
// Exit on SIGTERM (the bench's stop) through process.exit, so a `--cpu-prof` profile is written.
process.on('SIGTERM', () => process.exit(0));
