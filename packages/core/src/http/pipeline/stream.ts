/**
 * Event streams of the pipeline: the stream answer (`PipelineStream`) around the contract's
 * write loop (`runEventStream`: resume, resync, replay then live with no gap, authorisation and
 * re-authentication before every delivery, heartbeats, the cut-off of a client that stops
 * reading), the per-caller slot it holds, the handler's registry of open streams (ended on
 * `closeStreams()`), and {@link streamToReadable}: the same stream as a web `ReadableStream` for
 * fetch-style hosts (its reads are the back-pressure).
 */
import type { Feed } from '../../ports/feed.js';
import type { ObservedRequest } from '../observe.js';
import { runEventStream, type EventStreamLoop } from '../sse.js';
import type { PipelineStream, PipelineStreamSink, StreamTimingOptions } from './types.js';

/** What one stream needs besides its feed. */
export interface StreamStart {
  after: number;
  lastEventId?: number | undefined;
  timing: StreamTimingOptions | undefined;
  observation: ObservedRequest;
  release: () => void;
  registry: Set<() => void>;
  reauthenticate?: (() => Promise<void>) | undefined;
  signal?: AbortSignal | undefined;
  reportError: (error: unknown) => void;
}

/** A stream answer for `feed`; nothing runs until the adapter calls `pipe`. */
export function pipelineStream(feed: Feed, start: StreamStart): PipelineStream {
  let loop: EventStreamLoop | undefined;
  let ended = false;
  const end = () => {
    if (loop !== undefined) return loop.end();
    if (ended) return;
    ended = true;
    finish();
  };
  const finish = () => {
    start.release();
    start.observation.end({ status: 200, aborted: start.signal?.aborted ?? false });
    start.registry.delete(end);
    start.signal?.removeEventListener('abort', end);
  };
  start.registry.add(end);
  start.signal?.addEventListener('abort', end, { once: true });
  return {
    end,
    pipe(sink: PipelineStreamSink) {
      if (ended || loop !== undefined) {
        sink.close();
        return Promise.resolve();
      }
      start.observation.streamOpened();
      const { maxStreamsPerCaller: _cap, ...timing } = start.timing ?? {};
      loop = runEventStream(feed, {
        write: (chunk) => sink.write(chunk),
        buffered: () => sink.buffered(),
        drained: () => sink.drained(),
        close: () => {
          ended = true;
          finish();
          sink.close();
        },
      }, {
        ...timing,
        after: start.after,
        ...(start.lastEventId !== undefined ? { lastEventId: start.lastEventId } : {}),
        ...(start.reauthenticate ? { reauthenticate: start.reauthenticate } : {}),
        onEnd: (error) => {
          // Withdrawn access ends the stream as a fresh request would be refused; other failures are reported.
          if (error !== undefined && (error as { name?: string }).name !== 'InboxKitError') start.reportError(error);
        },
      });
      if (start.signal?.aborted) loop.end();
      return loop.done;
    },
  };
}

/** One encoder for every stream's frames (stateless). */
const encoder = new TextEncoder();

/**
 * `stream` as a web `ReadableStream` of UTF-8 bytes (highWaterMark 0: a client that stops
 * reading leaves its bytes unread, which the loop counts and cuts off past its limit). Cancelling
 * the readable (the client left) ends the stream.
 */
export function streamToReadable(stream: PipelineStream): ReadableStream<Uint8Array> {
  const waiting: Array<() => void> = [];
  const wake = () => {
    for (const resolve of waiting.splice(0)) resolve();
  };
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const unread = () => Math.max(0, -(controller.desiredSize ?? 0));
      void stream.pipe({
        write: (chunk) => controller.enqueue(encoder.encode(chunk)),
        buffered: unread,
        drained: () => (unread() === 0 ? Promise.resolve() : new Promise<void>((resolve) => waiting.push(resolve))),
        close: () => {
          wake();
          try {
            controller.close();
          } catch {
            // already closed by the client
          }
        },
      });
    },
    pull() {
      wake();
    },
    cancel() {
      stream.end();
      wake();
    },
  }, new ByteLengthQueuingStrategy({ highWaterMark: 0 }) as QueuingStrategy<Uint8Array>);
}
