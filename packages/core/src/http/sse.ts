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
  /**
   * Re-checks the request's credential as a fresh request would be (throws, or rejects with, an
   * `InboxKitError` when refused); called with the feed's `authorize` before every delivery.
   * Answering nothing (`undefined`) means it passed without waiting: the delivery goes on in the
   * same turn (a fan-out's streams wait on no promise).
   */
  reauthenticate?: () => Promise<void> | undefined;
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

/** One heartbeat interval's open streams and their one timer. */
interface HeartbeatGroup {
  streams: Set<EventStreamRun>;
  timer: ReturnType<typeof setInterval>;
}

/** The open streams' heartbeats by interval: one timer per interval, not one per stream. */
const heartbeats = new Map<number, HeartbeatGroup>();

/** The group of `ms` (made with its timer, unref'd, when it is the interval's first stream). */
function heartbeatGroup(ms: number): HeartbeatGroup {
  let group = heartbeats.get(ms);
  if (group === undefined) {
    const streams = new Set<EventStreamRun>();
    const timer = setInterval(() => {
      for (const each of streams) each.heartbeat();
    }, ms);
    (timer as { unref?: () => void }).unref?.();
    heartbeats.set(ms, (group = { streams, timer }));
  }
  return group;
}

/** `stream` leaves `group`; the timer stops when its last stream left. */
function leaveHeartbeats(ms: number, group: HeartbeatGroup, stream: EventStreamRun): void {
  if (!group.streams.delete(stream) || group.streams.size > 0 || heartbeats.get(ms) !== group) return;
  clearInterval(group.timer);
  heartbeats.delete(ms);
}

const resolved: Promise<void> = Promise.resolve();

/**
 * One open stream's whole state, in one object (thousands may be open on one process: no closure
 * per stream besides its feed subscription; the methods are shared). See {@link runEventStream}.
 */
class EventStreamRun implements EventStreamLoop {
  private readonly pageSize: number;
  private readonly maxBuffered: number;
  private readonly quietMs: number;
  private readonly heartbeatMs: number;
  private readonly clock: Clock;
  private readonly reauthenticate: (() => Promise<void> | undefined) | undefined;
  private readonly onEnd: ((error?: unknown) => void) | undefined;
  private lastSent: number;
  private started = false;
  private closed = false;
  /** Every write goes through one chain: the start first, then live items and heartbeats in order. */
  private chain: Promise<void> = resolved;
  /** Tasks of the chain not settled yet: at 0 the chain is idle, and a new task runs at once (no promise when it finishes synchronously). */
  private pending = 0;
  private readonly settled = (): void => {
    this.pending -= 1;
  };
  private readonly failed = (error: unknown): void => {
    this.pending -= 1;
    this.finish(error);
  };
  private authorizedAt: number;
  /** The live item in {@link liveInOrder}'s check, and when that check started (ms). */
  private checking: FeedItem | undefined;
  private checkStarted = 0;

  private readonly unsubscribe: () => void;
  private readonly beats: HeartbeatGroup;
  private resolveDone: (() => void) | undefined;
  private donePromise: Promise<void> | undefined;

  constructor(private readonly feed: Feed, private readonly sink: SseSink, options: EventStreamLoopOptions) {
    this.pageSize = options.pageSize ?? SSE_DEFAULTS.pageSize;
    this.maxBuffered = options.maxBufferedBytes ?? SSE_DEFAULTS.maxBufferedBytes;
    this.quietMs = options.quietAuthorizeMs ?? SSE_DEFAULTS.quietAuthorizeMs;
    this.heartbeatMs = options.heartbeatMs ?? SSE_DEFAULTS.heartbeatMs;
    this.clock = options.clock ?? systemClock;
    this.reauthenticate = options.reauthenticate;
    this.onEnd = options.onEnd;
    this.lastSent = options.after;
    this.authorizedAt = this.clock.now();
    this.unsubscribe = feed.subscribe((item) => {
      // Until the start (resync check, first replay) has run, `lastSent` is only the request's.
      if (this.closed || (this.started && item.id <= this.lastSent)) return;
      // An idle chain takes the item at once: no closure, and no promise when no check is due.
      if (this.pending === 0) this.begin(item);
      else this.enqueue(() => this.live(item));
    });
    this.beats = heartbeatGroup(this.heartbeatMs);
    this.beats.streams.add(this);
    this.write(retryFrame(options.retryMs ?? SSE_DEFAULTS.retryMs));
    const lastEventId = options.lastEventId;
    this.enqueue(() => this.start(lastEventId));
  }

  /** Resolves once the stream ended. */
  get done(): Promise<void> {
    if (this.donePromise === undefined) {
      this.donePromise = this.closed ? resolved : new Promise<void>((resolve) => (this.resolveDone = resolve));
    }
    return this.donePromise;
  }

  end(): void {
    this.finish();
  }

  /** The heartbeat timer's tick: a `: heartbeat` in the chain (after a quiet stream's re-check). */
  heartbeat(): void {
    this.enqueue(() => this.beat());
  }

  /**
   * Runs `task` after every task before it: at once when the chain is idle, else when the last one
   * settled. A task that throws or rejects ends the stream (`finish(error)`).
   */
  private enqueue(task: () => Promise<void> | undefined): void {
    if (this.pending === 0) return this.begin(task);
    this.pending += 1;
    this.chain = this.chain.then(() => (this.closed ? undefined : task())).then(this.settled, this.failed);
  }

  /** Runs a task (or a live item) on the idle chain now; the chain waits only for what it left pending. */
  private begin(task: (() => Promise<void> | undefined) | FeedItem): void {
    let result: Promise<void> | undefined;
    try {
      result = typeof task === 'function' ? task() : this.live(task);
    } catch (error) {
      this.finish(error);
      return;
    }
    if (result === undefined) return;
    this.pending = 1;
    this.chain = result.then(this.settled, this.failed);
  }

  private write(chunk: string): void {
    if (!this.closed) this.sink.write(chunk);
  }

  private deliver(item: FeedItem): void {
    if (this.closed || item.id <= this.lastSent) return;
    this.lastSent = item.id;
    if (this.feed.visible(item)) this.write(eventFrame(item));
  }

  /**
   * The re-check before a delivery: the credential (`reauthenticate`), then the feed's access
   * (nothing to wait for when the feed answered synchronously and there is no credential check).
   * Plain promise steps, not an async frame: a fan-out has every open stream waiting here at once.
   */
  private authorize(next: readonly FeedItem[]): Promise<void> | undefined {
    const at = this.clock.now();
    const credential = this.reauthenticate?.();
    if (credential === undefined) return this.authorizeFeed(next, at);
    return credential.then(() => this.authorizeFeed(next, at));
  }

  /** The feed's part of {@link authorize}, once the credential passed. */
  private authorizeFeed(next: readonly FeedItem[], at: number): Promise<void> | undefined {
    // A feed answers nothing when no check is due (the port's `Promise<void> | void`).
    const checked = this.feed.authorize(next) as Promise<void> | undefined;
    if (checked === undefined) {
      this.authorizedAt = at;
      return undefined;
    }
    return checked.then(() => {
      this.authorizedAt = at;
    });
  }

  private async catchUp(): Promise<void> {
    for (;;) {
      if (this.closed) return;
      const after = this.lastSent;
      const page = (await this.feed.replay(after, this.pageSize)).filter((item) => item.id > after);
      if (page.length > 0) await this.authorize(page);
      if (this.closed) return;
      for (const item of page) this.deliver(item);
      if (page.length < this.pageSize) return;
      if (!this.closed) await this.sink.drained();
    }
  }

  private async start(lastEventId: number | undefined): Promise<void> {
    // A position after the newest stored item names nothing this stream delivered: say so with one
    // `resync` frame (id = the newest position) and go on after it, never skipping silently — unless
    // the `Last-Event-ID` of a reconnect names a stored item (the URL's `after` is stale): go on from it.
    if (this.lastSent > 0) {
      const start = resumeStart(this.lastSent, lastEventId, await this.feed.latest());
      if (this.closed) return;
      if (start.resync !== undefined) {
        await this.authorize([]);
        if (this.closed) return;
        this.lastSent = start.position;
        this.write(eventFrame({ id: start.position, type: 'resync', data: start.resync }));
      } else {
        this.lastSent = start.position;
      }
    }
    this.started = true;
    await this.catchUp();
  }

  /** A live item, in the chain: catch up first when its id skips ahead, then check and deliver. */
  private live(item: FeedItem): Promise<void> | undefined {
    if (item.id <= this.lastSent) return undefined;
    if (item.id > this.lastSent + 1) return this.catchUp().then(() => this.liveInOrder(item));
    return this.liveInOrder(item);
  }

  /**
   * A live item's check, then its delivery. The item and the check's start are kept on the stream
   * (the chain runs one task at a time) and the steps are the stream's own bound functions: a
   * fan-out makes no closure per stream, only the check's promises.
   */
  private liveInOrder(item: FeedItem): Promise<void> | undefined {
    if (item.id <= this.lastSent || this.closed) return undefined;
    this.checking = item;
    this.checkStarted = this.clock.now();
    const credential = this.reauthenticate?.();
    if (credential === undefined) return this.checkLive();
    return credential.then(this.checkLive);
  }

  /** The feed's part of a live item's check, once the credential passed; the delivery when it answers at once. */
  private readonly checkLive = (): Promise<void> | undefined => {
    const checked = this.feed.authorize([this.checking!]) as Promise<void> | undefined;
    if (checked === undefined) return this.deliverChecked();
    return checked.then(this.deliverChecked);
  };

  /** The checked live item written (unless the stream ended meanwhile), and a client too far behind cut off. */
  private readonly deliverChecked = (): undefined => {
    const item = this.checking!;
    this.checking = undefined;
    this.authorizedAt = this.checkStarted;
    if (this.closed) return undefined;
    this.deliver(item);
    if (this.sink.buffered() > this.maxBuffered) this.finish();
    return undefined;
  };

  private beat(): Promise<void> | undefined {
    const checked = this.clock.now() - this.authorizedAt < this.quietMs ? undefined : this.authorize([]);
    if (checked !== undefined) return checked.then(() => this.write(heartbeatFrame()));
    this.write(heartbeatFrame());
    return undefined;
  }

  private finish(error?: unknown): void {
    if (this.closed) return;
    this.closed = true;
    leaveHeartbeats(this.heartbeatMs, this.beats, this);
    this.unsubscribe();
    this.sink.close();
    try {
      this.onEnd?.(error);
    } finally {
      this.resolveDone?.();
    }
  }
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
 * The streams of one heartbeat interval share one timer.
 */
export function runEventStream(feed: Feed, sink: SseSink, options: EventStreamLoopOptions): EventStreamLoop {
  return new EventStreamRun(feed, sink, options);
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
