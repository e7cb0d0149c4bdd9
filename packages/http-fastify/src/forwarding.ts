/**
 * Attempt routing over HTTP (live-inbox.md "Scale"): the {@link AttemptForwarder} that replays a
 * Live Inbox request (or an interrupt) on the process owning the attempt, and the check of the
 * internal credential a forwarded request carries.
 *
 * A forwarded request carries the shared secret in `x-inbox-kit-forward` and the original
 * principal in `x-inbox-kit-forward-workspace-id`, `-account-id`, `-key-id` and `-key-kind`. The
 * receiving process trusts those headers only when the secret matches (compared in constant time)
 * and only on the routes that can be forwarded; otherwise they are ignored and the request is
 * authenticated as any other. A request accepted as forwarded is answered where it lands (never
 * forwarded again).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { AttemptForwarder, ForwardedReply, LiveInboxOperation, Principal } from '@inbox-kit/core';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** Header names of a forwarded request. */
export const FORWARD_HEADERS = {
  secret: 'x-inbox-kit-forward',
  workspaceId: 'x-inbox-kit-forward-workspace-id',
  accountId: 'x-inbox-kit-forward-account-id',
  keyId: 'x-inbox-kit-forward-key-id',
  keyKind: 'x-inbox-kit-forward-key-kind',
} as const;

/** Default time the owner has to answer a forwarded request: 2 s. */
export const DEFAULT_FORWARD_TIMEOUT_MS = 2_000;

/** Options of {@link createHttpAttemptForwarder}. */
export interface HttpAttemptForwarderOptions {
  /** The secret shared by every process of the deployment (the owner's `forwarding.secret`). */
  secret: string;
  /** Deadline for the owner's whole answer, in ms (default 2,000); past it the forward fails. */
  timeoutMs?: number;
  /** The `fetch` to use (default: Node's global `fetch`). */
  fetch?: typeof fetch;
}

/** Method, path (under the owner's base URL) and JSON body of an operation. */
function requestOf(session_id: string, op: LiveInboxOperation): { method: string; path: string; body?: unknown } {
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

/**
 * An {@link AttemptForwarder} over HTTP: sends the operation to `owner.host_url` with the same
 * method, path and JSON body as the route it came in on, the request id, and the internal
 * credential; resolves with the owner's status, `Content-Type` and body, whatever the status.
 * Rejects on a network error or when the answer does not arrive within `timeoutMs`.
 */
export function createHttpAttemptForwarder(options: HttpAttemptForwarderOptions): AttemptForwarder {
  if (options.secret === '') throw new TypeError('createHttpAttemptForwarder: secret must not be empty');
  const timeoutMs = options.timeoutMs ?? DEFAULT_FORWARD_TIMEOUT_MS;
  const doFetch = options.fetch ?? globalThis.fetch;
  return {
    async forward({ owner, session_id, operation, principal, request_id }): Promise<ForwardedReply> {
      const { method, path, body } = requestOf(session_id, operation);
      const headers: Record<string, string> = {
        [FORWARD_HEADERS.secret]: options.secret,
        [FORWARD_HEADERS.workspaceId]: principal.workspace_id,
        [FORWARD_HEADERS.accountId]: principal.account_id,
        [FORWARD_HEADERS.keyId]: principal.key_id,
        [FORWARD_HEADERS.keyKind]: principal.key_kind,
        'x-request-id': request_id,
        accept: 'application/json',
      };
      if (body !== undefined) headers['content-type'] = 'application/json';
      const signal = AbortSignal.timeout(timeoutMs);
      const res = await doFetch(`${owner.host_url.replace(/\/+$/, '')}${path}`, {
        method, headers, body: body === undefined ? undefined : JSON.stringify(body), redirect: 'manual', signal,
      });
      return { status: res.status, content_type: res.headers.get('content-type'), body: await res.text() };
    },
  };
}

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();
const SAFE_ID = /^[A-Za-z0-9._:-]{1,256}$/;

/**
 * The principal a forwarded request carries, or `undefined` when the request does not carry the
 * right `secret` (or its principal headers are malformed): such a request is an ordinary one.
 */
export function forwardedPrincipal(request: FastifyRequest, secret: string): Principal | undefined {
  const h = request.headers;
  const given = h[FORWARD_HEADERS.secret];
  if (typeof given !== 'string' || !timingSafeEqual(digest(given), digest(secret))) return undefined;
  const [workspace_id, account_id, key_id, key_kind] = [h[FORWARD_HEADERS.workspaceId], h[FORWARD_HEADERS.accountId], h[FORWARD_HEADERS.keyId], h[FORWARD_HEADERS.keyKind]];
  if (typeof workspace_id !== 'string' || !SAFE_ID.test(workspace_id)) return undefined;
  if (typeof account_id !== 'string' || !SAFE_ID.test(account_id)) return undefined;
  if (typeof key_id !== 'string' || !SAFE_ID.test(key_id)) return undefined;
  if (key_kind !== 'standard' && key_kind !== 'service') return undefined;
  return { workspace_id, account_id, key_id, key_kind };
}

/** Sends the owner's answer unchanged (status, `Content-Type`, body); this process's `x-request-id` stays. */
export function relayForwardedReply(reply: FastifyReply, forwarded: ForwardedReply): FastifyReply {
  void reply.code(forwarded.status);
  if (forwarded.content_type !== null) void reply.header('content-type', forwarded.content_type);
  return forwarded.body === '' ? reply.send() : reply.send(Buffer.from(forwarded.body, 'utf8'));
}
