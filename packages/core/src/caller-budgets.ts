/**
 * Per-caller budgets of the services (platform.md "Per-caller bounds"): how many Runs one account
 * and one API key may have running at once on a process, and how many Sessions one API key may
 * create per minute. Past a budget the service refuses with 429 (`too_many_runs`, `rate_limited`)
 * and a `Retry-After`, before anything is written; one caller at its budget leaves every other
 * caller's budget untouched. Counters live in the process (like the stream slots and rate limits).
 */
import type { Principal } from './context.js';
import { InboxKitError } from './errors.js';

/** Options of the services' per-caller budgets (`ServiceDeps.budgets`). */
export interface CallerBudgetOptions {
  /** Runs one account may have running at once on this process (default 8). */
  runsPerAccount?: number;
  /** Runs one API key may have running at once on this process, whichever accounts it acts as (default 8). */
  runsPerKey?: number;
  /** Sessions one API key may create per minute (default 120; a burst of up to that many, then one per 60/n s). 0: no limit. */
  sessionsPerMinute?: number;
}

/** Defaults of {@link CallerBudgetOptions}. */
export const CALLER_BUDGET_DEFAULTS = { runsPerAccount: 8, runsPerKey: 8, sessionsPerMinute: 120 } as const;

/** `Retry-After` (s) of a Run refused over its budget: Runs end on their own time, so a short wait. */
const RUN_RETRY_AFTER_SECONDS = 5;
/** Keys whose session-create buckets are kept at most (least recently used forgotten first: a forgotten key starts full). */
const MAX_TRACKED_KEYS = 10_000;

const checked = (name: string, value: number, min: number): number => {
  if (!Number.isInteger(value) || value < min) throw new TypeError(`budgets.${name} must be an integer ≥ ${min}, got ${value}`);
  return value;
};

/** Concurrent Runs per account and per API key. */
export class RunBudget {
  readonly perAccount: number;
  readonly perKey: number;
  readonly #accounts = new Map<string, number>();
  readonly #keys = new Map<string, number>();

  /** @throws TypeError on a number that is not an integer ≥ 1. */
  constructor(options: CallerBudgetOptions = {}) {
    this.perAccount = checked('runsPerAccount', options.runsPerAccount ?? CALLER_BUDGET_DEFAULTS.runsPerAccount, 1);
    this.perKey = checked('runsPerKey', options.runsPerKey ?? CALLER_BUDGET_DEFAULTS.runsPerKey, 1);
  }

  /** Whether `principal` may start one more Run now (no slot taken). */
  allows(principal: Principal): boolean {
    return (this.#accounts.get(principal.account_id) ?? 0) < this.perAccount && (this.#keys.get(principal.key_id) ?? 0) < this.perKey;
  }

  /**
   * Takes a Run slot for `principal`'s account and key.
   * @returns the release (idempotent): call it when the Run (and the follow-ups it hands its slot to) has ended.
   * @throws InboxKitError `too_many_runs` (429, Retry-After 5 s) when the account or the key is at its budget.
   */
  claim(principal: Principal): () => void {
    if (!this.allows(principal)) {
      const which = (this.#accounts.get(principal.account_id) ?? 0) >= this.perAccount ? `account already has ${this.perAccount}` : `API key already has ${this.perKey}`;
      throw new InboxKitError('too_many_runs', `This ${which} Runs running; wait for one to end (or interrupt one) before starting another`, [], { retryAfterSeconds: RUN_RETRY_AFTER_SECONDS });
    }
    const bump = (map: Map<string, number>, key: string, by: number) => {
      const next = (map.get(key) ?? 0) + by;
      if (next <= 0) map.delete(key);
      else map.set(key, next);
    };
    bump(this.#accounts, principal.account_id, 1);
    bump(this.#keys, principal.key_id, 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      bump(this.#accounts, principal.account_id, -1);
      bump(this.#keys, principal.key_id, -1);
    };
  }

  /** Runs counted now for an account and for a key. */
  held(principal: Pick<Principal, 'account_id' | 'key_id'>): { account: number; key: number } {
    return { account: this.#accounts.get(principal.account_id) ?? 0, key: this.#keys.get(principal.key_id) ?? 0 };
  }
}

/** A token bucket per API key: `perMinute` tokens, refilled evenly over a minute. */
export class SessionCreateBudget {
  readonly perMinute: number;
  readonly #buckets = new Map<string, { tokens: number; at: number }>();
  readonly #now: () => number;

  /** @throws TypeError on a number that is not an integer ≥ 0. */
  constructor(options: CallerBudgetOptions = {}, now: () => number = Date.now) {
    this.perMinute = checked('sessionsPerMinute', options.sessionsPerMinute ?? CALLER_BUDGET_DEFAULTS.sessionsPerMinute, 0);
    this.#now = now;
  }

  /**
   * Takes one Session create for `principal`'s key.
   * @throws InboxKitError `rate_limited` (429, `Retry-After`: until a token is back).
   */
  take(principal: Principal): void {
    if (this.perMinute === 0) return;
    const now = this.#now();
    const rate = this.perMinute / 60_000;
    const seen = this.#buckets.get(principal.key_id);
    const tokens = seen === undefined ? this.perMinute : Math.min(this.perMinute, seen.tokens + (now - seen.at) * rate);
    if (tokens < 1) {
      this.#buckets.set(principal.key_id, { tokens, at: now });
      const retryAfterSeconds = Math.ceil((1 - tokens) / rate / 1000);
      throw new InboxKitError('rate_limited', `This API key created ${this.perMinute} Sessions in the last minute; retry in ${retryAfterSeconds} s`, [
        { path: 'sessions', message: `at most ${this.perMinute} Sessions per minute per API key`, code: 'sessions_per_minute' },
      ], { retryAfterSeconds });
    }
    this.#buckets.delete(principal.key_id);
    this.#buckets.set(principal.key_id, { tokens: tokens - 1, at: now });
    if (this.#buckets.size > MAX_TRACKED_KEYS) this.#buckets.delete(this.#buckets.keys().next().value as string);
  }
}
