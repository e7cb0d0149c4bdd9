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
  }
  interface FastifyContextConfig {
    /** Public routes skip authentication (health, OpenAPI). */
    public?: boolean;
    /** Routes another process may forward to this one (attempt routing: Live Inbox, Session events). */
    forwardable?: boolean;
  }
}

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Random bytes drawn 128 ids at a time: one `getRandomValues` call per request cost ~5% of a small GET. */
const POOL_BYTES = 21 * 128;
let pool = new Uint8Array(0);
let offset = 0;

/** A new request id: `req_` + 21 URL-safe random characters. */
export function newRequestId(): string {
  if (offset + 21 > pool.length) {
    pool = globalThis.crypto.getRandomValues(new Uint8Array(POOL_BYTES));
    offset = 0;
  }
  let s = 'req_';
  for (let i = offset; i < offset + 21; i++) s += ALPHABET[pool[i]! & 63];
  offset += 21;
  return s;
}

/** The request id to use: the caller's `x-request-id` when safe, else a new one. */
export function requestIdFor(header: string | string[] | undefined): string {
  return typeof header === 'string' && SAFE_REQUEST_ID.test(header) ? header : newRequestId();
}

const OWN_REQUEST_ID = /^req_[A-Za-z0-9_-]{21}$/;

/**
 * {@link requestIdFor}, reusing `generated` (Fastify's `request.id`) when there is no safe header
 * and it is one of ours (`req_` + 21 characters): with `createServer`'s `genReqId` the id in the
 * log lines is then the `x-request-id` of the response.
 */
export function requestIdOf(header: string | string[] | undefined, generated: string): string {
  if (typeof header === 'string' && SAFE_REQUEST_ID.test(header)) return header;
  return OWN_REQUEST_ID.test(generated) ? generated : newRequestId();
}

/**
 * Sets the request id headers of an answer: `x-request-id` and `request-id` (the one
 * `@anthropic-ai/sdk` reads into `err.requestID`), the same value, also on the raw response so a
 * hijacked reply (an SSE stream) writes them with its own head. Every place that answers uses it.
 */
export function setRequestIdHeaders(reply: FastifyReply, request_id: string): FastifyReply {
  reply.raw.setHeader('request-id', request_id);
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
