/**
 * The HTTP conformance kit of `@inbox-kit/core/testing` against the fetch handler (served by `@hono/node-server`), over real
 * sockets: on the in-memory store and on a SQLite file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runHttpConformance, type HttpAdapterSettings } from '@inbox-kit/core/testing';
import { openStore } from '@inbox-kit/storage-kysely';
import type { HttpServices } from '@inbox-kit/core/http';
import { serveFetchHandler } from './serve.js';

const start = async (services: HttpServices, settings: HttpAdapterSettings = {}) =>
  serveFetchHandler({
    services, streamTiming: { heartbeatMs: 60_000, ...settings.streamTiming },
    // The kit's failing-store suites cause unexpected errors on purpose and check their 500s.
    reportError: () => {},
    ...(settings.bodyTimeoutMs === undefined ? {} : { bodyTimeoutMs: settings.bodyTimeoutMs }),
    ...(settings.credentialThrottle === undefined ? {} : { credentialThrottle: settings.credentialThrottle }),
    ...(settings.maxBodiesPerKey === undefined ? {} : { maxBodiesPerKey: settings.maxBodiesPerKey }),
    ...(settings.bodyBytesPerSecondPerKey === undefined ? {} : { bodyBytesPerSecondPerKey: settings.bodyBytesPerSecondPerKey }),
    ...(settings.connections === undefined ? {} : { connections: settings.connections }),
    ...(settings.cors === undefined ? {} : { cors: settings.cors }),
  });

runHttpConformance('http-fetch on the in-memory store', { start });

runHttpConformance('http-fetch on sqlite', {
  start,
  async openStore() {
    const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-fetch-'));
    const opened = await openStore({ sqliteFile: join(dir, 'kit.sqlite') });
    let tables: string[] | undefined;
    return {
      store: opened.store,
      // Row counts of every table, read with raw queries: the hostile-input suite's "nothing written".
      async rowCounts() {
        const { db } = opened;
        tables ??= (await db.introspection.getTables()).map((t) => t.name);
        const counts: Record<string, number> = {};
        for (const table of tables) {
          // Any table: the name is only known at run time (the type is one table's, for the query builder).
          const row = await db.selectFrom(table as 'workspaces').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
          counts[table] = Number(row.n);
        }
        return counts;
      },
      // Every row of every table, read with raw queries: the security suite's "nothing written".
      async dumpRows() {
        const { db } = opened;
        tables ??= (await db.introspection.getTables()).map((t) => t.name);
        const rows: Record<string, string[]> = {};
        for (const table of tables) rows[table] = (await db.selectFrom(table as 'workspaces').selectAll().execute()).map((r) => JSON.stringify(r)).sort();
        return rows;
      },
      close: async () => {
        await opened.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
});
