/**
 * The SDK's Project Events and Operation Log calls against the started demo (SQLite, real socket):
 * `client.projects.events.list` pages, `client.projects.events.stream` replays then goes live,
 * resumes from the last id after the server drops the connection (exactly the missed events, no
 * duplicate), filters by type and session, and stops on abort — also while it waits to reconnect —
 * leaving no stream open on the server. `client.projects.operationLogs.list` pages for the owner
 * and is refused to others. Spec: platform.md "Project Events", "Operation Log". The demo's streams
 * send a `retry:` hint of 500 ms here (SSE_RETRY_MS; default 2 s), so reconnects are not waited out.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStreamCount } from '@inbox-kit/http-fastify';
import { createClient, InboxKitApiError, type InboxKitClient, type ProjectEvent } from '@inbox-kit/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDemo, loadConfig, type Demo } from '../src/index.js';
import { waitUntil } from './demo-process.js';
import { closeDemo, listen } from './listen.js';

let dataDir: string;
let demo: Demo;
let base: string;
/** The streams' `retry:` hint (SSE_RETRY_MS, ms): how long the client waits before it reconnects. */
const RETRY_MS = 500;
const clientOf = (account: string): InboxKitClient => createClient({ baseUrl: base, apiKey: demo.credentials[account]!, retry: { retries: 2, baseDelayMs: 50 } });

/** Consumes a stream in the background into `events`; `done` settles when the iterator ends. */
function consume(iterator: AsyncGenerator<ProjectEvent, void, undefined>): { events: ProjectEvent[]; done: Promise<void> } {
  const events: ProjectEvent[] = [];
  const done = (async () => {
    for await (const event of iterator) events.push(event);
  })();
  done.catch(() => undefined);
  return { events, done };
}

const sequences = (events: ProjectEvent[]) => events.map((e) => e.sequence);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'inbox-kit-events-sdk-'));
  demo = await buildDemo(loadConfig({ DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent', SSE_RETRY_MS: String(RETRY_MS) }));
  base = await listen(demo);
});

afterAll(async () => {
  await closeDemo(demo);
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('client.projects.events and operationLogs against the demo', () => {
  it('events.list pages ascending by sequence and filters by type and session', async () => {
    const owner = clientOf('acc_owner');
    await owner.projects.inbox.create('proj_main', { type: 'summary', title: 'listed', sourceSessionId: 'sess_001' });
    const first = await owner.projects.events.list('proj_main', { limit: 2 });
    expect(sequences(first.items)).toEqual([1, 2]);
    expect(first).toMatchObject({ nextAfter: 2, hasMore: true });
    const rest = await owner.projects.events.list('proj_main', { after: first.nextAfter, limit: 500 });
    expect(sequences(rest.items)[0]).toBe(3);
    expect(rest.hasMore).toBe(false);
    const created = await owner.projects.events.list('proj_main', { types: ['project_inbox.item.created'] });
    expect(created.items.length).toBeGreaterThan(0);
    expect(created.items.every((e) => e.type === 'project_inbox.item.created')).toBe(true);
    const bySession = await owner.projects.events.list('proj_main', { sessionId: 'sess_001' });
    expect(bySession.items.every((e) => e.sessionId === 'sess_001')).toBe(true);
  });

  it('events.stream resumes from the last id after the server drops the connection, then stops on abort', async () => {
    const owner = clientOf('acc_owner');
    const start = (await owner.projects.events.list('proj_main', { limit: 500 })).nextAfter;
    const controller = new AbortController();
    const stream = consume(owner.projects.events.stream('proj_main', { signal: controller.signal }));
    try {
      await waitUntil(() => stream.events.length >= start, 'the replayed history');
      expect(sequences(stream.events)).toEqual(range(1, start));

      await owner.projects.inbox.create('proj_main', { type: 'summary', title: 'live' });
      await waitUntil(() => stream.events.length >= start + 1, 'the live event');

      // The server drops every connection (the stream's included); events written meanwhile are missed…
      demo.app.server.closeAllConnections();
      await waitUntil(() => openStreamCount(demo.app) === 0, 'the dropped stream to be released');
      await new Promise((r) => setTimeout(r, 100)); // let the client's pool see its closed sockets too
      await owner.projects.inbox.create('proj_main', { type: 'summary', title: 'missed 1' });
      await owner.projects.inbox.create('proj_main', { type: 'summary', title: 'missed 2' });
      // …until the client reconnects (after the server's retry hint) with Last-Event-ID.
      await waitUntil(() => stream.events.length >= start + 3, 'the missed events after the reconnect');
      await owner.projects.inbox.create('proj_main', { type: 'summary', title: 'live again' });
      await waitUntil(() => stream.events.length >= start + 4, 'a live event after the reconnect');
      expect(sequences(stream.events)).toEqual(range(1, start + 4));
      expect(stream.events.slice(-3).map((e) => (e.payload as { title?: string }).title)).toEqual(['missed 1', 'missed 2', 'live again']);
    } finally {
      controller.abort();
    }
    await stream.done; // ends without an error
    await waitUntil(() => openStreamCount(demo.app) === 0, 'the server stream to close');
    expect(demo.bus.subscriberCount()).toBe(0);
  });

  it('abort while waiting to reconnect ends the iterator and opens nothing more', async () => {
    const owner = clientOf('acc_owner');
    const controller = new AbortController();
    const stream = consume(owner.projects.events.stream('proj_main', { signal: controller.signal }));
    await waitUntil(() => openStreamCount(demo.app) === 1 && stream.events.length > 0, 'the stream to open');
    demo.app.server.closeAllConnections();
    await waitUntil(() => openStreamCount(demo.app) === 0, 'the dropped stream to be released');
    controller.abort();
    await stream.done;
    await new Promise((r) => setTimeout(r, RETRY_MS * 3)); // longer than the retry hint: no reconnect happens
    expect(openStreamCount(demo.app)).toBe(0);
  });

  it('events.stream applies types, sessionId and the caller\'s visibility', async () => {
    const deriver = clientOf('acc_deriver');
    const observer = clientOf('acc_observer');
    const owner = clientOf('acc_owner');
    const after = (await owner.projects.events.list('proj_main', { limit: 500 })).nextAfter;
    const controller = new AbortController();
    const mine = consume(deriver.projects.events.stream('proj_main', { after, types: ['project_inbox.item.created'], signal: controller.signal }));
    const sessionOnly = consume(owner.projects.events.stream('proj_main', { after, sessionId: 'sess_001', signal: controller.signal }));
    const observed = consume(observer.projects.events.stream('proj_main', { after, signal: controller.signal }));
    try {
      const own = await deriver.projects.inbox.create('proj_main', { type: 'summary', title: 'by deriver', sourceSessionId: 'sess_001' });
      await owner.projects.inbox.create('proj_main', { type: 'summary', title: 'by owner' });
      await owner.projects.inbox.accept('proj_main', own.id);
      await owner.sessions.create({ projectId: 'proj_main', title: 'marker' });
      await waitUntil(() => mine.events.length >= 1 && sessionOnly.events.length >= 2 && observed.events.length >= 1, 'the filtered events');
      await new Promise((r) => setTimeout(r, 100));
      expect(mine.events.map((e) => [e.type, e.payload.inbox_item_id])).toEqual([['project_inbox.item.created', own.id]]);
      expect(sessionOnly.events.map((e) => e.type)).toEqual(['project_inbox.item.created', 'project_inbox.item.accepted']);
      expect(sessionOnly.events.every((e) => e.sessionId === 'sess_001')).toBe(true);
      expect(observed.events.map((e) => e.type)).toEqual(['session.created']);
    } finally {
      controller.abort();
      await Promise.all([mine.done, sessionOnly.done, observed.done]);
    }
  });

  it('operationLogs.list pages newest first for the owner; 403 for members, 404 for outsiders', async () => {
    const owner = clientOf('acc_owner');
    const seen: string[] = [];
    let cursor: string | undefined;
    let previous: { createdAt: number; id: string } | undefined;
    do {
      const page = await owner.projects.operationLogs.list('proj_main', { limit: 3, ...(cursor ? { cursor } : {}) });
      expect(page.items.length).toBeLessThanOrEqual(3);
      for (const log of page.items) {
        if (previous) expect(log.createdAt < previous.createdAt || (log.createdAt === previous.createdAt && log.id < previous.id)).toBe(true);
        previous = { createdAt: log.createdAt, id: log.id };
        seen.push(log.id);
      }
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.length).toBeGreaterThanOrEqual(4);
    for (const [account, status] of [['acc_deriver', 403], ['acc_observer', 403], ['acc_outsider', 404]] as const) {
      const error = await clientOf(account).projects.operationLogs.list('proj_main').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InboxKitApiError);
      expect((error as InboxKitApiError).status).toBe(status);
    }
  });
});
