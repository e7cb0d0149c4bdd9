/**
 * Server-Sent Events framing and resume rules (platform.md "Project Events", live-inbox.md
 * "Drain, commit, carry-over"). An adapter writes {@link SSE_HEADERS}, then {@link retryFrame},
 * then replays stored items after `resumePosition` and forwards live ones, skipping every id
 * at or below the last one it examined, and sends {@link heartbeatFrame} comments in between.
 */
import type { FeedItem } from '../ports/feed.js';

/** Response headers of an event stream (plus `x-request-id`). No compression, no proxy buffering. */
export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  // The socket is not reused after a stream: closing it lets a server close promptly.
  connection: 'close',
  'x-accel-buffering': 'no',
} as const;

/** Defaults of a stream: heartbeat every 15,000 ms, `retry:` 2,000 ms, replay pages of 500, 1 MiB unread before a slow client is cut off. */
export const SSE_DEFAULTS = { heartbeatMs: 15_000, retryMs: 2_000, pageSize: 500, maxBufferedBytes: 1_048_576 } as const;

/** The first frame: the reconnect hint in ms. */
export function retryFrame(retryMs: number): string {
  return `retry: ${retryMs}\n\n`;
}

/** One event frame: `id: <sequence>`, `event: <type>`, `data: <JSON on one line>`. */
export function eventFrame(item: FeedItem): string {
  return `id: ${item.id}\nevent: ${item.type}\ndata: ${JSON.stringify(item.data)}\n\n`;
}

/** A comment heartbeat (ignored by clients; keeps proxies from closing an idle stream). `now` in ms. */
export function heartbeatFrame(now: number): string {
  return `: heartbeat ${now}\n\n`;
}

/**
 * Resume rules (platform.md "Project Events" → "Resume"): `resumePosition(after, lastEventId)` is
 * the later of `?after=` and `Last-Event-ID` (a malformed header → 400 `validation_error`);
 * `resyncFor(requested, latest)` is the one `event: resync` frame's data when the position is after
 * the newest stored item (the stream then goes on after `latest`). Before every delivery an
 * adapter calls the feed's `authorize(items)` (and re-checks the credential), then `visible`.
 */
export { resumePosition, resyncFor, type ResyncSignal } from '../stream-resume.js';
