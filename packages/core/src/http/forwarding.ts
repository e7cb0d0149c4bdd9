/**
 * Attempt routing over HTTP (live-inbox.md "Scale"): which request replays an operation on the
 * process owning the attempt, and the check of the internal credential a forwarded request
 * carries. A forwarded request carries the shared secret in `x-inbox-kit-forward` and the original
 * principal in `x-inbox-kit-forward-workspace-id`, `-account-id`, `-key-id` and `-key-kind`. Those
 * headers are trusted only when the secret matches (constant-time) and only on routes the table
 * marks `forwardable`; otherwise the request is authenticated as any other.
 */
import type { Principal } from '../context.js';
import { constantTimeEqual } from '../platform/keys.js';
import type { LiveInboxOperation } from '../sessions/routing.js';
import type { HeaderValue } from './request.js';

/** Header names of a forwarded request. */
export const FORWARD_HEADERS = {
  secret: 'x-inbox-kit-forward',
  workspaceId: 'x-inbox-kit-forward-workspace-id',
  accountId: 'x-inbox-kit-forward-account-id',
  keyId: 'x-inbox-kit-forward-key-id',
  keyKind: 'x-inbox-kit-forward-key-kind',
} as const;

/** Default time the owner has to answer a forwarded request: 2,000 ms. */
export const DEFAULT_FORWARD_TIMEOUT_MS = 2_000;

/** Method, path (under the owner's base URL) and JSON body of an operation: the route it came in on. */
export function forwardRequestOf(session_id: string, op: LiveInboxOperation): { method: string; path: string; body?: unknown } {
  const base = `/v1/awaken/sessions/${encodeURIComponent(session_id)}/live-inbox`;
  switch (op.type) {
    case 'snapshot': return { method: 'GET', path: base };
    case 'queue': return { method: 'POST', path: base, body: op.body };
    case 'replace': return { method: 'PUT', path: `${base}/${String(op.message_id)}`, body: op.body };
    case 'withdraw': return { method: 'DELETE', path: `${base}/${String(op.message_id)}` };
    case 'reorder': return { method: 'PUT', path: `${base}/order`, body: op.body };
    case 'send_events': return { method: 'POST', path: `/v1/sessions/${encodeURIComponent(session_id)}/events`, body: op.body };
  }
}

/** The headers a forwarded request carries (besides `x-request-id`, `accept` and `content-type`). */
export function forwardHeadersFor(secret: string, principal: Principal): Record<string, string> {
  return {
    [FORWARD_HEADERS.secret]: secret,
    [FORWARD_HEADERS.workspaceId]: principal.workspace_id,
    [FORWARD_HEADERS.accountId]: principal.account_id,
    [FORWARD_HEADERS.keyId]: principal.key_id,
    [FORWARD_HEADERS.keyKind]: principal.key_kind,
  };
}

const SAFE_ID = /^[A-Za-z0-9._:-]{1,256}$/;

/**
 * The principal a forwarded request carries, or `undefined` when it does not carry the right
 * `secret` (compared in constant time) or its principal headers are malformed: such a request is
 * an ordinary one. `headers` are lower-case names.
 */
export function forwardedPrincipal(headers: Record<string, HeaderValue>, secret: string): Principal | undefined {
  const given = headers[FORWARD_HEADERS.secret];
  if (typeof given !== 'string' || !constantTimeEqual(given, secret)) return undefined;
  const [workspace_id, account_id, key_id, key_kind] = [
    headers[FORWARD_HEADERS.workspaceId], headers[FORWARD_HEADERS.accountId], headers[FORWARD_HEADERS.keyId], headers[FORWARD_HEADERS.keyKind],
  ];
  if (typeof workspace_id !== 'string' || !SAFE_ID.test(workspace_id)) return undefined;
  if (typeof account_id !== 'string' || !SAFE_ID.test(account_id)) return undefined;
  if (typeof key_id !== 'string' || !SAFE_ID.test(key_id)) return undefined;
  if (key_kind !== 'standard' && key_kind !== 'service' && key_kind !== 'admin') return undefined;
  return { workspace_id, account_id, key_id, key_kind };
}
