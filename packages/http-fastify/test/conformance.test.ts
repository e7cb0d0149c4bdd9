/**
 * The thin wire suite of the HTTP kit (`runHttpWire` of `@inbox-kit/core/testing`) against this
 * adapter's server preset (`createServer`) over real sockets, on a SQLite file: what only the wire
 * shows (raw malformed requests, slow and refused bodies, connection caps, SSE over a socket,
 * HEAD, CORS, the router's 404/405 bytes) and a few happy paths per area. The kit's behaviour
 * checks run in-process once per store (`packages/http-fetch/test/kit-behaviour.*.test.ts`); on
 * SQL the kit reads "nothing written" with raw queries (`@inbox-kit/storage-kysely/testing`).
 */
import type { HttpServices } from '@inbox-kit/core/http';
import { runHttpWire, type HttpAdapterSettings } from '@inbox-kit/core/testing';
import { openSqliteTestStore } from '@inbox-kit/storage-kysely/testing';
import { describe, expect, it } from 'vitest';
import { createServer } from '../src/entry-server.js';
import { DEFAULT_MAX_STREAMS_PER_CALLER } from '../src/index.js';

async function start(services: HttpServices, settings: HttpAdapterSettings = {}) {
  const app = await createServer({
    services, underPressure: false, streamTiming: { heartbeatMs: 60_000, ...settings.streamTiming },
    ...(settings.bodyTimeoutMs === undefined ? {} : { bodyTimeoutMs: settings.bodyTimeoutMs }),
    ...(settings.credentialThrottle === undefined ? {} : { credentialThrottle: settings.credentialThrottle }),
    ...(settings.maxBodiesPerKey === undefined ? {} : { maxBodiesPerKey: settings.maxBodiesPerKey }),
    ...(settings.bodyBytesPerSecondPerKey === undefined ? {} : { bodyBytesPerSecondPerKey: settings.bodyBytesPerSecondPerKey }),
    ...(settings.connections === undefined ? {} : { connections: settings.connections }),
    ...(settings.cors === undefined ? {} : { cors: settings.cors }),
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: async () => {
      const closing = app.close();
      app.server.closeAllConnections();
      await closing;
    },
  };
}

runHttpWire('http-fastify wire suite on sqlite', { start, openStore: openSqliteTestStore });

describe('stream defaults', () => {
  it('DEFAULT_MAX_STREAMS_PER_CALLER is 16', () => {
    expect(DEFAULT_MAX_STREAMS_PER_CALLER).toBe(16);
  });
});
