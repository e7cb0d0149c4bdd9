/**
 * The one SSE write loop (`runEventStream`) both adapters run, driven through a fake sink and an
 * in-memory feed: the frames in order, resume and resync, replay then live without gap or repeat,
 * visibility, authorisation before every delivery, the exact heartbeat, back-pressure between
 * replay pages, the cut-off of a client that stops reading, and the stream slots per caller.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InboxKitError } from '../errors.js';
import type { Feed, FeedItem } from '../ports/feed.js';
import { createStreamSlots, eventFrame, heartbeatFrame, runEventStream, type SseSink } from './sse.js';

afterEach(() => {
  vi.useRealTimers();
});

/** A feed over `stored` whose live pushes the test makes; records every `authorize` call. */
function memoryFeed(stored: FeedItem[], options: { hidden?: (item: FeedItem) => boolean; refuse?: () => boolean } = {}) {
  const listeners = new Set<(item: FeedItem) => void>();
  const authorized: number[][] = [];
  const feed: Feed = {
    replay: async (after, limit) => stored.filter((i) => i.id > after).slice(0, limit),
    latest: async () => stored[stored.length - 1]?.id ?? 0,
    subscribe: (push) => {
      listeners.add(push);
      return () => listeners.delete(push);
    },
    authorize: async (next) => {
      authorized.push(next.map((i) => i.id));
      if (options.refuse?.()) throw new InboxKitError('project_not_found', 'Project not found');
    },
    visible: (item) => !(options.hidden?.(item) ?? false),
  };
  return {
    feed,
    authorized,
    subscribers: () => listeners.size,
    publish(item: FeedItem) {
      stored.push(item);
      for (const push of listeners) push(item);
    },
  };
}

/** A sink that keeps what was written; `unread` bytes pretend the client has not read them. */
function memorySink() {
  const chunks: string[] = [];
  let unread = 0;
  let closed = 0;
  let release: (() => void) | undefined;
  let drains = 0;
  const sink: SseSink = {
    write: (chunk) => void chunks.push(chunk),
    buffered: () => unread,
    drained: () => {
      if (unread === 0) return Promise.resolve();
      drains++;
      return new Promise<void>((resolve) => (release = resolve));
    },
    close: () => void closed++,
  };
  return {
    sink,
    chunks,
    ids: () => chunks.filter((c) => c.startsWith('id: ')).map((c) => Number(c.slice(4, c.indexOf('\n')))),
    setUnread: (n: number) => (unread = n),
    read: () => {
      unread = 0;
      release?.();
    },
    closed: () => closed,
    drains: () => drains,
  };
}

const items = (from: number, to: number): FeedItem[] => Array.from({ length: to - from + 1 }, (_, k) => ({ id: from + k, type: 'x', data: { n: from + k } }));
const settle = () => new Promise<void>((resolve) => setTimeout(resolve, 0));
async function until(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 1_000 && !ok(); i++) await settle();
  if (!ok()) throw new Error(`never happened: ${what}`);
}

describe('runEventStream', () => {
  it('writes the retry hint first, replays after the resume position, then live items with no gap and no repeat', async () => {
    const f = memoryFeed(items(1, 5));
    const s = memorySink();
    const stream = runEventStream(f.feed, s.sink, { after: 2, retryMs: 1234, heartbeatMs: 60_000 });
    expect(s.chunks[0]).toBe('retry: 1234\n\n');
    await until('the replay', () => s.ids().length === 3);
    expect(s.chunks[1]).toBe('id: 3\nevent: x\ndata: {"n":3}\n\n');
    f.publish({ id: 6, type: 'x', data: { n: 6 } });
    f.publish({ id: 5, type: 'x', data: { n: 5 } }); // an old id again: never repeated
    // A live id that skips ahead: the gap comes from storage first.
    f.feed.replay = async (after, limit) => items(1, 8).filter((i) => i.id > after).slice(0, limit);
    f.publish({ id: 9, type: 'x', data: { n: 9 } });
    await until('the live items', () => s.ids().includes(9));
    expect(s.ids()).toEqual([3, 4, 5, 6, 7, 8, 9]);
    stream.end();
    await stream.done;
    expect(f.subscribers()).toBe(0);
    expect(s.closed()).toBe(1);
  });

  it('sends one resync frame for a position after the newest item, then goes on after the newest', async () => {
    const f = memoryFeed(items(1, 3));
    const s = memorySink();
    const stream = runEventStream(f.feed, s.sink, { after: 10, heartbeatMs: 60_000 });
    await until('the resync frame', () => s.chunks.length === 2);
    expect(s.chunks[1]).toBe(`id: 3\nevent: resync\ndata: ${JSON.stringify({ type: 'resync', reason: 'ahead_of_latest', requested_after: 10, latest: 3 })}\n\n`);
    f.publish({ id: 4, type: 'x', data: {} });
    await until('the next live item', () => s.ids().includes(4));
    stream.end();
  });

  it('skips what the caller may not see, authorises before every delivery, and ends on a refusal', async () => {
    let refuse = false;
    const f = memoryFeed(items(1, 4), { hidden: (i) => i.id === 2, refuse: () => refuse });
    const s = memorySink();
    const onEnd = vi.fn();
    const stream = runEventStream(f.feed, s.sink, { after: 0, heartbeatMs: 60_000, onEnd, reauthenticate: async () => {} });
    await until('the replay', () => s.ids().length === 3);
    expect(s.ids()).toEqual([1, 3, 4]);
    expect(f.authorized).toEqual([[1, 2, 3, 4]]);
    refuse = true;
    f.publish({ id: 5, type: 'x', data: {} });
    await stream.done;
    expect(s.ids()).toEqual([1, 3, 4]);
    expect(f.authorized).toEqual([[1, 2, 3, 4], [5]]);
    expect(onEnd).toHaveBeenCalledOnce();
    expect(onEnd.mock.calls[0]![0]).toMatchObject({ code: 'project_not_found' });
    expect(s.closed()).toBe(1);
    expect(f.subscribers()).toBe(0);
  });

  it('ends the stream when the credential check refuses, before the delivery', async () => {
    const f = memoryFeed(items(1, 2));
    const s = memorySink();
    const onEnd = vi.fn();
    const stream = runEventStream(f.feed, s.sink, {
      after: 0, heartbeatMs: 60_000, onEnd, reauthenticate: async () => {
        throw new InboxKitError('invalid_credentials', 'revoked');
      },
    });
    await stream.done;
    expect(s.ids()).toEqual([]);
    expect(onEnd.mock.calls[0]![0]).toMatchObject({ code: 'invalid_credentials' });
  });

  it('heartbeats are exactly `: heartbeat`, and a quiet stream is authorised again once quietAuthorizeMs passed', async () => {
    vi.useFakeTimers();
    let now = 0;
    const f = memoryFeed([]);
    const s = memorySink();
    const stream = runEventStream(f.feed, s.sink, { after: 0, heartbeatMs: 1_000, quietAuthorizeMs: 2_500, clock: { now: () => now } });
    expect(heartbeatFrame()).toBe(': heartbeat\n\n');
    for (let beat = 1; beat <= 3; beat++) {
      now = beat * 1_000;
      await vi.advanceTimersByTimeAsync(1_000);
    }
    expect(s.chunks.filter((c) => c.startsWith(':'))).toEqual([': heartbeat\n\n', ': heartbeat\n\n', ': heartbeat\n\n']);
    // Beats at 1 s and 2 s are within 2.5 s of the start; the one at 3 s checks access again.
    expect(f.authorized).toEqual([[]]);
    stream.end();
  });

  it('waits for the client to read between full replay pages, and cuts off a client that stops reading live items', async () => {
    const f = memoryFeed(items(1, 5));
    const s = memorySink();
    s.setUnread(100);
    const onEnd = vi.fn();
    const stream = runEventStream(f.feed, s.sink, { after: 0, pageSize: 2, heartbeatMs: 60_000, maxBufferedBytes: 1_000, onEnd });
    await until('the first page', () => s.ids().length === 2 && s.drains() === 1);
    await settle();
    expect(s.ids()).toEqual([1, 2]);
    s.read();
    s.setUnread(100);
    await until('the second page', () => s.ids().length === 4 && s.drains() === 2);
    s.read();
    await until('the rest', () => s.ids().length === 5);
    s.setUnread(5_000);
    f.publish({ id: 6, type: 'x', data: {} });
    await stream.done;
    expect(s.ids()).toEqual([1, 2, 3, 4, 5, 6]);
    expect(onEnd).toHaveBeenCalledWith(undefined);
    expect(s.closed()).toBe(1);
  });
});

describe('runEventStream with a feed that answers synchronously', () => {
  /** `memoryFeed` whose `authorize` returns nothing (no check due) until `due` says one is. */
  function syncFeed(stored: FeedItem[], options: { due?: () => boolean; refuse?: () => boolean } = {}) {
    const f = memoryFeed(stored, options);
    let resolveCheck: (() => void) | undefined;
    f.feed.authorize = (next) => {
      f.authorized.push(next.map((i) => i.id));
      if (options.refuse?.()) throw new InboxKitError('project_not_found', 'Project not found');
      if (!options.due?.()) return undefined;
      return new Promise<void>((resolve) => (resolveCheck = resolve));
    };
    return { ...f, finishCheck: () => resolveCheck?.() };
  }

  it('an idle stream writes a live item in the turn it is published; while a check is pending, items wait and keep their order', async () => {
    let due = false;
    const f = syncFeed(items(1, 1), { due: () => due });
    const s = memorySink();
    const stream = runEventStream(f.feed, s.sink, { after: 0, heartbeatMs: 60_000 });
    await until('the replay', () => s.ids().length === 1);
    await settle();
    f.publish({ id: 2, type: 'x', data: {} });
    expect(s.ids()).toEqual([1, 2]); // no await between the publish and the frame
    due = true;
    f.publish({ id: 3, type: 'x', data: {} });
    due = false;
    f.publish({ id: 4, type: 'x', data: {} });
    f.publish({ id: 5, type: 'x', data: {} });
    await settle();
    expect(s.ids()).toEqual([1, 2]); // 3 waits for its check; 4 and 5 wait behind it
    f.finishCheck();
    await until('the waiting items', () => s.ids().length === 5);
    expect(s.ids()).toEqual([1, 2, 3, 4, 5]);
    expect(f.authorized.slice(1)).toEqual([[2], [3], [4], [5]]);
    // Idle again: the next item is written at once.
    f.publish({ id: 6, type: 'x', data: {} });
    expect(s.ids()).toEqual([1, 2, 3, 4, 5, 6]);
    stream.end();
    await stream.done;
    expect(f.subscribers()).toBe(0);
  });

  it('a synchronous refusal ends the stream before the delivery, with the error', async () => {
    let refuse = false;
    const f = syncFeed(items(1, 1), { refuse: () => refuse });
    const s = memorySink();
    const onEnd = vi.fn();
    const stream = runEventStream(f.feed, s.sink, { after: 0, heartbeatMs: 60_000, onEnd });
    await until('the replay', () => s.ids().length === 1);
    await settle();
    refuse = true;
    f.publish({ id: 2, type: 'x', data: {} });
    await stream.done;
    expect(s.ids()).toEqual([1]);
    expect(onEnd.mock.calls[0]![0]).toMatchObject({ code: 'project_not_found' });
    expect(s.closed()).toBe(1);
    expect(f.subscribers()).toBe(0);
  });

  it('with a credential check, a live item still waits for it, and a refusal there delivers nothing', async () => {
    let revoked = false;
    const f = syncFeed(items(1, 1));
    const s = memorySink();
    const onEnd = vi.fn();
    const stream = runEventStream(f.feed, s.sink, {
      after: 0, heartbeatMs: 60_000, onEnd, reauthenticate: async () => {
        if (revoked) throw new InboxKitError('invalid_credentials', 'revoked');
      },
    });
    await until('the replay', () => s.ids().length === 1);
    f.publish({ id: 2, type: 'x', data: {} });
    expect(s.ids()).toEqual([1]);
    await until('the checked item', () => s.ids().length === 2);
    revoked = true;
    f.publish({ id: 3, type: 'x', data: {} });
    await stream.done;
    expect(s.ids()).toEqual([1, 2]);
    expect(onEnd.mock.calls[0]![0]).toMatchObject({ code: 'invalid_credentials' });
  });
});

describe('runEventStream with a credential check answered at once', () => {
  it('a live item passes in the turn it is published; a check that throws at once ends the stream before the delivery', async () => {
    let revoked = false;
    let checks = 0;
    const f = memoryFeed(items(1, 1));
    f.feed.authorize = () => undefined;
    const s = memorySink();
    const onEnd = vi.fn();
    const stream = runEventStream(f.feed, s.sink, {
      after: 0, heartbeatMs: 60_000, onEnd, reauthenticate: () => {
        checks += 1;
        if (revoked) throw new InboxKitError('invalid_credentials', 'revoked');
        return undefined;
      },
    });
    await until('the replay', () => s.ids().length === 1);
    await settle();
    f.publish({ id: 2, type: 'x', data: {} });
    expect(s.ids()).toEqual([1, 2]); // no await between the publish and the frame
    expect(checks).toBe(2);
    revoked = true;
    f.publish({ id: 3, type: 'x', data: {} });
    await stream.done;
    expect(s.ids()).toEqual([1, 2]);
    expect(onEnd.mock.calls[0]![0]).toMatchObject({ code: 'invalid_credentials' });
    expect(s.closed()).toBe(1);
    expect(f.subscribers()).toBe(0);
  });
});

describe('eventFrame', () => {
  it('is the frame of the item it is given, when the same data object is framed again under another id or type too', () => {
    const data = { sequence: 7, title: 'été' };
    expect(eventFrame({ id: 7, type: 'a', data })).toBe('id: 7\nevent: a\ndata: {"sequence":7,"title":"été"}\n\n');
    expect(eventFrame({ id: 7, type: 'a', data })).toBe('id: 7\nevent: a\ndata: {"sequence":7,"title":"été"}\n\n');
    expect(eventFrame({ id: 8, type: 'a', data })).toBe('id: 8\nevent: a\ndata: {"sequence":7,"title":"été"}\n\n');
    expect(eventFrame({ id: 7, type: 'b', data })).toBe('id: 7\nevent: b\ndata: {"sequence":7,"title":"été"}\n\n');
    for (let i = 0; i < 20; i++) expect(eventFrame({ id: i, type: 'x', data: { i } })).toBe(`id: ${i}\nevent: x\ndata: {"i":${i}}\n\n`);
    expect(eventFrame({ id: 3, type: 'x', data: 'text' })).toBe('id: 3\nevent: x\ndata: "text"\n\n');
  });

  it('streams of one heartbeat interval all beat (one shared timer), and an ended one no more', async () => {
    vi.useFakeTimers();
    const f = memoryFeed([]);
    const sinks = [memorySink(), memorySink(), memorySink()];
    const streams = sinks.map((s) => runEventStream(f.feed, s.sink, { after: 0, heartbeatMs: 1_000 }));
    await vi.advanceTimersByTimeAsync(1_000);
    streams[0]!.end();
    await vi.advanceTimersByTimeAsync(1_000);
    const beats = sinks.map((s) => s.chunks.filter((c) => c === heartbeatFrame()).length);
    expect(beats).toEqual([1, 2, 2]);
    for (const s of streams) s.end();
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('createStreamSlots', () => {
  it('counts streams per API key and acting account, refuses past the maximum with too_many_streams, and gives slots back once', () => {
    const slots = createStreamSlots();
    const alice = { workspace_id: 'ws', account_id: 'acc_a', key_id: 'key_1', key_kind: 'standard' } as never;
    const bob = { workspace_id: 'ws', account_id: 'acc_b', key_id: 'key_1', key_kind: 'service' } as never;
    const first = slots.claim(alice, 2);
    slots.claim(alice, 2);
    expect(() => slots.claim(alice, 2)).toThrow(expect.objectContaining({ code: 'too_many_streams' }));
    slots.claim(bob, 2);
    first();
    first();
    slots.claim(alice, 2);
    expect(() => slots.claim(alice, 2)).toThrow(expect.objectContaining({ code: 'too_many_streams' }));
    expect(slots.claim(null, 0)).toBeTypeOf('function');
  });
});
