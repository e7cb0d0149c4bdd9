/**
 * @inbox-kit/http-fastify — the `inboxKit` Fastify plugin: the core's request pipeline
 * (`createHttpHandler` of `@inbox-kit/core/http`) on Fastify, under any prefix of a host's app.
 * The `createServer` preset (a standalone server: connection policy, load shedding, rate limits,
 * `/docs`) is the entry `@inbox-kit/http-fastify/server`, whose plugins are optional peers this
 * entry never loads.
 */
export { inboxKit, inboxKitNotFoundAnswer, openStreamCount, type InboxKitServices, type InboxKitPluginOptions, type InboxKitOpenApiOptions } from './plugin.js';
export type { CreateServerOptions } from './server.js';
export type { RateLimitOptions, UnderPressureOptions } from './protection.js';
export { inboxKitServerOptions, type InboxKitServerOptions } from './server-options.js';
export { DEFAULT_BODY_TIMEOUT_MS, DEFAULT_MAX_STREAMS_PER_CALLER, type StreamTimingOptions as StreamTiming } from '@inbox-kit/core/http';
/** Attempt routing's forwarder lives in the core (`@inbox-kit/core/http`); re-exported for existing imports. */
export { createHttpAttemptForwarder, DEFAULT_FORWARD_TIMEOUT_MS, FORWARD_HEADERS, type HttpAttemptForwarderOptions } from '@inbox-kit/core/http';
