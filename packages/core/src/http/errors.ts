/**
 * The one HTTP error table and envelope (platform.md "Errors"): every domain error code has one
 * HTTP status, every status one Anthropic-style `error.type`, and every error leaves as
 * `{ "type": "error", "error": { "type", "code", "message", "details", "request_id" } }`.
 * Adapters map whatever they catch through {@link envelopeOf}; they keep no table of their own.
 */
import { z } from 'zod';
import { ERROR_CODES, isInboxKitError, type ErrorCode, type ErrorDetail } from '../errors.js';

/** HTTP status of every domain error code. */
export const STATUS_BY_CODE: Record<ErrorCode, number> = {
  validation_error: 400,
  invalid_cursor: 400,
  project_inbox_payload_invalid: 400,
  unsupported_capability: 400,
  actions_pending: 400,
  authentication_required: 401,
  invalid_credentials: 401,
  permission_denied: 403,
  project_inbox_read_denied: 403,
  project_inbox_write_denied: 403,
  project_inbox_decide_denied: 403,
  not_found: 404,
  project_not_found: 404,
  project_inbox_item_not_found: 404,
  session_not_found: 404,
  floor_not_found: 404,
  page_not_found: 404,
  account_not_found: 404,
  member_not_found: 404,
  live_inbox_message_not_found: 404,
  agent_not_found: 404,
  tool_use_not_found: 404,
  api_key_not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  project_archived: 409,
  session_archived: 409,
  session_running: 409,
  project_inbox_invalid_transition: 409,
  project_inbox_source_scope_mismatch: 409,
  live_inbox_order_conflict: 409,
  idempotency_key_reused: 409,
  live_inbox_full: 409,
  tool_use_already_resolved: 409,
  agent_archived: 409,
  live_inbox_inactive: 410,
  payload_too_large: 413,
  project_inbox_payload_too_large: 413,
  unsupported_media_type: 415,
  request_header_too_large: 431,
  rate_limited: 429,
  too_many_streams: 429,
  too_many_runs: 429,
  too_many_bodies: 429,
  authentication_throttled: 429,
  internal_error: 500,
  session_ownership_unavailable: 500,
  overloaded: 503,
  storage_busy: 503,
  storage_unavailable: 503,
};

/**
 * `Retry-After` (seconds) of the codes that mean "try again shortly": the runtime is closing
 * (`overloaded`), the database is locked by another process past the write deadline
 * (`storage_busy`), the database cannot be reached now (`storage_unavailable`: a restart, a
 * fail-over may take a few seconds).
 */
export const RETRY_AFTER_BY_CODE: Partial<Record<ErrorCode, number>> = {
  overloaded: 5,
  storage_busy: 1,
  storage_unavailable: 5,
};

/**
 * The `x-should-retry` answer of a status (platform.md "Errors" → "Retries"), what the official
 * Anthropic SDKs (and ours) read before their own rules: `true` where a retry can succeed — 408
 * (the body was late), 429 (a rate or stream limit: after `Retry-After`), 503 (overloaded, storage
 * busy or unreachable: after `Retry-After`); `false` on every other 4xx (400, 401, 403, 404, 405,
 * 409, 410, 413, 415, 431: the same request gets the same answer — a 409 `session_running` retried
 * blindly could even delete a Session once its Run ended); `undefined` (no header: the client's
 * own rules) for other 5xx.
 */
export function shouldRetry(status: number): boolean | undefined {
  if (status === 408 || status === 429 || status === 503) return true;
  if (status >= 400 && status < 500) return false;
  return undefined;
}

/** The header carrying {@link shouldRetry}: `x-should-retry: true | false`. */
export const SHOULD_RETRY_HEADER = 'x-should-retry';

/**
 * The headers every error answer of `status` carries besides the envelope: `x-should-retry`
 * ({@link shouldRetry}) and, on a 429 or 503, `retry-after` (its code's {@link RETRY_AFTER_BY_CODE}, else
 * {@link DEFAULT_RETRY_AFTER_SECONDS}).
 */
export function errorHeaders(status: number, code?: string): Record<string, string> {
  const headers: Record<string, string> = {};
  const retry = shouldRetry(status);
  if (retry !== undefined) headers[SHOULD_RETRY_HEADER] = String(retry);
  const retryAfter = (code === undefined ? undefined : RETRY_AFTER_BY_CODE[code as ErrorCode])
    ?? (status === 429 || status === 503 ? DEFAULT_RETRY_AFTER_SECONDS : undefined);
  if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter);
  return headers;
}

/** The `error.type` values (by HTTP status; see {@link errorKind}). */
export const ERROR_KINDS = [
  'invalid_request_error', 'authentication_error', 'permission_error', 'not_found_error', 'request_too_large',
  'rate_limit_error', 'overloaded_error', 'api_error',
] as const;

/** One of {@link ERROR_KINDS}. */
export type ErrorKind = (typeof ERROR_KINDS)[number];

/** The Anthropic-style `error.type` of an HTTP status (what Managed-Agents clients read). */
export function errorKind(status: number): ErrorKind {
  switch (status) {
    case 400: case 409: case 410: case 415: return 'invalid_request_error';
    case 401: return 'authentication_error';
    case 403: return 'permission_error';
    case 404: return 'not_found_error';
    case 413: case 431: return 'request_too_large';
    case 429: return 'rate_limit_error';
    case 503: return 'overloaded_error';
    default: return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

/** The error envelope body. */
export interface ErrorEnvelope {
  type: 'error';
  error: { type: string; code: string; message: string; details: ErrorDetail[]; request_id: string };
}

/** Builds the envelope for a status and code. */
export function envelope(status: number, code: string, message: string, details: ErrorDetail[], request_id: string): ErrorEnvelope {
  return { type: 'error', error: { type: errorKind(status), code, message, details, request_id } };
}

/**
 * What an adapter sends for an error: the status, the envelope, whether it was unexpected (log it,
 * never show it), and the extra response headers (set them all: `x-should-retry` of every 4xx and
 * 408/429/503, `retry-after` on every 429 and 503; see {@link errorHeaders}).
 */
export interface ErrorAnswer {
  status: number;
  body: ErrorEnvelope;
  unexpected: boolean;
  /** Headers the answer carries besides the envelope's: `x-should-retry`, `retry-after` (seconds) on a 429 or 503, `allow` on a 405; adapters set them all. */
  headers?: Record<string, string>;
}

/** `Retry-After` (seconds) of a 429 or 503 whose error names none. */
export const DEFAULT_RETRY_AFTER_SECONDS = 1;

/**
 * The answer for a thrown value: an `InboxKitError` gets its code's status and, for a 429 or 503,
 * `retry-after` (its `retryAfterSeconds`, else its code's in {@link RETRY_AFTER_BY_CODE}, else
 * {@link DEFAULT_RETRY_AFTER_SECONDS}); a 500 never shows its message or details (a 503's are the
 * core's own words: why to retry, never a driver's message); anything else is a bare 500
 * `internal_error` marked `unexpected`.
 */
export function envelopeOf(error: unknown, request_id: string): ErrorAnswer {
  if (isInboxKitError(error)) {
    const status = STATUS_BY_CODE[error.code] ?? 500;
    // A 503 says what to wait for (its message and details are written for the caller: `/ready`
    // names its reason in `details[0].code`); other 5xx say nothing.
    const hidden = status >= 500 && status !== 503;
    const message = hidden ? 'Internal server error' : error.message;
    const answer: ErrorAnswer = { status, body: envelope(status, error.code, message, hidden ? [] : error.details, request_id), unexpected: false };
    // The error's own wait, else its code's, else (any 429 or 503) the default.
    const retryAfter = (error as { retryAfterSeconds?: number }).retryAfterSeconds ?? RETRY_AFTER_BY_CODE[error.code]
      ?? (status === 429 || status === 503 ? DEFAULT_RETRY_AFTER_SECONDS : undefined);
    if (retryAfter !== undefined) answer.headers = { 'retry-after': String(retryAfter) };
    return withRetryHeaders(answer);
  }
  return { status: 500, body: envelope(500, 'internal_error', 'Internal server error', [], request_id), unexpected: true };
}

/** `answer` with {@link errorHeaders} of its status and code added (its own headers kept). */
function withRetryHeaders(answer: ErrorAnswer): ErrorAnswer {
  const headers = { ...errorHeaders(answer.status, answer.body.error.code), ...answer.headers };
  return Object.keys(headers).length === 0 ? answer : { ...answer, headers };
}

/**
 * The answer for a status an HTTP framework raised itself (not a domain error): 413, 414 (as 400),
 * 415, 429, 503 and other 4xx keep their meaning in the envelope; anything else is a 500.
 * `message` is the framework's own, used for other 4xx when short (< 300 characters).
 */
export function envelopeForStatus(status: number, request_id: string, message?: string): ErrorAnswer {
  return withRetryHeaders(frameworkAnswer(status, request_id, message));
}

function frameworkAnswer(status: number, request_id: string, message?: string): ErrorAnswer {
  if (status === 414) return { status: 400, body: envelope(400, 'validation_error', 'A path parameter is too long', [], request_id), unexpected: false };
  if (status === 413) return { status, body: envelope(413, 'payload_too_large', 'Request body is too large', [], request_id), unexpected: false };
  if (status === 415) return { status, body: envelope(415, 'unsupported_media_type', 'Unsupported Content-Type; send application/json', [], request_id), unexpected: false };
  if (status === 429) return { status, body: envelope(429, 'rate_limited', 'Too many requests', [], request_id), unexpected: false };
  if (status === 503) return { status, body: envelope(503, 'overloaded', 'Server is overloaded; retry later', [], request_id), unexpected: false };
  if (status >= 400 && status < 500) {
    const text = typeof message === 'string' && message.length < 300 ? message : 'Malformed request';
    return { status, body: envelope(status, status === 404 ? 'not_found' : 'validation_error', text, [], request_id), unexpected: false };
  }
  return { status: 500, body: envelope(500, 'internal_error', 'Internal server error', [], request_id), unexpected: true };
}

/** The 404 `not_found` envelope for a route that does not exist (`path` without its query). */
export function routeNotFound(method: string, path: string, request_id: string): ErrorEnvelope {
  return envelope(404, 'not_found', `Route ${method} ${path.split('?')[0]} not found`, [], request_id);
}

/** The whole answer for a route that does not exist: 404 {@link routeNotFound} with `x-should-retry: false`. */
export function routeNotFoundAnswer(method: string, path: string, request_id: string): ErrorAnswer {
  return withRetryHeaders({ status: 404, body: routeNotFound(method, path, request_id), unexpected: false });
}

/** One problem of a request, as listed in `error.details`. */
export const errorDetailSchema = z.object({
  path: z.string().describe('The field, as a dot path (`body.title`, `querystring.limit`)'),
  message: z.string(),
  code: z.string().optional().describe('A machine-readable reason, when there is one'),
});

/**
 * The error envelope every route answers every error with (platform.md "Errors"):
 * `{ "type": "error", "error": { type, code, message, details, request_id } }`.
 */
export const errorEnvelopeSchema = z
  .object({
    type: z.literal('error'),
    error: z.object({
      type: z.enum(ERROR_KINDS).describe('The error family, chosen by the HTTP status'),
      code: z.enum(ERROR_CODES).describe('The precise reason; the HTTP status follows from it'),
      message: z.string().describe('Safe to show; never a stack, SQL or another tenant\'s id'),
      details: z.array(errorDetailSchema),
      request_id: z.string().describe('Also sent as the `x-request-id` and `request-id` headers'),
    }),
  })
  .describe('The error envelope');

const CLIENT_ERRORS: Record<string, readonly [number, string, string, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'request_header_too_large', 'The request line or headers are too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'request_timeout', 'The request took too long to arrive'],
};
const MALFORMED: readonly [number, string, string, string] = [400, 'Bad Request', 'validation_error', 'Malformed HTTP request'];

/**
 * The raw HTTP/1.1 answer (status line, headers, envelope body; `Connection: close`) to a request
 * Node's HTTP parser refused before any framework saw it (the server's `clientError` event):
 * `HPE_HEADER_OVERFLOW` → 431 `request_header_too_large`, `ERR_HTTP_REQUEST_TIMEOUT` → 408
 * `request_timeout`, any other code → 400 `validation_error`. Adapters write it to the socket, then
 * destroy the socket. Content-Length is in bytes. (platform.md "Errors".)
 */
export function clientErrorResponse(errorCode: string | undefined, request_id: string): string {
  const [status, reason, code, message] = (errorCode !== undefined ? CLIENT_ERRORS[errorCode] : undefined) ?? MALFORMED;
  const body = JSON.stringify(envelope(status, code, message, [], request_id));
  const extra = Object.entries(errorHeaders(status, code)).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  return `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${new TextEncoder().encode(body).byteLength}\r\n`
    + `x-request-id: ${request_id}\r\nrequest-id: ${request_id}\r\n${extra}Connection: close\r\n\r\n${body}`;
}
