/**
 * Request ids and credentials (platform.md "Identity and credentials", "Errors"): the id every
 * response carries as `x-request-id`, and how an API key and a service key's acting account are
 * read from the headers, or a stream token from the query of a stream route. Header names are
 * lower-case, as Node delivers them.
 */
import type { Principal } from '../context.js';
import { InboxKitError } from '../errors.js';
import { isStreamToken } from '../platform/stream-tokens.js';

/**
 * Default time a request body has to arrive, in ms (30,000): after it, an adapter answers 408
 * `request_timeout` and closes the connection (platform.md "Connections and request bodies"). Every
 * adapter's `bodyTimeoutMs` option defaults to it.
 */
export const DEFAULT_BODY_TIMEOUT_MS = 30_000;

/** Header values as HTTP servers deliver them: a string, several strings, or nothing. */
export type HeaderValue = string | string[] | undefined;

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Random bytes drawn 128 ids at a time: one `getRandomValues` call per request cost ~5% of a small GET. */
const POOL_BYTES = 21 * 128;
let pool = new Uint8Array(0);
let offset = 0;

/** A new request id: `req_` + 21 URL-safe random characters (Web Crypto `getRandomValues`). */
export function newRequestId(): string {
  if (offset + 21 > pool.length) {
    pool = globalThis.crypto.getRandomValues(new Uint8Array(POOL_BYTES));
    offset = 0;
  }
  let s = 'req_';
  for (let i = offset; i < offset + 21; i++) s += ALPHABET[pool[i]! & 63];
  offset += 21;
  return s;
}

/** The request id to use: the caller's `x-request-id` when it is 1–128 of `[A-Za-z0-9._:-]`, else a new one. */
export function requestIdFor(header: HeaderValue): string {
  return typeof header === 'string' && SAFE_REQUEST_ID.test(header) ? header : newRequestId();
}

const OWN_REQUEST_ID = /^req_[A-Za-z0-9_-]{21}$/;

/**
 * {@link requestIdFor}, reusing `generated` (the id a host framework already gave the request, e.g.
 * Fastify's `request.id` from a `genReqId` calling {@link newRequestId}) when there is no safe
 * header and it is one of ours (`req_` + 21 characters), so the host's log lines carry the id of the
 * answer's `x-request-id`; else a new id.
 */
export function requestIdReusing(header: HeaderValue, generated: string): string {
  if (typeof header === 'string' && SAFE_REQUEST_ID.test(header)) return header;
  return OWN_REQUEST_ID.test(generated) ? generated : newRequestId();
}

/** The credential a request presents: the API key secret (or undefined) and, for a service key, the account it acts as. */
export interface RequestCredentials {
  /** `Authorization: Bearer <key>` (preferred) or `x-api-key: <key>`; undefined when neither is given. */
  apiKey: string | undefined;
  /** `x-account-id`: the account a service key acts as; undefined when absent or empty. */
  actingAccountId: string | undefined;
  /** `anthropic-workspace-id` (sent by `@anthropic-ai/sdk` when given a `workspace_id`): must name the key's workspace. */
  options: { workspace_id?: string };
}

/**
 * Reads the credentials of a request: a non-empty `Bearer` token wins over `x-api-key`;
 * `x-account-id` names the acting account of a service key; `anthropic-workspace-id` the workspace
 * the caller expects. Pass them to `PlatformService.authenticate(apiKey, actingAccountId, options)`,
 * which throws 401/403 as the spec says.
 */
export function readCredentials(headers: { authorization?: HeaderValue; 'x-api-key'?: HeaderValue; 'x-account-id'?: HeaderValue; 'anthropic-workspace-id'?: HeaderValue }): RequestCredentials {
  const auth = headers.authorization;
  // `Bearer <key>` as clients send it, without a regular expression; any other form through one.
  const bearer = typeof auth !== 'string' ? undefined
    : auth.startsWith('Bearer ') ? auth.slice(7).trim() : /^Bearer\s+(.*)$/is.exec(auth)?.[1]?.trim();
  const header = headers['x-api-key'];
  const apiKey = typeof header === 'string' ? header : undefined;
  const asAccount = headers['x-account-id'];
  const workspace = headers['anthropic-workspace-id'];
  return {
    apiKey: bearer || apiKey || undefined,
    actingAccountId: typeof asAccount === 'string' && asAccount !== '' ? asAccount : undefined,
    options: typeof workspace === 'string' && workspace !== '' ? { workspace_id: workspace } : {},
  };
}

/** What {@link authenticateRequest} reads of a request. */
export interface AuthenticateRequestInput {
  /** The request headers, lower-case names (`authorization`, `x-api-key`, `x-account-id`, `anthropic-workspace-id`). */
  headers: Record<string, HeaderValue>;
  /** The request target (path and query, or a whole URL): its `access_token` query parameter is read. */
  url: string;
  /** The route is an event stream (`HttpRoute.stream`): the only routes a stream token opens. */
  stream: boolean;
  /** Check a stream token's expiry (default true; false when an open stream re-checks before a delivery). */
  expiry?: boolean;
}

/** The part of `PlatformService` {@link authenticateRequest} calls. */
export interface RequestAuthenticator {
  authenticate(secret: string | undefined, as_account_id?: string, options?: { workspace_id?: string }): Promise<Principal>;
  authenticateStreamToken(token: string, options?: { expiry?: boolean; workspace_id?: string }): Promise<Principal>;
  /** Optional: the check without I/O of {@link cachedRequestAuthentication} (`PlatformService.cachedAuthentication`). */
  cachedAuthentication?(
    credential: { api_key: string; as_account_id?: string | undefined } | { stream_token: string },
    options?: { workspace_id?: string },
  ): (() => Readonly<Principal> | undefined) | undefined;
}

/** The `access_token` values of a request target (none, one, or several). */
function accessTokensOf(url: string): string[] {
  const at = url.indexOf('?');
  if (at < 0 || !url.includes('access_token', at)) return [];
  return new URLSearchParams(url.slice(at + 1)).getAll('access_token');
}

/**
 * Authenticates a request the one way every adapter does (platform.md "Identity and credentials",
 * "Browsers"): an API key as `Authorization: Bearer` or `x-api-key` (with `x-account-id` for a
 * service key); on an event stream route, a stream token instead — as the RFC 6750 `access_token`
 * query parameter (what an `EventSource` can send) or as the bearer. An API key is never accepted
 * in a URL, and a stream token nowhere but on a stream route.
 * @throws InboxKitError `authentication_required` (401: nothing given, or an `Authorization` header
 *   that is not `Bearer <key>`), `invalid_credentials` (401:
 *   unknown, revoked, expired; an `access_token` on another route or holding an API key),
 *   `validation_error` (400: `access_token` repeated, or sent together with another credential),
 *   `permission_denied` (403), `account_not_found` (404) as `PlatformService.authenticate`.
 */
export async function authenticateRequest(platform: RequestAuthenticator, input: AuthenticateRequestInput): Promise<Principal> {
  const { apiKey, actingAccountId, options, token } = presentedCredential(input);
  if (token === undefined) return platform.authenticate(apiKey, actingAccountId, options);
  const principal = await platform.authenticateStreamToken(token, { ...options, expiry: input.expiry !== false });
  // The token fixed the acting account; a header naming another is refused as for a standard key.
  if (actingAccountId !== undefined && actingAccountId !== principal.account_id) {
    throw new InboxKitError('permission_denied', 'A stream token acts as the account it was issued for');
  }
  return principal;
}

/**
 * {@link authenticateRequest} of a credential presented again and again (an open stream's before
 * every delivery), answered without I/O: a function giving the principal `authenticateRequest(platform,
 * input)` would give from the principal cache now, or undefined when it would have to read storage
 * (call `authenticateRequest` then: it throws what it throws). Undefined (no such check) when the
 * platform has no `cachedAuthentication`, the credential is malformed or missing, or a stream
 * token's expiry is to be checked (`input.expiry` not false). Spec platform.md "Authorised as of now".
 */
export function cachedRequestAuthentication(platform: RequestAuthenticator, input: AuthenticateRequestInput): (() => Readonly<Principal> | undefined) | undefined {
  if (platform.cachedAuthentication === undefined) return undefined;
  let presented: PresentedCredential;
  try {
    presented = presentedCredential(input);
  } catch {
    return undefined;
  }
  const { apiKey, actingAccountId, options, token } = presented;
  if (token === undefined) return apiKey === undefined ? undefined : platform.cachedAuthentication({ api_key: apiKey, as_account_id: actingAccountId }, options);
  if (input.expiry !== false) return undefined;
  const cached = platform.cachedAuthentication({ stream_token: token }, options);
  if (cached === undefined || actingAccountId === undefined) return cached;
  return () => {
    const principal = cached();
    return principal?.account_id === actingAccountId ? principal : undefined;
  };
}

/** What a request presents: its {@link RequestCredentials}, and the stream token when that is the credential. */
interface PresentedCredential extends RequestCredentials {
  token: string | undefined;
}

/** The credential of a request as {@link authenticateRequest} reads it; throws its 400/401 for a malformed one. */
function presentedCredential(input: AuthenticateRequestInput): PresentedCredential {
  const credentials = readCredentials(input.headers);
  const { apiKey } = credentials;
  const tokens = accessTokensOf(input.url);
  let token: string | undefined;
  if (tokens.length > 0) {
    if (!input.stream) {
      throw new InboxKitError('invalid_credentials', 'access_token (a stream token) is accepted on the event stream routes only; send the API key as Authorization: Bearer <key>');
    }
    if (tokens.length > 1) throw new InboxKitError('validation_error', 'access_token is given more than once', [{ path: 'querystring.access_token', message: 'give one token' }]);
    if (apiKey !== undefined) {
      throw new InboxKitError('validation_error', 'Send one credential: access_token or an Authorization / x-api-key header, not both', [{ path: 'querystring.access_token', message: 'another credential is sent in a header' }]);
    }
    token = tokens[0]!;
    if (!isStreamToken(token)) throw new InboxKitError('invalid_credentials', 'access_token must be a stream token (POST /stream-tokens); an API key is never accepted in a URL');
  } else if (apiKey !== undefined && isStreamToken(apiKey)) {
    if (!input.stream) throw new InboxKitError('invalid_credentials', 'A stream token is accepted on the event stream routes only; send the API key');
    token = apiKey;
  }
  if (token === undefined) {
    const auth = input.headers.authorization;
    // A key sent as `Authorization: <key>` or another scheme: say what the header must look like.
    if (apiKey === undefined && typeof auth === 'string' && auth.trim() !== '') {
      throw new InboxKitError('authentication_required', 'The Authorization header must be `Bearer <api key>` (or send the key as x-api-key)');
    }
  }
  // `readCredentials` made `credentials` for this call alone: the token goes on it (no copy per request).
  (credentials as PresentedCredential).token = token;
  return credentials as PresentedCredential;
}
