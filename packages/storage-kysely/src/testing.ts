/**
 * @inbox-kit/storage-kysely/testing — what this store's tests hand the kits of
 * `@inbox-kit/core/testing`: the HTTP kit's raw row reader (`rowCounts`, `dumpRows`), read with raw
 * SQL on the Kysely database underneath (not through the adapter under test nor the Store port),
 * on SQLite and PostgreSQL alike, and the kit's `openStore` on a fresh SQLite file or a fresh
 * PostgreSQL database. Loads no test runner; a driver only when a store is opened (Node only).
 *
 * ```ts
 * import { runHttpWire } from '@inbox-kit/core/testing';
 * import { openSqliteTestStore } from '@inbox-kit/storage-kysely/testing';
 * runHttpWire('my adapter', { start, openStore: openSqliteTestStore });
 * ```
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store } from '@inbox-kit/core';
import { sql, type Kysely } from 'kysely';
import { openStore } from './index.js';

/**
 * What the HTTP kit's `openStore` may hand back besides the store: every table's row count and
 * every row (each as JSON, sorted per table), for its "nothing written" checks.
 */
export interface RawRowReader {
  rowCounts(): Promise<Record<string, number>>;
  dumpRows(): Promise<Record<string, string[]>>;
}

/**
 * The {@link RawRowReader} of a migrated inbox-kit database: every application table (Kysely's
 * migration bookkeeping, `kysely_*`, left out), found once by introspection.
 * @param db the store's Kysely instance (`openStore(...).db`).
 */
export function kyselyRowReader(db: Kysely<any>): RawRowReader {
  let tables: Promise<string[]> | undefined;
  const list = () => (tables ??= db.introspection.getTables().then((all) => all.map((t) => t.name).filter((n) => !n.startsWith('kysely_')).sort()));
  return {
    async rowCounts() {
      const names = await list();
      const rows = (await sql.raw<{ t: string; n: number | string }>(names.map((t) => `SELECT '${t}' AS t, COUNT(*) AS n FROM ${t}`).join(' UNION ALL ')).execute(db)).rows;
      return Object.fromEntries(rows.map((r) => [r.t, Number(r.n)]));
    },
    async dumpRows() {
      const out: Record<string, string[]> = {};
      for (const t of await list()) out[t] = (await sql.raw<Record<string, unknown>>(`SELECT * FROM ${t}`).execute(db)).rows.map((r) => JSON.stringify(r)).sort();
      return out;
    },
  };
}

/** A fresh, migrated store as the HTTP kit's `openStore` hands it over: the store, its raw row reader, and `close()` (which removes what it made). */
export interface TestStore extends RawRowReader {
  store: Store;
  close(): Promise<void>;
}

/** A migrated store on a fresh SQLite file in the temp directory; `close()` removes the file. */
export async function openSqliteTestStore(): Promise<TestStore> {
  const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-test-'));
  const opened = await openStore({ sqliteFile: join(dir, 'test.sqlite') });
  return {
    store: opened.store, ...kyselyRowReader(opened.db),
    close: async () => {
      await opened.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A migrated store on a fresh database (`inbox_kit_test_<random>`) created through `adminUrl` (a
 * PostgreSQL URL whose role may create databases, e.g. `INBOX_KIT_TEST_PG_URL`); `close()` drops it.
 * Needs the `pg` driver (an optional peer).
 */
export async function openPostgresTestStore(adminUrl: string): Promise<TestStore> {
  const { openPostgres } = await import('./postgres.js');
  const name = `inbox_kit_test_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const onAdmin = async (statement: string) => {
    const admin = openPostgres(adminUrl);
    try {
      await sql.raw(statement).execute(admin);
    } finally {
      await admin.destroy();
    }
  };
  await onAdmin(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const opened = await openStore({ databaseUrl: url.toString() }).catch(async (error: unknown) => {
    await onAdmin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    throw error;
  });
  return {
    store: opened.store, ...kyselyRowReader(opened.db),
    close: async () => {
      await opened.close();
      await onAdmin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}
