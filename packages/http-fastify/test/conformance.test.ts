/**
 * The HTTP conformance kit of `@inbox-kit/core/testing` against this adapter (`createServer`),
 * over real sockets: on the in-memory store, and on a SQLite file (and PostgreSQL when configured).
 * The kit's suites used to be this package's `auth.test.ts`, `inbox.test.ts`, `idempotency.test.ts`,
 * `errors.test.ts`, `live-inbox.test.ts`, `live-inbox-limits.test.ts`, `input-rules.test.ts`,
 * `stream-limits.test.ts`, `hostile-input.test.ts` (but its router check) and the black-box parts
 * of `slow-bodies.test.ts`, `security-auth.test.ts` and `events-stream.test.ts`; on SQL, the kit
 * reads "nothing written" with raw queries too (`rowCounts`, `dumpRows`); they now run on every adapter (see `@inbox-kit/core/testing`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HttpServices } from '@inbox-kit/core/http';
import { runHttpConformance, type HttpAdapterSettings } from '@inbox-kit/core/testing';
import { describe, expect, it } from 'vitest';
import { openStore } from '@inbox-kit/storage-kysely';
import { createServer } from '../src/entry-server.js';
import { DEFAULT_MAX_STREAMS_PER_CALLER } from '../src/index.js';
import { createPgDatabase, engines, sqlDumpRows, sqlRowCounts } from './harness.js';

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

runHttpConformance('http-fastify on the in-memory store', { start });

for (const engine of engines) {
  runHttpConformance(`http-fastify on ${engine}`, {
    start,
    async openStore() {
      const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-kit-'));
      const pgDb = engine === 'postgres' ? await createPgDatabase() : undefined;
      const opened = await openStore(pgDb ? { databaseUrl: pgDb.url } : { sqliteFile: join(dir, 'kit.sqlite') });
      return {
        store: opened.store,
        rowCounts: sqlRowCounts(opened.db),
        dumpRows: sqlDumpRows(opened.db),
        close: async () => {
          await opened.close();
          await pgDb?.drop();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  });
}

describe('stream defaults', () => {
  it('DEFAULT_MAX_STREAMS_PER_CALLER is 16', () => {
    expect(DEFAULT_MAX_STREAMS_PER_CALLER).toBe(16);
  });
});
