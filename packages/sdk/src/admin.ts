/**
 * `client.admin`: the workspace's accounts and API keys, with a key of kind `admin`, and the log of
 * those writes. Spec: platform.md "Administration".
 */
import { fromWire, listFromWire, unwrap } from './case.js';
import { cursorPage, paginate, path, splitOptions, type Transport } from './transport.js';
import type {
  ApiKey, CreateAccountInput, CreateApiKeyParams, CursorPage, IssuedApiKey, ListApiKeysFilters, ListOperationLogsParams,
  OperationLog, PageParams, RequestOptions, RotateApiKeyParams, RotatedApiKey, WorkspaceAccount,
} from './types.js';

type Wire = Record<string, unknown>;

/** `{ key, secret }` (and `previous`) of the wire, camelCased. */
function issued(body: Wire): IssuedApiKey {
  return { key: fromWire<ApiKey>(body['key']), secret: body['secret'] as string };
}

/** `client.admin.accounts`. */
export class AdminAccounts {
  readonly #t: Transport;
  /** @internal Use `createClient`. */
  constructor(transport: Transport) {
    this.#t = transport;
  }

  /**
   * Creates an account in the workspace. `POST /admin/accounts` `{ name }` → 201 `{ account }`.
   * @throws {InboxKitApiError} 400 `validation_error`, 403 (not an admin key).
   */
  async create(input: CreateAccountInput, opts: RequestOptions = {}): Promise<WorkspaceAccount> {
    const body = await this.#t.request('POST', '/admin/accounts', { ...opts, body: { name: input.name } });
    return unwrap<WorkspaceAccount>(body, 'account');
  }

  /**
   * One page of the workspace's accounts, disabled ones included, newest first.
   * `GET /admin/accounts?limit=&cursor=` → `{ items, next_cursor }`.
   * @returns `{ items, nextCursor }` (`null` on the last page).
   * @throws {InboxKitApiError} 400 `invalid_cursor`, 403 (not an admin key).
   */
  async list(params: PageParams = {}): Promise<CursorPage<WorkspaceAccount>> {
    const { opts, rest } = splitOptions(params);
    const body = await this.#t.request<Wire>('GET', '/admin/accounts', { ...opts, query: { limit: rest.limit, cursor: rest.cursor } });
    return cursorPage(body, listFromWire<WorkspaceAccount>(body['items']));
  }

  /** Every account of the workspace, across all pages. @throws {InboxKitApiError} as {@link AdminAccounts.list}. */
  listAll(params: PageParams = {}): AsyncGenerator<WorkspaceAccount, void, undefined> {
    return paginate((cursor) => this.list({ ...params, cursor }), params.cursor);
  }

  /**
   * Disables an account in the workspace: it is no member from then on and its keys are revoked.
   * `POST /admin/accounts/:id/disable` → `{ account }`.
   * @throws {InboxKitApiError} 403, 404 `account_not_found`, 409 `conflict` (the caller's own account).
   */
  async disable(accountId: string, opts: RequestOptions = {}): Promise<WorkspaceAccount> {
    const body = await this.#t.request('POST', path`/admin/accounts/${accountId}/disable`, opts);
    return unwrap<WorkspaceAccount>(body, 'account');
  }

  /**
   * Enables a disabled account in the workspace again: it is a member again; the keys its
   * disabling revoked stay revoked (issue it a new one with `client.admin.keys.create`).
   * `POST /admin/accounts/:id/enable` → `{ account }`; an enabled account is returned unchanged.
   * @throws {InboxKitApiError} 403, 404 `account_not_found`.
   */
  async enable(accountId: string, opts: RequestOptions = {}): Promise<WorkspaceAccount> {
    const body = await this.#t.request('POST', path`/admin/accounts/${accountId}/enable`, opts);
    return unwrap<WorkspaceAccount>(body, 'account');
  }
}

/** `client.admin.keys`. */
export class AdminKeys {
  readonly #t: Transport;
  /** @internal Use `createClient`. */
  constructor(transport: Transport) {
    this.#t = transport;
  }

  /**
   * Issues a key for an account (kind `standard` unless given). `POST /admin/accounts/:id/keys`
   * `{ kind? }` → 201 `{ key, secret }`: the secret is in this answer only.
   * @throws {InboxKitApiError} 403, 404 `account_not_found`, 409 `conflict` (the account is disabled).
   */
  async create(accountId: string, params: CreateApiKeyParams = {}): Promise<IssuedApiKey> {
    const { opts, rest } = splitOptions(params);
    const body = await this.#t.request<Wire>('POST', path`/admin/accounts/${accountId}/keys`, { ...opts, body: rest.kind === undefined ? {} : { kind: rest.kind } });
    return issued(body);
  }

  /**
   * One page of the workspace's keys, newest first (never a secret): those accepted now, or every
   * one with `includeRevoked`; `accountId` narrows to one account.
   * `GET /admin/keys?account_id=&include_revoked=&limit=&cursor=` → `{ items, next_cursor }`.
   * @returns `{ items, nextCursor }` (`null` on the last page).
   * @throws {InboxKitApiError} 400 `invalid_cursor` (a cursor of other filters), 403.
   */
  async list(filters: ListApiKeysFilters & { limit?: number; cursor?: string } = {}, opts: RequestOptions = {}): Promise<CursorPage<ApiKey>> {
    const body = await this.#t.request<Wire>('GET', '/admin/keys', {
      ...opts,
      query: {
        account_id: filters.accountId, include_revoked: filters.includeRevoked === undefined ? undefined : String(filters.includeRevoked),
        limit: filters.limit, cursor: filters.cursor,
      },
    });
    return cursorPage(body, listFromWire<ApiKey>(body['items']));
  }

  /** Every key matching the filters, across all pages. @throws {InboxKitApiError} as {@link AdminKeys.list}. */
  listAll(filters: ListApiKeysFilters & { limit?: number; cursor?: string } = {}, opts: RequestOptions = {}): AsyncGenerator<ApiKey, void, undefined> {
    return paginate((cursor) => this.list({ ...filters, cursor }, opts), filters.cursor);
  }

  /**
   * Rotates a key: a new secret for the same account and kind; the old secret keeps working for
   * `graceMs` (default 0). `POST /admin/keys/:id/rotate` `{ grace_ms? }` → `{ key, secret, previous }`.
   * @throws {InboxKitApiError} 403, 404 `api_key_not_found`, 409 `conflict` (revoked, or its account disabled).
   */
  async rotate(keyId: string, params: RotateApiKeyParams = {}): Promise<RotatedApiKey> {
    const { opts, rest } = splitOptions(params);
    const body = await this.#t.request<Wire>('POST', path`/admin/keys/${keyId}/rotate`, { ...opts, body: rest.graceMs === undefined ? {} : { grace_ms: rest.graceMs } });
    return { ...issued(body), previous: fromWire<ApiKey>(body['previous']) };
  }

  /**
   * Revokes a key: it answers 401 from then on (other server processes: within 1 s).
   * `DELETE /admin/keys/:id` → 204.
   * @throws {InboxKitApiError} 403, 404 `api_key_not_found`, 409 `conflict` (the key of this very request).
   */
  async revoke(keyId: string, opts: RequestOptions = {}): Promise<void> {
    await this.#t.request('DELETE', path`/admin/keys/${keyId}`, opts);
  }
}

/** `client.admin.operationLogs`. */
export class AdminOperationLogs {
  readonly #t: Transport;
  /** @internal Use `createClient`. */
  constructor(transport: Transport) {
    this.#t = transport;
  }

  /**
   * A page of the administration writes (Operation Log rows without a project), newest first.
   * `GET /admin/operation-logs?limit=&cursor=` → `{ items, next_cursor }`.
   * @throws {InboxKitApiError} 400 `invalid_cursor`, 403.
   */
  async list(params: ListOperationLogsParams = {}): Promise<CursorPage<OperationLog>> {
    const { opts, rest } = splitOptions(params);
    const body = await this.#t.request<Wire>('GET', '/admin/operation-logs', { ...opts, query: { limit: rest.limit, cursor: rest.cursor } });
    return { items: listFromWire<OperationLog>(body['items']), nextCursor: (body['next_cursor'] as string | null | undefined) ?? null };
  }
}

/** `client.admin`: needs a key of kind `admin`. */
export class Admin {
  /** Accounts of the workspace. */
  readonly accounts: AdminAccounts;
  /** API keys of the workspace. */
  readonly keys: AdminKeys;
  /** The log of the administration writes. */
  readonly operationLogs: AdminOperationLogs;
  /** @internal Use `createClient`. */
  constructor(transport: Transport) {
    this.accounts = new AdminAccounts(transport);
    this.keys = new AdminKeys(transport);
    this.operationLogs = new AdminOperationLogs(transport);
  }
}
