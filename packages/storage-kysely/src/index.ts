/**
 * @inbox-kit/storage-kysely — the storage port of `@inbox-kit/core` on Kysely: SQLite (the
 * embedded default, one file, zero set-up) and PostgreSQL (chosen by a `postgres://` URL), with
 * the same migrations and the same behaviour on both. Passes the core's storage conformance kit.
 * On PostgreSQL, `createPostgresEventBus` carries committed events to every server process
 * (LISTEN/NOTIFY).
 *
 * This entry loads no driver: the drivers are optional peer dependencies (`better-sqlite3` for
 * SQLite, `pg` for PostgreSQL) behind their own entries, `@inbox-kit/storage-kysely/sqlite` and
 * `@inbox-kit/storage-kysely/postgres`; `openStore` imports the one it needs when it opens.
 *
 * ```ts
 * const { store, close } = await openStore({ databaseUrl: process.env.DATABASE_URL, sqliteFile: 'data/inbox-kit.sqlite' });
 * ```
 */
import type { Kysely } from 'kysely';
import type { Store } from '@inbox-kit/core';
import { fileURLToPath } from 'node:url';
import { migrateToLatest } from './migrate.js';
import type { PostgresOptions } from './postgres.js';
import { createKyselyStore } from './store.js';
import type { Database, Dialect } from './schema.js';

export { createKyselyStore, type KyselyStoreOptions } from './store.js';
export { GroupCommitAbortedError } from './group-commit.js';
export { SQLITE_BUSY_TIMEOUT_MS, SQLITE_CACHE_SIZE_KIB, EVENT_BUS_APPLICATION_NAME, EVENT_BUS_CHANNEL } from './constants.js';
export type { PostgresOptions } from './postgres.js';
export type { EventNotification, PostgresEventBus, PostgresEventBusOptions } from './pg-event-bus.js';
export { migrateToLatest, detectDialect } from './migrate.js';
export { migrationsFor } from './migrations/index.js';
export type {
  AccountsTable, ApiKeysTable, AttemptOwnersTable, Database, Dialect, FloorsTable, IdempotencyRecordsTable,
  JsonText, OperationLogsTable, PagesTable, ProjectEventsTable, ProjectInboxItemsTable, ProjectMembersTable,
  ProjectsTable, RunsTable, SessionEventsTable, SessionsTable, TableOf, WorkspaceMembersTable, WorkspacesTable,
} from './schema.js';

/** The SQLite file used when neither `databaseUrl` nor `sqliteFile` names one (relative to the cwd). */
export const DEFAULT_SQLITE_FILE = 'data/inbox-kit.sqlite';

/** Options of {@link openStore}. */
export interface OpenStoreOptions {
  /**
   * `postgres://…` / `postgresql://…` selects PostgreSQL. Anything else names a SQLite file: a
   * `file:` URL (`file:///abs/path.sqlite`, `file:relative.sqlite`) or a plain path.
   */
  databaseUrl?: string | undefined;
  /** SQLite file used when `databaseUrl` is not set (default {@link DEFAULT_SQLITE_FILE}). */
  sqliteFile?: string | undefined;
  /** PostgreSQL pool options (ignored for SQLite). */
  postgres?: PostgresOptions | undefined;
  /**
   * SQLite options (ignored for PostgreSQL): `busyTimeoutMs`, how long a write waits for another
   * process's write lock before it fails with `storage_busy` (default `SQLITE_BUSY_TIMEOUT_MS`,
   * 5,000; the wait never blocks the thread); `cacheSizeKiB`, the page cache (see `openSqlite`).
   */
  sqlite?: { busyTimeoutMs?: number; cacheSizeKiB?: number } | undefined;
}

/** An open, migrated store and what it runs on. */
export interface OpenedStore {
  store: Store;
  db: Kysely<Database>;
  dialect: Dialect;
  /** Closes the database (idempotent). */
  close(): Promise<void>;
}

/** True when `url` selects PostgreSQL. */
export function isPostgresUrl(url: string | undefined): url is string {
  return url !== undefined && /^postgres(ql)?:\/\//i.test(url);
}

/** The SQLite path named by a `file:` URL or a plain path. */
function sqlitePath(location: string): string {
  if (location.startsWith('file://')) return fileURLToPath(location);
  if (location.startsWith('file:')) return location.slice('file:'.length);
  return location;
}

/**
 * Imports the entry of one engine; a missing driver (an optional peer) becomes an error that says
 * what to install.
 */
async function engine<T>(load: () => Promise<T>, driver: string, dialect: Dialect): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const e = error as { code?: string; message?: string };
    if ((e?.code === 'ERR_MODULE_NOT_FOUND' || e?.code === 'MODULE_NOT_FOUND') && e.message?.includes(`'${driver}'`)) {
      throw new Error(`@inbox-kit/storage-kysely: ${dialect === 'postgres' ? 'PostgreSQL' : 'SQLite'} needs the driver package ${driver} (an optional peer dependency): npm install ${driver}`, { cause: error });
    }
    throw error;
  }
}

/**
 * Opens the database chosen by the options, migrates it to the latest schema and returns the store.
 * Loads the engine's driver on demand: `better-sqlite3` for SQLite, `pg` for PostgreSQL.
 *
 * @throws Error when the engine's driver is not installed (the message names the package to
 *   install), when the database cannot be opened or when a migration fails (the connection is
 *   closed before the error is rethrown).
 */
export async function openStore(opts: OpenStoreOptions = {}): Promise<OpenedStore> {
  const { databaseUrl } = opts;
  const dialect: Dialect = isPostgresUrl(databaseUrl) ? 'postgres' : 'sqlite';
  const db = dialect === 'postgres'
    ? (await engine(() => import('./postgres.js'), 'pg', dialect)).openPostgres(databaseUrl as string, opts.postgres)
    : (await engine(() => import('./sqlite.js'), 'better-sqlite3', dialect)).openSqlite(sqlitePath(databaseUrl || opts.sqliteFile || DEFAULT_SQLITE_FILE), opts.sqlite ?? {});
  try {
    await migrateToLatest(db, dialect);
  } catch (error) {
    await db.destroy().catch(() => undefined);
    throw error;
  }
  const store = createKyselyStore(db, { dialect });
  let closing: Promise<void> | undefined;
  const close = () => (closing ??= db.destroy());
  return { store: { ...store, close }, db, dialect, close };
}
