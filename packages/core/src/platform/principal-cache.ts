/**
 * A small in-process cache of authenticated principals, by API key hash (and the account a
 * service key acts as), so a busy key is not looked up in storage on every request. Least
 * recently used entries are evicted beyond `max`; an entry lives `ttlMs` at most, which bounds
 * how long a revocation made elsewhere (another process, or storage changed directly) may go
 * unseen. Revocations through `PlatformService.revokeApiKey` drop the key's entries at once.
 * Only successful authentications are cached.
 */
import type { Principal } from '../context.js';

/** Entries kept at most (least recently used evicted first). */
export const PRINCIPAL_CACHE_MAX = 1024;
/** Lifetime of an entry in ms. */
export const PRINCIPAL_CACHE_TTL_MS = 1_000;

/** A cached authentication: the principal, until when it may be used (ms), and when it was stored (ms). */
export interface PrincipalCacheEntry {
  principal: Principal;
  expires: number;
  stored: number;
}
type Entry = PrincipalCacheEntry;

export class PrincipalCache {
  readonly #entries = new Map<string, Entry>();
  /** The key last placed at the end of {@link #entries} (by `set` or a `get`): while its entry exists, it is the last one. */
  #last: string | undefined;
  #generation = 0;

  /**
   * @param now the clock, in ms (the services' `Clock`).
   * @param max entries kept; 0 disables the cache.
   * @param ttlMs lifetime of an entry in ms; 0 disables the cache.
   */
  constructor(
    private readonly now: () => number,
    private readonly max = PRINCIPAL_CACHE_MAX,
    private readonly ttlMs = PRINCIPAL_CACHE_TTL_MS,
  ) {}

  static #key(key_hash: string, as_account_id: string | undefined): string {
    return as_account_id === undefined ? key_hash : `${key_hash}\n${as_account_id}`;
  }

  /** The cached principal (a copy), or undefined when absent or expired. */
  get(key_hash: string, as_account_id: string | undefined): Principal | undefined {
    const key = PrincipalCache.#key(key_hash, as_account_id);
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expires <= this.now()) {
      this.#entries.delete(key);
      return undefined;
    }
    // Most recently used last: moved there unless it already is (one busy key: no re-insertion per request).
    if (key !== this.#last) {
      this.#entries.delete(key);
      this.#entries.set(key, entry);
      this.#last = key;
    }
    return { ...entry.principal };
  }

  /**
   * The live entry itself (not a copy: read it, never change it), or undefined when absent or
   * expired; its place in the eviction order is kept. For a check repeated many times a second
   * (an open stream's before every delivery), where {@link get}'s copy would be garbage.
   */
  peek(key_hash: string, as_account_id: string | undefined): Readonly<PrincipalCacheEntry> | undefined {
    const entry = this.#entries.get(PrincipalCache.#key(key_hash, as_account_id));
    return entry === undefined || entry.expires <= this.now() ? undefined : entry;
  }

  /** Drops the entry of one key hash (and acting account), e.g. when reading it again was refused. */
  forget(key_hash: string, as_account_id: string | undefined): void {
    this.#entries.delete(PrincipalCache.#key(key_hash, as_account_id));
  }

  /**
   * Bumped by every {@link forgetKey}. Read it before looking a key up in storage and pass it to
   * {@link set}: a lookup that raced a revocation is then not cached.
   */
  get generation(): number {
    return this.#generation;
  }

  /**
   * Remembers a successful authentication read from storage when {@link generation} was
   * `generation`, until `ttlMs` from now or `until` (ms; a key's scheduled revocation), whichever
   * comes first.
   */
  set(key_hash: string, as_account_id: string | undefined, principal: Principal, generation: number, until?: number): void {
    if (this.max <= 0 || this.ttlMs <= 0 || generation !== this.#generation) return;
    const key = PrincipalCache.#key(key_hash, as_account_id);
    this.#entries.delete(key);
    while (this.#entries.size >= this.max) this.#entries.delete(this.#entries.keys().next().value as string);
    const stored = this.now();
    const expires = Math.min(stored + this.ttlMs, until ?? Number.POSITIVE_INFINITY);
    this.#entries.set(key, { principal: { ...principal }, expires, stored });
    this.#last = key;
  }

  /** Drops every entry of the API key `key_id` (all the accounts it acted as). */
  forgetKey(key_id: string): void {
    this.#generation += 1;
    for (const [key, entry] of this.#entries) if (entry.principal.key_id === key_id) this.#entries.delete(key);
  }

  /** Drops every entry of a principal of `account_id` in `workspace_id`, and every key's entries in `key_ids`. */
  forgetAccount(workspace_id: string, account_id: string, key_ids: Iterable<string> = []): void {
    this.#generation += 1;
    const keys = new Set(key_ids);
    for (const [key, entry] of this.#entries) {
      const p = entry.principal;
      if ((p.workspace_id === workspace_id && p.account_id === account_id) || keys.has(p.key_id)) this.#entries.delete(key);
    }
  }

  /** Number of entries (expired ones included until they are read or evicted). */
  get size(): number {
    return this.#entries.size;
  }
}
