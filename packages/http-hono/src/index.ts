/**
 * @inbox-kit/http-hono — inbox-kit's HTTP contract (`@inbox-kit/core/http`) on Hono 4: every
 * route, API-key auth, the one error envelope with request ids, SSE with resume; `serveInboxKit`
 * runs it on Node.
 */
export { DEFAULT_BODY_TIMEOUT_MS, inboxKitHono, type InboxKitHonoApp, type InboxKitHonoOptions } from './app.js';
export { serveInboxKit, type InboxKitHonoServer, type ServeInboxKitOptions } from './server.js';
export type { StreamOptions } from './app.js';
