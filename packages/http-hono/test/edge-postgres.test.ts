/**
 * The write gate and the per-caller budgets of the HTTP conformance kit on Hono over PostgreSQL
 * (issue 26: the Live Inbox of an archived project or Session answers 409 and nothing is
 * committed, throttles and budgets, on SQLite and PostgreSQL, both adapters): the suites of
 * `conformance.test.ts` that depend on the store's locks and counters, on a fresh database.
 * Runs when INBOX_KIT_TEST_PG_URL is set.
 */
import { budgetsSuite, writeGateSuite, type HttpAdapterSettings, type HttpConformanceOptions } from '@inbox-kit/core/testing';
import { openStore } from '@inbox-kit/storage-kysely';
import { openPostgres } from '@inbox-kit/storage-kysely/postgres';
import { sql } from 'kysely';
import { describe } from 'vitest';
import { serveInboxKit } from '../src/index.js';

const PG = process.env.INBOX_KIT_TEST_PG_URL || undefined;

/** A fresh database on the test server, and how to drop it. */
async function freshDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `hono_edge_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = openPostgres(PG!);
  try {
    await sql.raw(`CREATE DATABASE ${name}`).execute(admin);
  } finally {
    await admin.destroy();
  }
  const url = new URL(PG!);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const db = openPostgres(PG!);
      try {
        await sql.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).execute(db);
      } finally {
        await db.destroy();
      }
    },
  };
}

const kit: HttpConformanceOptions = {
  start: (services, settings: HttpAdapterSettings = {}) => serveInboxKit({
    services, reportError: () => {},
    ...(settings.credentialThrottle === undefined ? {} : { credentialThrottle: settings.credentialThrottle }),
    ...(settings.maxBodiesPerKey === undefined ? {} : { maxBodiesPerKey: settings.maxBodiesPerKey }),
    ...(settings.bodyBytesPerSecondPerKey === undefined ? {} : { bodyBytesPerSecondPerKey: settings.bodyBytesPerSecondPerKey }),
    ...(settings.connections === undefined ? {} : { connections: settings.connections }),
    ...(settings.cors === undefined ? {} : { cors: settings.cors }),
  }),
  async openStore() {
    const database = await freshDatabase();
    const opened = await openStore({ databaseUrl: database.url });
    return {
      store: opened.store,
      close: async () => {
        await opened.close();
        await database.drop();
      },
    };
  },
};

describe.runIf(PG)('http-hono on postgres: the write gate and the budgets', () => {
  writeGateSuite(kit);
  budgetsSuite(kit);
});
