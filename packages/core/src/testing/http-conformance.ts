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
import { beforeAll, describe, it } from 'vitest';
import type { HttpServices } from '../http/routes.js';
import { httpConformanceChecks, withHttpSubject, type HttpAdapterSettings, type HttpConformanceOptions, type HttpConformanceServer } from './http-conformance-checks.js';
import { assertKnownOptOuts, planHttpChecks } from './http-kit.js';
import { httpSuites } from './http-suites.js';

export * from './http-conformance-checks.js';
export {
  assertKnownOptOuts, describeFor, groupRuns, kitIt, layerRuns, optedOut, planHttpChecks, type HttpCheckLayer, type HttpKitMode, type HttpKitOptOut, type HttpKitRun, type KitIt,
  type PlannedHttpCheck, type TestRegistrar,
} from './http-kit.js';
export { startHttpWorld, expectError, heldModel, type HttpWorld, type HttpWorldOptions, type HeldModel, type WorldResponse, type WorldRequestOptions, type WorldEnvelope, type WorldState } from './http-world.js';
export { httpSuites, authenticationSuite, errorsSuite, projectInboxSuite, idempotencySuite, inputRulesSuite, liveInboxSuite, liveInboxLimitsSuite, streamsPerCallerSuite, slowBodiesSuite, hostileInputSuite, securitySuite, projectEventsSuite, writeGateSuite, budgetsSuite, pagingSuite, connectionsSuite } from './http-suites.js';
export { openStream, type Frame, type OpenStreamOptions, type SseStream } from './http-suites-events.js';
export { expect4xx, expectNoLeak, LEAKS, parseRawResponse, rawRequest, rawSocket, routeInventory, type RawRequest, type RouteInfo } from './http-raw.js';

/** What {@link runHttpConformance} takes: the adapter (`start`, `openStore`), opt-outs, and a per-check `timeout` in ms (default 30,000). */
export type HttpConformanceRunOptions = Omit<HttpConformanceOptions, 'mode'> & { timeout?: number };

/** Registers the checks of {@link httpConformanceChecks} that `options.mode` takes (opted-out ones as skipped, with the reason). */
function registerChecks(options: HttpConformanceOptions & { timeout?: number }): void {
  for (const { check, skip } of planHttpChecks(httpConformanceChecks, options)) {
    if (skip !== undefined) it.skip(`${check.name} — opted out: ${skip}`, () => {});
    else it(check.name, () => withHttpSubject(options, check.run, check.settings), options.timeout ?? 30_000);
  }
}

/**
 * Registers `describe(name)` with every check of the kit over real sockets: one test per check of
 * {@link httpConformanceChecks}, then the suites of {@link httpSuites} (authentication and request ids, the Project Inbox end to end, idempotency, the error table, malformed requests and failing writes, Live Inbox editing during a Run and Session events, Live Inbox limits, input rules, event streams
 * per caller, slow and refused request bodies over raw sockets, hostile input on every route, the security review of auth and tenancy, Project Events: stream format, history, resume, filters, visibility), each over its own seeded world.
 * This is the whole kit for an adapter author who has only a server; inbox-kit's own adapters run
 * the same checks split: {@link runHttpBehaviour} in-process once per store, {@link runHttpWire} per adapter.
 * @param options `start(services, settings?) → { url, close }` (pass `settings.streamTiming` and
 *   `settings.bodyTimeoutMs` on to the adapter), optional `openStore`, `optOut` (`{ 'check or group name': 'reason' }`:
 *   registered as skipped with the reason in the title), per-check `timeout` in ms (default 30,000).
 */
export function runHttpConformance(name: string, options: HttpConformanceRunOptions): void {
  describe(name, () => {
    const kit = { ...options, mode: 'sockets' as const };
    registerChecks(kit);
    httpSuites(kit);
    // Every check registers in this mode (once collected): an opt-out that names none of them is a typo.
    beforeAll(() => assertKnownOptOuts(kit));
  });
}

/** A fetch-style handler the in-process run drives: `fetch(request) → response`, and how to stop it. */
export interface HttpKitHandler {
  fetch(request: Request): Promise<Response>;
  close(): Promise<void> | void;
}

/** Options of {@link runHttpBehaviour}. */
export type HttpBehaviourOptions = Omit<HttpConformanceRunOptions, 'start'> & {
  /** Builds the handler on `services` with `settings` (as `start` would start a server). */
  handler(services: HttpServices, settings?: HttpAdapterSettings): Promise<HttpKitHandler> | HttpKitHandler;
};

/** The base of the requests' URLs in-process (no socket listens there). */
export const IN_PROCESS_URL = 'http://inbox-kit.test';

/**
 * Registers `describe(name)` with the behaviour checks of the kit (layers `behaviour` and `both`,
 * see `http-kit.ts`), run in-process: every request goes to `handler(...).fetch(request)`, no
 * socket is opened. Run it once per store (`openStore`); what only a socket shows is {@link runHttpWire}'s.
 */
export function runHttpBehaviour(name: string, options: HttpBehaviourOptions): void {
  const { handler, ...rest } = options;
  const start = async (services: HttpServices, settings?: HttpAdapterSettings): Promise<HttpConformanceServer> => {
    const h = await handler(services, settings);
    return { url: IN_PROCESS_URL, fetch: (request) => h.fetch(request), close: async () => { await h.close(); } };
  };
  describe(name, () => {
    const kit = { ...rest, start, mode: 'in-process' as const };
    registerChecks(kit);
    httpSuites(kit);
  });
}

/**
 * Registers `describe(name)` with the thin wire suite of the kit (layers `wire` and `both`): what
 * only a real socket shows — raw malformed requests, slow and refused bodies, 408/413 with
 * `Connection: close`, connection caps and keep-alive, SSE over a socket, HEAD, CORS, request ids,
 * the router's 404/405 — and a few happy paths per area, over `start`'s server.
 */
export function runHttpWire(name: string, options: HttpConformanceRunOptions): void {
  describe(name, () => {
    const kit = { ...options, mode: 'wire' as const };
    registerChecks(kit);
    httpSuites(kit);
  });
}
