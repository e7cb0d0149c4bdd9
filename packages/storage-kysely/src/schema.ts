/**
 * The Kysely `Database` interface: one table per record of the storage port
 * (`@inbox-kit/core` `records.ts`), as the adapter reads and writes them. Each table's row type is
 * derived from its record ({@link TableOf}), so a new record field needs no edit here.
 *
 * Conventions shared by both engines:
 * - times are integer milliseconds since the epoch (`BIGINT`);
 * - JSON columns hold the compact `JSON.stringify` text of the value (SQLite `TEXT`, PostgreSQL
 *   `json`); the adapter reads them back as text and parses them itself, so what was stored is
 *   what a read returns, key order included;
 * - counters the store allocates (`projects.event_sequence`, `sessions.event_seq`) are columns of
 *   the parent row, never returned as part of the record.
 *
 * Numbers are typed `number`; a PostgreSQL pool without the int8 parser of `openPostgres` returns
 * `BIGINT` as strings, so the adapter converts every numeric column with `Number()` on the way out.
 */
import type { Generated } from 'kysely';
import type {
  Account, Agent, ApiKey, AttemptOwnership, Floor, IdempotencyRecord, Membership, OperationLog, Page, Project, ProjectEvent, ProjectInboxItem, Run,
  Session, SessionEvent, Workspace,
} from '@inbox-kit/core';

/** JSON text: written and read as the `JSON.stringify` of a `JsonValue`. */
export type JsonText = string;

/** A column of a record field: a number or a string (a closed set of strings widened to `string`), null kept. */
type Column<V> = V extends number ? number : V extends string ? string : V;

/**
 * The row type of a record's table, derived from the record (`@inbox-kit/core` `records.ts`, itself
 * the schema's `z.infer`): one column per field, `Json` fields as {@link JsonText}; `Extra`
 * replaces or adds columns (counters, soft-delete marks, defaults).
 */
export type TableOf<R, Json extends keyof R = never, Extra = object> =
  Omit<{ [K in keyof R]: K extends Json ? JsonText : Column<R[K]> }, keyof Extra> & Extra;

export type WorkspacesTable = TableOf<Workspace>;

export type AccountsTable = TableOf<Account>;

/** Which accounts belong to which workspaces (primary key: workspace_id + account_id). */
export interface WorkspaceMembersTable {
  workspace_id: string;
  account_id: string;
}

/** `key_hash` (hex SHA-256 of the secret) is unique. */
export type ApiKeysTable = TableOf<ApiKey>;

export type ProjectsTable = TableOf<Project, never, {
  /** The last Project Event `sequence` handed out (0 = none yet). Not part of the Project record. */
  event_sequence: Generated<number>;
}>;

/** Primary key: project_id + account_id. */
export type ProjectMembersTable = TableOf<Membership>;

export type SessionsTable = TableOf<Session, never, {
  /** The agent snapshot as JSON text, or SQL `NULL` for a Session without one. */
  agent: JsonText | null;
  metadata: Generated<JsonText>;
  /** When the Session was deleted (ms); a deleted row is invisible to every read. Not part of the record. */
  deleted_at: number | null;
  /** The last Session ledger `seq` handed out (0 = none yet). Not part of the Session record. */
  event_seq: Generated<number>;
}>;

export type FloorsTable = TableOf<Floor>;

export type PagesTable = TableOf<Page, 'content'>;

export type ProjectInboxItemsTable = TableOf<ProjectInboxItem, 'payload'>;

/** Unique (project_id, sequence). `visibility` and `source` added by migration 0006. */
export type ProjectEventsTable = TableOf<ProjectEvent, 'payload'>;

export type OperationLogsTable = TableOf<OperationLog, 'metadata'>;

export type RunsTable = TableOf<Run>;

/** Unique (session_id, seq). */
export type SessionEventsTable = TableOf<SessionEvent, 'content'>;

/** Primary key (workspace_id, account_id, key). Added by migration 0002. */
export type IdempotencyRecordsTable = TableOf<IdempotencyRecord>;

/** Primary key session_id: which process hosts the Session's active native attempt. Added by migration 0003. */
export type AttemptOwnersTable = TableOf<AttemptOwnership>;

/** Primary key (id, version): one row per version; `latest` (1/0) flags the current one. Added by migration 0008. */
export type AgentsTable = TableOf<Agent, 'model' | 'tools' | 'metadata', {
  /** 1 for the agent's current version, 0 for older ones. Not part of the record. */
  latest: Generated<number>;
}>;

/** Every table the migrations create, by name. */
export interface Database {
  workspaces: WorkspacesTable;
  accounts: AccountsTable;
  workspace_members: WorkspaceMembersTable;
  api_keys: ApiKeysTable;
  projects: ProjectsTable;
  project_members: ProjectMembersTable;
  sessions: SessionsTable;
  floors: FloorsTable;
  pages: PagesTable;
  project_inbox_items: ProjectInboxItemsTable;
  project_events: ProjectEventsTable;
  operation_logs: OperationLogsTable;
  runs: RunsTable;
  session_events: SessionEventsTable;
  idempotency_records: IdempotencyRecordsTable;
  attempt_owners: AttemptOwnersTable;
  agents: AgentsTable;
}

/** The two engines this package targets. */
export type Dialect = 'sqlite' | 'postgres';

