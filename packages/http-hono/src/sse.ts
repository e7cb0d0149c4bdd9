/**
 * Server-Sent Events on web streams, by the contract's rules (`@inbox-kit/core/http` `./sse`):
 * subscribe first, replay stored items after the cursor, then forward live ones, skipping every
 * id already examined and catching up from storage when a live id skips ahead; a `resync` frame
 * for a position after the newest item; every delivery authorised as of now (credential and read
 * right; a refusal ends the stream); comment heartbeats; `HEAD` answered with headers only;
 * per-caller stream cap (429 `too_many_streams`); everything released when the client goes away.
 */
import { InboxKitError, type Feed, type FeedItem, type Principal } from '@inbox-kit/core';
import { SSE_DEFAULTS, SSE_HEADERS, eventFrame, heartbeatFrame, resyncFor, retryFrame } from '@inbox-kit/core/http';

/** A quiet stream re-checks access at most this often (ms), on a heartbeat. */
const QUIET_AUTHORIZE_MS = 15_000;

/** Stream settings (ms; `pageSize` items; `maxStreamsPerCaller` per API key and acting account, default 16). */
export interface StreamOptions {
  heartbeatMs?: number;
  retryMs?: number;
  pageSize?: number;
  maxStreamsPerCaller?: number;
}

/** The app's open streams (their `end` functions) and per-caller counts. */
export interface StreamRegistry {
  open: Set<() => void>;
  perCaller: Map<string, number>;
}

/**
 * The `text/event-stream` response for `feed` from `after`.
 * @throws InboxKitError `too_many_streams` when the caller already holds its maximum.
 */
export function eventStream(
  request: Request, feed: Feed, after: number, principal: Principal | null, request_id: string, registry: StreamRegistry,
  options: StreamOptions = {}, reauthenticate?: () => Promise<void>,
): Response {
  if (request.method === 'HEAD') return new Response(null, { status: 200, headers: { ...SSE_HEADERS, 'x-request-id': request_id } });
  const signal = request.signal;
  const max = options.maxStreamsPerCaller ?? 16;
  const caller = principal ? `${principal.key_id}\n${principal.account_id}` : '';
  const held = registry.perCaller.get(caller) ?? 0;
  if (principal && held >= max) throw new InboxKitError('too_many_streams', `This API key already holds ${max} open event streams; close one before opening another`);
  registry.perCaller.set(caller, held + 1);
  const pageSize = options.pageSize ?? SSE_DEFAULTS.pageSize;
  const encoder = new TextEncoder();
  let lastSent = after;
  let closed = false;
  let end = () => {};

  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const push = (text: string) => {
        if (!closed) controller.enqueue(encoder.encode(text));
      };
      let authorizedAt = Date.now();
      const authorize = async (next: readonly FeedItem[]) => {
        const at = Date.now();
        await reauthenticate?.();
        await feed.authorize(next);
        authorizedAt = at;
      };
      const write = (item: FeedItem) => {
        if (closed || item.id <= lastSent) return;
        lastSent = item.id;
        if (feed.visible(item)) push(eventFrame(item));
      };
      let chain: Promise<void> = Promise.resolve();
      const enqueue = (task: () => Promise<void>) => {
        chain = chain.then(() => (closed ? undefined : task())).catch(() => end());
      };
      const catchUp = async () => {
        for (;;) {
          if (closed) return;
          const page = (await feed.replay(lastSent, pageSize)).filter((item) => item.id > lastSent);
          if (page.length > 0) await authorize(page);
          if (closed) return;
          for (const item of page) write(item);
          if (page.length < pageSize) return;
        }
      };
      let started = false;
      const unsubscribe = feed.subscribe((item) => {
        if (closed || (started && item.id <= lastSent)) return;
        enqueue(async () => {
          if (item.id <= lastSent) return;
          if (item.id > lastSent + 1) await catchUp();
          if (item.id <= lastSent || closed) return;
          await authorize([item]);
          write(item);
          if ((controller.desiredSize ?? 0) < -SSE_DEFAULTS.maxBufferedBytes) end();
        });
      });
      const heartbeat = setInterval(() => enqueue(async () => {
        if (Date.now() - authorizedAt >= QUIET_AUTHORIZE_MS) await authorize([]);
        push(heartbeatFrame(Date.now()));
      }), options.heartbeatMs ?? SSE_DEFAULTS.heartbeatMs);
      heartbeat.unref?.();
      end = () => {
        if (closed) return;
        closed = true;
        clearInterval(heartbeat);
        unsubscribe();
        registry.open.delete(end);
        const now = (registry.perCaller.get(caller) ?? 1) - 1;
        if (now <= 0) registry.perCaller.delete(caller);
        else registry.perCaller.set(caller, now);
        signal.removeEventListener('abort', end);
        try {
          controller.close();
        } catch {
          // already closed by the client
        }
      };
      registry.open.add(end);
      signal.addEventListener('abort', end, { once: true });
      if (signal.aborted) end();
      push(retryFrame(options.retryMs ?? SSE_DEFAULTS.retryMs));
      enqueue(async () => {
        // A position after the newest stored item: one `resync` frame, then on after the newest.
        if (after > 0) {
          const resync = resyncFor(after, await feed.latest());
          if (resync !== undefined && !closed) {
            await authorize([]);
            lastSent = resync.latest;
            push(eventFrame({ id: resync.latest, type: 'resync', data: resync }));
          }
        }
        started = true;
        await catchUp();
      });
    },
    cancel() {
      end();
    },
  }, new ByteLengthQueuingStrategy({ highWaterMark: 0 }) as QueuingStrategy<Uint8Array>);
  return new Response(body, { status: 200, headers: { ...SSE_HEADERS, 'x-request-id': request_id } });
}
