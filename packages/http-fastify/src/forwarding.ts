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
import type { AttemptForwarder, ForwardedReply, Principal } from '@inbox-kit/core';
import { DEFAULT_FORWARD_TIMEOUT_MS, forwardHeadersFor, forwardRequestOf, forwardedPrincipal as principalFromHeaders } from '@inbox-kit/core/http';
import type { FastifyReply, FastifyRequest } from 'fastify';

export { DEFAULT_FORWARD_TIMEOUT_MS, FORWARD_HEADERS } from '@inbox-kit/core/http';

/** Options of {@link createHttpAttemptForwarder}. */
export interface HttpAttemptForwarderOptions {
  /** The secret shared by every process of the deployment (the owner's `forwarding.secret`). */
  secret: string;
  /** Deadline for the owner's whole answer, in ms (default 2,000); past it the forward fails. */
  timeoutMs?: number;
  /** The `fetch` to use (default: Node's global `fetch`). */
  fetch?: typeof fetch;
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
      const { method, path, body } = forwardRequestOf(session_id, operation);
      const headers: Record<string, string> = {
        ...forwardHeadersFor(options.secret, principal),
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

/**
 * The principal a forwarded request carries, or `undefined` when the request does not carry the
 * right `secret` (or its principal headers are malformed): such a request is an ordinary one.
 */
export function forwardedPrincipal(request: FastifyRequest, secret: string): Principal | undefined {
  return principalFromHeaders(request.headers, secret);
}

/** Sends the owner's answer unchanged (status, `Content-Type`, body); this process's `x-request-id` stays. */
export function relayForwardedReply(reply: FastifyReply, forwarded: ForwardedReply): FastifyReply {
  void reply.code(forwarded.status);
  if (forwarded.content_type !== null) void reply.header('content-type', forwarded.content_type);
  return forwarded.body === '' ? reply.send() : reply.send(Buffer.from(forwarded.body, 'utf8'));
}
