/**
 * Migration 0003: `attempt_owners`, which server process hosts the active native attempt of each
 * Session (live-inbox.md "Scale": several processes on one database route Live Inbox requests to
 * the owner). One row per Session (primary key `session_id`), so `claimAttemptOwnership` is one
 * `INSERT … ON CONFLICT (session_id) DO UPDATE … WHERE <expired or same host>`: the database lets
 * exactly one of concurrent claims in. A row whose `lease_expires_at` (ms) is not after "now" is
 * expired and ignored; rows are deleted on release and overwritten by the next claim.
 *
 * Column types follow 0001: ids are `text collate "C"` on PostgreSQL, times are `bigint` ms.
 */
import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../schema.js';

/** Builds the migration for one engine. */
export function attemptOwnersMigration(dialect: Dialect): Migration {
  const id = dialect === 'postgres' ? sql`text collate "C"` : sql`text`;

  return {
    // Untyped on purpose: a migration describes the schema at its own point in time.
    async up(db: Kysely<any>): Promise<void> {
      await db.schema.createTable('attempt_owners')
        .addColumn('session_id', id, (c) => c.primaryKey().notNull().references('sessions.id'))
        .addColumn('run_id', id, (c) => c.notNull())
        .addColumn('host_id', id, (c) => c.notNull())
        .addColumn('host_url', 'text', (c) => c.notNull())
        .addColumn('lease_expires_at', 'bigint', (c) => c.notNull())
        .execute();
    },

    async down(db: Kysely<any>): Promise<void> {
      await db.schema.dropTable('attempt_owners').execute();
    },
  };
}
