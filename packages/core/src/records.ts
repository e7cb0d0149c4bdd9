/**
 * The records inbox-kit stores, shaped as they travel on the wire (snake_case, times in integer
 * ms since the epoch). Spec: platform.md, project-inbox.md "Resource: ProjectInboxItem".
 */

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export interface Workspace {
  id: string;
  name: string;
  created_at: number;
}

export interface Account {
  id: string;
  name: string;
  created_at: number;
}

/** `standard` authenticates its own account; `service` may act as any account of its workspace. */
export type ApiKeyKind = 'standard' | 'service';

export interface ApiKey {
  id: string;
  workspace_id: string;
  account_id: string;
  kind: ApiKeyKind;
  /** Hex SHA-256 of the secret; the secret itself is never stored. */
  key_hash: string;
  created_at: number;
  revoked_at: number | null;
}

export type ProjectStatus = 'active' | 'archived';

export interface Project {
  id: string;
  workspace_id: string;
  /** The owner's account id. */
  account_id: string;
  name: string;
  status: ProjectStatus;
  created_at: number;
  updated_at: number;
}

export type MemberRole = 'deriver' | 'observer';

export interface Membership {
  project_id: string;
  account_id: string;
  role: MemberRole;
  created_at: number;
}

export interface Session {
  id: string;
  workspace_id: string;
  project_id: string | null;
  title: string | null;
  created_by_account_id: string;
  created_at: number;
  /**
   * Snapshot of the configured agent the Session was created with (`POST /v1/sessions`, Managed
   * Agents shape), or null for a Session created without one (`POST /sessions`).
   */
  agent: JsonValue | null;
  /** The `environment_id` given at creation (kept as given), or null. */
  environment_id: string | null;
  /** String key-value metadata (≤ 16 pairs, keys ≤ 64 and values ≤ 512 code points). */
  metadata: Record<string, string>;
  /** Last change of title, metadata or archive state (ms); `created_at` until then. */
  updated_at: number;
  /** When the Session was archived (ms), or null. An archived Session takes no new `user.message`. */
  archived_at: number | null;
}

/** One committed turn of a Session. */
export interface Floor {
  id: string;
  workspace_id: string;
  session_id: string;
  /** 1, 2, 3 … per session and branch. */
  number: number;
  branch: string;
  state: 'committed';
  created_at: number;
}

/** One version of a Floor's content. */
export interface Page {
  id: string;
  workspace_id: string;
  session_id: string;
  floor_id: string;
  /** 1 for the first version, +1 per regeneration. */
  version: number;
  content: JsonValue;
  created_at: number;
}

export type InboxItemStatus = 'pending' | 'accepted' | 'rejected' | 'archived';
export type InboxDecision = 'accept' | 'reject' | 'archive';

export interface ProjectInboxItem {
  id: string;
  workspace_id: string;
  project_id: string;
  /** The Project owner's account id. */
  account_id: string;
  sender_account_id: string;
  type: string;
  title: string | null;
  payload: JsonValue;
  source_event_id: string | null;
  source_session_id: string | null;
  source_floor_id: string | null;
  source_page_id: string | null;
  status: InboxItemStatus;
  decided_by_account_id: string | null;
  decided_at: number | null;
  created_at: number;
  updated_at: number;
}

/**
 * Who may read a Project Event (platform.md "Project Events"): `project` — every member of the
 * project; `owner` — the project owner (and, for a Project Inbox event, the item's sender while it
 * is a deriver: project-inbox.md "Project Events and Operation Log").
 */
export type ProjectEventVisibility = 'project' | 'owner';

/**
 * What wrote a Project Event (platform.md "Project Events"): `api` — a request through the API;
 * `runtime_job` — the agent runtime acting on its own; `system` — start-up recovery and seeding.
 */
export type ProjectEventSource = 'api' | 'runtime_job' | 'system';

export interface ProjectEvent {
  id: string;
  workspace_id: string;
  project_id: string;
  /** Gap-free per project: 1, 2, 3 … */
  sequence: number;
  type: string;
  actor_account_id: string | null;
  session_id: string | null;
  floor_id: string | null;
  page_id: string | null;
  operation_log_id: string | null;
  /** The request id of the write that produced the event. */
  correlation_id: string | null;
  causation_event_id: string | null;
  payload: { [key: string]: JsonValue };
  /** Who may read it; fixed when it is written. */
  visibility: ProjectEventVisibility;
  /** What wrote it; fixed when it is written. */
  source: ProjectEventSource;
  created_at: number;
}

export interface OperationLog {
  id: string;
  workspace_id: string;
  project_id: string | null;
  actor_account_id: string;
  action: string;
  target_type: string;
  target_id: string;
  request_id: string | null;
  metadata: { [key: string]: JsonValue };
  created_at: number;
}

export type RunStatus = 'running' | 'idle';

export interface Run {
  id: string;
  session_id: string;
  status: RunStatus;
  started_at: number;
  ended_at: number | null;
  /** How the run ended: `completed`, `cancelled` or `failed`; null while running. */
  outcome: string | null;
}

/** One committed entry of the Session ledger (`GET /v1/sessions/{id}/events`). */
export interface SessionEvent {
  id: string;
  session_id: string;
  /** Gap-free per session: 1, 2, 3 … */
  seq: number;
  /** `user.message`, `agent.message`, `session.status_running`, `session.status_idle`. */
  type: string;
  run_id: string | null;
  /** Run-scoped message id (`{run_id}-inbox-{n}`) or null. */
  message_id: string | null;
  content: JsonValue;
  floor_id: string | null;
  page_id: string | null;
  processed_at: number;
}
