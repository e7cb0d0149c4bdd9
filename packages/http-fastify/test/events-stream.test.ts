/**
 * Project Events over real sockets, what is Fastify's own: its open-stream count
 * (`openStreamCount`) — a `HEAD` holds no stream, and 500 streams opened and dropped (destroyed,
 * half-closed, gone before the answer) leave no subscription and no open stream — and a prompt
 * `app.close()` with streams open. Runs on SQLite and, with INBOX_KIT_TEST_PG_URL, on PostgreSQL
 * with the PostgreSQL event bus. The rest of this file (stream format, history page, resume,
 * filters, visibility, publishing after commit, the Operation Log) moved to the HTTP conformance
 * kit of `@inbox-kit/core/testing` (`projectEventsSuite`), which `conformance.test.ts` runs.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStreamCount } from '../src/index.js';
import {
  createItem, engines, openStream, range, startEventsWorld, waitUntil, type EventsServer, type EventsWorld, type SseStream,
} from './events-harness.js';

describe.each(engines)('Project Events over HTTP (%s)', (engine) => {
  let world: EventsWorld;
  let server: EventsServer;

  beforeAll(async () => {
    world = await startEventsWorld(engine);
    // The clean-up test holds 500 streams of one key at once: lift the per-caller cap (the HTTP kit's streams-per-caller suite covers it).
    server = await world.startServer({ streamTiming: { heartbeatMs: 50, retryMs: 1234, maxStreamsPerCaller: 1_000 } });
  });
  afterAll(async () => {
    await world?.close();
  });

  const streamPath = (project_id: string, query = '') => `/projects/${project_id}/events/stream${query ? `?${query}` : ''}`;

  describe('stream format', () => {
    it('HEAD answers at once with the stream headers and no body, after the same access checks, and holds no socket', async () => {
      const { project_id } = await world.newProject();
      const before = openStreamCount(server.app);
      const head = await fetch(server.url + streamPath(project_id), { method: 'HEAD', headers: { authorization: `Bearer ${world.keys.acc_observer}` }, signal: AbortSignal.timeout(5_000) });
      expect(head.status).toBe(200);
      expect(head.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(head.headers.get('cache-control')).toBe('no-cache, no-transform');
      expect(head.headers.get('x-request-id')).toMatch(/\S/);
      expect(await head.text()).toBe('');
      expect(openStreamCount(server.app)).toBe(before);
      const denied = await fetch(server.url + streamPath(project_id), { method: 'HEAD', headers: { authorization: `Bearer ${world.keys.acc_outsider}` }, signal: AbortSignal.timeout(5_000) });
      expect(denied.status).toBe(404);
      const anonymous = await fetch(server.url + streamPath(project_id), { method: 'HEAD', signal: AbortSignal.timeout(5_000) });
      expect(anonymous.status).toBe(401);
      const malformed = await fetch(server.url + streamPath(project_id), { method: 'HEAD', headers: { authorization: `Bearer ${world.keys.acc_owner}`, 'last-event-id': 'x' }, signal: AbortSignal.timeout(5_000) });
      expect(malformed.status).toBe(400);
    });
  });

  describe('clean-up', () => {
    it('500 streams opened and dropped (destroyed, half-closed, gone before the answer) leave no subscription and no open stream', async () => {
      const { project_id } = await world.newProject();
      const baseSubscribers = server.bus.subscriberCount();
      expect(openStreamCount(server.app)).toBe(0);
      const streams: SseStream[] = [];
      for (let batch = 0; batch < 10; batch++) {
        streams.push(...await Promise.all(range(1, 50).map(() => server.stream(streamPath(project_id), { key: world.keys.acc_observer }))));
      }
      expect(streams.every((s) => s.status === 200)).toBe(true);
      expect(server.bus.subscriberCount()).toBe(baseSubscribers + 500);
      expect(openStreamCount(server.app)).toBe(500);
      // A live event reaches them all.
      await createItem(server, world.keys.acc_owner, project_id); // 7: observers do not see it…
      await server.request('POST', '/sessions', { key: world.keys.acc_owner, body: { project_id, title: 'c' } }); // …8 they do
      await Promise.all(streams.map((s) => s.waitForId(8)));

      streams.forEach((s, i) => (i % 2 === 0 ? s.destroy() : s.halfClose()));
      // Clients that vanish before the server answers: half-closed or destroyed right after sending.
      const early = await Promise.all(range(1, 40).map((i) => new Promise<void>((resolve) => {
        const s = new net.Socket();
        s.connect(Number(new URL(server.url).port), '127.0.0.1', () => {
          s.write(`GET ${streamPath(project_id)} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${world.keys.acc_observer}\r\nAccept: text/event-stream\r\n\r\n`);
          if (i % 2) s.end();
          else s.destroy();
          resolve();
        });
        s.on('error', () => resolve());
      })));
      expect(early).toHaveLength(40);

      await waitUntil(() => server.bus.subscriberCount() === baseSubscribers && openStreamCount(server.app) === 0,
        `all streams released (subscribers ${server.bus.subscriberCount() - baseSubscribers}, open ${openStreamCount(server.app)})`);
      // Live publishing still works afterwards and nothing leaked into the bus.
      const after = await server.stream(streamPath(project_id, 'after=8'), { key: world.keys.acc_owner });
      try {
        await createItem(server, world.keys.acc_owner, project_id);
        await after.waitForId(9);
        expect(server.bus.subscriberCount()).toBe(baseSubscribers + 1);
      } finally {
        after.destroy();
      }
      await waitUntil(() => server.bus.subscriberCount() === baseSubscribers && openStreamCount(server.app) === 0, 'the last stream released');
    });

    it('app.close() ends open streams and returns with them open (clients see the end)', async () => {
      const own = await world.startServer({ streamTiming: { heartbeatMs: 50 } });
      const { project_id } = await world.newProject();
      const streams = await Promise.all(range(1, 20).map((i) => own.stream(streamPath(project_id), { key: i % 2 ? world.keys.acc_owner : world.keys.acc_deriver })));
      await Promise.all(streams.map((s) => s.waitForId(6)));
      expect(openStreamCount(own.app)).toBe(20);
      await own.close();
      await Promise.all(streams.map((s) => s.waitFor((x) => x.ended, 'the stream to end')));
      expect(openStreamCount(own.app)).toBe(0);
      expect(own.bus.subscriberCount()).toBe(0);
    });
  });
});
