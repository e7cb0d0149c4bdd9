/**
 * Migration 0007: indexes for the keyset pages of every list route and for the retention sweep
 * of idempotency records (platform.md "Lists and pages", "Retention"):
 * - `idempotency_records_created_idx (created_at)`: `sweepIdempotencyRecords` finds the oldest
 *   expired keys without a scan;
 * - `floors_session_page_idx (session_id, number, branch, id)`: `pageFloors` in its order;
 * - `project_members_page_idx (project_id, created_at, account_id)`: `pageMemberships`;
 * - `sessions_project_created_idx (project_id, created_at desc, id desc)`: `GET /sessions?project_id=`.
 * Indexes only: no row changes, safe to apply while serving (a short write lock per table on SQLite).
 */
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../schema.js';

/** Builds the migration for one engine (the same statements on both). */
export function pagingAndRetentionMigration(_dialect: Dialect): Migration {
  return {
    // Untyped on purpose: a migration describes the schema at its own point in time.
    async up(db: Kysely<any>): Promise<void> {
      await db.schema.createIndex('idempotency_records_created_idx').on('idempotency_records').columns(['created_at']).execute();
      await db.schema.createIndex('floors_session_page_idx').on('floors').columns(['session_id', 'number', 'branch', 'id']).execute();
      await db.schema.createIndex('project_members_page_idx').on('project_members').columns(['project_id', 'created_at', 'account_id']).execute();
      await db.schema.createIndex('sessions_project_created_idx').on('sessions').columns(['project_id', 'created_at desc', 'id desc']).execute();
    },

    async down(db: Kysely<any>): Promise<void> {
      await db.schema.dropIndex('sessions_project_created_idx').execute();
      await db.schema.dropIndex('project_members_page_idx').execute();
      await db.schema.dropIndex('floors_session_page_idx').execute();
      await db.schema.dropIndex('idempotency_records_created_idx').execute();
    },
  };
}
