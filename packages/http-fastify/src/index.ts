/**
 * @inbox-kit/http-fastify — the `inboxKit` plugin (the core's request pipeline on Fastify, under any
 * prefix of a host's app) and the server options a host builds its instance with. It loads neither
 * the `createServer` preset (`/server`) nor the Swagger UI reference (`/docs`), nor their optional peers.
 */
export {
  inboxKit, inboxKitNotFoundAnswer, openStreamCount, type InboxKitDocs, type InboxKitOpenApiOptions, type InboxKitPluginOptions, type InboxKitServices,
} from './plugin.js';
export { inboxKitServerOptions, type InboxKitServerOptions } from './server-options.js';
export { DEFAULT_BODY_TIMEOUT_MS, DEFAULT_MAX_STREAMS_PER_CALLER, type StreamTimingOptions as StreamTiming } from '@inbox-kit/core/http';
/** Attempt routing's forwarder lives in the core (`@inbox-kit/core/http`); re-exported for existing imports. */
export { createHttpAttemptForwarder, DEFAULT_FORWARD_TIMEOUT_MS, FORWARD_HEADERS, type HttpAttemptForwarderOptions } from '@inbox-kit/core/http';
