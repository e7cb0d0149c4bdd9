/**
 * The platform's records as the SDK returns them (platform.md): accounts, API keys and the
 * administration's inputs, the caller (`Me`), Projects and members, Sessions, Floors and Pages,
 * Project Events (with the stream's resync marker) and Operation Log rows. Re-exported by
 * `../types.ts`.
 */
import type { JsonObject, JsonValue, RequestOptions } from './common.js';

// ---------------------------------------------------------------------------------------------
// Platform records
// ---------------------------------------------------------------------------------------------

/** A person or an agent. */
export interface Account {
  id: string;
  name: string;
  createdAt: number;
}

/**
 * `standard` authenticates its own account; `service` may act as any account of its workspace;
 * `admin` authenticates its own account and may use `client.admin` (the workspace's accounts and keys).
 */
export type ApiKeyKind = 'standard' | 'service' | 'admin';

/** An account as the workspace's administration sees it. Spec: platform.md "Administration". */
export interface WorkspaceAccount extends Account {
  workspaceId: string;
  /** When an administrator disabled it in this workspace (ms), or null. */
  disabledAt: number | null;
}

/** An API key as the administration shows it: never its secret, never its hash. */
export interface ApiKey {
  id: string;
  workspaceId: string;
  accountId: string;
  kind: ApiKeyKind;
  createdAt: number;
  /** From when the key is refused (ms; a future time: a rotated key's grace period), or null. */
  revokedAt: number | null;
  /** The last time it authenticated a request (ms, to within a minute), or null. */
  lastUsedAt: number | null;
}

/** A key just created: the record and its secret, which is shown only in this answer. */
export interface IssuedApiKey {
  key: ApiKey;
  /** Send it as the client's `apiKey`; it is never shown again. */
  secret: string;
}

/** A key just rotated: the new key, its secret, and the key it replaces (refused from its `revokedAt`). */
export interface RotatedApiKey extends IssuedApiKey {
  previous: ApiKey;
}

/** Body of `client.admin.accounts.create`. */
export interface CreateAccountInput {
  /** 1–200 code points after trimming. */
  name: string;
}

/** Options of `client.admin.keys.create`. */
export interface CreateApiKeyParams extends RequestOptions {
  /** Default `standard`. */
  kind?: ApiKeyKind;
}

/** Filters of `client.admin.keys.list` (its first argument; the per-call options are the second). */
export interface ListApiKeysFilters {
  /** Only the keys of this account (`account_id`). */
  accountId?: string;
  /** Also list revoked keys (default false: the keys accepted now, those in a grace period included). */
  includeRevoked?: boolean;
}

/** Options of `client.admin.keys.rotate`. */
export interface RotateApiKeyParams extends RequestOptions {
  /** How long the old secret keeps working, in ms (default 0: refused at once; at most 7 days). */
  graceMs?: number;
}

/** The caller, as `GET /me` answers. */
export interface Me {
  account: Account;
  workspaceId: string;
  keyKind: ApiKeyKind;
}

export type ProjectStatus = 'active' | 'archived';

export interface Project {
  id: string;
  workspaceId: string;
  /** The owner's account id. */
  accountId: string;
  name: string;
  status: ProjectStatus;
  createdAt: number;
  updatedAt: number;
  /** The caller's role in it (platform.md "Projects" → "Records"). */
  role: ProjectRole;
  /** The record kind: always `project`. */
  kind: 'project';
}

/** A member's role. The owner is the owner by `project.accountId`, not by membership. */
export type MemberRole = 'deriver' | 'observer';

/** The caller's role in a Project. */
export type ProjectRole = 'owner' | MemberRole;

export interface Member {
  /** The membership id (`mbr_…`): one per project and account, the same on every read. */
  id: string;
  workspaceId: string;
  projectId: string;
  accountId: string;
  role: MemberRole;
  /** `active` (a removed member is not listed). */
  status: 'active';
  createdAt: number;
}

export interface Session {
  id: string;
  workspaceId: string;
  projectId: string | null;
  title: string | null;
  createdByAccountId: string;
  createdAt: number;
  /**
   * Snapshot of the agent at creation: the configured agent for a Session created through
   * `POST /v1/sessions`, the Runtime's own (`{ type: 'agent', id: 'runtime', … }`) for one created
   * through `POST /sessions`; null only for a Session a store has not migrated yet.
   */
  agent: JsonValue | null;
  /** The `environment_id` given to `POST /v1/sessions`, `default` for one created through `POST /sessions` (null: not migrated yet). */
  environmentId: string | null;
  /** String key-value metadata (set through `/v1/sessions`). */
  metadata: Record<string, string>;
  /** ms since the epoch. */
  updatedAt: number;
  /** ms since the epoch, or null while not archived. */
  archivedAt: number | null;
}

/** One committed turn of a Session. */
export interface Floor {
  id: string;
  workspaceId: string;
  sessionId: string;
  /** 1, 2, 3 … per session and branch. */
  number: number;
  branch: string;
  state: 'committed';
  createdAt: number;
}

/** One version of a Floor's content. */
export interface Page {
  id: string;
  workspaceId: string;
  sessionId: string;
  floorId: string;
  /** 1 for the first version, +1 per regeneration. */
  version: number;
  /** Passed through untouched. */
  content: JsonValue;
  createdAt: number;
}

/** Who may read a Project Event (platform.md "Project Events"). */
export type ProjectEventVisibility = 'project' | 'owner';

/** What wrote a Project Event (platform.md "Project Events"). */
export type ProjectEventSource = 'api' | 'runtime_job' | 'system';

/**
 * The `resync` signal of a stream (platform.md "Project Events" → "Resume"): the position asked
 * for is after the newest stored event, so the stream goes on after `latest`; re-read what you hold.
 */
export interface StreamResync {
  type: 'resync';
  reason: 'ahead_of_latest';
  requestedAfter: number;
  latest: number;
}

/** A Project Event. `payload` is passed through untouched (its keys stay snake_case). */
export interface ProjectEvent {
  id: string;
  workspaceId: string;
  projectId: string;
  /** Gap-free per project: 1, 2, 3 … */
  sequence: number;
  type: string;
  actorAccountId: string | null;
  sessionId: string | null;
  floorId: string | null;
  pageId: string | null;
  operationLogId: string | null;
  /** The request id of the write that produced the event. */
  correlationId: string | null;
  causationEventId: string | null;
  payload: JsonObject;
  /** Who may read it: `project` (every member) or `owner` (the owner; an inbox event also its item's sender). */
  visibility: ProjectEventVisibility;
  /** What wrote it: `api` (a request), `runtime_job` (the agent runtime), `system` (start-up recovery, seeding). */
  source: ProjectEventSource;
  createdAt: number;
}

/** An audit row. `metadata` is passed through untouched. */
export interface OperationLog {
  id: string;
  workspaceId: string;
  projectId: string | null;
  actorAccountId: string;
  action: string;
  targetType: string;
  targetId: string;
  requestId: string | null;
  metadata: JsonObject;
  createdAt: number;
}
