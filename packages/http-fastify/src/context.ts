/**
 * Request decorations: the request id every response carries as `x-request-id`, and the
 * authenticated caller. Spec: platform.md "Identity and credentials", "Errors".
 */
import type { Principal, RequestContext } from '@inbox-kit/core';
import { InboxKitError } from '@inbox-kit/core';
import type { FastifyReply, FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** `req_…`, or the caller's own `x-request-id` when it is 1–128 safe characters. */
    requestId: string;
    /** The authenticated caller; null on public routes. */
    principal: Principal | null;
    /** True when another process forwarded this request to us (attempt routing); it is never forwarded again. */
    forwarded: boolean;
    /** The request's observation (the `observer` option), or null when nobody observes. */
    observation: import('@inbox-kit/core/http').ObservedRequest | null;
  }
  interface FastifyContextConfig {
    /** Public routes skip authentication (health, OpenAPI). */
    public?: boolean;
    /** Routes another process may forward to this one (attempt routing: Live Inbox, Session events). */
    forwardable?: boolean;
  }
}

import { newRequestId, requestIdFor } from '@inbox-kit/core/http';

export { newRequestId, requestIdFor };

const OWN_REQUEST_ID = /^req_[A-Za-z0-9_-]{21}$/;

/**
 * {@link requestIdFor}, reusing `generated` (Fastify's `request.id`) when there is no safe header
 * and it is one of ours (`req_` + 21 characters): with `createServer`'s `genReqId` the id in the
 * log lines is then the `x-request-id` of the response.
 */
export function requestIdOf(header: string | string[] | undefined, generated: string): string {
  if (typeof header === 'string') {
    const id = requestIdFor(header);
    if (id === header) return header;
  }
  return OWN_REQUEST_ID.test(generated) ? generated : newRequestId();
}

/**
 * Sets the request id headers of an answer: `x-request-id` and `request-id` (the one
 * `@anthropic-ai/sdk` reads into `err.requestID`), the same value. Every place that answers uses
 * it; a hijacked reply (an SSE stream) writes both in its own head (`sse.ts`). Without an id
 * (`undefined` or empty) it sets nothing.
 */
export function setRequestIdHeaders(reply: FastifyReply, request_id: string | undefined): FastifyReply {
  // Never an undefined header (Node throws ERR_HTTP_INVALID_HEADER_VALUE): no id, no headers.
  if (!request_id) return reply;
  return reply.header('x-request-id', request_id).header('request-id', request_id);
}

/**
 * The use-case context of an authenticated request.
 * @throws InboxKitError authentication_required when the route was not authenticated.
 */
export function ctxOf(request: FastifyRequest): RequestContext {
  if (!request.principal) throw new InboxKitError('authentication_required', 'An API key is required');
  return { principal: request.principal, request_id: request.requestId };
}
