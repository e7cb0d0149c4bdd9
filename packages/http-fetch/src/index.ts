/**
 * @inbox-kit/http-fetch — inbox-kit's HTTP contract as one fetch handler, `(Request) => Promise<Response>`,
 * for fetch-style hosts: Next.js route handlers, Bun, Deno, Cloudflare Workers, `@hono/node-server`.
 * Written from the core's pipeline (`createHttpHandler` of `@inbox-kit/core/http`) alone.
 */
export { createFetchHandler, type FetchHandler, type FetchHandlerOptions } from './handler.js';
