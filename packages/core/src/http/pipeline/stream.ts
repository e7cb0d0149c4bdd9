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
  /** The handler's open streams (`end()` on `closeStreams()`). */
  registry: Set<PipelineStream>;
  reauthenticate?: (() => Promise<void> | undefined) | undefined;
  signal?: AbortSignal | undefined;
  reportError: (error: unknown) => void;
}

/**
 * A stream answer for `feed`; nothing runs until the adapter calls `pipe`. One object per stream
 * holding only what the stream needs once its head is written (the feed, the slot's release, the
 * observation, the re-check): never the adapter's request or reply.
 */
export function pipelineStream(feed: Feed, start: StreamStart): PipelineStream {
  return new PipelineEventStream(feed, start);
}

class PipelineEventStream implements PipelineStream {
  private loop: EventStreamLoop | undefined;
  private ended = false;
  private readonly timing: StreamTimingOptions | undefined;
  private readonly after: number;
  private readonly lastEventId: number | undefined;
  private readonly observation: ObservedRequest;
  private readonly release: () => void;
  private readonly registry: Set<PipelineStream>;
  private readonly reauthenticate: (() => Promise<void> | undefined) | undefined;
  private readonly reportError: (error: unknown) => void;
  private signal: AbortSignal | undefined;

  constructor(private readonly feed: Feed, start: StreamStart) {
    this.timing = start.timing;
    this.after = start.after;
    this.lastEventId = start.lastEventId;
    this.observation = start.observation;
    this.release = start.release;
    this.registry = start.registry;
    this.reauthenticate = start.reauthenticate;
    this.reportError = start.reportError;
    this.signal = start.signal;
    this.registry.add(this);
    // `handleEvent`: the stream itself is the abort listener (no closure per stream).
    this.signal?.addEventListener('abort', this, { once: true });
  }

  /** The client left (the request's signal aborted). */
  handleEvent(): void {
    this.end();
  }

  end(): void {
    if (this.loop !== undefined) return this.loop.end();
    if (this.ended) return;
    this.finish();
  }

  pipe(sink: PipelineStreamSink): Promise<void> {
    if (this.ended || this.loop !== undefined) {
      sink.close();
      return Promise.resolve();
    }
    this.observation.streamOpened();
    const { maxStreamsPerCaller: _cap, ...timing } = this.timing ?? {};
    this.loop = runEventStream(this.feed, sink, {
      ...timing,
      after: this.after,
      ...(this.lastEventId !== undefined ? { lastEventId: this.lastEventId } : {}),
      ...(this.reauthenticate ? { reauthenticate: this.reauthenticate } : {}),
      onEnd: (error) => {
        this.finish();
        // Withdrawn access ends the stream as a fresh request would be refused; other failures are reported.
        if (error !== undefined && (error as { name?: string }).name !== 'InboxKitError') this.reportError(error);
      },
    });
    if (this.signal?.aborted) this.loop.end();
    return this.loop.done;
  }

  /** Once: the slot back, the observation ended, out of the registry, the abort listener off. */
  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.release();
    this.observation.end({ status: 200, aborted: this.signal?.aborted ?? false });
    this.registry.delete(this);
    this.signal?.removeEventListener('abort', this);
    this.signal = undefined;
  }
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
