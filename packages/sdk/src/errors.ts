/**
 * The SDK's error types: {@link InboxKitApiError}, read from the server's single error envelope
 * `{ "type": "error", "error": { type, code, message, details, request_id } }`, and its 410
 * subclass {@link LiveInboxInactiveError}. Spec: platform.md "Errors", live-inbox.md "Errors".
 */

/** The Anthropic-style `error.type` the server uses per status, for bodies that do not say. */
const TYPE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  409: 'invalid_request_error',
  410: 'invalid_request_error',
  413: 'request_too_large',
  415: 'invalid_request_error',
  431: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  503: 'overloaded_error',
};

/** What an {@link InboxKitApiError} is built from. */
export interface InboxKitApiErrorInit {
  status: number;
  code: string;
  type: string;
  message: string;
  requestId: string | null;
  details: unknown[];
  /** The parsed JSON body, or the raw text when the body was not JSON. */
  body?: unknown;
}

/**
 * A non-2xx answer from an inbox-kit server. `code` is the fine-grained code (e.g.
 * `project_inbox_invalid_transition`, or `http_<status>` when the body carried none), `type` the
 * Anthropic-style kind (e.g. `not_found_error`), `requestId` the `x-request-id` to quote in a bug
 * report, `details` the per-field issues of a 400. Spec: platform.md "Errors".
 */
export class InboxKitApiError extends Error {
  override name = 'InboxKitApiError';
  /** HTTP status. */
  readonly status: number;
  /** Fine-grained code, or `http_<status>`. */
  readonly code: string;
  /** Anthropic-style kind, e.g. `invalid_request_error`. */
  readonly type: string;
  /** `error.request_id` or the `x-request-id` header; `null` when neither was present. */
  readonly requestId: string | null;
  /** `error.details` (e.g. `[{ path, message }]` for a 400), `[]` when absent. */
  readonly details: unknown[];
  /** The parsed body (or raw text when it was not JSON). */
  readonly body: unknown;

  constructor(init: InboxKitApiErrorInit) {
    super(init.message);
    this.status = init.status;
    this.code = init.code;
    this.type = init.type;
    this.requestId = init.requestId;
    this.details = init.details;
    this.body = init.body;
  }
}

/**
 * 410 Gone from the Live Inbox: no native attempt accepts live input (idle Session, ACP executor,
 * attempt just closed). Stop editing and send the content as a durable Session event instead,
 * e.g. `client.sessions.events.send(sessionId, [{ type: 'user.message', content }])`, or use
 * `client.sessions.liveInbox.queueOrSend`. Spec: live-inbox.md "Errors".
 */
export class LiveInboxInactiveError extends InboxKitApiError {
  override name = 'LiveInboxInactiveError';

  constructor(init: InboxKitApiErrorInit) {
    super({
      ...init,
      message:
        `${init.message} — no native attempt accepts live input for this Session. ` +
        `Send the content as a durable Session event instead, e.g. ` +
        `client.sessions.events.send(sessionId, [{ type: 'user.message', content }]).`,
    });
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/**
 * Reads a non-2xx `Response` into an {@link InboxKitApiError} ({@link LiveInboxInactiveError} for
 * 410). Never throws: a body that is not JSON, or JSON without the envelope, still gives an error
 * with `code` = `http_<status>` and a message naming the status.
 */
export async function errorFromResponse(response: Response): Promise<InboxKitApiError> {
  let text = '';
  try {
    text = await response.text();
  } catch {
    // body unreadable: fall through with what the status line says
  }
  let body: unknown = text;
  if (text.length > 0) {
    try {
      body = JSON.parse(text) as unknown;
    } catch {
      body = text;
    }
  }
  const envelope = isRecord(body) && isRecord(body['error']) ? body['error'] : undefined;
  const status = response.status;
  const statusLine = `HTTP ${status}${response.statusText ? ` ${response.statusText}` : ''}`;
  const fallbackMessage = typeof body === 'string' && body.trim().length > 0 ? `${statusLine}: ${body.trim().slice(0, 200)}` : statusLine;

  const init: InboxKitApiErrorInit = {
    status,
    code: str(envelope?.['code']) ?? `http_${status}`,
    type: str(envelope?.['type']) ?? TYPE_BY_STATUS[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error'),
    message: str(envelope?.['message']) ?? fallbackMessage,
    requestId: str(envelope?.['request_id']) ?? response.headers.get('x-request-id') ?? null,
    details: Array.isArray(envelope?.['details']) ? envelope['details'] : [],
    body,
  };
  return status === 410 ? new LiveInboxInactiveError(init) : new InboxKitApiError(init);
}
