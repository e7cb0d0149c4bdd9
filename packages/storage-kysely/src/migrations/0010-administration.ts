/**
 * Migration 0010: what the workspace administration needs (platform.md "Administration").
 * - `api_keys.last_used_at` (ms, nullable): when the key last authenticated a request, to within
 *   a minute; and the index `api_keys_workspace_created_idx` on `(workspace_id, created_at desc,
 *   id desc)` for `listApiKeys`.
 * - `workspace_members.disabled_at` (ms, nullable): an account disabled in a workspace is no
 *   member there any more (its row stays, so the history still names it).
 * - the partial index `operation_logs_workspace_idx` on `operation_logs (workspace_id, created_at
 *   desc, id desc) WHERE project_id IS NULL` for `listWorkspaceOperationLogs` (the administration
 *   writes, which belong to no project).
 * Only nullable columns and indexes: a process of the previous release keeps working on the
 * migrated schema (storage README "Migrations").
 */
import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../schema.js';

/** Builds the migration for one engine (the same statements on both). */
export function administrationMigration(_dialect: Dialect): Migration {
  return {
    // Untyped on purpose: a migration describes the schema at its own point in time.
    async up(db: Kysely<any>): Promise<void> {
      await db.schema.alterTable('api_keys').addColumn('last_used_at', 'bigint').execute();
      await db.schema.alterTable('workspace_members').addColumn('disabled_at', 'bigint').execute();
      await db.schema.createIndex('api_keys_workspace_created_idx').on('api_keys')
        .columns(['workspace_id', 'created_at desc', 'id desc']).execute();
      await db.schema.createIndex('operation_logs_workspace_idx').on('operation_logs')
        .columns(['workspace_id', 'created_at desc', 'id desc']).where(sql.ref('project_id'), 'is', null).execute();
    },

    async down(db: Kysely<any>): Promise<void> {
      await db.schema.dropIndex('operation_logs_workspace_idx').execute();
      await db.schema.dropIndex('api_keys_workspace_created_idx').execute();
      await db.schema.alterTable('workspace_members').dropColumn('disabled_at').execute();
      await db.schema.alterTable('api_keys').dropColumn('last_used_at').execute();
    },
  };
}
