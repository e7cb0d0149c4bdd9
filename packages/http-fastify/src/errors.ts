/**
 * The one error envelope of every route, and the one table that maps a domain error code to an
 * HTTP status (platform.md "Errors"):
 * `{ "type": "error", "error": { "type", "code", "message", "details", "request_id" } }`.
 * A 500 never shows a stack, SQL or the original message.
 */
import { isInboxKitError, type ErrorCode, type ErrorDetail } from '@inbox-kit/core';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';

/** HTTP status of every domain error code. */
export const STATUS_BY_CODE: Record<ErrorCode, number> = {
  validation_error: 400,
  invalid_cursor: 400,
  project_inbox_payload_invalid: 400,
  unsupported_capability: 400,
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
  conflict: 409,
  project_archived: 409,
  session_archived: 409,
  session_running: 409,
  project_inbox_invalid_transition: 409,
  project_inbox_source_scope_mismatch: 409,
  live_inbox_order_conflict: 409,
  idempotency_key_reused: 409,
  live_inbox_full: 409,
  live_inbox_inactive: 410,
  payload_too_large: 413,
  project_inbox_payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  too_many_streams: 429,
  internal_error: 500,
  session_ownership_unavailable: 500,
  overloaded: 503,
};

/** The Anthropic-style `error.type` of each status (what Managed-Agents clients read). */
export function errorKind(status: number): string {
  switch (status) {
    case 400: case 409: case 410: case 415: return 'invalid_request_error';
    case 401: return 'authentication_error';
    case 403: return 'permission_error';
    case 404: return 'not_found_error';
    case 413: return 'request_too_large';
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

interface ZodLikeValidationIssue {
  instancePath?: string;
  message?: string;
  keyword?: string;
}

/** Maps any thrown value to `[status, envelope]`; unknown errors become a bare 500. */
export function toEnvelope(error: unknown, request_id: string): { status: number; body: ErrorEnvelope; unexpected: boolean } {
  if (isInboxKitError(error)) {
    const status = STATUS_BY_CODE[error.code] ?? 500;
    const message = status >= 500 ? 'Internal server error' : error.message;
    return { status, body: envelope(status, error.code, message, status >= 500 ? [] : error.details, request_id), unexpected: false };
  }
  const fe = error as Partial<FastifyError> & { validation?: ZodLikeValidationIssue[]; validationContext?: string };
  if (Array.isArray(fe.validation)) {
    const where = fe.validationContext ?? 'request';
    const details = fe.validation.map((v) => ({
      path: [where, ...(v.instancePath ?? '').split('/').filter(Boolean)].join('.'),
      message: v.message ?? 'is invalid',
      ...(v.keyword ? { code: v.keyword } : {}),
    }));
    return { status: 400, body: envelope(400, 'validation_error', `Invalid ${where}`, details, request_id), unexpected: false };
  }
  const status = typeof fe.statusCode === 'number' ? fe.statusCode : 500;
  if (status === 414) return { status: 400, body: envelope(400, 'validation_error', 'A path parameter is too long', [], request_id), unexpected: false };
  if (status === 413) return { status, body: envelope(413, 'payload_too_large', 'Request body is too large', [], request_id), unexpected: false };
  if (status === 415) return { status, body: envelope(415, 'unsupported_media_type', 'Unsupported Content-Type; send application/json', [], request_id), unexpected: false };
  if (status === 429) return { status, body: envelope(429, 'rate_limited', 'Too many requests', [], request_id), unexpected: false };
  if (status === 503) return { status, body: envelope(503, 'overloaded', 'Server is overloaded; retry later', [], request_id), unexpected: false };
  if (status >= 400 && status < 500) {
    // Fastify's own 4xx (malformed JSON, empty JSON body, prototype poisoning, bad headers).
    const message = typeof fe.message === 'string' && fe.message.length < 300 ? fe.message : 'Malformed request';
    const code = status === 404 ? 'not_found' : 'validation_error';
    return { status, body: envelope(status, code, message, [], request_id), unexpected: false };
  }
  return { status: 500, body: envelope(500, 'internal_error', 'Internal server error', [], request_id), unexpected: true };
}

/** Fastify error handler: every error leaves in the envelope; unexpected ones are logged, not shown. */
export function errorHandler(this: unknown, error: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const { status, body, unexpected } = toEnvelope(error, request.requestId);
  if (unexpected) request.log.error({ err: error }, 'unexpected error');
  void reply.code(status).type('application/json; charset=utf-8').send(body);
}
