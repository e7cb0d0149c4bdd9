/**
 * Typed domain errors: one class, a closed set of codes. The HTTP status for each code is chosen
 * in one table at the edge (`@inbox-kit/http-fastify`), never here.
 *
 * Spec: platform.md "Errors", project-inbox.md "Error codes", live-inbox.md "Errors".
 */

/** Every error code inbox-kit can raise, grouped by the HTTP status the edge gives it. */
export const ERROR_CODES = [
  // 400
  'validation_error',
  'invalid_cursor',
  'project_inbox_payload_invalid',
  'unsupported_capability',
  'actions_pending',
  // 401
  'authentication_required',
  'invalid_credentials',
  // 403
  'permission_denied',
  'project_inbox_read_denied',
  'project_inbox_write_denied',
  'project_inbox_decide_denied',
  // 404
  'not_found',
  'project_not_found',
  'project_inbox_item_not_found',
  'session_not_found',
  'floor_not_found',
  'page_not_found',
  'account_not_found',
  'member_not_found',
  'live_inbox_message_not_found',
  'agent_not_found',
  'tool_use_not_found',
  'api_key_not_found',
  // 405
  'method_not_allowed',
  // 408
  'request_timeout',
  // 409
  'conflict',
  'project_archived',
  'session_archived',
  'session_running',
  'project_inbox_invalid_transition',
  'project_inbox_source_scope_mismatch',
  'live_inbox_order_conflict',
  'idempotency_key_reused',
  'live_inbox_full',
  'tool_use_already_resolved',
  'agent_archived',
  // 410
  'live_inbox_inactive',
  // 413
  'payload_too_large',
  'project_inbox_payload_too_large',
  // 415
  'unsupported_media_type',
  // 431
  'request_header_too_large',
  // 429
  'rate_limited',
  'too_many_streams',
  'too_many_runs',
  'too_many_bodies',
  'authentication_throttled',
  // 500
  'internal_error',
  'session_ownership_unavailable',
  // 503
  'overloaded',
  'storage_busy',
  'storage_unavailable',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** One problem in a request, as listed in `error.details`. `path` names the field (dot/array path). */
export interface ErrorDetail {
  path: string;
  message: string;
  code?: string;
}

/**
 * The only error type the core throws for expected failures. `code` is one of {@link ERROR_CODES};
 * `message` is safe to show a caller (never a stack, SQL or another tenant's id).
 */
export class InboxKitError extends Error {
  override readonly name = 'InboxKitError';
  readonly code: ErrorCode;
  readonly details: ErrorDetail[];
  /**
   * For a refusal that passes (429, 503): whole seconds after which a retry may succeed; the edge
   * sends it as `Retry-After` (platform.md "Per-caller bounds").
   */
  readonly retryAfterSeconds: number | undefined;

  constructor(code: ErrorCode, message: string, details: ErrorDetail[] = [], options?: { cause?: unknown; retryAfterSeconds?: number }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = details;
    this.retryAfterSeconds = options?.retryAfterSeconds === undefined ? undefined : Math.max(1, Math.ceil(options.retryAfterSeconds));
  }
}

/** True when `value` is an {@link InboxKitError} (also across duplicated module copies). */
export function isInboxKitError(value: unknown): value is InboxKitError {
  return (
    value instanceof InboxKitError ||
    (typeof value === 'object' && value !== null && (value as { name?: unknown }).name === 'InboxKitError' &&
      typeof (value as { code?: unknown }).code === 'string')
  );
}
