/**
 * Migration 0005: the Managed Agents fields of a Session (`POST /v1/sessions`, live-inbox.md
 * "Managed Agents compatibility"): `agent` (JSON snapshot of the configured agent, null for
 * Sessions created through `POST /sessions`), `environment_id`, `metadata` (JSON object, `{}` by
 * default), `updated_at` (ms; existing rows take their `created_at`), `archived_at` and
 * `deleted_at` (ms, null while live; a deleted Session is invisible to every read of the port).
 */
import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../schema.js';

/** Builds the migration for one engine (only the JSON column type differs). */
export function managedSessionsMigration(dialect: Dialect): Migration {
  const json = dialect === 'postgres' ? sql`json` : sql`text`;
  return {
    // Untyped on purpose: a migration describes the schema at its own point in time.
    async up(db: Kysely<any>): Promise<void> {
      await db.schema.alterTable('sessions').addColumn('agent', json).execute();
      await db.schema.alterTable('sessions').addColumn('environment_id', 'text').execute();
      await db.schema.alterTable('sessions').addColumn('metadata', json, (c) => c.notNull().defaultTo(sql`'{}'`)).execute();
      await db.schema.alterTable('sessions').addColumn('updated_at', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.alterTable('sessions').addColumn('archived_at', 'bigint').execute();
      await db.schema.alterTable('sessions').addColumn('deleted_at', 'bigint').execute();
      await db.updateTable('sessions').set({ updated_at: sql`created_at` }).execute();
    },

    async down(db: Kysely<any>): Promise<void> {
      for (const column of ['deleted_at', 'archived_at', 'updated_at', 'metadata', 'environment_id', 'agent']) {
        await db.schema.alterTable('sessions').dropColumn(column).execute();
      }
    },
  };
}
