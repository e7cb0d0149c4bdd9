/**
 * @inbox-kit/http-fastify — the `inboxKit` Fastify plugin: the core's request pipeline
 * (`createHttpHandler` of `@inbox-kit/core/http`) on Fastify, under any prefix of a host's app, and
 * the server options a host builds its instance with. The `createServer` preset (a standalone
 * server: connection policy, load shedding, rate limits, `/docs`) is `@inbox-kit/http-fastify/server`
 * and the Swagger UI reference `@inbox-kit/http-fastify/docs`: this entry loads neither, nor their optional peers.
 */
export {
  inboxKit, inboxKitNotFoundAnswer, openStreamCount, type InboxKitDocs, type InboxKitOpenApiOptions, type InboxKitPluginOptions, type InboxKitServices,
} from './plugin.js';
export { inboxKitServerOptions, type InboxKitServerOptions } from './server-options.js';
export { DEFAULT_BODY_TIMEOUT_MS, DEFAULT_MAX_STREAMS_PER_CALLER, type StreamTimingOptions as StreamTiming } from '@inbox-kit/core/http';
/** Attempt routing's forwarder lives in the core (`@inbox-kit/core/http`); re-exported for existing imports. */
export { createHttpAttemptForwarder, DEFAULT_FORWARD_TIMEOUT_MS, FORWARD_HEADERS, type HttpAttemptForwarderOptions } from '@inbox-kit/core/http';
