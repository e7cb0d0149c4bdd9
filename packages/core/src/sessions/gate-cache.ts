/**
 * A small in-process cache of Session gates ({@link SessionGate}: what a Session's access rule
 * and write gate decide on), by workspace, Session and caller, for the reads made without a lock
 * (the Live Inbox routes and attempt routing: `loadSessionGate`), so a client steering a Run is
 * not read from storage on every edit. Spec: platform.md "The write gate" and "Per-caller bounds".
 *
 * - An entry lives `ttlMs` at most (default 1 s): the bound on how long a change made by another
 *   process, or directly in storage, goes unseen here (as the principal cache's for a revocation).
 * - {@link forget} drops every entry at once; the services call it after every write that moves a
 *   gate (a project archived, a member added, changed or removed, a Session archived or deleted),
 *   so such a write through this process's services takes effect here at once.
 * - Only found Sessions are cached (a Session not found is read again next time); a read that
 *   raced a {@link forget} is not cached.
 * - What is queued on a stale gate is still decided again, under the Session's lock, when the
 *   runtime commits it (`run.commit`): nothing queued after an archive is committed.
 */
import type { SessionGate, Store } from '../ports/store.js';

/** Entries kept at most (the oldest evicted first). */
export const SESSION_GATE_CACHE_MAX = 4096;
/** Lifetime of an entry in ms. */
export const SESSION_GATE_CACHE_TTL_MS = 1_000;

interface Entry {
  gate: SessionGate;
  /** ms (the services' clock). */
  expires: number;
}

export class SessionGateCache {
  readonly #entries = new Map<string, Entry>();
  #generation = 0;

  /**
   * @param now the clock, in ms (the services' `Clock`).
   * @param ttlMs lifetime of an entry in ms; 0 disables the cache.
   * @param max entries kept; 0 disables the cache.
   */
  constructor(
    private readonly now: () => number,
    private readonly ttlMs = SESSION_GATE_CACHE_TTL_MS,
    private readonly max = SESSION_GATE_CACHE_MAX,
  ) {}

  /**
   * `store.getSessionGate(workspace_id, session_id, account_id)`, from the cache while an entry
   * lives (the returned gate is shared: never mutate it). `undefined` when the store has no
   * `getSessionGate` (the caller then reads the whole access) or the Session is not found.
   * A failing read is thrown, and nothing is cached.
   */
  async read(store: Pick<Store, 'getSessionGate'>, workspace_id: string, session_id: string, account_id: string): Promise<SessionGate | undefined> {
    if (store.getSessionGate === undefined) return undefined;
    if (this.ttlMs <= 0 || this.max <= 0) return store.getSessionGate(workspace_id, session_id, account_id);
    const key = `${workspace_id}\n${session_id}\n${account_id}`;
    const entry = this.#entries.get(key);
    if (entry !== undefined) {
      if (entry.expires > this.now()) return entry.gate;
      this.#entries.delete(key);
    }
    const generation = this.#generation;
    const gate = await store.getSessionGate(workspace_id, session_id, account_id);
    if (gate !== undefined && generation === this.#generation) {
      while (this.#entries.size >= this.max) this.#entries.delete(this.#entries.keys().next().value as string);
      this.#entries.set(key, { gate, expires: this.now() + this.ttlMs });
    }
    return gate;
  }

  /** Drops every entry, and keeps any read in flight from being cached. */
  forget(): void {
    this.#generation += 1;
    this.#entries.clear();
  }

  /** Number of entries (expired ones included until they are read or evicted). */
  get size(): number {
    return this.#entries.size;
  }
}

/** One cache per store, shared by every service built on it (so a write through one drops what another cached). */
const caches = new WeakMap<Store, SessionGateCache>();

/**
 * The {@link SessionGateCache} of `deps.store` (made on first use, with `deps.sessionGateCacheTtlMs`,
 * default {@link SESSION_GATE_CACHE_TTL_MS}; the first service that reads gates on a store — the
 * Runtime — sets its lifetime: a write's drop never makes one).
 */
export function sessionGateCache(deps: { store: Store; clock: { now(): number }; sessionGateCacheTtlMs?: number }): SessionGateCache {
  let cache = caches.get(deps.store);
  if (cache === undefined) {
    const clock = deps.clock;
    cache = new SessionGateCache(() => clock.now(), deps.sessionGateCacheTtlMs);
    caches.set(deps.store, cache);
  }
  return cache;
}

/**
 * `write` (a committed transaction that moves a gate: a project archived, a member added or
 * removed, a Session archived or deleted), then the store's Session gates dropped — after the
 * commit, and after a failure too (harmless), so no gate read before it outlives it here.
 */
export function droppingSessionGates<T>(deps: { store: Store }, write: Promise<T>): Promise<T> {
  return write.finally(() => caches.get(deps.store)?.forget());
}
