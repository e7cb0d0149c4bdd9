/**
 * Per-caller budgets at the HTTP edge (platform.md "Per-caller bounds"), written once for every
 * adapter: the bad-credential throttle per remote address (requests with an unknown or revoked
 * key are counted; past the budget the address gets 429 `authentication_throttled` with
 * `Retry-After` before any key is looked up) and the request bodies one API key may have in
 * flight, by count and by bytes (past it, 429 `too_many_bodies` before the body is read: one key's
 * big bodies never queue up in front of another key's requests). Budgets of the services (Runs,
 * Session creates) are the core's (`sessions/run-budget.ts`, `platform/caller-budget.ts`).
 * Counters live in the process.
 */
import type { Principal } from '../context.js';
import { InboxKitError, isInboxKitError } from '../errors.js';

/** Options of {@link createCredentialThrottle}. */
export interface CredentialThrottleOptions {
  /** Requests with an unknown or revoked key one address may make per window (default 100). */
  maxFailures?: number;
  /** Length of the window in ms (default 60,000). */
  windowMs?: number;
  /** Addresses tracked at most; the least recently failing are forgotten first (default 10,000). */
  maxAddresses?: number;
}

/** Defaults of the per-caller budgets at the edge. */
export const EDGE_BUDGET_DEFAULTS = {
  maxFailures: 100,
  windowMs: 60_000,
  maxAddresses: 10_000,
  /** Request bodies one API key may have in flight on one server. */
  maxBodiesPerKey: 64,
  /** Bytes of request bodies one API key may have in flight on one server (2 MiB; one body is always let through). */
  maxBodyBytesPerKey: 2_097_152,
  /** Bytes of request bodies one API key may send per second on one server, on average (8 MiB/s; bursts up to that many bytes). */
  bodyBytesPerSecondPerKey: 8_388_608,
} as const;

/** The bad-credential throttle of one server. */
export interface CredentialThrottle {
  /**
   * Refuses an address over its budget.
   * @throws InboxKitError `authentication_throttled` (429, `retryAfterSeconds`: until its window ends).
   */
  check(address: string, now?: number): void;
  /** Counts a request of `address` refused for an unknown or revoked key. */
  fail(address: string, now?: number): void;
  /** Addresses tracked now. */
  size(): number;
}

const intAtLeast = (name: string, value: number, min: number): number => {
  if (!Number.isInteger(value) || value < min) throw new TypeError(`${name} must be an integer ≥ ${min}, got ${value}`);
  return value;
};

/**
 * A fixed-window counter of bad-credential requests per remote address, bounded to
 * `maxAddresses` (LRU). An address that reached `maxFailures` in its window is refused until the
 * window ends; then it starts afresh.
 * @throws TypeError on a number that is not an integer ≥ 1.
 */
export function createCredentialThrottle(options: CredentialThrottleOptions = {}): CredentialThrottle {
  const max = intAtLeast('credentialThrottle.maxFailures', options.maxFailures ?? EDGE_BUDGET_DEFAULTS.maxFailures, 1);
  const windowMs = intAtLeast('credentialThrottle.windowMs', options.windowMs ?? EDGE_BUDGET_DEFAULTS.windowMs, 1);
  const maxAddresses = intAtLeast('credentialThrottle.maxAddresses', options.maxAddresses ?? EDGE_BUDGET_DEFAULTS.maxAddresses, 1);
  /** Failures per address in its current window (Map order: least recently failing first). */
  const windows = new Map<string, { start: number; failures: number }>();
  const current = (address: string, now: number) => {
    const w = windows.get(address);
    if (w === undefined) return undefined;
    if (now - w.start >= windowMs) {
      windows.delete(address);
      return undefined;
    }
    return w;
  };
  return {
    check(address, now = Date.now()) {
      const w = current(address, now);
      if (w === undefined || w.failures < max) return;
      const retryAfterSeconds = Math.ceil((w.start + windowMs - now) / 1000);
      throw new InboxKitError('authentication_throttled', `Too many requests with an unknown or revoked API key from this address; retry in ${retryAfterSeconds} s`, [], { retryAfterSeconds });
    },
    fail(address, now = Date.now()) {
      const w = current(address, now) ?? { start: now, failures: 0 };
      w.failures++;
      windows.delete(address);
      windows.set(address, w);
      if (windows.size > maxAddresses) windows.delete(windows.keys().next().value as string);
    },
    size: () => windows.size,
  };
}

/** Slots of one kind per caller (bodies in flight per API key, …). */
export interface CallerSlots {
  /**
   * Takes one slot for `key`, or throws.
   * @returns the release function (idempotent).
   * @throws InboxKitError with the slots' code (429) when `key` holds `max` slots.
   */
  claim(key: string, max: number): () => void;
  /** Slots held now by `key`. */
  held(key: string): number;
}

/** Counting slots per key; past `max`, `claim` throws `code` (a 429 code) with `message`. */
export function createCallerSlots(code: 'too_many_bodies' | 'too_many_runs' | 'too_many_streams', message: (max: number) => string, retryAfterSeconds = 1): CallerSlots {
  const held = new Map<string, number>();
  return {
    claim(key, max) {
      const now = held.get(key) ?? 0;
      if (now >= max) throw new InboxKitError(code, message(max), [], { retryAfterSeconds });
      held.set(key, now + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = (held.get(key) ?? 1) - 1;
        if (left <= 0) held.delete(key);
        else held.set(key, left);
      };
    },
    held: (key) => held.get(key) ?? 0,
  };
}

/** Options of the per-caller budgets of {@link createEdgeBudgets}. */
export interface EdgeBudgetOptions {
  /** The bad-credential throttle per remote address; `false` turns it off. */
  credentialThrottle?: CredentialThrottleOptions | false;
  /** Request bodies one API key may have in flight on one server (default 64); past it 429 `too_many_bodies`. */
  maxBodiesPerKey?: number;
  /**
   * Bytes of request bodies one API key may have in flight on one server (default 2 MiB), counted
   * as announced (`Content-Length`; 64 KiB for a chunked body); past it 429
   * `too_many_bodies`. A body is always let through when the key has none in flight, whatever its size.
   */
  maxBodyBytesPerKey?: number;
  /**
   * Bytes of request bodies one API key may send per second (default 8 MiB/s, a token bucket
   * holding one second's worth; 0: no limit), charged as announced when a body starts (a chunked
   * body once read, which may put the key in debt for its next bodies); past it 429
   * `too_many_bodies` with `Retry-After`. What keeps one key's stream of big bodies from taking the
   * event loop from every other key's requests (parsing a body costs CPU by its size).
   */
  bodyBytesPerSecondPerKey?: number;
}

/** The per-caller budgets of one server, as adapters use them around authentication and body reading. */
export interface EdgeBudgets {
  /**
   * Authenticates through `authenticate` under the throttle: an address over its budget is
   * refused before the lookup; a request refused `invalid_credentials` counts against its address.
   * @throws InboxKitError `authentication_throttled` (429), or whatever `authenticate` throws.
   */
  authenticate(address: string | undefined, authenticate: () => Promise<Principal>): Promise<Principal>;
  /**
   * Takes a body slot for the request's API key before its body is read (none needed without a
   * principal: forwarded or public requests), for a body of `bytes` (its `Content-Length`;
   * undefined for a chunked body, which counts 64 KiB in flight and is charged once read, see
   * {@link chargeBody}). @returns the release (call it once the request is answered).
   * @throws InboxKitError `too_many_bodies` (429) when the key has `maxBodiesPerKey` bodies, or
   *   `maxBodyBytesPerKey` bytes with this one, in flight.
   */
  claimBody(principal: Principal | null | undefined, bytes?: number): () => void;
  /**
   * Charges the bytes a chunked body (claimed without a size) turned out to hold to its key's
   * per-second budget, once read; the key may go into debt (its next bodies wait). Never throws.
   */
  chargeBody(principal: Principal | null | undefined, bytes: number): void;
}

/** The bytes a chunked body counts in flight before its size is known. */
const CHUNKED_IN_FLIGHT_BYTES = 65_536;

const NOTHING = () => {};

/**
 * The edge budgets of one server.
 * @throws TypeError on an invalid number.
 */
export function createEdgeBudgets(options: EdgeBudgetOptions = {}): EdgeBudgets {
  const throttle = options.credentialThrottle === false ? undefined : createCredentialThrottle(options.credentialThrottle ?? {});
  const maxBodies = intAtLeast('maxBodiesPerKey', options.maxBodiesPerKey ?? EDGE_BUDGET_DEFAULTS.maxBodiesPerKey, 1);
  const maxBytes = intAtLeast('maxBodyBytesPerKey', options.maxBodyBytesPerKey ?? EDGE_BUDGET_DEFAULTS.maxBodyBytesPerKey, 1);
  const bodies = createCallerSlots('too_many_bodies', (max) => `This API key already has ${max} request bodies in flight; wait for one to be answered`);
  /** Bytes in flight per key. */
  const bytesHeld = new Map<string, number>();
  const perSecond = intAtLeast('bodyBytesPerSecondPerKey', options.bodyBytesPerSecondPerKey ?? EDGE_BUDGET_DEFAULTS.bodyBytesPerSecondPerKey, 0);
  /** Token buckets of body bytes per key (Map order: least recently used first). */
  const buckets = new Map<string, { tokens: number; at: number }>();
  /** Takes `size` bytes from `key`'s bucket, or throws (with `debt`: takes them anyway, never throws). */
  const spend = (key: string, size: number, debt = false) => {
    if (perSecond === 0) return;
    const now = Date.now();
    const seen = buckets.get(key);
    const tokens = seen === undefined ? perSecond : Math.min(perSecond, seen.tokens + ((now - seen.at) * perSecond) / 1000);
    // A body bigger than a second's worth passes once the bucket is full (else it could never be sent).
    const cost = Math.min(size, perSecond);
    if (tokens < Math.max(cost, 1) && !debt) {
      buckets.set(key, { tokens, at: now });
      const retryAfterSeconds = Math.ceil((cost - tokens) / perSecond);
      throw new InboxKitError('too_many_bodies', `This API key sent more than ${perSecond} bytes of request bodies in the last second; retry in ${retryAfterSeconds} s`, [], { retryAfterSeconds });
    }
    buckets.delete(key);
    buckets.set(key, { tokens: tokens - cost, at: now });
    if (buckets.size > EDGE_BUDGET_DEFAULTS.maxAddresses) buckets.delete(buckets.keys().next().value as string);
  };
  return {
    async authenticate(address, authenticate) {
      if (throttle === undefined) return authenticate();
      const where = address ?? '';
      throttle.check(where);
      try {
        return await authenticate();
      } catch (error) {
        if (isInboxKitError(error) && error.code === 'invalid_credentials') throttle.fail(where);
        throw error;
      }
    },
    claimBody(principal, bytes) {
      if (!principal) return NOTHING;
      const key = principal.key_id;
      const held = bytesHeld.get(key) ?? 0;
      const chunked = bytes === undefined || !Number.isFinite(bytes);
      const size = chunked ? CHUNKED_IN_FLIGHT_BYTES : Math.max(0, bytes);
      if (held > 0 && held + size > maxBytes) {
        throw new InboxKitError('too_many_bodies', `This API key already has ${held} bytes of request bodies in flight (at most ${maxBytes}); wait for one to be answered`, [], { retryAfterSeconds: 1 });
      }
      const release = bodies.claim(key, maxBodies);
      try {
        // A chunked body is charged once read (`chargeBody`); an announced one now, before it is read.
        spend(key, chunked ? 0 : size);
      } catch (error) {
        release();
        throw error;
      }
      bytesHeld.set(key, held + size);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        release();
        const left = (bytesHeld.get(key) ?? size) - size;
        if (left <= 0) bytesHeld.delete(key);
        else bytesHeld.set(key, left);
      };
    },
    chargeBody(principal, bytes) {
      if (principal && Number.isFinite(bytes) && bytes > 0) spend(principal.key_id, bytes, true);
    },
  };
}
