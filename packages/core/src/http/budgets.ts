/**
 * Per-caller budgets at the HTTP edge (platform.md "Per-caller bounds"), written once for every
 * adapter: the bad-credential throttle per remote address (requests with an unknown or revoked
 * key are counted; past the budget the address gets 429 `authentication_throttled` with
 * `Retry-After` before any key is looked up) and the request bodies one API key may have in
 * flight (past it, 429 `too_many_bodies` before the body is read). Budgets of the services (Runs,
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
  maxBodiesPerKey: 16,
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
  /** Request bodies one API key may have in flight on one server (default 16); past it 429 `too_many_bodies`. */
  maxBodiesPerKey?: number;
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
   * principal: forwarded or public requests). @returns the release (call it once the request is answered).
   * @throws InboxKitError `too_many_bodies` (429).
   */
  claimBody(principal: Principal | null | undefined): () => void;
}

const NOTHING = () => {};

/**
 * The edge budgets of one server.
 * @throws TypeError on an invalid number.
 */
export function createEdgeBudgets(options: EdgeBudgetOptions = {}): EdgeBudgets {
  const throttle = options.credentialThrottle === false ? undefined : createCredentialThrottle(options.credentialThrottle ?? {});
  const maxBodies = intAtLeast('maxBodiesPerKey', options.maxBodiesPerKey ?? EDGE_BUDGET_DEFAULTS.maxBodiesPerKey, 1);
  const bodies = createCallerSlots('too_many_bodies', (max) => `This API key already has ${max} request bodies in flight; wait for one to be answered`);
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
    claimBody: (principal) => (principal ? bodies.claim(principal.key_id, maxBodies) : NOTHING),
  };
}
