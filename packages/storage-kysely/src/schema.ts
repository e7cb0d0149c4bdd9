/**
 * The Kysely `Database` interface: one table per record of the storage port
 * (`@inbox-kit/core` `records.ts`), as the adapter reads and writes them.
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

/** JSON text: written and read as the `JSON.stringify` of a `JsonValue`. */
export type JsonText = string;

export interface WorkspacesTable {
  id: string;
  name: string;
  /** ms since epoch */
  created_at: number;
}

export interface AccountsTable {
  id: string;
  name: string;
  created_at: number;
}

/** Which accounts belong to which workspaces (primary key: workspace_id + account_id). */
export interface WorkspaceMembersTable {
  workspace_id: string;
  account_id: string;
}

export interface ApiKeysTable {
  id: string;
  workspace_id: string;
  account_id: string;
  kind: string;
  /** Hex SHA-256 of the secret; unique. */
  key_hash: string;
  created_at: number;
  revoked_at: number | null;
}

export interface ProjectsTable {
  id: string;
  workspace_id: string;
  account_id: string;
  name: string;
  status: string;
  created_at: number;
  updated_at: number;
  /** The last Project Event `sequence` handed out (0 = none yet). Not part of the Project record. */
  event_sequence: Generated<number>;
}

/** Primary key: project_id + account_id. */
export interface ProjectMembersTable {
  project_id: string;
  account_id: string;
  role: string;
  created_at: number;
}

export interface SessionsTable {
  id: string;
  workspace_id: string;
  project_id: string | null;
  title: string | null;
  created_by_account_id: string;
  created_at: number;
  agent: JsonText | null;
  environment_id: string | null;
  metadata: Generated<JsonText>;
  updated_at: number;
  archived_at: number | null;
  /** When the Session was deleted (ms); a deleted row is invisible to every read. Not part of the record. */
  deleted_at: number | null;
  /** The last Session ledger `seq` handed out (0 = none yet). Not part of the Session record. */
  event_seq: Generated<number>;
}

export interface FloorsTable {
  id: string;
  workspace_id: string;
  session_id: string;
  number: number;
  branch: string;
  state: string;
  created_at: number;
}

export interface PagesTable {
  id: string;
  workspace_id: string;
  session_id: string;
  floor_id: string;
  version: number;
  content: JsonText;
  created_at: number;
}

export interface ProjectInboxItemsTable {
  id: string;
  workspace_id: string;
  project_id: string;
  account_id: string;
  sender_account_id: string;
  type: string;
  title: string | null;
  payload: JsonText;
  source_event_id: string | null;
  source_session_id: string | null;
  source_floor_id: string | null;
  source_page_id: string | null;
  status: string;
  decided_by_account_id: string | null;
  decided_at: number | null;
  created_at: number;
  updated_at: number;
}

/** Unique (project_id, sequence). */
export interface ProjectEventsTable {
  id: string;
  workspace_id: string;
  project_id: string;
  sequence: number;
  type: string;
  actor_account_id: string | null;
  session_id: string | null;
  floor_id: string | null;
  page_id: string | null;
  operation_log_id: string | null;
  correlation_id: string | null;
  causation_event_id: string | null;
  payload: JsonText;
  /** `project` | `owner` (migration 0006). */
  visibility: string;
  /** `api` | `runtime_job` | `system` (migration 0006). */
  source: string;
  created_at: number;
}

export interface OperationLogsTable {
  id: string;
  workspace_id: string;
  project_id: string | null;
  actor_account_id: string;
  action: string;
  target_type: string;
  target_id: string;
  request_id: string | null;
  metadata: JsonText;
  created_at: number;
}

export interface RunsTable {
  id: string;
  session_id: string;
  status: string;
  started_at: number;
  ended_at: number | null;
  outcome: string | null;
}

/** Unique (session_id, seq). */
export interface SessionEventsTable {
  id: string;
  session_id: string;
  seq: number;
  type: string;
  run_id: string | null;
  message_id: string | null;
  content: JsonText;
  floor_id: string | null;
  page_id: string | null;
  processed_at: number;
}

/** Primary key (workspace_id, account_id, key). Added by migration 0002. */
export interface IdempotencyRecordsTable {
  workspace_id: string;
  account_id: string;
  key: string;
  /** Hex SHA-256 of the request that claimed the key. */
  request_hash: string;
  resource_type: string;
  resource_id: string;
  created_at: number;
}

/** Primary key session_id: which process hosts the Session's active native attempt. Added by migration 0003. */
export interface AttemptOwnersTable {
  session_id: string;
  run_id: string;
  host_id: string;
  host_url: string;
  /** ms since epoch; the row is ignored once it is not after "now". */
  lease_expires_at: number;
}

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
}

/** The two engines this package targets. */
export type Dialect = 'sqlite' | 'postgres';

