/**
 * Workspace administration (platform.md "Administration"): the accounts and API keys of one
 * workspace, managed without code — over `/admin/*` with a key of kind `admin`, or by trusted code
 * (the demo's command line) acting as `system`. Every write appends one Operation Log row with
 * `project_id: null` in its own transaction (there is no Project Event: events belong to a
 * project); `GET /admin/operation-logs` pages them. Secrets are returned once, when a key is
 * created or rotated; only their SHA-256 is stored. Every write passes the write gate as a
 * workspace write (`account.*`, `api_key.*`: role `admin`; platform.md "The write gate").
 */
import { z } from 'zod';
import type { RequestContext, ServiceDeps } from '../context.js';
import { decodeCursor, encodeCursor, filterFingerprint } from '../cursor.js';
import { InboxKitError } from '../errors.js';
import type { StoreTx } from '../ports/store.js';
import type { ApiKey, ApiKeyKind, OperationLog, WorkspaceAccount } from '../records.js';
import { queryInt } from '../project-inbox/schemas.js';
import { apiKeyKindSchema } from '../schemas/records.js';
import { idString, parseOrThrow, text } from '../validation.js';
import { generateApiKeySecret, hashApiKey } from './keys.js';
import { compareBytes, pageOf, pageParams, type ListPage } from '../paging.js';
import { gateWorkspaceWrite } from '../policy/write-gate.js';
import type { WriteAction } from '../policy/write-policy.js';

/** The longest grace period a rotation may give the old secret: 7 days, in ms. */
export const MAX_ROTATION_GRACE_MS = 7 * 24 * 60 * 60 * 1000;

/** `POST /admin/accounts` body. */
export const createAccountBody = z.strictObject({
  name: text({ min: 1, max: 200 }).describe('Shown to members (1–200 characters after trimming)'),
});

/** `POST /admin/accounts/:id/keys` body (optional: a `standard` key without it). */
export const createApiKeyBody = z.strictObject({
  kind: apiKeyKindSchema.optional().describe('Default `standard`'),
}).optional();

/** `POST /admin/keys/:id/rotate` body (optional: no grace period without it). */
export const rotateApiKeyBody = z.strictObject({
  grace_ms: z.number().int().min(0).max(MAX_ROTATION_GRACE_MS).optional()
    .describe('How long the old secret keeps working, in ms (default 0: it is refused at once; at most 7 days)'),
}).optional();

/** `GET /admin/keys` query. */
export const listApiKeysQuery = z.strictObject({
  ...pageParams,
  account_id: idString.optional().describe('Only the keys of this account'),
  include_revoked: z.enum(['true', 'false']).transform((s) => s === 'true').or(z.boolean()).default(false)
    .describe('Also list revoked keys (default false: the keys accepted now, those in a grace period included)'),
});

/** `GET /admin/accounts` query: keyset pages, newest first. */
export const listAccountsQuery = z.strictObject(pageParams);

/** `GET /admin/operation-logs` query. */
export const listAdminOperationLogsQuery = z.strictObject({
  limit: queryInt(1, 200).default(50),
  cursor: z.string().min(1).max(2048).optional(),
});

/** An API key as the administration shows it: never its hash, never its secret. */
export type ApiKeyView = Omit<ApiKey, 'key_hash'>;

/** A key just created or rotated: the record and its secret (shown this once). */
export interface IssuedApiKey {
  key: ApiKeyView;
  /** The secret to send as `Authorization: Bearer <secret>`; never stored, never shown again. */
  secret: string;
}

/** What the principal cache of `PlatformService` must forget after a revocation. */
export interface PrincipalInvalidation {
  forgetKey(key_id: string): void;
  forgetAccount(workspace_id: string, account_id: string, key_ids: Iterable<string>): void;
}

/** The view of a key: the record without `key_hash`. */
export function apiKeyView(key: ApiKey): ApiKeyView {
  const { key_hash: _hash, ...view } = key;
  return view;
}

/**
 * The principal of trusted code administering a workspace (the demo's command line): account
 * `system`, which no API key has. Its writes are logged with `actor_account_id: "system"`.
 */
export function systemAdminContext(workspace_id: string, request_id: string): RequestContext {
  return { principal: { workspace_id, account_id: 'system', key_id: 'system', key_kind: 'admin' }, request_id, source: 'system' };
}

const forbidden = () => new InboxKitError('permission_denied', 'Only an API key of kind admin may administer the workspace');

/** The use cases of `/admin/*`. Reached as `PlatformService.admin`. */
export class AdminService {
  constructor(private readonly deps: ServiceDeps, private readonly principals: PrincipalInvalidation) {}

  /**
   * Creates an account, a member of the caller's workspace.
   * @throws permission_denied (not an admin key), validation_error.
   */
  async createAccount(ctx: RequestContext, input: z.input<typeof createAccountBody>): Promise<WorkspaceAccount> {
    const workspace_id = adminWrite(ctx, 'account.create');
    const body = parseOrThrow(createAccountBody, input, 'account');
    const now = this.deps.clock.now();
    const account = { id: this.deps.ids.next('acc'), name: body.name, created_at: now };
    await this.deps.store.transaction(async (tx) => {
      await tx.insertAccount(account, [workspace_id]);
      await this.#log(tx, ctx, 'account.create', 'account', account.id, {});
    });
    return { ...account, workspace_id, disabled_at: null };
  }

  /**
   * One page of the workspace's accounts, disabled ones included, newest first (keyset by
   * `(created_at, id)` descending; platform.md "Lists and pages").
   * @throws permission_denied, validation_error, invalid_cursor, unsupported_capability.
   */
  async listAccounts(ctx: RequestContext, input: z.input<typeof listAccountsQuery> = {}): Promise<ListPage<WorkspaceAccount>> {
    const workspace_id = adminOf(ctx);
    const query = parseOrThrow(listAccountsQuery, input, 'query');
    const rows = await need(this.deps.store, 'listWorkspaceAccounts')(workspace_id);
    return newestFirstPage(rows, `accounts:${workspace_id}`, filterFingerprint({ list: 'accounts' }), query);
  }

  /**
   * Disables an account in the workspace: from then on it is no member (its requests, and a
   * service key acting as it, are refused) and every key it has there is revoked, in one
   * transaction. Disabling a disabled account returns it unchanged and writes nothing.
   * @throws permission_denied, account_not_found, conflict (the caller's own account),
   *   unsupported_capability.
   */
  async disableAccount(ctx: RequestContext, account_id: string): Promise<WorkspaceAccount> {
    const workspace_id = adminWrite(ctx, 'account.disable');
    const store = this.deps.store;
    need(store, 'lockWorkspaceAccount');
    need(store, 'disableWorkspaceAccount');
    need(store, 'listApiKeys');
    const result = await store.transaction(async (tx) => {
      const account = await tx.lockWorkspaceAccount!(workspace_id, account_id);
      if (!account) throw new InboxKitError('account_not_found', 'Account not found in this workspace');
      if (account.disabled_at !== null) return { account, keys: [] as ApiKey[] };
      if (account.id === ctx.principal.account_id) {
        throw new InboxKitError('conflict', 'An admin key cannot disable its own account; use another admin key or the command line');
      }
      const now = this.deps.clock.now();
      const keys = (await tx.listApiKeys!(workspace_id, { account_id, active_at: now }));
      const disabled = await tx.disableWorkspaceAccount!(workspace_id, account_id, now);
      if (!disabled) return { account, keys: [] as ApiKey[] };
      await this.#log(tx, ctx, 'account.disable', 'account', account_id, { revoked_key_count: keys.length });
      return { account: disabled, keys };
    });
    this.principals.forgetAccount(workspace_id, account_id, result.keys.map((k) => k.id));
    return result.account;
  }

  /**
   * Enables a disabled account in the workspace again: from then on it is a member (as before its
   * disabling). The keys its disabling revoked stay revoked, so it needs a new key
   * ({@link createKey}). Enabling an enabled account returns it unchanged and writes nothing.
   * Spec: platform.md "Administration".
   * @throws permission_denied, account_not_found, unsupported_capability.
   */
  async enableAccount(ctx: RequestContext, account_id: string): Promise<WorkspaceAccount> {
    const workspace_id = adminWrite(ctx, 'account.enable');
    const store = this.deps.store;
    need(store, 'lockWorkspaceAccount');
    need(store, 'enableWorkspaceAccount');
    return store.transaction(async (tx) => {
      const account = await tx.lockWorkspaceAccount!(workspace_id, account_id);
      if (!account) throw new InboxKitError('account_not_found', 'Account not found in this workspace');
      if (account.disabled_at === null) return account;
      const enabled = await tx.enableWorkspaceAccount!(workspace_id, account_id);
      if (!enabled) return account;
      await this.#log(tx, ctx, 'account.enable', 'account', account_id, {});
      return enabled;
    });
  }

  /**
   * Issues a key (kind `standard` unless given) for an enabled account of the workspace.
   * @throws permission_denied, validation_error, account_not_found, conflict (the account is
   *   disabled), unsupported_capability.
   */
  async createKey(ctx: RequestContext, account_id: string, input: z.input<typeof createApiKeyBody> = {}): Promise<IssuedApiKey> {
    const workspace_id = adminWrite(ctx, 'api_key.create');
    const body = parseOrThrow(createApiKeyBody, input, 'key') ?? {};
    need(this.deps.store, 'lockWorkspaceAccount');
    return this.deps.store.transaction(async (tx) => {
      await this.#enabledAccount(tx, workspace_id, account_id);
      const issued = await this.#insertKey(tx, workspace_id, account_id, body.kind ?? 'standard');
      await this.#log(tx, ctx, 'api_key.create', 'api_key', issued.key.id, { account_id, kind: issued.key.kind });
      return issued;
    });
  }

  /**
   * The workspace's keys, newest first: the ones accepted now (a rotated key in its grace period
   * included), or every one with `include_revoked`; `account_id` narrows to one account.
   * @throws permission_denied, validation_error, unsupported_capability.
   */
  async listKeys(ctx: RequestContext, input: z.input<typeof listApiKeysQuery> = {}): Promise<ListPage<ApiKeyView>> {
    const workspace_id = adminOf(ctx);
    const query = parseOrThrow(listApiKeysQuery, input, 'query');
    const keys = await need(this.deps.store, 'listApiKeys')(workspace_id, {
      ...(query.account_id !== undefined ? { account_id: query.account_id } : {}),
      ...(query.include_revoked ? {} : { active_at: this.deps.clock.now() }),
    });
    const fp = filterFingerprint({ list: 'api_keys', account_id: query.account_id ?? null, include_revoked: query.include_revoked ? 1 : 0 });
    return newestFirstPage(keys.map(apiKeyView), `api_keys:${workspace_id}`, fp, query);
  }

  /**
   * Rotates a key: a new key of the same account and kind, and the old one revoked after
   * `grace_ms` (default 0: at once; at most {@link MAX_ROTATION_GRACE_MS}).
   * @returns the new key with its secret, and the old key as it is now (`revoked_at` set).
   * @throws permission_denied, validation_error, api_key_not_found, conflict (the key is revoked,
   *   or its account disabled), unsupported_capability.
   */
  async rotateKey(ctx: RequestContext, key_id: string, input: z.input<typeof rotateApiKeyBody> = {}): Promise<IssuedApiKey & { previous: ApiKeyView }> {
    const workspace_id = adminWrite(ctx, 'api_key.rotate');
    const body = parseOrThrow(rotateApiKeyBody, input, 'rotation') ?? {};
    const grace = body.grace_ms ?? 0;
    need(this.deps.store, 'getApiKey');
    need(this.deps.store, 'lockWorkspaceAccount');
    const result = await this.deps.store.transaction(async (tx) => {
      const old = await tx.getApiKey!(workspace_id, key_id);
      if (!old) throw new InboxKitError('api_key_not_found', 'API key not found');
      const now = this.deps.clock.now();
      if (old.revoked_at !== null && old.revoked_at <= now) throw new InboxKitError('conflict', 'The API key is revoked; create a new one');
      await this.#enabledAccount(tx, workspace_id, old.account_id);
      const issued = await this.#insertKey(tx, workspace_id, old.account_id, old.kind);
      const revoked_at = Math.min(now + grace, old.revoked_at ?? Number.POSITIVE_INFINITY);
      await tx.revokeApiKey(old.id, revoked_at);
      await this.#log(tx, ctx, 'api_key.rotate', 'api_key', old.id, { new_key_id: issued.key.id, grace_ms: grace });
      return { ...issued, previous: apiKeyView({ ...old, revoked_at }) };
    });
    // A grace period ends in the principal cache when it ends in storage (the cache keeps an entry
    // no longer than the key's `revoked_at`).
    if (grace === 0) this.principals.forgetKey(key_id);
    return result;
  }

  /**
   * Revokes a key at once: requests with it answer 401 `invalid_credentials` (in this process at
   * once, in others within the principal cache's 1 s). A revoked key: nothing is written.
   * @throws permission_denied, api_key_not_found, conflict (the key of this very request),
   *   unsupported_capability.
   */
  async revokeKey(ctx: RequestContext, key_id: string): Promise<void> {
    const workspace_id = adminWrite(ctx, 'api_key.revoke');
    need(this.deps.store, 'getApiKey');
    await this.deps.store.transaction(async (tx) => {
      const key = await tx.getApiKey!(workspace_id, key_id);
      if (!key) throw new InboxKitError('api_key_not_found', 'API key not found');
      const now = this.deps.clock.now();
      if (key.revoked_at !== null && key.revoked_at <= now) return;
      if (key.id === ctx.principal.key_id) {
        throw new InboxKitError('conflict', 'A request cannot revoke its own key; rotate it, or use another admin key or the command line');
      }
      await tx.revokeApiKey(key.id, now);
      await this.#log(tx, ctx, 'api_key.revoke', 'api_key', key.id, { account_id: key.account_id });
    });
    this.principals.forgetKey(key_id);
  }

  /**
   * The administration writes of the workspace (Operation Log rows without a project), newest
   * first, one page.
   * @throws permission_denied, validation_error, invalid_cursor, unsupported_capability.
   */
  async listOperationLogs(ctx: RequestContext, input: z.input<typeof listAdminOperationLogsQuery> = {}): Promise<{ items: OperationLog[]; next_cursor: string | null }> {
    const workspace_id = adminOf(ctx);
    const query = parseOrThrow(listAdminOperationLogsQuery, input, 'query');
    const fp = filterFingerprint({ log: 'admin' });
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor, workspace_id, fp);
    const rows = await need(this.deps.store, 'listWorkspaceOperationLogs')({ workspace_id, ...(after ? { after } : {}), limit: query.limit + 1 });
    const items = rows.slice(0, query.limit);
    const last = items[items.length - 1];
    return { items, next_cursor: rows.length > query.limit && last ? encodeCursor(workspace_id, fp, last) : null };
  }

  /** The account, locked, enabled. @throws account_not_found, conflict (disabled). */
  async #enabledAccount(tx: StoreTx, workspace_id: string, account_id: string): Promise<WorkspaceAccount> {
    const account = await tx.lockWorkspaceAccount!(workspace_id, account_id);
    if (!account) throw new InboxKitError('account_not_found', 'Account not found in this workspace');
    if (account.disabled_at !== null) throw new InboxKitError('conflict', 'The account is disabled in this workspace');
    return account;
  }

  async #insertKey(tx: StoreTx, workspace_id: string, account_id: string, kind: ApiKeyKind): Promise<IssuedApiKey> {
    const secret = generateApiKeySecret();
    const key: ApiKey = {
      id: this.deps.ids.next('key'), workspace_id, account_id, kind,
      key_hash: await (this.deps.hashApiKey ?? hashApiKey)(secret),
      created_at: this.deps.clock.now(), revoked_at: null, last_used_at: null,
    };
    await tx.insertApiKey(key);
    return { key: apiKeyView(key), secret };
  }

  async #log(tx: StoreTx, ctx: RequestContext, action: string, target_type: string, target_id: string, metadata: OperationLog['metadata']): Promise<void> {
    await tx.appendOperationLog({
      id: this.deps.ids.next('oplog'), workspace_id: ctx.principal.workspace_id, project_id: null, actor_account_id: ctx.principal.account_id,
      action, target_type, target_id, request_id: ctx.request_id, metadata, created_at: this.deps.clock.now(),
    });
  }
}

/**
 * The caller's workspace, for an administration write: through the write gate (a workspace write,
 * role `admin`). @throws permission_denied unless the caller's key is of kind `admin`.
 */
function adminWrite(ctx: RequestContext, action: Extract<WriteAction, `account.${string}` | `api_key.${string}`>): string {
  gateWorkspaceWrite(ctx.principal, action);
  return ctx.principal.workspace_id;
}

/**
 * The page of `rows` after the query's cursor, newest first by `(created_at, id)` (byte order):
 * the administration's lists are read whole (a workspace's accounts and keys) and paged here.
 */
function newestFirstPage<T extends { id: string; created_at: number }>(rows: T[], scope: string, fp: string, query: { limit: number; cursor?: string | undefined }): ListPage<T> {
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor, scope, fp);
  const sorted = [...rows].sort((a, b) => (a.created_at === b.created_at ? compareBytes(b.id, a.id) : a.created_at < b.created_at ? 1 : -1));
  const from = after === undefined ? sorted : sorted.filter((r) => r.created_at < after.created_at || (r.created_at === after.created_at && compareBytes(r.id, after.id) < 0));
  return pageOf(from.slice(0, query.limit + 1), query.limit, (last) => encodeCursor(scope, fp, { created_at: last.created_at, id: last.id }));
}

/** The caller's workspace, for an administration read. @throws permission_denied unless the caller's key is of kind `admin`. */
function adminOf(ctx: RequestContext): string {
  if (ctx.principal.key_kind !== 'admin') throw forbidden();
  return ctx.principal.workspace_id;
}

type OptionalIdentity = 'listWorkspaceAccounts' | 'lockWorkspaceAccount' | 'disableWorkspaceAccount' | 'enableWorkspaceAccount' | 'getApiKey' | 'listApiKeys' | 'listWorkspaceOperationLogs';

/**
 * The store's optional method `name`, bound to it.
 * @throws InboxKitError `unsupported_capability` (400) when the store does not implement it.
 */
function need<K extends OptionalIdentity>(store: ServiceDeps['store'], name: K): NonNullable<ServiceDeps['store'][K]> {
  const method = store[name];
  if (typeof method !== 'function') {
    throw new InboxKitError('unsupported_capability', `This server's store does not implement ${name}, which workspace administration needs`);
  }
  return (method as (...args: never[]) => unknown).bind(store) as NonNullable<ServiceDeps['store'][K]>;
}
