/**
 * Attempt routing across server processes that share one database (live-inbox.md "Scale",
 * ARCHITECTURE.md "Scale"): the types of the decision "answer here, or forward to the process that
 * owns the attempt", and the forwarding port. The decision itself is `AttemptLeases.route`
 * (`attempt-leases.ts`), called as `SessionRuntimeService.routeLiveInbox`; the transport (HTTP in
 * `@inbox-kit/http-fastify`) is an {@link AttemptForwarder}.
 */
import type { Principal } from '../context.js';
import type { AttemptOwnership } from '../ports/store.js';
import type { LiveInboxContentInput, LiveInboxOrderInput, SendSessionEventsInput } from './schemas.js';

/**
 * A request that may have to be answered by the process owning the Session's attempt: one of the
 * five Live Inbox operations, or durable input that contains a `user.interrupt` (the owner must
 * abort its Run). Bodies are the validated inputs of the matching `SessionRuntimeService` method.
 */
export type LiveInboxOperation =
  | { type: 'snapshot' }
  | { type: 'queue'; body: LiveInboxContentInput }
  | { type: 'replace'; message_id: number; body: LiveInboxContentInput }
  | { type: 'withdraw'; message_id: number }
  | { type: 'reorder'; body: LiveInboxOrderInput }
  | { type: 'send_events'; body: SendSessionEventsInput };

/** The owner's answer, relayed unchanged: HTTP status, `Content-Type` (or null), the raw body ('' when none) and its retry headers. */
export interface ForwardedReply {
  status: number;
  content_type: string | null;
  body: string;
  /**
   * The owner's answer headers the caller must see too — `retry-after` (seconds, on a 429 / 503),
   * `x-should-retry`, `allow` (on a 405) — by lower-case name; absent or empty when it sent none.
   */
  headers?: Record<string, string>;
}

/** The headers of an owner's answer a forwarded reply relays to the caller (platform.md "Errors" → "Retries"). */
export const RELAYED_REPLY_HEADERS = ['retry-after', 'x-should-retry', 'allow'] as const;

/** What {@link AttemptForwarder.forward} sends: the operation, to the `owner`, on behalf of `principal`. */
export interface AttemptForwardRequest {
  owner: AttemptOwnership;
  session_id: string;
  operation: LiveInboxOperation;
  /** The caller as this process authenticated it; the owner acts as this principal. */
  principal: Principal;
  /** The request id, so the owner's answer carries the same one. */
  request_id: string;
}

/**
 * The forwarding port: delivers an operation to the process that owns the attempt (at
 * `owner.host_url`), marked so that process answers it itself and never forwards it again.
 *
 * - MUST resolve with the owner's answer whatever its status (4xx and 5xx included, body unchanged);
 * - MUST reject when the owner cannot be reached or does not answer within a short timeout (the
 *   Runtime then answers as if no attempt were active, and reports the error);
 * - MUST authenticate itself to the owner with a secret the owner checks before it trusts the
 *   forwarded principal.
 */
export interface AttemptForwarder {
  forward(request: AttemptForwardRequest): Promise<ForwardedReply>;
}

/** What a routing problem is reported with (`onRoutingError`). */
export interface AttemptRoutingErrorInfo {
  /** The Session concerned; `''` for a `takeover` pass, which looks at every Session. */
  session_id: string;
  /**
   * `claim` / `renew` / `release` of this process's lease, `lookup` of the owner, `forward` to it,
   * or a failed `takeover` pass (the next one tries again).
   */
  action: 'claim' | 'renew' | 'release' | 'lookup' | 'forward' | 'takeover';
  run_id?: string;
  owner?: AttemptOwnership;
}

/** Option `routing` of `SessionRuntimeDeps`: turns cross-process attempt routing on. */
export interface AttemptRoutingOptions {
  /** This process's id in ownership rows; unique per process instance (e.g. random per start). */
  host_id: string;
  /** This process's base URL as its peers reach it, e.g. `http://10.0.0.5:3000`. */
  host_url: string;
  /** How requests reach another owner. */
  forwarder: AttemptForwarder;
  /**
   * Lease length in ms (default {@link DEFAULT_ATTEMPT_LEASE_MS}); renewed every third of it while
   * the attempt lives. Written and judged with the store's clock (`Store.now`), so it bounds how
   * long a dead process's Run stays `running`, not how far process clocks may drift apart.
   */
  lease_ms?: number;
  /**
   * ms between two takeover checks (default a third of `lease_ms`: 5 s): each ends the Runs no
   * live lease names (their process is gone) and starts the follow-up Run of the durable input
   * they left (platform.md "Many processes"). 0 turns the periodic check off (start-up recovery,
   * `recoverStaleRuns()`, and the lazy path of durable input still apply).
   */
  takeover_check_ms?: number;
  /** Told about failed claims, renewals, releases, owner lookups, forwards (the request is then answered locally) and takeover passes. */
  onRoutingError?: (error: unknown, info: AttemptRoutingErrorInfo) => void;
}

/** Default lease of an attempt ownership row: 15 s (renewed every 5 s). */
export const DEFAULT_ATTEMPT_LEASE_MS = 15_000;

/**
 * Where a request is answered: `local` (call the matching `SessionRuntimeService` method here; it
 * answers 410 when no attempt is active), or `forwarded` with the owner's reply to relay unchanged.
 */
export type AttemptRoute = { route: 'local' } | { route: 'forwarded'; reply: ForwardedReply };
