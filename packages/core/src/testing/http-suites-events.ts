/**
 * Project Events over real sockets (platform.md "Project Events", project-inbox.md "Project Events
 * and Operation Log"): the history page, the SSE stream (frame format, headers, `retry:` hint,
 * heartbeat, no compression), resume by `?after=` and `Last-Event-ID` with no gap and no duplicate
 * across the replay → live switch, filters, visibility per role (live and replayed), nothing
 * published by a rolled-back write, the Operation Log page. Moved here from
 * `@inbox-kit/http-fastify`'s `events-stream.test.ts`, which keeps what is Fastify's own (its
 * open-stream count after 500 dropped streams, `app.close()` with streams open) and the servers
 * sharing a PostgreSQL event bus. The SSE client is a raw `node:http` one (`openStream`).
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect} from 'vitest';
import { describeFor, kitIt } from './http-kit.js';
import type { HttpConformanceOptions } from './http-conformance-checks.js';
import { startHttpWorld, type HttpWorld } from './http-world.js';

/** Polls `check` every 10 ms until it holds; fails after `timeoutMs` (default 5 s) naming `label`. */
async function waitUntil(check: () => boolean | Promise<boolean>, label: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${label}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const isInbox = (type: string) => type.startsWith('project_inbox.');

/** `[from, from + 1, …, to]`. */
const range = (from: number, to: number): number[] => Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);

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
interface EventsServer {
  url: string;
  request(method: string, path: string, opts?: { key?: string; body?: unknown; headers?: Record<string, string> }): Promise<{ status: number; body: any; headers: Headers }>;
  stream(path: string, opts?: OpenStreamOptions): Promise<SseStream>;
}

/** Files an inbox item as `key`'s account; returns the item (throws unless 201). */
async function createItem(server: EventsServer, key: string, project_id: string, body: Record<string, unknown> = {}): Promise<any> {
  const res = await server.request('POST', `/projects/${project_id}/inbox`, { key, body: { type: 'summary', title: 't', payload: { n: 1 }, ...body } });
  if (res.status !== 201) throw new Error(`create item: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.item;
}

/**
 * Project Events over real sockets (see the file comment), with a 50 ms heartbeat, a 1,234 ms
 * `retry:` hint and the per-caller stream cap lifted to 1,000 (`settings.streamTiming`).
 */
export function projectEventsSuite(kit: HttpConformanceOptions): void {
  const it = kitIt(kit, 'Project Events over HTTP', 'wire');
  describe('Project Events over HTTP', () => {
    let h: HttpWorld;
    let server: EventsServer;
    let projects = 0;
    const world = {
      keys: {} as Record<'acc_owner' | 'acc_deriver' | 'acc_deriver2' | 'acc_observer' | 'acc_outsider' | 'acc_stranger', string>,
      /** A fresh project owned by acc_owner with both derivers and the observer, and two sessions (over HTTP: six Project Events). */
      async newProject(): Promise<{ project_id: string; session_a: string; session_b: string }> {
        const must = async (path: string, body: unknown) => {
          const res = await server.request('POST', path, { key: world.keys.acc_owner, body });
          if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
          return res.body;
        };
        const { project: { id: project_id } } = await must('/projects', { name: `Events ${++projects}` });
        for (const [account_id, role] of [['acc_deriver', 'deriver'], ['acc_deriver2', 'deriver'], ['acc_observer', 'observer']]) {
          await must(`/projects/${project_id}/members`, { account_id, role });
        }
        const a = await must('/sessions', { project_id, title: 'a' });
        const b = await must('/sessions', { project_id, title: 'b' });
        return { project_id, session_a: a.session.id, session_b: b.session.id };
      },
    };

    beforeAll(async () => {
      // The per-caller cap is lifted: the streams-per-caller suite covers it.
      h = await startHttpWorld(kit, { settings: { streamTiming: { heartbeatMs: 50, retryMs: 1234, maxStreamsPerCaller: 1_000 } } });
      Object.assign(world.keys, h.keys);
      server = {
        url: h.url,
        async request(method, path, opts = {}) {
          const res = await h.request(method, path, { ...(opts.key === undefined ? {} : { as: opts.key }), ...(opts.body === undefined ? {} : { body: opts.body }), ...(opts.headers ? { headers: opts.headers } : {}) });
          return { status: res.status, body: res.body, headers: res.headers };
        },
        stream: (path, opts) => openStream(h.url, path, opts),
      };
    });
    afterAll(async () => {
      await h?.close();
    });

    const events = (project_id: string, key: string, query = '') => server.request('GET', `/projects/${project_id}/events${query ? `?${query}` : ''}`, { key });
    const streamPath = (project_id: string, query = '') => `/projects/${project_id}/events/stream${query ? `?${query}` : ''}`;
    /** The project's current last sequence, read through the history page as the owner. */
    const lastSequence = async (project_id: string): Promise<number> => {
      let after = 0;
      for (;;) {
        const page = await events(project_id, world.keys.acc_owner, `after=${after}&limit=500`);
        after = page.body.next_after;
        if (!page.body.has_more) return after;
      }
    };

    describeFor(kit, 'wire')('stream format', () => {
      it('answers text/event-stream with no-cache/no-transform, no buffering, no compression (even when gzip is accepted), a retry hint and heartbeats', async () => {
        const { project_id } = await world.newProject();
        const s = await server.stream(streamPath(project_id), { key: world.keys.acc_owner, headers: { 'accept-encoding': 'gzip, deflate, br' } });
        try {
          expect(s.status).toBe(200);
          expect(s.headers['content-type']).toMatch(/^text\/event-stream/);
          expect(s.headers['cache-control']).toBe('no-cache, no-transform');
          expect(s.headers['x-accel-buffering']).toBe('no');
          expect(s.headers['content-encoding'] ?? 'identity').toBe('identity');
          expect(s.headers['content-length']).toBeUndefined();
          expect(s.headers['x-request-id']).toMatch(/\S/);
          await s.waitFor((x) => x.retry !== undefined && x.comments.length >= 2, 'retry hint and two heartbeats');
          expect(s.retry).toBe(1234);
          expect(s.text.startsWith('retry: 1234\n\n')).toBe(true);
          // Exactly the comment line `: heartbeat` (TavernHeadless-style readers count only that line).
          expect(s.comments.every((c) => c === 'heartbeat')).toBe(true);
          expect(s.text).toContain('\n\n: heartbeat\n\n');
          expect(s.text).not.toMatch(/: heartbeat[^\n]/);
        } finally {
          s.destroy();
        }
      });

      it('every event, listed and streamed, carries visibility and source (TavernHeadless-style readers drop events without them)', async () => {
        const { project_id } = await world.newProject();
        await createItem(server, world.keys.acc_deriver, project_id); // 7
        const s = await server.stream(streamPath(project_id), { key: world.keys.acc_owner });
        try {
          await s.waitForId(7);
          const listed = await server.request('GET', `/projects/${project_id}/events?limit=100`, { key: world.keys.acc_owner });
          expect(listed.status).toBe(200);
          const pairs = (events: any[]) => events.map((e) => [e.sequence, e.type, e.visibility, e.source]);
          const expected = [
            [1, 'project.created', 'project', 'api'], [2, 'project.member.added', 'project', 'api'], [3, 'project.member.added', 'project', 'api'],
            [4, 'project.member.added', 'project', 'api'], [5, 'session.created', 'project', 'api'], [6, 'session.created', 'project', 'api'],
            [7, 'project_inbox.item.created', 'owner', 'api'],
          ];
          expect(pairs(listed.body.items)).toEqual(expected);
          expect(pairs(s.frames.map((f) => f.data))).toEqual(expected);
        } finally {
          s.destroy();
        }
      });

      it('a TavernHeadless-style reader (drops events without a known visibility and source, counts only `: heartbeat` lines) gets every event and the heartbeats', async () => {
        // What @tavern/sdk's listEvents/streamEvents/onHeartbeat accept, re-stated from the issue.
        const VISIBILITY = ['project', 'owner', 'internal'];
        const SOURCE = ['api', 'runtime_job', 'migration', 'system'];
        const accepted = (e: any) => VISIBILITY.includes(e?.visibility) && SOURCE.includes(e?.source);
        const read = (text: string) => {
          const events: any[] = [];
          let heartbeats = 0;
          for (const block of text.split('\n\n')) {
            const lines = block.split('\n');
            heartbeats += lines.filter((line) => line === ': heartbeat').length;
            const data = lines.filter((line) => line.startsWith('data:')).map((line) => line.slice(5).trim());
            if (data.length === 1) {
              const event = JSON.parse(data[0]!);
              if (accepted(event)) events.push(event);
            }
          }
          return { events, heartbeats };
        };
        const { project_id } = await world.newProject();
        await createItem(server, world.keys.acc_deriver, project_id); // 7
        const s = await server.stream(streamPath(project_id), { key: world.keys.acc_owner });
        try {
          await s.waitForId(7);
          await s.waitFor((x) => read(x.text).heartbeats >= 2, 'two `: heartbeat` lines');
          expect(read(s.text).events.map((e) => e.sequence)).toEqual(range(1, 7));
          const listed = await server.request('GET', `/projects/${project_id}/events`, { key: world.keys.acc_owner });
          expect(listed.body.items.filter(accepted).map((e: any) => e.sequence)).toEqual(range(1, 7));
        } finally {
          s.destroy();
        }
      });

      it('HEAD answers at once with the stream headers and no body, after the same access checks, and holds no socket', async () => {
        const { project_id } = await world.newProject();
        const before = h.subscriberCount();
        const head = await fetch(server.url + streamPath(project_id), { method: 'HEAD', headers: { authorization: `Bearer ${world.keys.acc_observer}` }, signal: AbortSignal.timeout(5_000) });
        expect(head.status).toBe(200);
        expect(head.headers.get('content-type')).toMatch(/^text\/event-stream/);
        expect(head.headers.get('cache-control')).toBe('no-cache, no-transform');
        expect(head.headers.get('x-request-id')).toMatch(/\S/);
        expect(await head.text()).toBe('');
        expect(h.subscriberCount()).toBe(before);
        const denied = await fetch(server.url + streamPath(project_id), { method: 'HEAD', headers: { authorization: `Bearer ${world.keys.acc_outsider}` }, signal: AbortSignal.timeout(5_000) });
        expect(denied.status).toBe(404);
        const anonymous = await fetch(server.url + streamPath(project_id), { method: 'HEAD', signal: AbortSignal.timeout(5_000) });
        expect(anonymous.status).toBe(401);
        const malformed = await fetch(server.url + streamPath(project_id), { method: 'HEAD', headers: { authorization: `Bearer ${world.keys.acc_owner}`, 'last-event-id': 'x' }, signal: AbortSignal.timeout(5_000) });
        expect(malformed.status).toBe(400);
      });

      it('each frame is `id: <sequence>`, `event: <type>` and one `data:` line holding the event as JSON', async () => {
        const { project_id, session_a } = await world.newProject();
        const s = await server.stream(streamPath(project_id), { key: world.keys.acc_owner });
        try {
          const item = await createItem(server, world.keys.acc_deriver, project_id, { title: 'multi\nline', source_session_id: session_a });
          await s.waitForId(7);
          const frame = s.frames.find((f) => f.id === 7)!;
          expect(frame.event).toBe('project_inbox.item.created');
          expect(frame.dataLines).toHaveLength(1);
          expect(frame.data).toMatchObject({
            project_id, sequence: 7, type: 'project_inbox.item.created', actor_account_id: 'acc_deriver', session_id: session_a,
            payload: { inbox_item_id: item.id, title: 'multi\nline', sender_account_id: 'acc_deriver', status: 'pending' },
          });
          expect(frame.data.payload).not.toHaveProperty('payload'); // never the item payload
          // Replayed history comes first: 1–6 (project, members, sessions), in order.
          expect(s.ids()).toEqual(range(1, 7));
          for (const f of s.frames) {
            expect(f.dataLines).toHaveLength(1);
            expect(f.event).toBe(f.data.type);
            expect(f.id).toBe(f.data.sequence);
          }
          // Raw framing: every frame block is exactly `id:`, `event:`, `data:` lines.
          const blocks = s.text.split('\n\n').filter((b) => b.startsWith('id:'));
          for (const b of blocks) expect(b).toMatch(/^id: \d+\nevent: [^\n]+\ndata: [^\n]+$/);
        } finally {
          s.destroy();
        }
      });

      it('answers 401 without a key, 404 for a non-member, a stranger and an unknown project, 400 for a bad ?after=', async () => {
        const { project_id } = await world.newProject();
        const anon = await openStream(server.url, streamPath(project_id));
        expect(anon.status).toBe(401);
        for (const key of [world.keys.acc_outsider, world.keys.acc_stranger]) {
          const s = await server.stream(streamPath(project_id), { key });
          expect(s.status).toBe(404);
          expect(JSON.parse(s.body).error.code).toBe('project_not_found');
        }
        const missing = await server.stream(streamPath('proj_missing'), { key: world.keys.acc_owner });
        expect(missing.status).toBe(404);
        const bad = await server.stream(streamPath(project_id, 'after=-1'), { key: world.keys.acc_owner });
        expect(bad.status).toBe(400);
        await waitUntil(() => h.subscriberCount() === 0, 'no subscription left by refused streams');
      });
    });

    describeFor(kit, 'behaviour')('history page', () => {
      it.behaviour('GET /events pages ascending by sequence, with types and session_id filters', async () => {
        const { project_id, session_a, session_b } = await world.newProject();
        const a = await createItem(server, world.keys.acc_owner, project_id, { source_session_id: session_a });
        const b = await createItem(server, world.keys.acc_owner, project_id, { source_session_id: session_b });
        const decided = await server.request('PATCH', `/projects/${project_id}/inbox/${a.id}`, { key: world.keys.acc_owner, body: { decision: 'accept' } });
        expect(decided.status).toBe(200);

        const all = await events(project_id, world.keys.acc_owner, 'limit=500');
        expect(all.status).toBe(200);
        expect(all.body.items.map((e: any) => e.sequence)).toEqual(range(1, 9));
        expect(all.body).toMatchObject({ next_after: 9, has_more: false });

        const p1 = await events(project_id, world.keys.acc_owner, 'limit=4');
        expect(p1.body.items.map((e: any) => e.sequence)).toEqual([1, 2, 3, 4]);
        expect(p1.body).toMatchObject({ next_after: 4, has_more: true });
        const p2 = await events(project_id, world.keys.acc_owner, `after=${p1.body.next_after}&limit=4`);
        expect(p2.body.items.map((e: any) => e.sequence)).toEqual([5, 6, 7, 8]);
        const p3 = await events(project_id, world.keys.acc_owner, `after=${p2.body.next_after}&limit=4`);
        expect(p3.body.items.map((e: any) => e.sequence)).toEqual([9]);
        expect(p3.body.has_more).toBe(false);

        const types = await events(project_id, world.keys.acc_owner, 'types=project_inbox.item.created,project_inbox.item.accepted');
        expect(types.body.items.map((e: any) => [e.type, e.payload.inbox_item_id])).toEqual([
          ['project_inbox.item.created', a.id], ['project_inbox.item.created', b.id], ['project_inbox.item.accepted', a.id],
        ]);
        const bySession = await events(project_id, world.keys.acc_owner, `session_id=${session_b}`);
        expect(bySession.body.items.map((e: any) => e.type)).toEqual(['session.created', 'project_inbox.item.created']);
        expect(bySession.body.items.every((e: any) => e.session_id === session_b)).toBe(true);
      });
    });

    describeFor(kit, 'wire')('resume', () => {
      it('Last-Event-ID after a disconnect delivers exactly the missed events, then live ones', async () => {
        const { project_id } = await world.newProject();
        const first = await server.stream(streamPath(project_id), { key: world.keys.acc_owner });
        await createItem(server, world.keys.acc_owner, project_id);
        await first.waitForId(7);
        first.destroy();
        const seen = first.ids();
        expect(seen).toEqual(range(1, 7));

        for (let i = 0; i < 5; i++) await createItem(server, world.keys.acc_owner, project_id); // 8–12, missed
        const resumed = await server.stream(streamPath(project_id), { key: world.keys.acc_owner, headers: { 'last-event-id': '7' } });
        try {
          await resumed.waitForId(12);
          expect(resumed.ids()).toEqual(range(8, 12));
          await createItem(server, world.keys.acc_owner, project_id); // 13, live
          await resumed.waitForId(13);
          expect(resumed.ids()).toEqual(range(8, 13));
        } finally {
          resumed.destroy();
        }
      });

      it('with both ?after= and Last-Event-ID the later wins; a malformed Last-Event-ID is 400 in the envelope', async () => {
        const { project_id } = await world.newProject();
        for (let i = 0; i < 3; i++) await createItem(server, world.keys.acc_owner, project_id); // 7–9
        const queryLater = await server.stream(streamPath(project_id, 'after=7'), { key: world.keys.acc_owner, headers: { 'last-event-id': '2' } });
        const headerLater = await server.stream(streamPath(project_id, 'after=2'), { key: world.keys.acc_owner, headers: { 'last-event-id': '5' } });
        const byHeader = await server.stream(streamPath(project_id), { key: world.keys.acc_owner, headers: { 'last-event-id': '5' } });
        try {
          await queryLater.waitForId(9);
          await headerLater.waitForId(9);
          await byHeader.waitForId(9);
          expect(queryLater.ids()).toEqual([8, 9]);
          expect(headerLater.ids()).toEqual(range(6, 9));
          expect(byHeader.ids()).toEqual(range(6, 9));
        } finally {
          for (const s of [queryLater, headerLater, byHeader]) s.destroy();
        }
        for (const bad of ['abc', '-1', '1.5', '+3', '0x10', '9007199254740992']) {
          const refused = await server.stream(streamPath(project_id), { key: world.keys.acc_owner, headers: { 'last-event-id': bad } });
          await refused.waitFor((s) => s.ended, 'the end of the 400 answer');
          expect(refused.status, bad).toBe(400);
          expect(JSON.parse(refused.body)).toEqual({
            type: 'error',
            error: {
              type: 'invalid_request_error', code: 'validation_error', message: expect.any(String),
              details: [{ path: 'Last-Event-ID', message: 'Expected a decimal integer from 0 to 9007199254740991', code: 'invalid_resume_position' }],
              request_id: refused.headers['x-request-id'],
            },
          });
        }
      });

      it('a position after the newest event gets one resync frame carrying the newest, then everything after it, live', async () => {
        const { project_id } = await world.newProject(); // 1–6
        for (const [query, header] of [['after=151', undefined], [undefined, '151'], ['after=3', '151'], ['after=151', '150']] as const) {
          const latest = await lastSequence(project_id);
          const s = await server.stream(streamPath(project_id, query ?? ''), { key: world.keys.acc_owner, headers: header ? { 'last-event-id': header } : {} });
          try {
            await s.waitFor((x) => x.frames.length >= 1, 'the resync frame');
            expect(s.frames[0]).toEqual({
              id: latest, event: 'resync', dataLines: [expect.any(String)],
              data: { type: 'resync', reason: 'ahead_of_latest', requested_after: 151, latest },
            });
            const item = await createItem(server, world.keys.acc_owner, project_id);
            await s.waitForId(latest + 1);
            expect(s.ids()).toEqual([latest, latest + 1]);
            expect(s.frames[1]!.data.payload.inbox_item_id).toBe(item.id);
          } finally {
            s.destroy();
          }
        }
        // Exactly the newest position is not ahead: no resync, nothing replayed.
        const latest = await lastSequence(project_id);
        const atLatest = await server.stream(streamPath(project_id, `after=${latest}`), { key: world.keys.acc_owner });
        try {
          await createItem(server, world.keys.acc_owner, project_id);
          await atLatest.waitForId(latest + 1);
          expect(atLatest.frames.map((f) => [f.id, f.event])).toEqual([[latest + 1, 'project_inbox.item.created']]);
        } finally {
          atLatest.destroy();
        }
        // The position of another project's stream, beyond this one's newest: resync too.
        const other = await world.newProject();
        for (let i = 0; i < 3; i++) await createItem(server, world.keys.acc_owner, other.project_id);
        const fresh = await world.newProject();
        const crossed = await server.stream(streamPath(fresh.project_id), { key: world.keys.acc_owner, headers: { 'last-event-id': String(await lastSequence(other.project_id)) } });
        try {
          await crossed.waitFor((x) => x.frames.length >= 1, 'the resync frame');
          expect(crossed.frames[0]!.data).toEqual({ type: 'resync', reason: 'ahead_of_latest', requested_after: 9, latest: 6 });
        } finally {
          crossed.destroy();
        }
      });

      it('a reconnect whose URL keeps a stale after (past the newest) resumes from its Last-Event-ID: one resync in all, nothing skipped (what a browser EventSource sends)', async () => {
        const { project_id } = await world.newProject(); // 1–6
        const path = streamPath(project_id, 'after=151');
        const first = await server.stream(path, { key: world.keys.acc_owner });
        let resumeFrom: number;
        try {
          await first.waitFor((x) => x.frames.length >= 1, 'the resync frame');
          expect(first.frames[0]).toMatchObject({ id: 6, event: 'resync' });
          resumeFrom = first.frames[0]!.id!;
        } finally {
          first.destroy();
        }
        // Written while the client was away: the reconnect (same URL, Last-Event-ID of the resync) gets them.
        await createItem(server, world.keys.acc_owner, project_id); // 7
        await createItem(server, world.keys.acc_owner, project_id); // 8
        const again = await server.stream(path, { key: world.keys.acc_owner, headers: { 'last-event-id': String(resumeFrom) } });
        try {
          await again.waitForId(8);
          await createItem(server, world.keys.acc_owner, project_id); // 9, live
          await again.waitForId(9);
          expect(again.frames.map((f) => [f.id, f.event])).toEqual([[7, 'project_inbox.item.created'], [8, 'project_inbox.item.created'], [9, 'project_inbox.item.created']]);
        } finally {
          again.destroy();
        }
        // An older Last-Event-ID replays from it, with no resync either.
        const older = await server.stream(path, { key: world.keys.acc_owner, headers: { 'last-event-id': '3' } });
        try {
          await older.waitForId(9);
          expect(older.ids()).toEqual(range(4, 9));
          expect(older.frames.some((f) => f.event === 'resync')).toBe(false);
        } finally {
          older.destroy();
        }
      });

      it('no gap and no duplicate across the replay → live switch under concurrent writes, and after repeated reconnects', async () => {
        const { project_id } = await world.newProject();
        const total = 80;
        let written = 0;
        // Writers: 4 concurrent lanes filing items while streams connect, drop and resume.
        const writers = Promise.all(range(1, 4).map(async () => {
          while (written < total) {
            written++;
            await createItem(server, world.keys.acc_owner, project_id);
          }
        }));
        const streams: SseStream[] = [];
        // Streams opened at different moments with different cursors, while writes happen.
        for (let i = 0; i < 6; i++) {
          streams.push(await server.stream(streamPath(project_id, i % 2 ? `after=${i}` : ''), { key: world.keys.acc_owner }));
          await new Promise((r) => setTimeout(r, 5));
        }
        // A client that drops and resumes with Last-Event-ID several times during the writes.
        const hopper: number[] = [];
        let last = 0;
        for (let hop = 0; hop < 4; hop++) {
          const s = await server.stream(streamPath(project_id), { key: world.keys.acc_owner, headers: { 'last-event-id': String(last) } });
          await s.waitFor((x) => x.frames.length > 0, 'a frame on the hopping client');
          s.destroy();
          hopper.push(...s.ids());
          last = s.ids().at(-1)!;
        }
        await writers;
        const final = await lastSequence(project_id);
        expect(final).toBe(6 + total);
        const tail = await server.stream(streamPath(project_id), { key: world.keys.acc_owner, headers: { 'last-event-id': String(last) } });
        try {
          await tail.waitForId(final);
          hopper.push(...tail.ids());
          expect(hopper).toEqual(range(1, final));
          for (const [i, s] of streams.entries()) {
            await s.waitForId(final);
            expect(s.ids()).toEqual(range(i % 2 ? i + 1 : 1, final));
          }
        } finally {
          for (const s of [...streams, tail]) s.destroy();
        }
      });
    });

    describeFor(kit, 'wire')('filters', () => {
      it('types and session_id filter the stream, replayed and live', async () => {
        const { project_id, session_a, session_b } = await world.newProject();
        const pre = await createItem(server, world.keys.acc_owner, project_id, { source_session_id: session_a });
        await createItem(server, world.keys.acc_owner, project_id, { source_session_id: session_b });
        const byType = await server.stream(streamPath(project_id, 'types=project_inbox.item.accepted,session.created'), { key: world.keys.acc_owner });
        const bySession = await server.stream(streamPath(project_id, `session_id=${session_a}`), { key: world.keys.acc_owner });
        const both = await server.stream(streamPath(project_id, `types=project_inbox.item.created&session_id=${session_a}`), { key: world.keys.acc_owner });
        try {
          const live = await createItem(server, world.keys.acc_owner, project_id, { source_session_id: session_a });
          await server.request('PATCH', `/projects/${project_id}/inbox/${pre.id}`, { key: world.keys.acc_owner, body: { decision: 'accept' } });
          await createItem(server, world.keys.acc_owner, project_id, { source_session_id: session_b });
          const final = await lastSequence(project_id);
          // A frame after the last matching one proves each stream has seen everything up to `final`.
          const marker = await createItem(server, world.keys.acc_owner, project_id, { source_session_id: session_a });
          await server.request('PATCH', `/projects/${project_id}/inbox/${marker.id}`, { key: world.keys.acc_owner, body: { decision: 'accept' } });
          const end = final + 2;
          await byType.waitForId(end);
          await bySession.waitForId(end);
          await both.waitForId(end - 1);

          expect(byType.frames.map((f) => [f.event, f.data.session_id])).toEqual([
            ['session.created', session_a], ['session.created', session_b], ['project_inbox.item.accepted', session_a], ['project_inbox.item.accepted', session_a],
          ]);
          expect(bySession.frames.every((f) => f.data.session_id === session_a)).toBe(true);
          expect(bySession.frames.map((f) => f.event)).toEqual([
            'session.created', 'project_inbox.item.created', 'project_inbox.item.created', 'project_inbox.item.accepted', 'project_inbox.item.created', 'project_inbox.item.accepted',
          ]);
          expect(both.frames.map((f) => f.data.payload.inbox_item_id)).toEqual([pre.id, live.id, marker.id]);
        } finally {
          for (const s of [byType, bySession, both]) s.destroy();
        }
      });
    });

    describeFor(kit, 'wire')('visibility', () => {
      it('inbox events reach the owner and the item sender only — never observers or other derivers — live and replayed', async () => {
        const { project_id } = await world.newProject();
        const k = world.keys;
        // Replayed part: items filed before the streams open.
        const ownerItem = await createItem(server, k.acc_owner, project_id);
        const d1Old = await createItem(server, k.acc_deriver, project_id);
        const d2Old = await createItem(server, k.acc_deriver2, project_id);
        await server.request('PATCH', `/projects/${project_id}/inbox/${d1Old.id}`, { key: k.acc_owner, body: { decision: 'reject' } });

        const roles = ['acc_owner', 'acc_deriver', 'acc_deriver2', 'acc_observer'] as const;
        const streams = Object.fromEntries(await Promise.all(roles.map(async (r) => [r, await server.stream(streamPath(project_id), { key: k[r] })] as const))) as Record<typeof roles[number], SseStream>;
        try {
          // Live part.
          const d1New = await createItem(server, k.acc_deriver, project_id);
          const d2New = await createItem(server, k.acc_deriver2, project_id);
          await server.request('PATCH', `/projects/${project_id}/inbox/${d2New.id}`, { key: k.acc_owner, body: { decision: 'accept' } });
          await server.request('PATCH', `/projects/${project_id}/inbox/${d1New.id}`, { key: k.acc_owner, body: { decision: 'archive' } });
          // A non-inbox event after everything: every member sees it, so it marks the end.
          await server.request('POST', '/sessions', { key: k.acc_owner, body: { project_id, title: 'end' } });
          const final = await lastSequence(project_id);
          for (const r of roles) await streams[r].waitForId(final);

          const inboxOf = (s: SseStream) => s.frames.filter((f) => isInbox(f.event)).map((f) => `${f.event}:${f.data.payload.inbox_item_id}`);
          const all = (await events(project_id, k.acc_owner, 'limit=500')).body.items.filter((e: any) => isInbox(e.type)).map((e: any) => `${e.type}:${e.payload.inbox_item_id}`);
          expect(inboxOf(streams.acc_owner)).toEqual(all);
          expect(inboxOf(streams.acc_deriver)).toEqual([
            `project_inbox.item.created:${d1Old.id}`, `project_inbox.item.rejected:${d1Old.id}`,
            `project_inbox.item.created:${d1New.id}`, `project_inbox.item.archived:${d1New.id}`,
          ]);
          expect(inboxOf(streams.acc_deriver2)).toEqual([
            `project_inbox.item.created:${d2Old.id}`, `project_inbox.item.created:${d2New.id}`, `project_inbox.item.accepted:${d2New.id}`,
          ]);
          expect(inboxOf(streams.acc_observer)).toEqual([]);
          expect(all).toContain(`project_inbox.item.created:${ownerItem.id}`);
          // Non-inbox events reach every member, in the same order.
          const others = (s: SseStream) => s.frames.filter((f) => !isInbox(f.event)).map((f) => f.id);
          for (const r of roles) expect(others(streams[r])).toEqual(others(streams.acc_owner));

          // The history page applies the same rule; a deriver demoted to observer loses its items' events.
          const page = async (key: string) => (await events(project_id, key, 'limit=500')).body.items.filter((e: any) => isInbox(e.type)).length;
          expect(await page(k.acc_observer)).toBe(0);
          expect(await page(k.acc_deriver2)).toBe(3);
          const demote = await server.request('POST', `/projects/${project_id}/members`, { key: k.acc_owner, body: { account_id: 'acc_deriver2', role: 'observer' } });
          expect(demote.status).toBe(201);
          expect(await page(k.acc_deriver2)).toBe(0);
          const replayed = await server.stream(streamPath(project_id), { key: k.acc_deriver2 });
          try {
            await replayed.waitForId(final + 1);
            expect(replayed.frames.filter((f) => isInbox(f.event))).toEqual([]);
          } finally {
            replayed.destroy();
          }
        } finally {
          for (const r of roles) streams[r].destroy();
        }
      });

      it('a member demoted, promoted and removed while its stream is open sees exactly what each role may read from then on, and removal ends the stream', async () => {
        const { project_id } = await world.newProject();
        const k = world.keys;
        const member = (body: Record<string, string>) => server.request('POST', `/projects/${project_id}/members`, { key: k.acc_owner, body });
        const x = await createItem(server, k.acc_deriver2, project_id); // 7
        const s = await server.stream(streamPath(project_id), { key: k.acc_deriver2 });
        try {
          await s.waitForId(7);
          expect((await member({ account_id: 'acc_deriver2', role: 'observer' })).status).toBe(201); // 8
          await server.request('PATCH', `/projects/${project_id}/inbox/${x.id}`, { key: k.acc_owner, body: { decision: 'accept' } }); // 9: hidden
          // 10: an event every member reads. Frames go out in sequence order, so once 10 arrived, 9 was
          // decided while the member was still an observer (a delivery is authorised as of its send).
          expect((await member({ account_id: 'acc_deriver', role: 'observer' })).status).toBe(201);
          await s.waitForId(10);
          expect((await member({ account_id: 'acc_deriver2', role: 'deriver' })).status).toBe(201); // 11
          const y = await createItem(server, k.acc_deriver2, project_id); // 12: its own item again
          await s.waitForId(12);
          expect((await server.request('DELETE', `/projects/${project_id}/members/acc_deriver2`, { key: k.acc_owner })).status).toBe(204); // 13: ends the stream
          await s.waitFor((st) => st.ended, 'the end of the stream after the removal');
          await server.request('PATCH', `/projects/${project_id}/inbox/${y.id}`, { key: k.acc_owner, body: { decision: 'accept' } }); // 14
          expect(s.ids()).toEqual([...range(1, 8), 10, 11, 12]);
          expect(s.frames.find((f) => f.id === 12)!.data.payload.inbox_item_id).toBe(y.id);
          // The reconnection gets what a fresh request gets.
          const again = await server.stream(streamPath(project_id), { key: k.acc_deriver2, headers: { 'last-event-id': '12' } });
          await again.waitFor((st) => st.ended, 'the end of the 404 answer');
          expect(again.status).toBe(404);
          expect(JSON.parse(again.body).error.code).toBe('project_not_found');
        } finally {
          s.destroy();
        }
      });
    });

    describeFor(kit, 'wire')('publishing after commit', () => {
      it.wire('a rolled-back write publishes nothing; the next write takes the released sequence', async () => {
        const { project_id } = await world.newProject();
        const s = await server.stream(streamPath(project_id), { key: world.keys.acc_owner });
        try {
          await s.waitForId(6);
          const publishedBefore = h.published.length;
          h.failure.method = 'appendProjectEvent'; // the event row is written, then the transaction fails (a duplicate)
          const failed = await server.request('POST', `/projects/${project_id}/inbox`, { key: world.keys.acc_owner, body: { type: 'summary' } });
          h.failure.method = null;
          expect(failed.status).toBe(500);
          expect(h.published.length).toBe(publishedBefore);
          expect(await h.store.listProjectEvents({ project_id, after: 0, limit: 1000 })).toHaveLength(6); // read through the Store port

          const ok = await createItem(server, world.keys.acc_owner, project_id);
          await s.waitForId(7);
          expect(s.ids()).toEqual(range(1, 7));
          expect(s.frames.at(-1)!.data.payload.inbox_item_id).toBe(ok.id);
          expect(h.published.slice(publishedBefore).map((e) => e.sequence)).toEqual([7]);
        } finally {
          s.destroy();
        }
      });
    });

    describeFor(kit, 'behaviour')('operation log', () => {
      it.behaviour('the owner pages GET /operation-logs newest first; members get 403, outsiders 404', async () => {
        const { project_id } = await world.newProject();
        for (let i = 0; i < 3; i++) await createItem(server, world.keys.acc_deriver, project_id);
        const seen: any[] = [];
        let cursor: string | null = null;
        do {
          const res: { status: number; body: any } = await server.request('GET', `/projects/${project_id}/operation-logs?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { key: world.keys.acc_owner });
          expect(res.status).toBe(200);
          expect(res.body.items.length).toBeLessThanOrEqual(2);
          seen.push(...res.body.items);
          cursor = res.body.next_cursor;
        } while (cursor);
        // project.create, 3 × member upsert, 2 × session.create, 3 × item create
        expect(seen).toHaveLength(9);
        expect(new Set(seen.map((l) => l.id)).size).toBe(9);
        const order = seen.map((l) => [l.created_at, l.id]);
        const sorted = [...order].sort((a, b) => (b[0] - a[0]) || (b[1] < a[1] ? -1 : b[1] > a[1] ? 1 : 0));
        expect(order).toEqual(sorted);
        expect(seen.filter((l) => l.action === 'project_inbox_item.create')).toHaveLength(3);
        for (const l of seen.filter((x) => x.action === 'project_inbox_item.create')) {
          expect(l.actor_account_id).toBe('acc_deriver');
          expect(l.metadata).toHaveProperty('payload_byte_count');
        }
        for (const key of [world.keys.acc_deriver, world.keys.acc_observer]) {
          const res = await server.request('GET', `/projects/${project_id}/operation-logs`, { key });
          expect(res.status).toBe(403);
        }
        for (const key of [world.keys.acc_outsider, world.keys.acc_stranger]) {
          const res = await server.request('GET', `/projects/${project_id}/operation-logs`, { key });
          expect(res.status).toBe(404);
          expect(res.body.error.code).toBe('project_not_found');
        }
      });
    });
  });
}
