/**
 * @inbox-kit/core/http — the framework-neutral HTTP contract every adapter implements: the route
 * table (method, path, request and response schemas, which service call), the error → status →
 * `error.type` table and envelope, credentials and request ids, SSE framing and resume rules, and
 * the forwarding-header checks of attempt routing, and the OpenAPI document of the table. Imports zod and the core only.
 */
export * from './errors.js';
export * from './request.js';
export * from './sse.js';
export * from './forwarding.js';
export * from './routes.js';
export * from './parse.js';
export * from './openapi.js';
