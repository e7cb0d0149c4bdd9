/**
 * The identity aggregate: workspaces, accounts and API keys as callers (authentication, stream
 * tokens, `GET /me`); the administration routes are `AdminService`'s.
 */
import type { Principal, RequestContext, ServiceDeps } from '../context.js';
import { InboxKitError } from '../errors.js';
import type { Account, ApiKey, ApiKeyKind, Workspace } from '../records.js';
import { parseOrThrow } from '../validation.js';
import { sha256Hex } from '../digest.js';
import { constantTimeEqual, generateApiKeySecret, hashApiKey } from './keys.js';
import { PRINCIPAL_CACHE_TTL_MS, PrincipalCache } from './principal-cache.js';
import { createStreamTokenBody, MAX_STREAM_TOKEN_TTL_SECONDS, readStreamToken, signStreamToken, streamTokenSignatureValid } from './stream-tokens.js';
import { forbidden } from './writes.js';
import type { z } from 'zod';

/**
 * How stale (ms) a key's `last_used_at` may get: a key that authenticates is recorded as used at
 * most once per this period (and only when its principal is not cached), so a busy key costs no
 * write per request. `last_used_at` is therefore exact to within a minute.
 */
export const API_KEY_USE_RESOLUTION_MS = 60_000;

/** Identity (platform.md "Authentication"): API keys and stream tokens to principals (cached 1 s), the caller's account, and the trusted bootstrap of workspaces, accounts and keys. */
export class IdentityService {
  /** Principals by key hash: see `principal-cache.ts` (1 s lifetime; revocations here drop them at once). */
  readonly #principals: PrincipalCache;
  /**
   * Storage lookups in flight, by cache generation, key hash and acting account: concurrent
   * requests presenting one key share one read (when the cache entry of a key held by a thousand
   * open streams expires, their next deliveries make one lookup, not a thousand). A lookup started
   * before a revocation is never joined after it (the generation changed).
   */
  readonly #lookups = new Map<string, Promise<Principal>>();
  /** Keys whose use is being recorded (one write in flight per key). */
  readonly #recordingUse = new Set<string>();
  /** Workspace administration: accounts and API keys (`/admin/*`, platform.md "Administration"). */

  constructor(private readonly deps: ServiceDeps) {
    this.#principals = new PrincipalCache(() => deps.clock.now(), undefined, deps.principalCacheTtlMs);
  }

  /** Drops the cached principals of a key (its revocation takes effect at once in this process). */
  forgetKey(key_id: string): void {
    this.#principals.forgetKey(key_id);
  }

  /** Drops the cached principals of an account (disabled) and of its keys. */
  forgetAccount(workspace_id: string, account_id: string, key_ids: readonly string[]): void {
    this.#principals.forgetAccount(workspace_id, account_id, key_ids);
  }

  /**
   * Resolves a secret to the principal it authenticates. A `service` key may act as any account
   * of its workspace through `as_account_id`; a standard or admin key may only name its own account.
   * A key whose `revoked_at` has come (a rotated key once its grace period is over) is refused.
   * @throws InboxKitError authentication_required (no secret), invalid_credentials (unknown or
   *   revoked), permission_denied (standard or admin key naming another account), account_not_found
   *   (service key naming an account outside its workspace, or disabled there).
   *
   * Successful results are cached in the process for 1 s by key hash (`principal-cache.ts`), never
   * past the key's scheduled revocation: {@link revokeApiKey} and the `admin` revocations take
   * effect at once; a key revoked in another process or directly in storage is refused within
   * 1 s. Concurrent misses for one key share one storage lookup. A lookup records the key's use
   * (`last_used_at`) when the stored one is over {@link API_KEY_USE_RESOLUTION_MS} old, without
   * waiting for the write.
   *
   * `options.workspace_id` is the workspace the caller says it acts in (the Managed Agents
   * `anthropic-workspace-id` header): a key may only name its own workspace, else 403
   * `permission_denied` (live-inbox.md "Managed Agents compatibility").
   */
  async authenticate(secret: string | undefined, as_account_id?: string, options: { workspace_id?: string } = {}): Promise<Principal> {
    const principal = await this.#authenticate(secret, as_account_id);
    if (options.workspace_id !== undefined && options.workspace_id !== principal.workspace_id) {
      throw forbidden('This API key belongs to another workspace than the one the request names');
    }
    return principal;
  }

  async #authenticate(secret: string | undefined, as_account_id: string | undefined): Promise<Principal> {
    if (!secret) throw new InboxKitError('authentication_required', 'An API key is required (Authorization: Bearer <key> or x-api-key)');
    const hashed = (this.deps.hashApiKey ?? sha256Hex)(secret);
    // A synchronous hash (the default on Node: node:crypto) is used as it is: no turn of the microtask queue per request.
    const hash = typeof hashed === 'string' ? hashed : await hashed;
    const cached = this.#principals.get(hash, as_account_id);
    if (cached) return cached;
    return { ...(await this.#sharedLookUp(hash, as_account_id)) };
  }

  /** A key's (and acting account's) lookups in flight are shared: one storage read per generation of the cache. */
  #flight(hash: string, as_account_id: string | undefined): string {
    return `${this.#principals.generation}\n${hash}\n${as_account_id ?? ''}`;
  }

  /** The lookup of {@link #lookUp} in flight for this key and account, or a new one. */
  #sharedLookUp(hash: string, as_account_id: string | undefined): Promise<Principal> {
    const generation = this.#principals.generation;
    const flight = this.#flight(hash, as_account_id);
    let lookup = this.#lookups.get(flight);
    if (lookup === undefined) {
      lookup = this.#lookUp(hash, as_account_id, generation).finally(() => this.#lookups.delete(flight));
      this.#lookups.set(flight, lookup);
    }
    return lookup;
  }

  /** The storage half of {@link authenticate}: reads the key (and the acting account), caches a success. */
  async #lookUp(hash: string, as_account_id: string | undefined, generation: number): Promise<Principal> {
    const key = await this.deps.store.findApiKeyByHash(hash);
    const now = this.deps.clock.now();
    if (!key || !constantTimeEqual(key.key_hash, hash) || (key.revoked_at !== null && key.revoked_at <= now)) {
      throw new InboxKitError('invalid_credentials', 'The API key is unknown or revoked');
    }
    let account_id = key.account_id;
    if (as_account_id !== undefined && as_account_id !== key.account_id) {
      if (key.kind !== 'service') throw forbidden('Only a service key may act as another account');
      const account = await this.deps.store.getWorkspaceAccount(key.workspace_id, as_account_id);
      if (!account) throw new InboxKitError('account_not_found', 'Account not found in this workspace');
      account_id = account.id;
    }
    const principal: Principal = { workspace_id: key.workspace_id, account_id, key_id: key.id, key_kind: key.kind };
    this.#principals.set(hash, as_account_id, principal, generation, key.revoked_at ?? undefined);
    this.#recordUse(key.id, key.last_used_at, now);
    return principal;
  }

  /**
   * `POST /stream-tokens` (platform.md "Browsers" → "Stream tokens"): a token that opens the
   * caller's event streams (as this API key and acting account) until `expires_at`, passed as the
   * `access_token` query parameter by an `EventSource`, which cannot send `Authorization`.
   * `ttl_seconds` 1–900 (default 900). Signed by the key's stored hash: it stops working when the
   * key is revoked (or its rotation's grace period ends).
   * @returns `{ token, expires_at }` (`expires_at` in ms).
   * @throws InboxKitError `validation_error` (400), `unsupported_capability` (400: the store has no
   *   `getApiKey`), `invalid_credentials` (401: the key was revoked meanwhile).
   */
  async issueStreamToken(ctx: RequestContext, input?: z.input<typeof createStreamTokenBody>): Promise<{ token: string; expires_at: number }> {
    const body = parseOrThrow(createStreamTokenBody, input, 'stream token');
    const { store, clock } = this.deps;
    if (store.getApiKey === undefined) throw new InboxKitError('unsupported_capability', "This server's store does not implement getApiKey, which stream tokens need");
    const key = await store.getApiKey(ctx.principal.workspace_id, ctx.principal.key_id);
    const now = clock.now();
    if (key === undefined || (key.revoked_at !== null && key.revoked_at <= now)) throw new InboxKitError('invalid_credentials', 'The API key is unknown or revoked');
    // Never past the key's scheduled revocation (a rotation's grace period).
    const expires_at = Math.min(now + (body?.ttl_seconds ?? MAX_STREAM_TOKEN_TTL_SECONDS) * 1000, key.revoked_at ?? Number.MAX_SAFE_INTEGER);
    const { principal } = ctx;
    const token = await signStreamToken({ key_id: key.id, account_id: principal.account_id, workspace_id: principal.workspace_id, expires_at }, key.key_hash);
    return { token, expires_at };
  }

  /**
   * A credential's check without I/O, for one presented again and again (an open stream's before
   * every delivery, platform.md "Authorised as of now"): a function answering the principal that
   * {@link authenticate} (`{ api_key, as_account_id? }`, with `options.workspace_id` as there) or
   * {@link authenticateStreamToken} (`{ stream_token }`, its expiry not checked) would answer from
   * the principal cache now, or undefined when the cache holds none for it (expired, revoked in
   * this process, evicted, a workspace other than the key's named): then authenticate again, which
   * reads storage, throws what it throws, and fills the cache. The key's hash is computed once, here.
   * The principal answered is the cache's own: read it, never change it. An API key's entry found
   * past half its lifetime is looked up again in the background (never older than the lifetime, a
   * refusal drops it), so a stream checked often keeps its check without I/O. Undefined (no such
   * check) when `hashApiKey` is asynchronous.
   */
  cachedAuthentication(
    credential: { api_key: string; as_account_id?: string | undefined } | { stream_token: string },
    options: { workspace_id?: string } = {},
  ): (() => Readonly<Principal> | undefined) | undefined {
    const principals = this.#principals;
    let key: string;
    let as_account_id: string | undefined;
    if ('stream_token' in credential) {
      key = streamTokenCacheKey(credential.stream_token);
    } else {
      const hashed = (this.deps.hashApiKey ?? sha256Hex)(credential.api_key);
      if (typeof hashed !== 'string') return undefined;
      key = hashed;
      as_account_id = credential.as_account_id;
    }
    const { workspace_id } = options;
    const refreshes = !('stream_token' in credential);
    const refreshAfter = (this.deps.principalCacheTtlMs ?? PRINCIPAL_CACHE_TTL_MS) / 2;
    return () => {
      const entry = principals.peek(key, as_account_id);
      if (entry === undefined) return undefined;
      const { principal } = entry;
      if (workspace_id !== undefined && workspace_id !== principal.workspace_id) return undefined;
      // Past half its lifetime, a key's entry is read again in the background, so that a stream
      // checked again and again keeps finding it (a refusal drops it: the next check reads storage).
      if (refreshes && this.deps.clock.now() - entry.stored >= refreshAfter) {
        this.#refresh(key, as_account_id);
      }
      return principal;
    };
  }

  /**
   * The storage lookup of a cached key started again before its entry expires (the revocation
   * rules unchanged: the entry is never older than its lifetime); one at a time per key and
   * account, as {@link authenticate}'s; a refusal or failure drops the entry.
   */
  #refresh(hash: string, as_account_id: string | undefined): void {
    if (this.#lookups.has(this.#flight(hash, as_account_id))) return;
    this.#sharedLookUp(hash, as_account_id).catch(() => this.#principals.forget(hash, as_account_id));
  }

  /**
   * The principal a stream token authenticates (as {@link authenticate} does for an API key, cached
   * the same way, 1 s): the key it names must still be valid (not revoked, the signature its own),
   * and a service key's acting account still a member of the workspace.
   * @param options.expiry check the expiry (default true; false when an open stream re-checks
   *   its credential before a delivery: a stream opened in time stays open until the key is revoked).
   * @throws InboxKitError `invalid_credentials` (401: malformed, forged, expired, or its key revoked),
   *   `account_not_found` (404: the acting account left the workspace), `unsupported_capability` (400: no `getApiKey`).
   */
  async authenticateStreamToken(token: string, options: { expiry?: boolean; workspace_id?: string } = {}): Promise<Principal> {
    const { store, clock } = this.deps;
    const claims = readStreamToken(token);
    if (claims === undefined) throw new InboxKitError('invalid_credentials', 'The stream token is not valid');
    if (options.expiry !== false && claims.expires_at <= clock.now()) {
      throw new InboxKitError('invalid_credentials', 'The stream token has expired; ask POST /stream-tokens for a new one');
    }
    if (options.workspace_id !== undefined && options.workspace_id !== claims.workspace_id) {
      throw forbidden('This stream token belongs to another workspace than the one the request names');
    }
    const cacheKey = streamTokenCacheKey(token);
    const cached = this.#principals.get(cacheKey, undefined);
    if (cached) return cached;
    if (store.getApiKey === undefined) throw new InboxKitError('unsupported_capability', "This server's store does not implement getApiKey, which stream tokens need");
    const generation = this.#principals.generation;
    const key = await store.getApiKey(claims.workspace_id, claims.key_id);
    const now = clock.now();
    if (key === undefined || (key.revoked_at !== null && key.revoked_at <= now) || !(await streamTokenSignatureValid(claims.payload, claims.signature, key.key_hash))) {
      throw new InboxKitError('invalid_credentials', 'The stream token is not valid, or its API key was revoked');
    }
    if (claims.account_id !== key.account_id) {
      // Only a service key mints tokens acting as another account; that account must still be here.
      if (key.kind !== 'service') throw new InboxKitError('invalid_credentials', 'The stream token is not valid');
      if (!(await store.getWorkspaceAccount(key.workspace_id, claims.account_id))) throw new InboxKitError('account_not_found', 'Account not found in this workspace');
    }
    const principal: Principal = { workspace_id: key.workspace_id, account_id: claims.account_id, key_id: key.id, key_kind: key.kind };
    this.#principals.set(cacheKey, undefined, principal, generation, key.revoked_at ?? undefined);
    this.#recordUse(key.id, key.last_used_at, now);
    return principal;
  }

  /** Records a key's use when the stored `last_used_at` is stale; never awaited, a failure is dropped (the value is informational). */
  #recordUse(key_id: string, last_used_at: number | null | undefined, now: number): void {
    const store = this.deps.store;
    if (store.recordApiKeyUse === undefined || this.#recordingUse.has(key_id)) return;
    if (typeof last_used_at === 'number' && now - last_used_at < API_KEY_USE_RESOLUTION_MS) return;
    this.#recordingUse.add(key_id);
    void store.recordApiKeyUse(key_id, now).catch(() => undefined).finally(() => this.#recordingUse.delete(key_id));
  }


  /** Every workspace, oldest first (trusted code: the command line). @throws unsupported_capability when the store has no `listWorkspaces`. */
  async listWorkspaces(): Promise<Workspace[]> {
    if (this.deps.store.listWorkspaces === undefined) throw new InboxKitError('unsupported_capability', "This server's store does not implement listWorkspaces");
    return this.deps.store.listWorkspaces();
  }

  /** Creates a workspace (administration; no principal). */
  async createWorkspace(input: { id?: string; name: string }): Promise<Workspace> {
    const ws: Workspace = { id: input.id ?? this.deps.ids.next('ws'), name: input.name, created_at: this.deps.clock.now() };
    await this.deps.store.insertWorkspace(ws);
    return ws;
  }

  /** Creates an account that is a member of the given workspaces (administration). */
  async createAccount(input: { id?: string; name: string; workspace_ids: string[] }): Promise<Account> {
    const account: Account = { id: input.id ?? this.deps.ids.next('acc'), name: input.name, created_at: this.deps.clock.now() };
    await this.deps.store.insertAccount(account, input.workspace_ids);
    return account;
  }

  /** Issues an API key; the secret is returned once and only its hash is stored (administration). */
  async issueApiKey(input: { workspace_id: string; account_id: string; kind?: ApiKeyKind }): Promise<{ key: ApiKey; secret: string }> {
    const secret = generateApiKeySecret();
    const key: ApiKey = {
      id: this.deps.ids.next('key'),
      workspace_id: input.workspace_id,
      account_id: input.account_id,
      kind: input.kind ?? 'standard',
      key_hash: await (this.deps.hashApiKey ?? hashApiKey)(secret),
      created_at: this.deps.clock.now(),
      revoked_at: null,
      last_used_at: null,
    };
    await this.deps.store.insertApiKey(key);
    return { key, secret };
  }

  /** Revokes a key; later requests with it get 401 invalid_credentials. */
  async revokeApiKey(key_id: string): Promise<void> {
    await this.deps.store.revokeApiKey(key_id, this.deps.clock.now());
    this.#principals.forgetKey(key_id);
  }

  /** The caller's own account. */
  async whoami(ctx: RequestContext): Promise<{ account: Account; workspace_id: string; key_kind: ApiKeyKind }> {
    const account = await this.deps.store.getWorkspaceAccount(ctx.principal.workspace_id, ctx.principal.account_id);
    if (!account) throw new InboxKitError('account_not_found', 'Account not found');
    return { account, workspace_id: ctx.principal.workspace_id, key_kind: ctx.principal.key_kind };
  }
}

/** A stream token's entry in the principal cache (beside the key hashes: no hash is 'stream-token…'). */
function streamTokenCacheKey(token: string): string {
  return `stream-token\n${token}`;
}
