/**
 * @inbox-kit/http-fastify — Fastify plugins that expose inbox-kit over HTTP: API-key auth, the
 * one error envelope with request ids, the Project Inbox, platform and Live Inbox routes.
 * The `createServer` preset (load shedding, rate limits, `/docs`) is the entry
 * `@inbox-kit/http-fastify/server`, whose plugins are optional peers this entry never loads.
 */
export { inboxKit, inboxKitNotFoundAnswer, type InboxKitServices, type InboxKitPluginOptions } from './plugin.js';
export type { CreateServerOptions } from './server.js';
export type { RateLimitOptions, UnderPressureOptions } from './protection.js';
export { DEFAULT_BODY_TIMEOUT_MS } from './body-deadline.js';
export { inboxKitServerOptions, type InboxKitServerOptions } from './server-options.js';
export { DEFAULT_MAX_STREAMS_PER_CALLER } from './stream-limits.js';
export { inboxKitOpenApi, errorEnvelopeSchema, errorDetailSchema, ERROR_KINDS, type InboxKitOpenApiOptions } from './openapi.js';
export { STATUS_BY_CODE, errorKind, envelope, toEnvelope, type ErrorEnvelope } from './errors.js';
export { ctxOf, newRequestId, requestIdFor } from './context.js';
export {
  DEFAULT_FORWARD_TIMEOUT_MS, FORWARD_HEADERS, createHttpAttemptForwarder, forwardedPrincipal, relayForwardedReply,
  type HttpAttemptForwarderOptions,
} from './forwarding.js';
export { registerRoutes } from './routes.js';
export { sendEventStream, resumeCursor, openStreamCount, type EventStreamSource, type StreamTiming, type EventStreamOptions } from './sse.js';
export { ResponseSchemaError, stringifySerializerCompiler, validatingSerializerCompiler } from './serializer.js';
