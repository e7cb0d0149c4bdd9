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
import { httpSuites } from './http-suites.js';

export * from './http-conformance-checks.js';
export { startHttpWorld, expectError, heldModel, type HttpWorld, type HttpWorldOptions, type HeldModel, type WorldResponse, type WorldRequestOptions, type WorldEnvelope, type WorldState } from './http-world.js';
export { httpSuites, authenticationSuite, errorsSuite, projectInboxSuite, idempotencySuite, inputRulesSuite, liveInboxSuite, liveInboxLimitsSuite, streamsPerCallerSuite, slowBodiesSuite, hostileInputSuite, securitySuite, projectEventsSuite, writeGateSuite, budgetsSuite, pagingSuite, connectionsSuite } from './http-suites.js';
export { openStream, type Frame, type OpenStreamOptions, type SseStream } from './http-suites-events.js';
export { expect4xx, expectNoLeak, LEAKS, parseRawResponse, rawRequest, rawSocket, routeInventory, type RawRequest, type RouteInfo } from './http-raw.js';

/**
 * Registers `describe(name)` with one test per check of {@link httpConformanceChecks}, then the
 * suites of {@link httpSuites} (authentication and request ids, the Project Inbox end to end, idempotency, the error table, malformed requests and failing writes, Live Inbox editing during a Run and Session events, Live Inbox limits, input rules, event streams
 * per caller, slow and refused request bodies over raw sockets, hostile input on every route, the security review of auth and tenancy, Project Events: stream format, history, resume, filters, visibility), each over its own seeded world.
 * @param options `start(services, settings?) → { url, close }` (pass `settings.streamTiming` and
 *   `settings.bodyTimeoutMs` on to the adapter), optional `openStore`, per-check `timeout` in ms (default 30,000).
 */
export function runHttpConformance(name: string, options: HttpConformanceOptions & { timeout?: number }): void {
  describe(name, () => {
    for (const check of httpConformanceChecks) {
      it(check.name, () => withHttpSubject(options, check.run, check.settings), options.timeout ?? 30_000);
    }
    httpSuites(options);
  });
}
