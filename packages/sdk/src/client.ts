/**
 * `createClient`: the entry point of the SDK. Builds one {@link InboxKitClient} over `fetch` with
 * the API key, a default acting account, extra headers and the retry policy, and hangs the
 * resource groups (`projects`, `sessions`, `admin`) off it. Spec: platform.md "Identity and credentials".
 */
import { Admin } from './admin.js';
import { fromWire } from './case.js';
import { Projects } from './projects.js';
import { Sessions } from './sessions.js';
import { Transport, type FetchLike, type RetryOptions } from './transport.js';
import type { Me, RequestOptions, StreamToken } from './types.js';

/** Options of {@link createClient}. */
export interface ClientOptions {
  /** The server's base URL, e.g. `http://127.0.0.1:3000` (a trailing `/` is ignored). */
  baseUrl: string;
  /** The API key, sent as `Authorization: Bearer <apiKey>`. */
  apiKey: string;
  /** The `fetch` to call (default `globalThis.fetch`). */
  fetch?: FetchLike;
  /** Default acting account (`x-account-id`) for every call; a call's own `accountId` wins. */
  accountId?: string;
  /** Extra headers sent with every request (auth and per-call headers take precedence). */
  headers?: Record<string, string>;
  /** Retry policy of idempotent requests (and keyed inbox creates): `{ retries: 2, baseDelayMs: 100 }` by default. */
  retry?: RetryOptions;
}

/** A typed client of one inbox-kit server, as returned by {@link createClient}. */
export interface InboxKitClient {
  /**
   * The caller: its account, workspace and key kind. `GET /me` → `{ account, workspace_id, key_kind }`.
   * @throws {InboxKitApiError} 401 `authentication_required` / `invalid_credentials`, 403.
   */
  me(opts?: RequestOptions): Promise<Me>;
  /**
   * A short-lived stream token for a browser's `EventSource` (platform.md "Browsers" → "Stream
   * tokens"): open a stream route with `?access_token=<token>` instead of `Authorization`. It acts
   * as this key (and `accountId`) on the stream routes only, until `expiresAt` (ms; at most 15
   * minutes, `ttlSeconds` 1–900, default 900); revoking the key ends it.
   * `POST /stream-tokens` `{ ttl_seconds? }` → 201 `{ token, expires_at }`.
   * @throws {InboxKitApiError} 400 (`ttlSeconds` out of range), 401, 403.
   */
  createStreamToken(params?: { ttlSeconds?: number } & RequestOptions): Promise<StreamToken>;
  /** Projects, members, the Project Inbox, Project Events and the Operation Log. */
  readonly projects: Projects;
  /** Sessions, floors, pages, the Live Inbox and durable Session events. */
  readonly sessions: Sessions;
  /** The workspace's accounts and API keys, and the log of those writes (a key of kind `admin`). */
  readonly admin: Admin;
}

/**
 * Creates a client. No request is sent until a method is called.
 *
 * Every method takes an options object with `accountId` (sent as `x-account-id`) and `signal`;
 * create calls also take `idempotencyKey` (sent as `Idempotency-Key`). GET, PUT and DELETE — and
 * `projects.inbox.create` with an `idempotencyKey`, which the server deduplicates — are retried on
 * network errors, 429, 502, 503 and 504 (exponential backoff with jitter, honouring
 * `Retry-After`); other POSTs and PATCH never are. Errors are {@link InboxKitApiError}
 * ({@link LiveInboxInactiveError} for 410).
 *
 * @throws {TypeError} when `baseUrl` or `apiKey` is empty, or no `fetch` is available.
 */
export function createClient(options: ClientOptions): InboxKitClient {
  if (!options.baseUrl) throw new TypeError('createClient: baseUrl is required');
  if (!options.apiKey) throw new TypeError('createClient: apiKey is required');
  const fetchImpl: FetchLike | undefined =
    options.fetch ?? (typeof globalThis.fetch === 'function' ? (input, init) => globalThis.fetch(input, init) : undefined);
  if (fetchImpl === undefined) throw new TypeError('createClient: no global fetch; pass options.fetch');

  const transport = new Transport({
    baseUrl: options.baseUrl,
    apiKey: options.apiKey,
    fetch: fetchImpl,
    accountId: options.accountId,
    headers: options.headers ?? {},
    retries: options.retry?.retries ?? 2,
    baseDelayMs: options.retry?.baseDelayMs ?? 100,
  });

  return {
    async me(opts: RequestOptions = {}): Promise<Me> {
      const body = await transport.request<Record<string, unknown>>('GET', '/me', opts);
      const me = fromWire<Me>(body);
      return { ...me, account: fromWire(body['account']) };
    },
    async createStreamToken(params: { ttlSeconds?: number } & RequestOptions = {}): Promise<StreamToken> {
      const { ttlSeconds, ...opts } = params;
      const body = await transport.request<Record<string, unknown>>('POST', '/stream-tokens', { ...opts, body: ttlSeconds === undefined ? {} : { ttl_seconds: ttlSeconds } });
      return fromWire<StreamToken>(body);
    },
    projects: new Projects(transport),
    sessions: new Sessions(transport),
    admin: new Admin(transport),
  };
}
