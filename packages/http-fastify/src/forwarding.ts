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
import type { ForwardedReply, Principal } from '@inbox-kit/core';
import { forwardedPrincipal as principalFromHeaders } from '@inbox-kit/core/http';
import type { FastifyReply, FastifyRequest } from 'fastify';

export { DEFAULT_FORWARD_TIMEOUT_MS, FORWARD_HEADERS } from '@inbox-kit/core/http';

/**
 * `createHttpAttemptForwarder` lives in the core (`@inbox-kit/core/http`: it needs `fetch` only,
 * and every adapter's `forwarding.secret` accepts what it sends); re-exported here for existing
 * imports.
 */
export { createHttpAttemptForwarder, type HttpAttemptForwarderOptions } from '@inbox-kit/core/http';

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
