/**
 * Migration 0001: every table of the storage port, with the constraints and keyset indexes the
 * adapter relies on. One definition serves both engines; only three column types differ:
 *
 * | kind | SQLite | PostgreSQL |
 * |---|---|---|
 * | ids and references | `text` (binary collation) | `text collate "C"` (byte order, so `id DESC` orders the same on both engines and in JavaScript) |
 * | JSON | `text` | `json` (validated, stored verbatim: key order and `\u0000` escapes survive, unlike `jsonb`) |
 * | ms times, sequences | `bigint` (INTEGER affinity) | `bigint` |
 *
 * Primary keys are declared `NOT NULL` explicitly: SQLite (for historical reasons) otherwise
 * accepts NULL in a non-INTEGER primary key.
 *
 * Foreign keys tie each row to its structural parent (workspace, project, session, floor); the
 * soft references a record carries (`source_*`, actor ids, event links) are not constrained, as
 * the services validate them within the workspace.
 */
import { sql, type Kysely, type Migration, type RawBuilder } from 'kysely';
import type { Dialect } from '../schema.js';

/** Builds the migration for one engine. */
export function initialMigration(dialect: Dialect): Migration {
  const types: ColumnTypes = {
    id: dialect === 'postgres' ? sql`text collate "C"` : sql`text`,
    json: dialect === 'postgres' ? sql`json` : sql`text`,
  };

  return {
    // The builder is untyped on purpose: a migration describes the schema at its own point in time.
    async up(db: Kysely<any>): Promise<void> {
      // One group of tables after another, parents first (the foreign keys need them).
      await createIdentityTables(db, types);
      await createProjectTables(db, types);
      await createSessionTables(db, types);
      await createInboxTables(db, types);
      await createRunTables(db, types);
    },

    async down(db: Kysely<any>): Promise<void> {
      for (const table of [
        'session_events', 'runs', 'operation_logs', 'project_events', 'project_inbox_items', 'pages', 'floors',
        'sessions', 'project_members', 'projects', 'api_keys', 'workspace_members', 'accounts', 'workspaces',
      ]) {
        await db.schema.dropTable(table).execute();
      }
    },
  };
}

/** The column types that differ between the engines (see the table above). */
interface ColumnTypes {
  /** Ids and references. */
  id: RawBuilder<unknown>;
  /** JSON columns. */
  json: RawBuilder<unknown>;
}

/** Creates workspaces, accounts, their memberships and API keys (platform.md "Identity and credentials"). */
async function createIdentityTables(db: Kysely<any>, { id }: ColumnTypes): Promise<void> {
  await db.schema.createTable('workspaces')
    .addColumn('id', id, (c) => c.primaryKey().notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema.createTable('accounts')
    .addColumn('id', id, (c) => c.primaryKey().notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema.createTable('workspace_members')
    .addColumn('workspace_id', id, (c) => c.notNull().references('workspaces.id'))
    .addColumn('account_id', id, (c) => c.notNull().references('accounts.id'))
    .addPrimaryKeyConstraint('workspace_members_pk', ['workspace_id', 'account_id'])
    .execute();
  await db.schema.createIndex('workspace_members_account_idx').on('workspace_members').columns(['account_id']).execute();

  await db.schema.createTable('api_keys')
    .addColumn('id', id, (c) => c.primaryKey().notNull())
    .addColumn('workspace_id', id, (c) => c.notNull().references('workspaces.id'))
    .addColumn('account_id', id, (c) => c.notNull().references('accounts.id'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .addUniqueConstraint('api_keys_key_hash_unique', ['key_hash'])
    .execute();
}

/** Creates projects and their members (platform.md "Projects, members, sources"). */
async function createProjectTables(db: Kysely<any>, { id }: ColumnTypes): Promise<void> {
  await db.schema.createTable('projects')
    .addColumn('id', id, (c) => c.primaryKey().notNull())
    .addColumn('workspace_id', id, (c) => c.notNull().references('workspaces.id'))
    .addColumn('account_id', id, (c) => c.notNull().references('accounts.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('event_sequence', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('projects_workspace_created_idx').on('projects')
    .columns(['workspace_id', 'created_at desc', 'id desc']).execute();

  await db.schema.createTable('project_members')
    .addColumn('project_id', id, (c) => c.notNull().references('projects.id'))
    .addColumn('account_id', id, (c) => c.notNull().references('accounts.id'))
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('project_members_pk', ['project_id', 'account_id'])
    .execute();
  await db.schema.createIndex('project_members_account_idx').on('project_members').columns(['account_id']).execute();
}

/** Creates Sessions, their Floors and Pages. */
async function createSessionTables(db: Kysely<any>, { id, json }: ColumnTypes): Promise<void> {
  await db.schema.createTable('sessions')
    .addColumn('id', id, (c) => c.primaryKey().notNull())
    .addColumn('workspace_id', id, (c) => c.notNull().references('workspaces.id'))
    .addColumn('project_id', id, (c) => c.references('projects.id'))
    .addColumn('title', 'text')
    .addColumn('created_by_account_id', id, (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('event_seq', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('sessions_workspace_created_idx').on('sessions')
    .columns(['workspace_id', 'created_at desc', 'id desc']).execute();
  await db.schema.createIndex('sessions_project_idx').on('sessions').columns(['project_id']).execute();

  await db.schema.createTable('floors')
    .addColumn('id', id, (c) => c.primaryKey().notNull())
    .addColumn('workspace_id', id, (c) => c.notNull().references('workspaces.id'))
    .addColumn('session_id', id, (c) => c.notNull().references('sessions.id'))
    .addColumn('number', 'integer', (c) => c.notNull())
    .addColumn('branch', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('floors_session_branch_number_idx').on('floors')
    .columns(['session_id', 'branch', 'number']).execute();

  await db.schema.createTable('pages')
    .addColumn('id', id, (c) => c.primaryKey().notNull())
    .addColumn('workspace_id', id, (c) => c.notNull().references('workspaces.id'))
    .addColumn('session_id', id, (c) => c.notNull().references('sessions.id'))
    .addColumn('floor_id', id, (c) => c.notNull().references('floors.id'))
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('content', json, (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('pages_floor_version_idx').on('pages').columns(['floor_id', 'version']).execute();
}

/** Creates the Project Inbox, Project Events and the Operation Log (project-inbox.md; platform.md "Project Events", "Operation Log"). */
async function createInboxTables(db: Kysely<any>, { id, json }: ColumnTypes): Promise<void> {
  await db.schema.createTable('project_inbox_items')
    .addColumn('id', id, (c) => c.primaryKey().notNull())
    .addColumn('workspace_id', id, (c) => c.notNull().references('workspaces.id'))
    .addColumn('project_id', id, (c) => c.notNull().references('projects.id'))
    .addColumn('account_id', id, (c) => c.notNull())
    .addColumn('sender_account_id', id, (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('title', 'text')
    .addColumn('payload', json, (c) => c.notNull())
    .addColumn('source_event_id', id)
    .addColumn('source_session_id', id)
    .addColumn('source_floor_id', id)
    .addColumn('source_page_id', id)
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('decided_by_account_id', id)
    .addColumn('decided_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  // Keyset paging: `created_at DESC, id DESC` within a project, unfiltered and per filter.
  await db.schema.createIndex('project_inbox_items_page_idx').on('project_inbox_items')
    .columns(['project_id', 'created_at desc', 'id desc']).execute();
  await db.schema.createIndex('project_inbox_items_status_page_idx').on('project_inbox_items')
    .columns(['project_id', 'status', 'created_at desc', 'id desc']).execute();
  await db.schema.createIndex('project_inbox_items_sender_page_idx').on('project_inbox_items')
    .columns(['project_id', 'sender_account_id', 'created_at desc', 'id desc']).execute();
  await db.schema.createIndex('project_inbox_items_source_session_page_idx').on('project_inbox_items')
    .columns(['project_id', 'source_session_id', 'created_at desc', 'id desc']).execute();

  await db.schema.createTable('project_events')
    .addColumn('id', id, (c) => c.primaryKey().notNull())
    .addColumn('workspace_id', id, (c) => c.notNull().references('workspaces.id'))
    .addColumn('project_id', id, (c) => c.notNull().references('projects.id'))
    .addColumn('sequence', 'bigint', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('actor_account_id', id)
    .addColumn('session_id', id)
    .addColumn('floor_id', id)
    .addColumn('page_id', id)
    .addColumn('operation_log_id', id)
    .addColumn('correlation_id', 'text')
    .addColumn('causation_event_id', id)
    .addColumn('payload', json, (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('project_events_project_sequence_unique', ['project_id', 'sequence'])
    .execute();

  await db.schema.createTable('operation_logs')
    .addColumn('id', id, (c) => c.primaryKey().notNull())
    .addColumn('workspace_id', id, (c) => c.notNull().references('workspaces.id'))
    .addColumn('project_id', id, (c) => c.references('projects.id'))
    .addColumn('actor_account_id', id, (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('target_type', 'text', (c) => c.notNull())
    .addColumn('target_id', id, (c) => c.notNull())
    .addColumn('request_id', 'text')
    .addColumn('metadata', json, (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('operation_logs_page_idx').on('operation_logs')
    .columns(['project_id', 'created_at desc', 'id desc']).execute();
}

/** Creates Runs and the Session ledger (live-inbox.md "Drain, commit, carry-over"). */
async function createRunTables(db: Kysely<any>, { id, json }: ColumnTypes): Promise<void> {
  await db.schema.createTable('runs')
    .addColumn('id', id, (c) => c.primaryKey().notNull())
    .addColumn('session_id', id, (c) => c.notNull().references('sessions.id'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('ended_at', 'bigint')
    .addColumn('outcome', 'text')
    .execute();
  await db.schema.createIndex('runs_session_status_idx').on('runs').columns(['session_id', 'status']).execute();

  await db.schema.createTable('session_events')
    .addColumn('id', id, (c) => c.primaryKey().notNull())
    .addColumn('session_id', id, (c) => c.notNull().references('sessions.id'))
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('run_id', id)
    .addColumn('message_id', 'text')
    .addColumn('content', json, (c) => c.notNull())
    .addColumn('floor_id', id)
    .addColumn('page_id', id)
    .addColumn('processed_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('session_events_session_seq_unique', ['session_id', 'seq'])
    .execute();
}
