/**
 * Server-Sent Events with resume and no gap: subscribe to the live source first, replay stored
 * events after the resume position, then forward live ones, skipping what was already sent
 * (platform.md "Project Events"). The resume position is the later of `?after=` and
 * `Last-Event-ID`; one after the newest stored event gets a `resync` frame. Every delivery (each
 * replay page, each live frame, each heartbeat) is authorised as of now: the caller's credential
 * and read right are checked again, and a refusal ends the stream. `: heartbeat` comment lines, a
 * `retry:` hint, no compression, `HEAD` answered with headers only, and every subscription and
 * timer released when the client goes away or the server closes.
 */
import { isInboxKitError, resumePosition, resyncFor, type Feed, type FeedItem } from '@inbox-kit/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { claimStreamSlot, DEFAULT_MAX_STREAMS_PER_CALLER } from './stream-limits.js';

/** A frame source: the core's `Feed` (frame `id` = sequence, `event` = type, `data` = one JSON line). */
export type EventStreamSource = Feed;
type SseFrame = FeedItem;

/** Stream timings, configurable per server (tests shorten them). */
export interface StreamTiming {
  /** Comment heartbeat interval in ms (default 15,000). */
  heartbeatMs?: number;
  /** `retry:` hint in ms (default 2,000). */
  retryMs?: number;
  /** Replay page size (default 500). */
  pageSize?: number;
  /** Event streams one API key (per acting account) may hold open at once; past it 429 `too_many_streams` (default 16). */
  maxStreamsPerCaller?: number;
}

export interface EventStreamOptions extends StreamTiming {
  /** Resume point: frames with id > after are sent (see {@link resumeCursor}). */
  after: number;
  /**
   * Re-authenticates the request's credential as a fresh request would be (revoked or unknown key
   * → throws). Called with the feed's `authorize` before every delivery.
   */
  reauthenticate?: () => Promise<void>;
}

const openStreams = new WeakMap<object, Set<() => void>>();

/**
 * A quiet stream (nothing delivered) is authorised again on a heartbeat once this many ms passed
 * since its last check (15 s): it delivers nothing meanwhile, so this only bounds how long a
 * withdrawn grant keeps its socket, without a check per heartbeat per stream.
 */
const QUIET_AUTHORIZE_MS = 15_000;

/** Bytes a stream may have waiting for a client that does not read before it is ended (1 MiB). */
const MAX_BUFFERED_BYTES = 1_048_576;

/** Number of streams open on a server (for leak checks). */
export function openStreamCount(app: FastifyInstance): number {
  return openStreams.get(app.server)?.size ?? 0;
}

/**
 * Registers a `preClose` hook that ends every open stream, so `app.close()` returns promptly.
 * Called once by the root plugin.
 */
export function registerStreamShutdown(app: FastifyInstance): void {
  const key = app.server;
  if (!openStreams.has(key)) openStreams.set(key, new Set());
  app.addHook('preClose', async () => {
    for (const end of [...(openStreams.get(key) ?? [])]) end();
  });
}

/**
 * The resume position of a request: the later of `?after=` and `Last-Event-ID` (platform.md
 * "Project Events" → "Resume").
 * @throws InboxKitError `validation_error` (400) for a malformed `Last-Event-ID`.
 */
export function resumeCursor(request: FastifyRequest, queryAfter: number | undefined): number {
  return resumePosition(queryAfter, request.headers['last-event-id']);
}

const STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
} as const;

/** Streams `source` to the client until it disconnects or the server closes. */
export async function sendEventStream(request: FastifyRequest, reply: FastifyReply, source: EventStreamSource, options: EventStreamOptions): Promise<void> {
  const raw = reply.raw;
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const pageSize = options.pageSize ?? 500;
  const registry = openStreams.get(request.server.server);

  // HEAD: the headers a GET would get, no body, and the socket is free at once.
  if (request.method === 'HEAD') {
    await reply.code(200).headers(STREAM_HEADERS).send();
    return;
  }

  const releaseSlot = claimStreamSlot(request, options.maxStreamsPerCaller ?? DEFAULT_MAX_STREAMS_PER_CALLER);
  let lastSent = options.after;
  let started = false;
  let closed = false;
  reply.hijack();
  raw.writeHead(200, {
    ...STREAM_HEADERS,
    // The socket is not reused after a stream: closing it lets server.close() finish promptly.
    connection: 'close',
    'x-request-id': request.requestId,
  });
  raw.write(`retry: ${options.retryMs ?? 2_000}\n\n`);

  const write = (frame: SseFrame) => {
    if (closed || frame.id <= lastSent) return;
    lastSent = frame.id;
    if (!source.visible(frame)) return;
    raw.write(`id: ${frame.id}\nevent: ${frame.type}\ndata: ${JSON.stringify(frame.data)}\n\n`);
  };

  // Every write goes through one chain: the initial replay first, then live frames in arrival
  // order. A live frame that skips ids (another writer's publish still in flight, or frames
  // published while this stream replayed) triggers a catch-up from storage first.
  let chain: Promise<void> = Promise.resolve();
  const enqueue = (task: () => Promise<void>) => {
    chain = chain.then(() => (closed ? undefined : task())).catch((error: unknown) => {
      // A refusal (credential revoked, member removed, …) ends the stream as a fresh request would
      // be refused; the client's reconnection then gets that answer (401/404) in the envelope.
      if (isInboxKitError(error)) request.log.info({ code: error.code }, 'event stream ended: access withdrawn');
      else request.log.error({ err: error }, 'event stream failed');
      end();
    });
  };
  // Authorised as of now: the credential, then the read right (refreshing the feed's filter).
  let authorizedAt = Date.now();
  const authorize = async (next: readonly SseFrame[]) => {
    const at = Date.now();
    await options.reauthenticate?.();
    await source.authorize(next);
    authorizedAt = at;
  };
  // A replay waits for the client to read (`drain`) before it writes the next page; a client that
  // stops reading live frames is cut off once MAX_BUFFERED_BYTES wait for it (it resumes later
  // with Last-Event-ID), so a stalled client never holds unbounded memory.
  const drained = () => new Promise<void>((resolve) => {
    const done = () => {
      raw.off('drain', done);
      raw.off('close', done);
      resolve();
    };
    raw.on('drain', done);
    raw.on('close', done);
  });
  const catchUp = async () => {
    for (;;) {
      if (closed) return;
      const page = (await source.replay(lastSent, pageSize)).filter((frame) => frame.id > lastSent);
      if (page.length > 0) await authorize(page);
      if (closed) return;
      for (const frame of page) write(frame);
      if (page.length < pageSize) return;
      if (!closed && raw.writableNeedDrain) await drained();
    }
  };
  const unsubscribe = source.subscribe((frame) => {
    // Until the start (resync check, first replay) has run, `lastSent` is only the request's.
    if (closed || (started && frame.id <= lastSent)) return;
    enqueue(async () => {
      if (frame.id <= lastSent) return;
      if (frame.id > lastSent + 1) await catchUp();
      if (frame.id <= lastSent || closed) return;
      await authorize([frame]);
      if (closed) return;
      write(frame);
      if (raw.writableLength > MAX_BUFFERED_BYTES) end();
    });
  });
  const heartbeat = setInterval(() => {
    // A quiet stream is authorised too (at most every QUIET_AUTHORIZE_MS), so a withdrawn grant
    // does not keep its socket for long.
    enqueue(async () => {
      if (Date.now() - authorizedAt >= QUIET_AUTHORIZE_MS) await authorize([]);
      if (!closed) raw.write(': heartbeat\n\n');
    });
  }, heartbeatMs);
  heartbeat.unref?.();

  let resolveDone!: () => void;
  const done = new Promise<void>((r) => (resolveDone = r));
  const end = () => {
    if (closed) return;
    closed = true;
    clearInterval(heartbeat);
    unsubscribe();
    releaseSlot();
    registry?.delete(end);
    socket?.off('end', end); // the socket may outlive the response; `raw` keeps its (idempotent) listeners
    if (!raw.writableEnded) raw.end();
    resolveDone();
  };
  const socket = request.raw.socket;
  registry?.add(end);
  raw.on('close', end);
  raw.on('error', end);
  request.raw.on('close', end);
  socket?.on('end', end); // a half-closed client (FIN sent, socket not destroyed)
  // The client may have gone while the feed was being opened: its events fired before we listened.
  if (raw.destroyed || request.raw.destroyed || !socket || socket.destroyed || socket.readableEnded) end();

  enqueue(async () => {
    // A position after the newest stored event names nothing this stream delivered: say so with
    // one `resync` frame (id = the newest position) and go on after it, never skipping silently.
    if (options.after > 0) {
      const signal = resyncFor(options.after, await source.latest());
      if (signal !== undefined && !closed) {
        await authorize([]);
        lastSent = signal.latest;
        raw.write(`id: ${signal.latest}\nevent: resync\ndata: ${JSON.stringify(signal)}\n\n`);
      }
    }
    started = true;
    await catchUp();
  });
  await done;
}
