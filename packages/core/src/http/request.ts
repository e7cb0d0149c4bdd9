/**
 * Request ids and credentials (platform.md "Identity and credentials", "Errors"): the id every
 * response carries as `x-request-id`, and how an API key and a service key's acting account are
 * read from the headers. Header names are lower-case, as Node delivers them.
 */

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
  const bearer = typeof auth === 'string' ? /^Bearer\s+(.*)$/is.exec(auth)?.[1]?.trim() : undefined;
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
