/**
 * Project Events over real sockets (platform.md "Project Events", project-inbox.md "Project Events
 * and Operation Log"): the history page, the SSE stream (frame format, headers, `retry:` hint,
 * heartbeat, no compression), resume by `?after=` and `Last-Event-ID` with no gap and no duplicate
 * across the replay → live switch, filters, visibility per role (live and replayed), nothing
 * published by a rolled-back write, the Operation Log page. Moved here from
 * `@inbox-kit/http-fastify`'s `events-stream.test.ts`, which keeps what is Fastify's own (its
 * open-stream count after 500 dropped streams, `app.close()` with streams open) and the servers
 * sharing a PostgreSQL event bus. The SSE client is a raw `node:http` one (`openStream`).
 *
 * Data (`http-suites-kit.ts`): one group whose blocks' checks are named data (`http-suites-events-*.ts`),
 * over one world; the SSE checks are of the wire layer, the pages' of the behaviour layer.
 */
import http from 'node:http';
import type { HttpConformanceOptions } from './http-conformance-checks.js';
import { startHttpWorld, type HttpWorld } from './http-world.js';
import { registerSuite, type HttpSuiteBase, type HttpSuiteGroup } from './http-suites-kit.js';
import { historyPageChecks, streamFormatChecks } from './http-suites-events-stream.js';
import { resumeChecks } from './http-suites-events-resume.js';
import { filterChecks, operationLogChecks, publishingChecks, visibilityChecks } from './http-suites-events-visibility.js';

/** Polls `check` every 10 ms until it holds; fails after `timeoutMs` (default 5 s) naming `label`. */
export async function waitUntil(check: () => boolean | Promise<boolean>, label: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${label}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export const isInbox = (type: string) => type.startsWith('project_inbox.');

/** `[from, from + 1, …, to]`. */
export const range = (from: number, to: number): number[] => Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);

// — a raw SSE client —

/** One parsed frame: `id:`, `event:` and the `data:` lines (JSON-parsed when there is exactly one). */
export interface Frame {
  id: number;
  event: string;
  /** Every `data:` line of the frame (the spec allows exactly one). */
  dataLines: string[];
  data: any;
}

export interface SseStream {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Body text of a non-200 answer. */
  body: string;
  /** Every byte received so far, as text. */
  text: string;
  frames: Frame[];
  comments: string[];
  /** The `retry:` hint in ms, once received. */
  retry: number | undefined;
  /** True once the server ended the response (or the connection closed). */
  ended: boolean;
  ids(): number[];
  /** Waits until `check` holds (re-checked as data arrives); 5 s deadline. */
  waitFor(check: (s: SseStream) => boolean, label: string, timeoutMs?: number): Promise<void>;
  /** Waits for a frame with id ≥ `id`. */
  waitForId(id: number, timeoutMs?: number): Promise<void>;
  /** Destroys the connection (the client vanishes). */
  destroy(): void;
  /** Half-closes the connection: sends FIN (`socket.end()`) without destroying the socket. */
  halfClose(): void;
}

export interface OpenStreamOptions {
  /** API key (Bearer). */
  key?: string;
  headers?: Record<string, string>;
}

/**
 * Opens `GET path` on a fresh connection (`agent: false`) and resolves once the response head has
 * arrived (for a 200, the stream is subscribed by then: the server subscribes before it answers).
 */
export function openStream(baseUrl: string, path: string, opts: OpenStreamOptions = {}): Promise<SseStream> {
  const headers: Record<string, string> = { accept: 'text/event-stream', ...opts.headers };
  if (opts.key !== undefined) headers.authorization = `Bearer ${opts.key}`;
  return new Promise((resolve, reject) => {
    const req = http.get(new URL(path, baseUrl), { agent: false, headers }, (res) => {
      res.setEncoding('utf8');
      let buffer = '';
      const waiters = new Set<() => void>();
      const wake = () => {
        for (const w of [...waiters]) w();
      };
      const stream: SseStream = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        body: '',
        text: '',
        frames: [],
        comments: [],
        retry: undefined,
        ended: false,
        ids: () => stream.frames.map((f) => f.id),
        waitFor: (check, label, timeoutMs = 5_000) => new Promise<void>((ok, fail) => {
          const test = () => {
            if (check(stream)) {
              done();
              ok();
            } else if (stream.ended) {
              done();
              fail(new Error(`stream ended while waiting for ${label}; ids ${JSON.stringify(stream.ids())}`));
            }
          };
          const timer = setTimeout(() => {
            done();
            fail(new Error(`timed out waiting for ${label}; ids ${JSON.stringify(stream.ids())}`));
          }, timeoutMs);
          const done = () => {
            clearTimeout(timer);
            waiters.delete(test);
          };
          waiters.add(test);
          test();
        }),
        waitForId: (id, timeoutMs) => stream.waitFor((s) => s.frames.some((f) => f.id >= id), `frame id ${id}`, timeoutMs),
        destroy: () => req.destroy(),
        halfClose: () => req.socket?.end(),
      };
      const parseBlock = (block: string) => {
        let id: number | undefined;
        let event = 'message';
        const dataLines: string[] = [];
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) stream.comments.push(line.slice(1).trim());
          else if (line.startsWith('retry:')) stream.retry = Number(line.slice(6).trim());
          else if (line.startsWith('id:')) id = Number(line.slice(3).trim());
          else if (line.startsWith('event:')) event = line.slice(6).trim();
          else if (line.startsWith('data:')) dataLines.push(line.slice(5).trim());
          else if (line !== '') throw new Error(`unexpected SSE line: ${JSON.stringify(line)}`);
        }
        if (dataLines.length === 0) return;
        let data: unknown = undefined;
        if (dataLines.length === 1) data = JSON.parse(dataLines[0]!);
        stream.frames.push({ id: id ?? NaN, event, dataLines, data });
      };
      res.on('data', (chunk: string) => {
        stream.text += chunk;
        if (stream.status !== 200) {
          stream.body += chunk;
          return;
        }
        buffer += chunk;
        let at: number;
        while ((at = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, at);
          buffer = buffer.slice(at + 2);
          parseBlock(block);
        }
        wake();
      });
      const finish = () => {
        if (stream.ended) return;
        stream.ended = true;
        wake();
      };
      res.on('end', finish);
      res.on('close', finish);
      res.on('error', finish);
      resolve(stream);
    });
    req.on('error', reject);
  });
}

// — the suite —

/** One adapter as the moved tests address it: JSON requests with a key, and event streams. */
export interface EventsServer {
  url: string;
  request(method: string, path: string, opts?: { key?: string; body?: unknown; headers?: Record<string, string> }): Promise<{ status: number; body: any; headers: Headers }>;
  stream(path: string, opts?: OpenStreamOptions): Promise<SseStream>;
}

/** Files an inbox item as `key`'s account; returns the item (throws unless 201). */
export async function createItem(server: EventsServer, key: string, project_id: string, body: Record<string, unknown> = {}): Promise<any> {
  const res = await server.request('POST', `/projects/${project_id}/inbox`, { key, body: { type: 'summary', title: 't', payload: { n: 1 }, ...body } });
  if (res.status !== 201) throw new Error(`create item: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.item;
}

/** What the Project Events checks share: one world, its adapter as the moved tests address it, and its helpers. */
export interface EventsCtx extends HttpSuiteBase {
  h: HttpWorld;
  server: EventsServer;
  world: {
    keys: Record<'acc_owner' | 'acc_deriver' | 'acc_deriver2' | 'acc_observer' | 'acc_outsider' | 'acc_stranger', string>;
    /** A fresh project owned by acc_owner with both derivers and the observer, and two sessions (over HTTP: six Project Events). */
    newProject(): Promise<{ project_id: string; session_a: string; session_b: string }>;
  };
  /** `GET /projects/:id/events` as `key`, with `query`. */
  events(project_id: string, key: string, query?: string): Promise<{ status: number; body: any; headers: Headers }>;
  streamPath(project_id: string, query?: string): string;
  /** The project's current last sequence, read through the history page as the owner. */
  lastSequence(project_id: string): Promise<number>;
}

async function openEvents(base: HttpSuiteBase): Promise<EventsCtx> {
  // The per-caller cap is lifted: the streams-per-caller suite covers it.
  const h = await startHttpWorld(base.kit, { settings: { streamTiming: { heartbeatMs: 50, retryMs: 1234, maxStreamsPerCaller: 1_000 } } });
  const server: EventsServer = {
    url: h.url,
    async request(method, path, opts = {}) {
      const res = await h.request(method, path, { ...(opts.key === undefined ? {} : { as: opts.key }), ...(opts.body === undefined ? {} : { body: opts.body }), ...(opts.headers ? { headers: opts.headers } : {}) });
      return { status: res.status, body: res.body, headers: res.headers };
    },
    stream: (path, opts) => openStream(h.url, path, opts),
  };
  let projects = 0;
  const keys = { ...h.keys } as EventsCtx['world']['keys'];
  const must = async (path: string, body: unknown) => {
    const res = await server.request('POST', path, { key: keys.acc_owner, body });
    if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const world: EventsCtx['world'] = {
    keys,
    async newProject() {
      const { project: { id: project_id } } = await must('/projects', { name: `Events ${++projects}` });
      for (const [account_id, role] of [['acc_deriver', 'deriver'], ['acc_deriver2', 'deriver'], ['acc_observer', 'observer']]) {
        await must(`/projects/${project_id}/members`, { account_id, role });
      }
      const a = await must('/sessions', { project_id, title: 'a' });
      const b = await must('/sessions', { project_id, title: 'b' });
      return { project_id, session_a: a.session.id, session_b: b.session.id };
    },
  };
  const events: EventsCtx['events'] = (project_id, key, query = '') => server.request('GET', `/projects/${project_id}/events${query ? `?${query}` : ''}`, { key });
  return {
    ...base, h, server, world, events,
    streamPath: (project_id, query = '') => `/projects/${project_id}/events/stream${query ? `?${query}` : ''}`,
    async lastSequence(project_id) {
      let after = 0;
      for (;;) {
        const page = await events(project_id, keys.acc_owner, `after=${after}&limit=500`);
        after = page.body.next_after;
        if (!page.body.has_more) return after;
      }
    },
  };
}

/** Project Events over HTTP (see the file comment), as data. */
export const projectEventsGroup: HttpSuiteGroup<EventsCtx> = {
  name: 'Project Events over HTTP',
  layer: 'wire',
  open: openEvents,
  async close(ctx) {
    await ctx?.h.close();
  },
  blocks: [
    { name: 'stream format', checks: streamFormatChecks },
    { name: 'history page', checks: historyPageChecks },
    { name: 'resume', checks: resumeChecks },
    { name: 'filters', checks: filterChecks },
    { name: 'visibility', checks: visibilityChecks },
    { name: 'publishing after commit', checks: publishingChecks },
    { name: 'operation log', checks: operationLogChecks },
  ],
};

/**
 * Project Events over real sockets (see the file comment), with a 50 ms heartbeat, a 1,234 ms
 * `retry:` hint and the per-caller stream cap lifted to 1,000 (`settings.streamTiming`).
 */
export function projectEventsSuite(kit: HttpConformanceOptions): void {
  registerSuite(kit, projectEventsGroup);
}
