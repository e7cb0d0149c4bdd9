/**
 * @inbox-kit/core/http — the framework-neutral HTTP contract every adapter implements: the route
 * table (method, path, request and response schemas, which service call), the error → status →
 * `error.type` table and envelope, credentials and request ids, SSE framing and resume rules, and
 * the forwarding-header checks of attempt routing. Imports zod and the core only.
 *
 * The public names, listed one by one (`scripts/public-surface.json` holds them): each route's
 * response schema is reached through its `response`, not exported on its own.
 */
export {
  envelope, envelopeForStatus, envelopeOf, ERROR_KINDS, type ErrorAnswer, errorDetailSchema, type ErrorEnvelope, errorEnvelopeSchema,
  errorKind, type ErrorKind, routeNotFound, STATUS_BY_CODE,
} from './errors.js';
export { type HeaderValue, newRequestId, readCredentials, type RequestCredentials, requestIdFor } from './request.js';
export { eventFrame, heartbeatFrame, retryFrame, SSE_DEFAULTS, SSE_HEADERS } from './sse.js';
export { resumePosition, resyncFor, type ResyncSignal } from '../stream-resume.js';
export { DEFAULT_FORWARD_TIMEOUT_MS, FORWARD_HEADERS, forwardedPrincipal, forwardHeadersFor, forwardRequestOf } from './forwarding.js';
export { HTTP_ROUTES, type HttpCall, type HttpOutcome, type HttpRoute, httpRoutesFor, type HttpServices } from './routes.js';
export { parseJsonBody, parseRequestPart, queryObject, type RequestPart } from './parse.js';
