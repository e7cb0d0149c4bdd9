/**
 * Schema migrations: brings a database to the latest schema with Kysely's `Migrator` and the
 * in-memory migration list of `./migrations`. Safe to run on every start and from several
 * processes at once (Kysely takes a migration lock; applied migrations are skipped).
 */
import { Migrator, PostgresAdapter, SqliteAdapter, type Kysely, type MigrationResult } from 'kysely';
import { migrationsFor } from './migrations/index.js';
import type { Database, Dialect } from './schema.js';

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

/**
 * Applies every pending migration, in order.
 *
 * @param db the database to migrate.
 * @param dialect the engine; detected from `db` when omitted.
 * @returns the names of the migrations applied by this call (empty when already up to date).
 * @throws Error `migration "<name>" failed: <cause>` (with `cause` set) when a migration fails;
 *   on PostgreSQL the whole run is one transaction, so nothing of it is left behind.
 */
export async function migrateToLatest(db: Kysely<Database>, dialect: Dialect = detectDialect(db)): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrationsFor(dialect) },
    // 0007 (indexes only) was merged after 0008: a database already at 0008 gets it applied then,
    // instead of being refused as out of order. A migration must not depend on one with a higher
    // number (so far none does), so the order they ran in never matters for the schema.
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
