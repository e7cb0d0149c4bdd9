/**
 * Server-Sent Events on Fastify: the contract's write loop (`runEventStream` of
 * `@inbox-kit/core/http`: resume, resync, replay then live with no gap, authorisation before every
 * delivery, heartbeats, the cut-off of a client that stops reading) on Node's response, with
 * back-pressure through `drain`. This file only does what is Fastify's: `HEAD` with headers only,
 * the per-caller stream cap, hijacking the reply, ending the stream when the client goes away, and
 * a `preClose` hook that ends every open stream so `app.close()` returns promptly.
 */
import { isInboxKitError, type Feed } from '@inbox-kit/core';
import { resumePosition, runEventStream, SSE_HEADERS } from '@inbox-kit/core/http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { claimStreamSlot, DEFAULT_MAX_STREAMS_PER_CALLER } from './stream-limits.js';

/** A frame source: the core's `Feed` (frame `id` = sequence, `event` = type, `data` = one JSON line). */
export type EventStreamSource = Feed;

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
  /** The request's `Last-Event-ID` as a position, when sent: a stale `after` past the newest event resumes from it (`resumeStart` of the core). */
  lastEventId?: number;
  /**
   * Re-authenticates the request's credential as a fresh request would be (revoked or unknown key
   * → throws). Called with the feed's `authorize` before every delivery.
   */
  reauthenticate?: () => Promise<void>;
}

const openStreams = new WeakMap<object, Set<() => void>>();

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

/**
 * Streams `source` to the client until it disconnects, access is withdrawn or the server closes.
 * @throws InboxKitError `too_many_streams` (429) before anything is written when the caller holds its maximum.
 */
export async function sendEventStream(request: FastifyRequest, reply: FastifyReply, source: EventStreamSource, options: EventStreamOptions): Promise<void> {
  // HEAD: the headers a GET would get, no body, and the socket is free at once.
  if (request.method === 'HEAD') {
    const { connection: _close, ...headers } = SSE_HEADERS;
    await reply.code(200).headers(headers).send();
    return;
  }
  const raw = reply.raw;
  const releaseSlot = claimStreamSlot(request, options.maxStreamsPerCaller ?? DEFAULT_MAX_STREAMS_PER_CALLER);
  const registry = openStreams.get(request.server.server);
  reply.hijack();
  raw.writeHead(200, { ...SSE_HEADERS, 'x-request-id': request.requestId, 'request-id': request.requestId });
  request.observation?.streamOpened();
  const socket = request.raw.socket;
  const stream = runEventStream(source, {
    write: (chunk) => raw.write(chunk),
    buffered: () => raw.writableLength,
    // A replay waits for the client to read before its next page.
    drained: () => (raw.writableNeedDrain ? new Promise<void>((resolve) => {
      const done = () => {
        raw.off('drain', done);
        raw.off('close', done);
        resolve();
      };
      raw.on('drain', done);
      raw.on('close', done);
    }) : Promise.resolve()),
    close: () => {
      releaseSlot();
      registry?.delete(stream.end);
      socket?.off('end', stream.end); // the socket may outlive the response; `raw` keeps its (idempotent) listeners
      if (!raw.writableEnded) raw.end();
    },
  }, {
    ...options,
    // A refusal (credential revoked, member removed, …) ends the stream as a fresh request would be
    // refused; the client's reconnection then gets that answer (401/404) in the envelope.
    onEnd: (error) => {
      if (error === undefined) return;
      if (isInboxKitError(error)) request.log.info({ code: error.code }, 'event stream ended: access withdrawn');
      else request.log.error({ err: error }, 'event stream failed');
    },
  });
  registry?.add(stream.end);
  raw.on('close', stream.end);
  raw.on('error', stream.end);
  request.raw.on('close', stream.end);
  socket?.on('end', stream.end); // a half-closed client (FIN sent, socket not destroyed)
  // The client may have gone while the feed was being opened: its events fired before we listened.
  if (raw.destroyed || request.raw.destroyed || !socket || socket.destroyed || socket.readableEnded) stream.end();
  await stream.done;
}
