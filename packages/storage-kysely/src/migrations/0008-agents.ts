/**
 * Migration 0008: `agents`, the agents created through `/v1/agents` (live-inbox.md "Agents"): one
 * row per version (primary key `id, version`), the agent's current version flagged `latest = 1`.
 * `updateAgent` clears the flag of the version it starts from (`… WHERE latest = 1 AND version = ?
 * AND archived_at IS NULL`, which row-locks it) and inserts the next version, so of concurrent
 * updates from one version exactly one succeeds; `archiveAgent` sets `archived_at` on every
 * version. Pages of current versions seek `agents_page_idx (workspace_id, latest, created_at,
 * id)`. `model`, `tools` and `metadata` are JSON (`json` on PostgreSQL, `text` on SQLite).
 *
 * Column types follow 0001: ids are `text collate "C"` on PostgreSQL, times are `bigint` ms.
 */
import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../schema.js';

/** Builds the migration for one engine. */
export function agentsMigration(dialect: Dialect): Migration {
  const id = dialect === 'postgres' ? sql`text collate "C"` : sql`text`;
  const json = dialect === 'postgres' ? sql`json` : sql`text`;
  return {
    // Untyped on purpose: a migration describes the schema at its own point in time.
    async up(db: Kysely<any>): Promise<void> {
      await db.schema.createTable('agents')
        .addColumn('id', id, (c) => c.notNull())
        .addColumn('version', 'bigint', (c) => c.notNull())
        .addColumn('workspace_id', id, (c) => c.notNull().references('workspaces.id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('model', json, (c) => c.notNull())
        .addColumn('system', 'text')
        .addColumn('tools', json, (c) => c.notNull())
        .addColumn('metadata', json, (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addColumn('archived_at', 'bigint')
        .addColumn('latest', 'integer', (c) => c.notNull().defaultTo(1))
        .addPrimaryKeyConstraint('agents_pk', ['id', 'version'])
        .execute();
      await db.schema.createIndex('agents_page_idx').on('agents').columns(['workspace_id', 'latest', 'created_at', 'id']).execute();
    },

    async down(db: Kysely<any>): Promise<void> {
      await db.schema.dropTable('agents').execute();
    },
  };
}
