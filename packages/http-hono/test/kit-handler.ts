/**
 * The one place the HTTP kit's in-process behaviour runs get their fetch-style handler
 * (`(request: Request) => Promise<Response>`), and the adapter options every kit runner of this
 * package maps the kit's settings to. Today the handler is the Hono app's own `app.fetch` (Hono is
 * fetch-native); when the core's request pipeline and its fetch adapter land, swap the import
 * below for theirs (`createFetchHandler`) and nothing else changes.
 */
import type { HttpServices } from '@inbox-kit/core/http';
import type { HttpAdapterSettings, HttpKitHandler } from '@inbox-kit/core/testing';
import { inboxKitHono, type InboxKitHonoOptions } from '../src/index.js';

/** The adapter's options for the kit's `settings` (heartbeats off unless a suite asks; errors the failing-store suites cause on purpose are not logged). */
export function kitAdapterOptions(services: HttpServices, settings: HttpAdapterSettings = {}): InboxKitHonoOptions & { connections?: HttpAdapterSettings['connections'] } {
  return {
    services, streamTiming: { heartbeatMs: 60_000, ...settings.streamTiming },
    // The kit's failing-store suites cause unexpected errors on purpose and check their 500s.
    reportError: () => {},
    // As the Fastify runners' `underPressure: false`: a loaded test machine must not shed the kit's requests.
    loadShedding: false,
    ...(settings.bodyTimeoutMs === undefined ? {} : { bodyTimeoutMs: settings.bodyTimeoutMs }),
    ...(settings.credentialThrottle === undefined ? {} : { credentialThrottle: settings.credentialThrottle }),
    ...(settings.maxBodiesPerKey === undefined ? {} : { maxBodiesPerKey: settings.maxBodiesPerKey }),
    ...(settings.bodyBytesPerSecondPerKey === undefined ? {} : { bodyBytesPerSecondPerKey: settings.bodyBytesPerSecondPerKey }),
    ...(settings.connections === undefined ? {} : { connections: settings.connections }),
    ...(settings.cors === undefined ? {} : { cors: settings.cors }),
  };
}

/** The in-process handler of the kit's behaviour runs: the request goes straight to the app, no socket. */
export function kitHandler(services: HttpServices, settings: HttpAdapterSettings = {}): HttpKitHandler {
  const { connections: _socketsOnly, ...options } = kitAdapterOptions(services, settings);
  const kit = inboxKitHono(options);
  return { fetch: async (request) => kit.app.fetch(request), close: () => kit.close() };
}
