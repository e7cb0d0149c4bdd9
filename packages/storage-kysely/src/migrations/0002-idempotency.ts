/**
 * Migration 0002: `idempotency_records`, one row per `Idempotency-Key` a caller used on a create
 * (project-inbox.md "POST /projects/:id/inbox", header `Idempotency-Key`). The primary key
 * `(workspace_id, account_id, key)` is what makes `insertIdempotencyRecord` a conditional insert
 * (`INSERT … ON CONFLICT DO NOTHING`): of concurrent claims of one key the database lets exactly
 * one in, and a competitor of an uncommitted claim waits for its outcome.
 *
 * Column types follow 0001: ids and the key are `text collate "C"` on PostgreSQL (byte order and
 * byte equality), times are `bigint` ms. Rows are never updated; expired ones are deleted by
 * `sweepIdempotencyRecords` (index in 0007).
 */
import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../schema.js';

/** Builds the migration for one engine. */
export function idempotencyMigration(dialect: Dialect): Migration {
  const id = dialect === 'postgres' ? sql`text collate "C"` : sql`text`;

  return {
    // Untyped on purpose: a migration describes the schema at its own point in time.
    async up(db: Kysely<any>): Promise<void> {
      await db.schema.createTable('idempotency_records')
        .addColumn('workspace_id', id, (c) => c.notNull().references('workspaces.id'))
        .addColumn('account_id', id, (c) => c.notNull())
        .addColumn('key', id, (c) => c.notNull())
        .addColumn('request_hash', 'text', (c) => c.notNull())
        .addColumn('resource_type', 'text', (c) => c.notNull())
        .addColumn('resource_id', id, (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('idempotency_records_pk', ['workspace_id', 'account_id', 'key'])
        .execute();
    },

    async down(db: Kysely<any>): Promise<void> {
      await db.schema.dropTable('idempotency_records').execute();
    },
  };
}
