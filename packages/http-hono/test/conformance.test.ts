/**
 * The thin wire suite of the HTTP kit (`runHttpWire` of `@inbox-kit/core/testing`) against the Hono
 * adapter over real sockets, on a SQLite file: what only the wire shows (raw malformed requests,
 * slow and refused bodies, connection caps, SSE over a socket, HEAD, CORS, 404/405 bytes) and a
 * few happy paths per area. The behaviour checks run in-process once per store against the core
 * pipeline's fetch handler (`packages/http-fetch/test/kit-behaviour.*.test.ts`).
 */
import type { HttpServices } from '@inbox-kit/core/http';
import { runHttpWire, type HttpAdapterSettings } from '@inbox-kit/core/testing';
import { openSqliteTestStore } from '@inbox-kit/storage-kysely/testing';
import { serveInboxKit } from '../src/index.js';

const start = (services: HttpServices, settings: HttpAdapterSettings = {}) =>
  serveInboxKit({
    services, streamTiming: { heartbeatMs: 60_000, ...settings.streamTiming },
    // The kit's failing-store suites cause unexpected errors on purpose and check their 500s.
    reportError: () => {},
    // A loaded test machine must not shed the kit's requests (the Fastify runners pass `underPressure: false`).
    loadShedding: false,
    ...(settings.bodyTimeoutMs === undefined ? {} : { bodyTimeoutMs: settings.bodyTimeoutMs }),
    ...(settings.credentialThrottle === undefined ? {} : { credentialThrottle: settings.credentialThrottle }),
    ...(settings.maxBodiesPerKey === undefined ? {} : { maxBodiesPerKey: settings.maxBodiesPerKey }),
    ...(settings.bodyBytesPerSecondPerKey === undefined ? {} : { bodyBytesPerSecondPerKey: settings.bodyBytesPerSecondPerKey }),
    ...(settings.connections === undefined ? {} : { connections: settings.connections }),
    ...(settings.cors === undefined ? {} : { cors: settings.cors }),
  });

runHttpWire('http-hono wire suite on sqlite', { start, openStore: openSqliteTestStore });
