/**
 * Server-Sent Events on web streams: the contract's write loop (`runEventStream` of
 * `@inbox-kit/core/http`: resume, resync, replay then live with no gap, authorisation before every
 * delivery, heartbeats, the cut-off of a client that stops reading) writing into a `ReadableStream`
 * whose reads are the back-pressure. This file only does `HEAD` with headers only, the per-caller
 * stream cap (429 `too_many_streams`), and ending the stream when the client goes away.
 */
import type { Feed, Principal } from '@inbox-kit/core';
import { DEFAULT_MAX_STREAMS_PER_CALLER, SSE_HEADERS, runEventStream, type EventStreamLoop, type ObservedRequest, type StreamSlots } from '@inbox-kit/core/http';

/** Stream settings (ms; `pageSize` items; `maxStreamsPerCaller` per API key and acting account, default 16). */
export interface StreamOptions {
  heartbeatMs?: number;
  retryMs?: number;
  pageSize?: number;
  maxStreamsPerCaller?: number;
}

/** {@link StreamOptions} plus the request's observation (ended when the stream closes). */
type EventStreamOptions = StreamOptions & { observation?: ObservedRequest | undefined };

/** The app's open streams (their `end` functions) and per-caller slots. */
export interface StreamRegistry {
  open: Set<() => void>;
  slots: StreamSlots;
}

/**
 * The `text/event-stream` response for `feed` from `after`.
 * @throws InboxKitError `too_many_streams` when the caller already holds its maximum.
 */
export function eventStream(
  request: Request, feed: Feed, after: number, principal: Principal | null, request_id: string, registry: StreamRegistry,
  options: EventStreamOptions = {}, reauthenticate?: () => Promise<void>,
): Response {
  const { observation, ...timing } = options;
  const headers = { ...SSE_HEADERS, 'x-request-id': request_id };
  if (request.method === 'HEAD') return new Response(null, { status: 200, headers });
  const release = registry.slots.claim(principal, timing.maxStreamsPerCaller ?? DEFAULT_MAX_STREAMS_PER_CALLER);
  observation?.streamOpened();
  const signal = request.signal;
  const encoder = new TextEncoder();
  let stream: EventStreamLoop | undefined;
  // Resolved when the client reads again (the stream's `pull`) or leaves.
  const waiting: Array<() => void> = [];
  const wake = () => {
    for (const resolve of waiting.splice(0)) resolve();
  };
  const end = () => stream?.end();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const unread = () => Math.max(0, -(controller.desiredSize ?? 0));
      stream = runEventStream(feed, {
        write: (chunk) => controller.enqueue(encoder.encode(chunk)),
        buffered: unread,
        drained: () => (unread() === 0 ? Promise.resolve() : new Promise<void>((resolve) => waiting.push(resolve))),
        close: () => {
          release();
          observation?.end({ status: 200, aborted: signal.aborted });
          registry.open.delete(end);
          signal.removeEventListener('abort', end);
          wake();
          try {
            controller.close();
          } catch {
            // already closed by the client
          }
        },
      }, { ...timing, after, ...(reauthenticate ? { reauthenticate } : {}) });
      registry.open.add(end);
      signal.addEventListener('abort', end, { once: true });
      if (signal.aborted) end();
    },
    pull() {
      wake();
    },
    cancel() {
      end();
    },
  }, new ByteLengthQueuingStrategy({ highWaterMark: 0 }) as QueuingStrategy<Uint8Array>);
  return new Response(body, { status: 200, headers });
}
