/**
 * The Server-Sent Events consumer behind `client.projects.events.stream` and
 * `client.sessions.events.stream`: an async iterator over the JSON `data:` of each frame, that
 * reconnects with `Last-Event-ID` after a dropped connection (waiting the server's `retry:` hint,
 * default 1000 ms) and returns cleanly when the caller's signal aborts. Frames are parsed with
 * `eventsource-parser` (bundled into dist). Spec: platform.md "Project Events", live-inbox.md
 * "Drain, commit, carry-over".
 */
import { createParser } from 'eventsource-parser';
import { fromWire } from './case.js';
import { InboxKitApiError } from './errors.js';
import type { StreamResync } from './types.js';
import { backoffMs, sleep, type Query, type Transport } from './transport.js';

/** Reconnect delay in ms until the server sends a `retry:` hint. */
export const DEFAULT_RECONNECT_MS = 1000;

/** One SSE subscription. */
export interface SseStreamSpec<T> {
  transport: Transport;
  path: string;
  /** Query of the first connection (may carry `after`). */
  query: Query;
  /** Query of every reconnection that resumes from a received id (`Last-Event-ID` carries the position). */
  resumeQuery: Query;
  accountId?: string | undefined;
  signal?: AbortSignal | undefined;
  /** Turns one frame's parsed `data` into what the iterator yields. */
  map: (data: unknown) => T;
  /** Receives the (camelCased) data of an `event: resync` frame, which is never yielded. */
  onResync?: ((resync: StreamResync) => void) | undefined;
}

/**
 * Yields the parsed `data` of every SSE frame, mapped by `spec.map`, for as long as the caller
 * iterates. Comment frames (`: heartbeat`) and frames whose data is empty or not JSON are skipped;
 * an `event: resync` frame (the resume position was after the server's newest event) moves the
 * resume position to its `id` and goes to `spec.onResync` instead of the iterator.
 *
 * - A connection that ends or fails mid-stream is reopened after the `retry:` hint (default
 *   1000 ms) with `Last-Event-ID` = the last received `id:`, so nothing is missed or repeated.
 * - A connection that cannot be opened (network error) is retried after the `retry:` hint if one
 *   was received, else after the client's backoff; after `retries + 1` consecutive failures (the
 *   client's retry policy) the fetch error is thrown.
 * - Aborting `spec.signal`, or leaving a `for await` loop early, closes the connection and ends
 *   the iterator without an error.
 *
 * @throws {InboxKitApiError} when the server answers a (re)connection with a non-2xx status.
 */
export async function* sseStream<T>(spec: SseStreamSpec<T>): AsyncGenerator<T, void, undefined> {
  const { transport, signal } = spec;
  if (signal?.aborted) return;
  const controller = new AbortController();
  const onAbort = () => controller.abort();
  signal?.addEventListener('abort', onAbort, { once: true });

  let lastEventId: string | undefined;
  let reconnectMs = DEFAULT_RECONNECT_MS;
  let hinted = false;
  let failures = 0;
  const ready: T[] = [];
  const parser = createParser({
    onEvent(message) {
      if (message.id !== undefined) lastEventId = message.id;
      if (message.data.length === 0) return;
      let data: unknown;
      try {
        data = JSON.parse(message.data) as unknown;
      } catch {
        return;
      }
      if (message.event === 'resync') {
        spec.onResync?.(fromWire<StreamResync>(data));
        return;
      }
      ready.push(spec.map(data));
    },
    onRetry(ms) {
      reconnectMs = ms;
      hinted = true;
    },
  });
  const wait = async (ms: number): Promise<boolean> => {
    try {
      await sleep(ms, controller.signal);
      return true;
    } catch {
      return false;
    }
  };

  try {
    while (!controller.signal.aborted) {
      let response: Response;
      try {
        response = await transport.openStream(spec.path, lastEventId === undefined ? spec.query : spec.resumeQuery, {
          accountId: spec.accountId,
          lastEventId,
          signal: controller.signal,
        });
      } catch (error) {
        if (controller.signal.aborted) return;
        if (error instanceof InboxKitApiError) throw error;
        failures += 1;
        if (failures > Math.max(0, transport.config.retries)) throw error;
        if (!(await wait(hinted ? reconnectMs : backoffMs(failures - 1, transport.config.baseDelayMs)))) return;
        continue;
      }
      failures = 0;
      parser.reset();

      const body = response.body;
      if (body !== null) {
        const reader = body.getReader();
        const cancel = () => {
          reader.cancel().catch(() => undefined);
        };
        controller.signal.addEventListener('abort', cancel, { once: true });
        const decoder = new TextDecoder();
        try {
          for (;;) {
            let chunk: ReadableStreamReadResult<Uint8Array>;
            try {
              chunk = await reader.read();
            } catch {
              break; // dropped mid-stream (or aborted: checked below)
            }
            if (controller.signal.aborted) return;
            if (chunk.done) {
              parser.feed(decoder.decode());
              break;
            }
            parser.feed(decoder.decode(chunk.value, { stream: true }));
            while (ready.length > 0) {
              yield ready.shift() as T;
              if (controller.signal.aborted) return;
            }
          }
          while (ready.length > 0) {
            yield ready.shift() as T;
            if (controller.signal.aborted) return;
          }
        } finally {
          controller.signal.removeEventListener('abort', cancel);
          ready.length = 0;
          reader.cancel().catch(() => undefined);
        }
      }
      if (controller.signal.aborted) return;
      if (!(await wait(reconnectMs))) return;
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    controller.abort();
  }
}
