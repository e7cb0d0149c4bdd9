/**
 * @inbox-kit/http-fastify/server — the `createServer` preset: a Fastify instance with inbox-kit's
 * recommended options (body limit, request ids, the connection policy, per-caller budgets, load
 * shedding, optional rate limits, graceful close, the `/docs` reference) and the plugin
 * registered. It needs the optional peers `@fastify/rate-limit` and `@fastify/swagger-ui`;
 * embedders that register the `inboxKit` plugin (root entry) on their own Fastify instance need
 * neither.
 *
 * ```ts
 * import { createServer } from '@inbox-kit/http-fastify/server';
 * const app = await createServer({ services: { platform, projectInbox } });
 * ```
 */
export { createServer, type CreateServerOptions } from './server.js';
export { UNDER_PRESSURE_DEFAULTS, type RateLimitOptions, type UnderPressureOptions } from './protection.js';
