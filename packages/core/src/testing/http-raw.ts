/**
 * Raw HTTP tooling of the kit's hostile-input suite (Node only: `node:http`, `node:net`): the route
 * inventory read from the server's own OpenAPI document (so a new route is covered without
 * touching the suite), a raw `node:http` client (no Content-Type unless asked, chunked bodies
 * without Content-Length, lying Content-Length, stream routes read up to their headers), a raw
 * socket for bytes Node's parser refuses, and the checks that an answer is a deliberate 4xx in the
 * envelope that leaks no stack, SQL or key. Moved from `@inbox-kit/http-fastify`'s test helpers.
 */
import http from 'node:http';
import net from 'node:net';
import { expect } from 'vitest';
import { expectError, type WorldEnvelope, type WorldResponse } from './http-world.js';

// — the route inventory —

/** One route as the server documents it. */
export interface RouteInfo {
  method: string;
  /** OpenAPI form: `/projects/{id}/inbox`. */
  template: string;
  /** Path parameter names, in order. */
  params: string[];
  /** Query parameter names. */
  query: string[];
  /** The JSON Schema of the body, when the route takes one. */
  body?: JsonSchema;
  /** Whether the body is required (`requestBody.required`); a route may take an optional one (`POST /admin/keys/{id}/rotate`). */
  bodyRequired: boolean;
  /** `security: []`: no credential needed. */
  public: boolean;
  /** Answers `text/event-stream`. */
  stream: boolean;
}

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  [key: string]: unknown;
}

/** `METHOD /template` of a route. */
export const keyOf = (r: Pick<RouteInfo, 'method' | 'template'>) => `${r.method} ${r.template}`;

/** True for a workspace administration route (`/admin/…`), which needs an `admin` key. */
export const isAdminRoute = (r: Pick<RouteInfo, 'template'>) => r.template.startsWith('/admin/');

/**
 * Every route of the server, from its own OpenAPI document at `GET /openapi.json` (an adapter
 * should also check that the document lists every route its router serves: a hidden route would
 * escape the suite). `send` is `fetch` unless given (the in-process run passes its handler's).
 */
export async function routeInventory(base: string, send: (url: string) => Promise<Response> = fetch): Promise<RouteInfo[]> {
  const res = await send(`${base}/openapi.json`);
  expect(res.status).toBe(200);
  const doc = await res.json() as { paths: Record<string, Record<string, any>> };
  const routes: RouteInfo[] = [];
  for (const [template, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const parameters: { in: string; name: string }[] = op.parameters ?? [];
      const content = op.requestBody?.content as Record<string, { schema: JsonSchema }> | undefined;
      const responses = Object.values(op.responses ?? {}) as { content?: Record<string, unknown> }[];
      routes.push({
        method: method.toUpperCase(),
        template,
        params: [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!),
        query: parameters.filter((p) => p.in === 'query').map((p) => p.name),
        ...(content ? { body: Object.values(content)[0]!.schema } : {}),
        bodyRequired: content !== undefined && op.requestBody?.required !== false,
        public: Array.isArray(op.security) && op.security.length === 0,
        stream: responses.some((r) => Object.keys(r.content ?? {}).includes('text/event-stream')),
      });
    }
  }
  return routes;
}

/** Resources a route's parameters are filled with, by the literal segment before each parameter. */
export type ParamValues = Record<string, string>;

/** The path of `route` with its parameters filled from `values` (keyed by the segment before each). */
export function fill(route: RouteInfo, values: ParamValues, override: Record<number, string> = {}): string {
  const segments = route.template.split('/');
  let index = 0;
  return segments
    .map((segment, i) => {
      if (!/^\{.+\}$/.test(segment)) return segment;
      const at = index++;
      if (override[at] !== undefined) return override[at];
      const before = segments[i - 1]!;
      const value = values[before];
      if (value === undefined) throw new Error(`no value for the parameter after "${before}" in ${route.template}: add it to the suite's ParamValues`);
      return encodeURIComponent(value);
    })
    .join('/');
}

/** A valid body for every route that takes one, by `METHOD /template`; a new body route must be added here. */
export function validBody(route: RouteInfo, bodies: Record<string, unknown>): unknown {
  const body = bodies[keyOf(route)];
  if (body === undefined) throw new Error(`no valid body for ${keyOf(route)}: add one to the suite's table`);
  return body;
}

// — a raw HTTP client —

export interface RawRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  /** Sent as is, with an accurate Content-Length unless `contentLength` says otherwise. */
  body?: string | Uint8Array;
  /** Sent with `Transfer-Encoding: chunked` (no Content-Length), one write per chunk. */
  chunks?: Iterable<Uint8Array>;
  /** Overrides the Content-Length header (a lie), or `null` to send none. */
  contentLength?: number | null;
  /** When the answer is an event stream, resolve as soon as its headers arrived and drop the connection. */
  headOnly?: boolean;
  /** The local address to connect from (e.g. `127.0.0.2`: another client address on loopback). */
  localAddress?: string;
}

/** One request over a fresh connection with `node:http`; the body is parsed when it is JSON. */
export function rawRequest(base: string, r: RawRequest): Promise<WorldResponse> {
  const url = new URL(base);
  const headers: Record<string, string | number> = { ...r.headers };
  if (r.body !== undefined && r.contentLength !== null) headers['content-length'] = r.contentLength ?? Buffer.byteLength(r.body);
  if (r.chunks !== undefined) headers['transfer-encoding'] = 'chunked';
  return new Promise<WorldResponse>((resolve, reject) => {
    let answered = false;
    const req = http.request({ host: url.hostname, port: url.port, method: r.method, path: r.path, headers, agent: false, ...(r.localAddress ? { localAddress: r.localAddress } : {}) });
    req.setTimeout(20_000, () => req.destroy(new Error(`no answer to ${r.method} ${r.path.slice(0, 80)} within 20 s`)));
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    req.on('response', (res) => {
      answered = true;
      const h = new Headers();
      for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) h.set(k, Array.isArray(v) ? v.join(', ') : v);
      if (r.headOnly && (h.get('content-type') ?? '').includes('text/event-stream')) {
        res.destroy();
        req.destroy();
        resolve({ status: res.statusCode ?? 0, headers: h, body: undefined, text: '' });
        return;
      }
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(parts).toString('utf8');
        let body: unknown = text;
        if ((h.get('content-type') ?? '').includes('json') && text !== '') body = JSON.parse(text);
        resolve({ status: res.statusCode ?? 0, headers: h, body, text });
      });
    });
    if (r.chunks !== undefined) {
      void (async () => {
        for (const chunk of r.chunks!) {
          if (answered || req.destroyed) return;
          if (!req.write(chunk)) await writable(req);
        }
        if (!answered && !req.destroyed) req.end();
      })().catch(() => undefined);
    } else {
      req.end(r.body);
    }
  });
}

/**
 * Resolves once `req` drains or closes, removing both listeners either way (leaving the `close`
 * listener of every drained write behind added one per write: MaxListenersExceededWarning).
 */
function writable(req: http.ClientRequest): Promise<void> {
  return new Promise<void>((ok) => {
    const done = () => {
      req.off('drain', done);
      req.off('close', done);
      ok();
    };
    req.on('drain', done);
    req.on('close', done);
  });
}

/** Writes `bytes` on a raw TCP connection and returns everything the server sends back until it closes. */
export function rawSocket(base: string, bytes: string | Uint8Array): Promise<string> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname);
    const parts: Buffer[] = [];
    socket.setTimeout(20_000, () => socket.destroy(new Error('raw socket: no close within 20 s')));
    socket.on('data', (d) => parts.push(d));
    socket.on('error', (error) => (parts.length > 0 ? resolve(Buffer.concat(parts).toString('utf8')) : reject(error)));
    socket.on('close', () => resolve(Buffer.concat(parts).toString('utf8')));
    socket.on('connect', () => socket.write(bytes));
  });
}

/** Parses one raw HTTP/1.1 response (status, headers, JSON body) into a {@link WorldResponse}. */
export function parseRawResponse(raw: string): WorldResponse {
  const cut = raw.indexOf('\r\n\r\n');
  const [statusLine, ...lines] = raw.slice(0, cut).split('\r\n');
  const headers = new Headers();
  for (const line of lines) headers.append(line.slice(0, line.indexOf(':')).trim(), line.slice(line.indexOf(':') + 1).trim());
  const text = raw.slice(cut + 4);
  return { status: Number(statusLine!.split(' ')[1]), headers, text, body: (headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text };
}

// — the envelope, and what it must never show —

/** What betrays a stack, SQL or internals in a response. */
export const LEAKS: RegExp[] = [
  /\bat (?:async )?\S+ \(/, /\bat \S+:\d+:\d+/, /\w+Error:/, /\.[cm]?[jt]s:\d+/, /node_modules/, /\bSELECT\b/i, /\bINSERT INTO\b/i, /\bUPDATE \w+ SET\b/i,
  /\bDELETE FROM\b/i, /\bUNIQUE\b/, /constraint/i, /duplicate key/i, /sqlite/i, /syntax error/i, /relation "/, /\bstack\b/i, /kysely/i, /postgres/i,
  /\bpg_/, /key_hash/, /ECONNREFUSED|ETIMEDOUT|ENOENT/,
];

/** Fails when `text` matches any of {@link LEAKS}, or holds one of `secrets`. */
export function expectNoLeak(text: string, secrets: string[] = [], what = ''): void {
  // Random ids (request ids, record ids) may spell `-pg_` or the like by chance: they are not leaks.
  const scanned = text.replace(/"(request_id|id|\w+_id)":"[^"]*"/g, '"$1":"…"');
  for (const leak of LEAKS) expect(leak.test(scanned), `${what} leaks ${String(leak)}: ${text.slice(0, 300)}`).toBe(false);
  for (const secret of secrets) expect(text.includes(secret), `${what} echoes a key: ${text.slice(0, 300)}`).toBe(false);
}

/** A deliberate 4xx in the envelope, with no leak. Returns the envelope. */
export function expect4xx(res: WorldResponse, what: string, secrets: string[] = []): WorldEnvelope {
  expect(res.status, `${what} → ${res.status} ${res.text.slice(0, 300)}`).toBeGreaterThanOrEqual(400);
  expect(res.status, `${what} → ${res.status} ${res.text.slice(0, 300)}`).toBeLessThan(500);
  const env = expectError(res, res.status);
  expectNoLeak(res.text, secrets, what);
  return env;
}
