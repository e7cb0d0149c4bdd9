/**
 * @inbox-kit/storage-kysely/testing — what this store's tests hand the kits of
 * `@inbox-kit/core/testing`: the HTTP kit's raw row reader (`rowCounts`, `dumpRows`), read with raw
 * SQL on the Kysely database underneath (not through the adapter under test nor the Store port),
 * on SQLite and PostgreSQL alike, and the kit's `openStore` on a fresh SQLite file or a fresh
 * PostgreSQL database, and the Session Runtime world of the framework adapters' tests
 * (`startKyselyRuntimeWorld`: `startRuntimeWorld` of the core's testing entry on such a store).
 * Loads no test runner (`startKyselyRuntimeWorld` imports the core's testing entry, whose kits
 * import vitest, when called); a driver only when a store is opened (Node only).
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
import type { HttpServices } from '@inbox-kit/core/http';
import type { HttpConformanceServer, RuntimeWorld, RuntimeWorldOptions } from '@inbox-kit/core/testing';
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

/**
 * A fresh, migrated test store: on a fresh database of the PostgreSQL server of `adminUrl` when
 * one is given ({@link openPostgresTestStore}), else on a fresh SQLite file ({@link openSqliteTestStore}).
 */
export function openKyselyTestStore(adminUrl?: string): Promise<TestStore> {
  return adminUrl ? openPostgresTestStore(adminUrl) : openSqliteTestStore();
}

/**
 * An HTTP adapter's server built on the services and not yet listening, as Fastify's is
 * (`createServer({ services })` of `@inbox-kit/http-fastify/server`): `listen` resolves with the
 * base URL it listens on (e.g. `http://127.0.0.1:PORT`).
 */
export interface ListenableServer {
  listen(options: { port: number; host: string }): Promise<string>;
  close(): Promise<unknown>;
}

/** Options of {@link startKyselyRuntimeWorld}: the core world's, the store chosen by `databaseUrl`. */
export interface KyselyRuntimeWorldOptions extends Omit<RuntimeWorldOptions, 'openStore' | 'start'> {
  /** Builds the adapter's server on the services; the world listens on 127.0.0.1, any free port. Give this or `start`. */
  server?: (services: HttpServices) => ListenableServer | Promise<ListenableServer>;
  /** Starts the adapter and listens (as the HTTP kit's `start`), for an adapter without `listen`. */
  start?: RuntimeWorldOptions['start'];
  /** A PostgreSQL URL whose role may create databases (e.g. `INBOX_KIT_TEST_PG_URL`): the world's store is a fresh database there. Default: a fresh SQLite file. */
  databaseUrl?: string;
}

/**
 * The Session Runtime world (`startRuntimeWorld` of `@inbox-kit/core/testing`: seeded workspace,
 * owner key and Session, steering over HTTP, committed history) on a fresh kysely store, served by
 * the given adapter. `close()` closes the Runtime and the server and removes the store.
 * Rejects (Error) when neither `server` nor `start` is given.
 */
export async function startKyselyRuntimeWorld(options: KyselyRuntimeWorldOptions): Promise<RuntimeWorld> {
  const { server, start, databaseUrl, ...rest } = options;
  const listening = server ? listenOn(server) : start;
  if (!listening) throw new Error('startKyselyRuntimeWorld: give `server` or `start`');
  const { startRuntimeWorld } = await import('@inbox-kit/core/testing');
  return startRuntimeWorld({ ...rest, start: listening, openStore: () => openKyselyTestStore(databaseUrl) });
}

function listenOn(server: NonNullable<KyselyRuntimeWorldOptions['server']>): RuntimeWorldOptions['start'] {
  return async (services): Promise<HttpConformanceServer> => {
    const app = await server(services);
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    return { url, close: async () => void (await app.close()) };
  };
}
