/**
 * Request decorations: the request id every response carries as `x-request-id`, and the caller
 * the pipeline authenticated (read by the `createServer` preset's rate limiter). Spec: platform.md
 * "Identity and credentials", "Errors", "HTTP adapters".
 */
import type { Principal } from '@inbox-kit/core';
import { newRequestId, requestIdFor, SHOULD_RETRY_HEADER, shouldRetry } from '@inbox-kit/core/http';
import type { FastifyReply } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** `req_…`, or the caller's own `x-request-id` when it is 1–128 safe characters. */
    requestId: string;
    /** The authenticated caller; null on public routes (and before the plugin's `onRequest` hook). */
    principal: Principal | null;
    /** True when another process forwarded this request to us (attempt routing); it is never forwarded again. */
    forwarded: boolean;
  }
  interface FastifyContextConfig {
    /** The routes the plugin hands to the pipeline. */
    inboxKit?: boolean;
  }
}

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

/** Sets both request-id headers on `reply` (`x-request-id` and `request-id`, the same value). */
export function setRequestIdHeaders(reply: FastifyReply, request_id: string): FastifyReply {
  return reply.header('x-request-id', request_id).header('request-id', request_id);
}

/** Sets `x-should-retry` on an error answer that has none yet (the preset's own 429 / 503). */
export function setShouldRetryHeader(reply: FastifyReply): void {
  const retry = shouldRetry(reply.statusCode);
  if (retry !== undefined && reply.getHeader(SHOULD_RETRY_HEADER) === undefined) void reply.header(SHOULD_RETRY_HEADER, String(retry));
}
