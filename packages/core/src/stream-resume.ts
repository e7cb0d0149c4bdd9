/**
 * Resume rules of the SSE streams (project events and session events), as pure functions
 * (platform.md "Project Events" → "Resume"): which position a (re)connection resumes after, and
 * the `resync` signal for a position that names no stored event.
 */
import { InboxKitError } from './errors.js';

/** The header a reconnecting EventSource sends with the last `id:` it received. */
export const LAST_EVENT_ID_HEADER = 'Last-Event-ID';

const DIGITS = /^\d+$/;

/**
 * The `Last-Event-ID` header as a position, or undefined when absent or empty.
 * @param lastEventId the raw header value (Node gives `a, b` for a repeated header).
 * @throws InboxKitError `validation_error` (detail path `Last-Event-ID`) when the header is not
 *   a decimal integer 0 … 2^53−1: negative, fractional, signed, hexadecimal, with spaces, repeated,
 *   too large. Ids this server sends never look like that, so the client is answered 400 instead of
 *   being resumed from a guess.
 */
export function lastEventIdOf(lastEventId: string | string[] | undefined): number | undefined {
  const header = Array.isArray(lastEventId) ? lastEventId.join(', ') : lastEventId;
  if (header === undefined || header === '') return undefined;
  const value = DIGITS.test(header) ? Number(header) : NaN;
  if (!Number.isSafeInteger(value)) {
    throw new InboxKitError('validation_error', 'Last-Event-ID must be an event id this stream sent (an integer 0 … 9007199254740991)', [
      { path: LAST_EVENT_ID_HEADER, message: 'Expected a decimal integer from 0 to 9007199254740991', code: 'invalid_resume_position' },
    ]);
  }
  return value;
}

/**
 * The position a stream asks to resume after: the later of `?after=` and `Last-Event-ID` (a
 * reconnecting EventSource keeps its original URL and adds the header, so neither may win
 * blindly), or 0 when neither is given. An absent or empty header counts as not given. Where the
 * stream starts from is settled against the newest stored event by {@link resumeStart}.
 *
 * @param queryAfter `?after=`, already validated as an integer 0 … 2^53−1 (or undefined).
 * @param lastEventId the raw header value.
 * @returns an integer 0 … 2^53−1.
 * @throws InboxKitError `validation_error` as {@link lastEventIdOf}.
 */
export function resumePosition(queryAfter: number | undefined, lastEventId: string | string[] | undefined): number {
  return Math.max(queryAfter ?? 0, lastEventIdOf(lastEventId) ?? 0);
}

/**
 * Where a stream starts, given the newest stored position `latest` (platform.md "Project Events"
 * → "Resume"):
 * - `after` ({@link resumePosition}) at or below `latest`: after it;
 * - `after` past `latest` while the `Last-Event-ID` header names a stored position: after the
 *   header — the URL's `after` is stale (a browser keeps its first URL on every reconnect, and the
 *   `resync` it was answered moved it back), the header says what the client last received, so
 *   nothing written while it was away is skipped and no second `resync` is sent;
 * - otherwise past `latest`: one `resync` signal, then after `latest`.
 * @param lastEventId the header's position ({@link lastEventIdOf}), undefined when not sent.
 */
export function resumeStart(after: number, lastEventId: number | undefined, latest: number): { position: number; resync?: ResyncSignal } {
  if (after <= latest) return { position: after };
  if (lastEventId !== undefined && lastEventId <= latest) return { position: lastEventId };
  const resync = resyncFor(after, latest)!;
  return { position: latest, resync };
}

/** The `data` of a `resync` frame (its `id:` is `latest`). */
export interface ResyncSignal {
  type: 'resync';
  /** Why: the requested position is after the newest stored event of this stream. */
  reason: 'ahead_of_latest';
  /** The position the client asked to resume after. */
  requested_after: number;
  /** The newest stored position (0 when the stream has none); the stream goes on after it. */
  latest: number;
}

/**
 * The resync signal for a requested position, or `undefined` when the position names a stored
 * event (or is 0). A position after `latest` names nothing this stream delivered (another
 * stream's id, a restored or reset database, a hand-made id): the stream then sends one
 * `event: resync` frame with `id: <latest>` and goes on live after `latest`, so nothing
 * committed after it is skipped silently, and the client knows to re-read what it holds.
 */
export function resyncFor(requestedAfter: number, latest: number): ResyncSignal | undefined {
  if (requestedAfter <= latest) return undefined;
  return { type: 'resync', reason: 'ahead_of_latest', requested_after: requestedAfter, latest };
}
