/**
 * The one place the HTTP kit's in-process behaviour runs get their fetch-style handler
 * (`(request: Request) => Promise<Response>`): the core pipeline's fetch adapter,
 * `createFetchHandler` of this package, called directly — no socket. `kitAdapterOptions` maps the
 * kit's settings to the handler's options (the wire runner `conformance.test.ts` uses it too).
 */
import type { HttpServices } from '@inbox-kit/core/http';
import type { HttpAdapterSettings, HttpKitHandler } from '@inbox-kit/core/testing';
import { createFetchHandler, type FetchHandlerOptions } from '../src/index.js';

/** The handler's options for the kit's `settings` (heartbeats off unless a suite asks; the errors the failing-store suites cause on purpose are not logged). */
export function kitAdapterOptions(services: HttpServices, settings: HttpAdapterSettings = {}): FetchHandlerOptions {
  return {
    services, streamTiming: { heartbeatMs: 60_000, ...settings.streamTiming },
    reportError: () => {},
    // A loaded test machine must not shed the kit's requests (the Fastify runners pass `underPressure: false`).
    loadShedding: false,
    ...(settings.bodyTimeoutMs === undefined ? {} : { bodyTimeoutMs: settings.bodyTimeoutMs }),
    ...(settings.credentialThrottle === undefined ? {} : { credentialThrottle: settings.credentialThrottle }),
    ...(settings.maxBodiesPerKey === undefined ? {} : { maxBodiesPerKey: settings.maxBodiesPerKey }),
    ...(settings.bodyBytesPerSecondPerKey === undefined ? {} : { bodyBytesPerSecondPerKey: settings.bodyBytesPerSecondPerKey }),
    ...(settings.cors === undefined ? {} : { cors: settings.cors }),
  };
}

/** The in-process handler of the kit's behaviour runs: the request goes straight to the pipeline. */
export function kitHandler(services: HttpServices, settings: HttpAdapterSettings = {}): HttpKitHandler {
  const handler = createFetchHandler(kitAdapterOptions(services, settings));
  return { fetch: (request) => handler(request), close: () => handler.close() };
}
