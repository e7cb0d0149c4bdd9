/**
 * Schema migrations: brings a database to the latest schema with Kysely's `Migrator` and the
 * in-memory migration list of `./migrations`. Safe to run on every start and from several
 * processes at once, and all or nothing on both engines: on PostgreSQL Kysely's migrator holds its
 * lock and one transaction; on SQLite, where it takes neither (its SQLite adapter declares no
 * transactional DDL and makes the lock a no-op), the whole run — what the database holds, then
 * every pending migration — is one `BEGIN IMMEDIATE` transaction on one connection, so processes
 * migrate one after another and a later one finds everything applied.
 *
 * A database migrated further by a newer release (it holds migrations this release does not know)
 * is left as it is: this release serves on it (storage README "Migrations": every migration keeps
 * the previous release working), and `migrateToLatest` applies nothing. A database that holds
 * unknown migrations *and* lacks some of this release's is refused (it was migrated by another
 * line of releases).
 */
import { Migrator, PostgresAdapter, SqliteAdapter, sql, type Kysely, type MigrationResult } from 'kysely';
import { migrationsFor } from './migrations/index.js';
import type { Database, Dialect } from './schema.js';

/** Kysely's table of applied migrations. */
const MIGRATION_TABLE = 'kysely_migration';

/**
 * Tells which engine a Kysely instance talks to, from its adapter.
 * @throws Error when the dialect is neither SQLite nor PostgreSQL.
 */
export function detectDialect(db: Kysely<Database>): Dialect {
  const adapter = db.getExecutor().adapter;
  if (adapter instanceof PostgresAdapter) return 'postgres';
  if (adapter instanceof SqliteAdapter) return 'sqlite';
  throw new Error(`@inbox-kit/storage-kysely: unsupported Kysely dialect (${adapter.constructor.name}); use SQLite or PostgreSQL`);
}

/** Where a database stands against this release's migrations. */
export interface MigrationStatus {
  /** This release's migrations the database holds, in order. */
  applied: string[];
  /** This release's migrations it lacks, in order (`migrateToLatest` applies them). */
  pending: string[];
  /** Migrations it holds that this release does not know: a newer release migrated it. */
  unknown: string[];
}

/** True for "the table does not exist" (SQLite's message, PostgreSQL's 42P01). */
function isMissingTable(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  return e?.code === '42P01' || (typeof e?.message === 'string' && e.message.includes(`no such table: ${MIGRATION_TABLE}`));
}

/**
 * Reads which migrations the database holds (one query; none on a database never migrated).
 * @throws the driver's error (or `storage_unavailable` from `openPostgres`'s pool) when the
 *   database cannot be read.
 */
export async function migrationStatus(db: Kysely<Database>, dialect: Dialect = detectDialect(db)): Promise<MigrationStatus> {
  const known = Object.keys(migrationsFor(dialect)).sort();
  let stored: string[];
  try {
    stored = (await sql<{ name: string }>`select name from ${sql.table(MIGRATION_TABLE)}`.execute(db)).rows.map((r) => r.name);
  } catch (error) {
    if (!isMissingTable(error)) throw error;
    stored = [];
  }
  const held = new Set(stored);
  return {
    applied: known.filter((name) => held.has(name)),
    pending: known.filter((name) => !held.has(name)),
    unknown: stored.filter((name) => !known.includes(name)).sort(),
  };
}

/**
 * Applies every pending migration, in order.
 *
 * @param db the database to migrate.
 * @param dialect the engine; detected from `db` when omitted.
 * @returns the names of the migrations applied by this call (empty when already up to date, or
 *   when a newer release migrated the database further: see the module comment).
 * @throws Error `migration "<name>" failed: <cause>` (with `cause` set) when a migration fails;
 *   the whole run is one transaction, so nothing of it is left behind. Error naming both lists
 *   when the database holds migrations this release does not know and lacks some of its own. On
 *   SQLite, `storage_busy` when another process held the write lock past the busy timeout.
 */
export async function migrateToLatest(db: Kysely<Database>, dialect: Dialect = detectDialect(db)): Promise<string[]> {
  if (dialect !== 'sqlite') return migrateOn(db, dialect);
  return db.connection().execute(async (connection) => {
    // The write lock first (waited for up to the busy timeout while another process migrates),
    // then what the database holds is read under it.
    await sql`begin immediate`.execute(connection);
    try {
      const applied = await migrateOn(connection, dialect);
      await sql`commit`.execute(connection);
      return applied;
    } catch (error) {
      await sql`rollback`.execute(connection).catch(() => {});
      throw error;
    }
  });
}

/** {@link migrateToLatest} on `db` as it is (on SQLite: the connection holding the run's transaction). */
async function migrateOn(db: Kysely<Database>, dialect: Dialect): Promise<string[]> {
  const status = await migrationStatus(db, dialect);
  if (status.unknown.length > 0) {
    if (status.pending.length === 0) return [];
    throw new Error(`@inbox-kit/storage-kysely: the database holds migrations this release does not know (${status.unknown.join(', ')}) `
      + `and lacks some of its own (${status.pending.join(', ')}); it was migrated by another line of releases: restore a backup or use the release that migrated it`);
  }
  if (status.pending.length === 0) return [];
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrationsFor(dialect) },
    // Migrations are numbered by the change that adds them and released together; one that sorts
    // before an applied one (a database migrated by a build from a branch, e.g. 0007 merged after
    // 0008 and 0010) still runs. A migration must not depend on one with a higher number (so far
    // none does), so the order they ran in never matters for the schema.
    allowUnorderedMigrations: true,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error !== undefined) {
    const failed = results?.find((r: MigrationResult) => r.status === 'Error');
    const cause = error instanceof Error ? error.message : String(error);
    throw new Error(
      failed
        ? `@inbox-kit/storage-kysely: migration "${failed.migrationName}" failed: ${cause}`
        : `@inbox-kit/storage-kysely: migrating to the latest schema failed: ${cause}`,
      { cause: error },
    );
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
