/**
 * Server-Sent Events framing, resume rules and the one write loop (platform.md "Project Events",
 * live-inbox.md "Drain, commit, carry-over"). An adapter answers `HEAD` with {@link SSE_HEADERS}
 * alone; for `GET` it writes those headers and hands {@link runEventStream} a {@link SseSink}
 * ("write a chunk", "bytes unread", "wait for drain", "close"), and calls the returned `end()` when
 * the client goes away or the server closes. The loop does the rest: the `retry:` hint, subscribe
 * first, replay after the resume position, then live frames, skipping every id at or below the last
 * one examined, a `resync` frame past the newest item, authorisation before every delivery,
 * `: heartbeat` comments, back-pressure, and the cut-off of a client that stops reading.
 */
import type { Clock } from '../ports/clock.js';
import { systemClock } from '../ports/clock.js';
import type { Feed, FeedItem } from '../ports/feed.js';
import type { Principal } from '../context.js';
import { InboxKitError } from '../errors.js';
import { resumeStart } from '../stream-resume.js';

/** Response headers of an event stream (plus `x-request-id`). No compression, no proxy buffering. */
export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  // The socket is not reused after a stream: closing it lets a server close promptly.
  connection: 'close',
  'x-accel-buffering': 'no',
} as const;

/**
 * Defaults of a stream: heartbeat every 15,000 ms, `retry:` 2,000 ms, replay pages of 500, 1 MiB
 * unread before a slow client is cut off, and a quiet stream (nothing delivered) authorised again
 * on a heartbeat once 15,000 ms passed since its last check.
 */
export const SSE_DEFAULTS = { heartbeatMs: 15_000, retryMs: 2_000, pageSize: 500, maxBufferedBytes: 1_048_576, quietAuthorizeMs: 15_000 } as const;

/** The first frame: the reconnect hint in ms. */
export function retryFrame(retryMs: number): string {
  return `retry: ${retryMs}\n\n`;
}

/**
 * The last frames built, by their item's data object: a fan-out hands the same stored event to
 * every stream of its topic, so its frame (the `JSON.stringify` of the event) is built once, not
 * once per stream. A small ring (no per-item allocation kept, nothing held past a few events).
 */
const FRAME_RING = 8;
const frameData: unknown[] = new Array(FRAME_RING);
const frameIds = new Float64Array(FRAME_RING);
const frameTypes: string[] = new Array(FRAME_RING);
const frameTexts: string[] = new Array(FRAME_RING);
let frameNext = 0;

/** One event frame: `id: <sequence>`, `event: <type>`, `data: <JSON on one line>` (item data is never mutated once published). */
export function eventFrame(item: FeedItem): string {
  const { id, type, data } = item;
  const shared = typeof data === 'object' && data !== null;
  if (shared) {
    for (let i = 0; i < FRAME_RING; i++) {
      if (frameData[i] === data && frameIds[i] === id && frameTypes[i] === type) return frameTexts[i]!;
    }
  }
  const text = `id: ${id}\nevent: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
  if (shared) {
    frameData[frameNext] = data;
    frameIds[frameNext] = id;
    frameTypes[frameNext] = type;
    frameTexts[frameNext] = text;
    frameNext = (frameNext + 1) % FRAME_RING;
  }
  return text;
}

/** The comment heartbeat, exactly `: heartbeat` (ignored by clients; keeps proxies from closing an idle stream). */
export function heartbeatFrame(): string {
  return ': heartbeat\n\n';
}

/**
 * Resume rules (platform.md "Project Events" → "Resume"): `resumePosition(after, lastEventId)` is
 * the later of `?after=` and `Last-Event-ID` (a malformed header → 400 `validation_error`);
 * `resyncFor(requested, latest)` is the one `event: resync` frame's data when the position is after
 * the newest stored item (the stream then goes on after `latest`). Before every delivery an
 * adapter calls the feed's `authorize(items)` (and re-checks the credential), then `visible`.
 */
export { lastEventIdOf, resumePosition, resumeStart, resyncFor, type ResyncSignal } from '../stream-resume.js';

/** Where a stream's bytes go: what an adapter provides to {@link runEventStream}. */
export interface SseSink {
  /** Queues `chunk` (UTF-8 text) for the client. Never called after `close()`. */
  write(chunk: string): void;
  /** Bytes written that the client has not taken yet. */
  buffered(): number;
  /** Resolves at once when the client is keeping up, else once it has read what waits (Node: `drain`) or the stream is gone. */
  drained(): Promise<void>;
  /** Ends the response (called once, by the loop's `end`). */
  close(): void;
}

/** Settings of {@link runEventStream} (defaults {@link SSE_DEFAULTS}). */
export interface EventStreamLoopOptions {
  /** Resume position: items with id > after are sent (see `resumePosition`; settled against the newest item by `resumeStart`). */
  after: number;
  /** The request's `Last-Event-ID` as a position (`lastEventIdOf`), when sent: a stale `after` past the newest item then resumes from it. */
  lastEventId?: number;
  /** Comment heartbeat interval, ms. */
  heartbeatMs?: number;
  /** `retry:` hint, ms. */
  retryMs?: number;
  /** Replay page size, items. */
  pageSize?: number;
  /** Bytes a client may leave unread before the stream is ended (it resumes with `Last-Event-ID`). */
  maxBufferedBytes?: number;
  /** A quiet stream is authorised again on a heartbeat once this many ms passed since its last check. */
  quietAuthorizeMs?: number;
  /** Re-checks the request's credential as a fresh request would be (throws `InboxKitError` when refused); called with the feed's `authorize` before every delivery. */
  reauthenticate?: () => Promise<void>;
  /** Called once when the stream ends: with what ended it (an `InboxKitError` for withdrawn access, anything else is a failure), or nothing when the client left, the server closed, or a slow client was cut off. */
  onEnd?: (error?: unknown) => void;
  /** Time for the quiet re-check (default the wall clock). */
  clock?: Clock;
}

/** A running stream: `end()` stops it (idempotent; releases the subscription and timer, closes the sink); `done` resolves once it ended. */
export interface EventStreamLoop {
  end(): void;
  done: Promise<void>;
}

/** The open streams' heartbeats by interval: one timer per interval, not one per stream. */
const heartbeats = new Map<number, { beats: Set<() => void>; timer: ReturnType<typeof setInterval> }>();

/**
 * Calls `beat` every `ms` (the first time within `ms`: the streams of one interval share one
 * timer, unref'd, stopped when its last stream leaves). Returns the idempotent leave.
 */
function joinHeartbeats(ms: number, beat: () => void): () => void {
  let group = heartbeats.get(ms);
  if (group === undefined) {
    const beats = new Set<() => void>();
    const timer = setInterval(() => {
      for (const each of beats) each();
    }, ms);
    (timer as { unref?: () => void }).unref?.();
    heartbeats.set(ms, (group = { beats, timer }));
  }
  const { beats, timer } = group;
  beats.add(beat);
  return () => {
    if (!beats.delete(beat) || beats.size > 0 || heartbeats.get(ms)?.beats !== beats) return;
    clearInterval(timer);
    heartbeats.delete(ms);
  };
}

/**
 * The write loop of an event stream (platform.md "Project Events" → "Resume", "Access"): writes the
 * `retry:` hint, subscribes to `feed` first, then (one `resync` frame when `after` is past the
 * newest item) replays stored items after `after` page by page, waiting for the client to drain
 * between full pages, then forwards live items in arrival order, catching up from storage when a
 * live id skips ahead; ids at or below the last one examined are never sent again, items the feed
 * says are not `visible` are skipped. Before every delivery (each replay page, each live item, the
 * resync, and a quiet stream's heartbeat every `quietAuthorizeMs`) it calls `reauthenticate` and
 * `feed.authorize`; a throw ends the stream (`onEnd(error)`). A client with more than
 * `maxBufferedBytes` unread is cut off. The adapter calls `end()` when the client goes away.
 */
export function runEventStream(feed: Feed, sink: SseSink, options: EventStreamLoopOptions): EventStreamLoop {
  const pageSize = options.pageSize ?? SSE_DEFAULTS.pageSize;
  const maxBuffered = options.maxBufferedBytes ?? SSE_DEFAULTS.maxBufferedBytes;
  const quietMs = options.quietAuthorizeMs ?? SSE_DEFAULTS.quietAuthorizeMs;
  const clock = options.clock ?? systemClock;
  let lastSent = options.after;
  let started = false;
  let closed = false;
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  const write = (chunk: string) => {
    if (!closed) sink.write(chunk);
  };
  const deliver = (item: FeedItem) => {
    if (closed || item.id <= lastSent) return;
    lastSent = item.id;
    if (feed.visible(item)) write(eventFrame(item));
  };

  // Every write goes through one chain: the start first, then live items and heartbeats in order.
  let chain: Promise<void> = Promise.resolve();
  const enqueue = (task: () => Promise<void>) => {
    chain = chain.then(() => (closed ? undefined : task())).catch((error: unknown) => finish(error));
  };
  let authorizedAt = clock.now();
  const authorize = async (next: readonly FeedItem[]) => {
    const at = clock.now();
    await options.reauthenticate?.();
    await feed.authorize(next);
    authorizedAt = at;
  };
  const catchUp = async () => {
    for (;;) {
      if (closed) return;
      const page = (await feed.replay(lastSent, pageSize)).filter((item) => item.id > lastSent);
      if (page.length > 0) await authorize(page);
      if (closed) return;
      for (const item of page) deliver(item);
      if (page.length < pageSize) return;
      if (!closed) await sink.drained();
    }
  };

  const unsubscribe = feed.subscribe((item) => {
    // Until the start (resync check, first replay) has run, `lastSent` is only the request's.
    if (closed || (started && item.id <= lastSent)) return;
    enqueue(async () => {
      if (item.id <= lastSent) return;
      if (item.id > lastSent + 1) await catchUp();
      if (item.id <= lastSent || closed) return;
      await authorize([item]);
      if (closed) return;
      deliver(item);
      if (sink.buffered() > maxBuffered) finish();
    });
  });
  const beat = async () => {
    if (clock.now() - authorizedAt >= quietMs) await authorize([]);
    write(heartbeatFrame());
  };
  const stopBeats = joinHeartbeats(options.heartbeatMs ?? SSE_DEFAULTS.heartbeatMs, () => enqueue(beat));

  function finish(error?: unknown): void {
    if (closed) return;
    closed = true;
    stopBeats();
    unsubscribe();
    sink.close();
    try {
      options.onEnd?.(error);
    } finally {
      resolveDone();
    }
  }

  write(retryFrame(options.retryMs ?? SSE_DEFAULTS.retryMs));
  enqueue(async () => {
    // A position after the newest stored item names nothing this stream delivered: say so with one
    // `resync` frame (id = the newest position) and go on after it, never skipping silently — unless
    // the `Last-Event-ID` of a reconnect names a stored item (the URL's `after` is stale): go on from it.
    if (options.after > 0) {
      const start = resumeStart(options.after, options.lastEventId, await feed.latest());
      if (closed) return;
      if (start.resync !== undefined) {
        await authorize([]);
        if (closed) return;
        lastSent = start.position;
        write(eventFrame({ id: start.position, type: 'resync', data: start.resync }));
      } else {
        lastSent = start.position;
      }
    }
    started = true;
    await catchUp();
  });
  return { end: () => finish(), done };
}

/** Default number of event streams one API key (per acting account) may hold open on one server: 16. */
export const DEFAULT_MAX_STREAMS_PER_CALLER = 16;

/** The open-stream counts of one server (platform.md "Per-caller bounds"); see {@link createStreamSlots}. */
export interface StreamSlots {
  /**
   * Takes one stream slot for `principal` (none needed when null: a public or forwarded stream).
   * @param max streams allowed per caller (integer ≥ 1).
   * @returns the release function (idempotent) that gives the slot back.
   * @throws InboxKitError `too_many_streams` (429) when the caller already holds `max` streams.
   */
  claim(principal: Principal | null | undefined, max: number): () => void;
}

/** Stream slots counted per API key and acting account (a service key acting as several accounts gets a budget per account). */
export function createStreamSlots(): StreamSlots {
  const held = new Map<string, number>();
  return {
    claim(principal, max) {
      if (principal === null || principal === undefined) return () => {};
      const caller = `${principal.key_id}\n${principal.account_id}`;
      const now = held.get(caller) ?? 0;
      if (now >= max) throw new InboxKitError('too_many_streams', `This API key already holds ${max} open event streams; close one before opening another`);
      held.set(caller, now + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = (held.get(caller) ?? 1) - 1;
        if (left <= 0) held.delete(caller);
        else held.set(caller, left);
      };
    },
  };
}
