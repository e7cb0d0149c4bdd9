/**
 * The HTTP conformance kit: one vitest suite that any HTTP adapter of the contract
 * (`@inbox-kit/core/http`) runs against itself, black box over real sockets.
 *
 * ```ts
 * import { runHttpConformance } from '@inbox-kit/core/testing';
 * runHttpConformance('my-adapter', {
 *   async start(services) {
 *     const server = await serveMyAdapter(services, { host: '127.0.0.1', port: 0 });
 *     return { url: server.url, close: () => server.close() };
 *   },
 * });
 * ```
 *
 * Each check builds services over a fresh store (the in-memory store, or `openStore()`), seeds a
 * small world, calls `start(services)`, drives the server with `fetch`, and calls `close()`.
 * vitest is an optional peer dependency, needed only by this module.
 */
import { describe, it } from 'vitest';
import { httpConformanceChecks, withHttpSubject, type HttpConformanceOptions } from './http-conformance-checks.js';

export * from './http-conformance-checks.js';

/**
 * Registers `describe(name)` with one test per check of {@link httpConformanceChecks}.
 * @param options `start(services) → { url, close }`, optional `openStore`, per-check `timeout` in ms (default 30,000).
 */
export function runHttpConformance(name: string, options: HttpConformanceOptions & { timeout?: number }): void {
  describe(name, () => {
    for (const check of httpConformanceChecks) {
      it(check.name, () => withHttpSubject(options, check.run), options.timeout ?? 30_000);
    }
  });
}
