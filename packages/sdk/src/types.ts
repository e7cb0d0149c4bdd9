/**
 * The public shapes of the SDK: records as the client returns them (top-level fields camelCase,
 * times in integer ms since the epoch) and the inputs its methods take. The server speaks
 * snake_case; the client maps top-level fields both ways and leaves nested values (`payload`,
 * `content`, `metadata`) untouched. These types are declared here on purpose: the SDK imports
 * nothing from `@inbox-kit/core`. Spec: platform.md, project-inbox.md, live-inbox.md.
 */

/** Any JSON value. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** A JSON object, e.g. an event `payload` or an Operation Log `metadata`. */
export type JsonObject = { [key: string]: JsonValue };

// ---------------------------------------------------------------------------------------------
// Per-call options
// ---------------------------------------------------------------------------------------------

/** Options every call accepts. */
export interface RequestOptions {
  /**
   * Act as this account (sent as `x-account-id`). Only a `service` key may act as another account
   * of its workspace; an ordinary key sending another id gets 403. Overrides the client default.
   * Spec: platform.md "Identity and credentials".
   */
  accountId?: string;
  /** Aborts the request (and any retry wait). The call rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** Options of a create call (`POST`): adds an `Idempotency-Key`. */
export interface CreateOptions extends RequestOptions {
  /** Sent as `Idempotency-Key`, so the server can recognise a repeated create. */
  idempotencyKey?: string;
}

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

// ---------------------------------------------------------------------------------------------
// Project Inbox
// ---------------------------------------------------------------------------------------------

export type InboxItemStatus = 'pending' | 'accepted' | 'rejected' | 'archived';
export type InboxDecision = 'accept' | 'reject' | 'archive';

/** Spec: project-inbox.md "Resource: ProjectInboxItem". `payload` is passed through untouched. */
export interface ProjectInboxItem {
  id: string;
  workspaceId: string;
  projectId: string;
  /** The Project owner's account id. */
  accountId: string;
  senderAccountId: string;
  type: string;
  title: string | null;
  payload: JsonValue;
  sourceEventId: string | null;
  sourceSessionId: string | null;
  sourceFloorId: string | null;
  sourcePageId: string | null;
  status: InboxItemStatus;
  decidedByAccountId: string | null;
  decidedAt: number | null;
  createdAt: number;
  updatedAt: number;
}

/** Body of `client.projects.inbox.create`. Spec: project-inbox.md "POST /projects/:id/inbox". */
export interface CreateInboxItemInput {
  /** 1–128 code points after trimming. */
  type: string;
  /** ≤ 200 code points; blank becomes `null`. */
  title?: string | null;
  /** Any JSON, ≤ 262,144 UTF-8 bytes compact. Sent untouched. */
  payload?: unknown;
  sourceEventId?: string | null;
  sourceSessionId?: string | null;
  sourceFloorId?: string | null;
  sourcePageId?: string | null;
}

/** Filters of `client.projects.inbox.list` / `listAll`. Spec: project-inbox.md "GET /projects/:id/inbox". */
export interface ListInboxItemsFilters {
  status?: InboxItemStatus;
  /** Exact item type. */
  type?: string;
  senderAccountId?: string;
  sourceSessionId?: string;
  /** Page size, 1–200 (server default 50). */
  limit?: number;
  /** `nextCursor` of the previous page. */
  cursor?: string;
}

/** Filters and per-call options in one object, as the seed's calling convention mixes them. */
export type ListInboxItemsParams = ListInboxItemsFilters & RequestOptions;

/** Options of a decision: the per-call options plus the `note` (≤ 500 code points, Operation Log only). */
export interface DecideInboxItemParams extends RequestOptions {
  note?: string | null;
}

/** A cursor page. `nextCursor` is `null` on the last page. */
export interface CursorPage<T> {
  items: T[];
  nextCursor: string | null;
}

/** A plain list (no paging); every list route now pages: see {@link CursorPage} (which has `items` too). */
export interface ItemList<T> {
  items: T[];
}

/**
 * Paging of a list (platform.md "Lists and pages"): `limit` 1–200 (server default 50) and the
 * `nextCursor` of the previous page as `cursor` (with the same other parameters).
 */
export interface PageParams extends RequestOptions {
  limit?: number;
  cursor?: string;
}

// ---------------------------------------------------------------------------------------------
// Project events and Operation Log queries
// ---------------------------------------------------------------------------------------------

/** Query of `client.projects.events.list`. Spec: platform.md "Project Events". */
export interface ListProjectEventsParams extends RequestOptions {
  /** Return events with `sequence` greater than this (default 0). */
  after?: number;
  /** Only these event types (sent comma-separated). */
  types?: string[];
  sessionId?: string;
  /** 1–500 (server default 100). */
  limit?: number;
}

/** A page of Project Events, ascending by `sequence`. */
export interface ProjectEventPage {
  items: ProjectEvent[];
  /** Pass as `after` to read the next page. */
  nextAfter: number;
  hasMore: boolean;
}

/** Options of `client.projects.events.stream`. */
export interface StreamProjectEventsParams extends RequestOptions {
  /** Start after this `sequence` (the first connection only; reconnects use `Last-Event-ID`). */
  after?: number;
  /** Only these event types (sent comma-separated). */
  types?: string[];
  /** Only events of this Session (`session_id`). */
  sessionId?: string;
  /**
   * Called when the server answers a resume position after its newest event with a `resync`
   * frame (the iterator yields no item for it; the stream goes on after `latest`).
   */
  onResync?: (resync: StreamResync) => void;
}

/** Query of `client.projects.operationLogs.list`. */
export type ListOperationLogsParams = PageParams;

// ---------------------------------------------------------------------------------------------
// Sessions, floors, pages
// ---------------------------------------------------------------------------------------------

/** The server generates the project's id (`proj_…`); ids are not chosen by callers. */
export interface CreateProjectInput {
  /** 1–200 code points. */
  name: string;
}

export interface AddMemberInput {
  accountId: string;
  role: MemberRole;
}

/** The server generates the session's id (`sess_…`); ids are not chosen by callers. */
export interface CreateSessionInput {
  projectId?: string | null;
  title?: string | null;
}

export interface ListSessionsParams extends PageParams {
  projectId?: string;
}

export interface CommitFloorInput {
  /** Any JSON, sent untouched. */
  content: unknown;
  /** `[A-Za-z0-9._-]{1,64}`; server default branch when absent. */
  branch?: string;
}

export interface AddPageInput {
  /** Any JSON, sent untouched. */
  content: unknown;
}

/** A committed turn: its Floor and first Page. */
export interface CommittedFloor {
  floor: Floor;
  page: Page;
}

// ---------------------------------------------------------------------------------------------
// Content blocks, Live Inbox, durable Session events
// ---------------------------------------------------------------------------------------------

/** `{ type: 'text', text }`; `text` must hold a non-whitespace character (else 400). Spec: live-inbox.md "Content blocks". */
export interface TextBlock {
  type: 'text';
  text: string;
}

/**
 * An inline image (wire shape, untouched): MIME `media_type` (`image/jpeg`, `image/png`,
 * `image/gif` or `image/webp`) and standard base64 `data` of those bytes, at most 5,242,880
 * characters; anything else is 400. Spec: live-inbox.md "Content blocks".
 */
export interface Base64ImageSource {
  type: 'base64';
  media_type: string;
  data: string;
}

/** An image by reference: an absolute public `http(s):` URL (loopback, link-local, private hosts → 400). Spec: live-inbox.md "Content blocks". */
export interface UrlImageSource {
  type: 'url';
  url: string;
}

export interface ImageBlock {
  type: 'image';
  source: Base64ImageSource | UrlImageSource;
}

/** One content block; content is a non-empty array of these, passed through untouched. */
export type ContentBlock = TextBlock | ImageBlock;

/** One queued Live Inbox message. `id` is a small queue-local integer. */
export interface LiveInboxMessage {
  id: number;
  content: ContentBlock[];
}

/** The editable window. With no active native attempt: `{ active: false, version: 0, messages: [] }`. */
export interface LiveInboxSnapshot {
  active: boolean;
  version: number;
  messages: LiveInboxMessage[];
}

/** A durable input event for `client.sessions.events.send`. */
export type SessionEventInput =
  | { type: 'user.message'; content: ContentBlock[] }
  | { type: 'user.interrupt' }
  /** The result of a custom (client-run) tool: answers the `agent.custom_tool_use` event `customToolUseId`. */
  | { type: 'user.custom_tool_result'; customToolUseId: string; content?: ContentBlock[]; isError?: boolean }
  /** Allows or denies an `always_ask` tool use (`agent.tool_use` with `evaluatedPermission: 'ask'`); `denyMessage` only with `deny`. */
  | { type: 'user.tool_confirmation'; toolUseId: string; result: 'allow' | 'deny'; denyMessage?: string };

/** The server's acknowledgement of one sent Session event: the committed event itself. */
export type SessionEventAck = SessionEvent;

/** Result of `client.sessions.liveInbox.queueOrSend`. */
export type QueueOrSendResult = { delivery: 'live'; id: number } | { delivery: 'durable'; events: SessionEventAck[] };

/**
 * One committed entry of the Session ledger, in the Managed Agents wire shape (live-inbox.md
 * "Managed Agents compatibility"). `content` (message events only) is passed through untouched.
 */
export interface SessionEvent {
  id: string;
  sessionId: string;
  /** Gap-free per session: 1, 2, 3 … */
  seq: number;
  /**
   * `user.message`, `user.interrupt`, `user.custom_tool_result`, `user.tool_confirmation`,
   * `agent.message`, `agent.tool_use`, `agent.custom_tool_use`, `agent.tool_result`,
   * `session.status_running`, `session.status_idle`, `session.error`, …
   */
  type: string;
  runId: string | null;
  /** Run-scoped message id (`{run_id}-inbox-{n}`, `{run_id}-step-{k}`) or null. */
  messageId: string | null;
  /** Content blocks of `user.message` and `agent.message`, the result of `agent.tool_result` and `user.custom_tool_result`; absent on other types. */
  content?: ContentBlock[];
  /** `agent.tool_use`, `agent.custom_tool_use`: the tool called and its input. */
  name?: string;
  input?: { [key: string]: JsonValue };
  /** `agent.tool_use`: `allow` (runs now), `ask` (waits for `user.tool_confirmation`), `deny` (refused: an error result follows). */
  evaluatedPermission?: 'allow' | 'ask' | 'deny';
  /** `agent.tool_use`: the permission policy that decided. */
  evaluation?: { type: 'always_allow' | 'always_ask' };
  /** `agent.tool_result`, `user.tool_confirmation`: the `agent.tool_use` event answered. */
  toolUseId?: string;
  /** `user.custom_tool_result`: the `agent.custom_tool_use` event answered. */
  customToolUseId?: string;
  /** `agent.tool_result`, `user.custom_tool_result`. */
  isError?: boolean;
  /** `user.tool_confirmation`. */
  result?: 'allow' | 'deny';
  denyMessage?: string | null;
  floorId: string | null;
  pageId: string | null;
  /** RFC 3339 timestamp (UTC, ms precision), e.g. `2026-11-30T14:37:57.123Z`. */
  processedAt: string;
  /**
   * `session.status_idle`: `end_turn`, `retries_exhausted` when the Run failed, `refusal`, or
   * `requires_action` while the Run waits for the tool uses `event_ids`.
   */
  stopReason?: { type: 'end_turn' | 'retries_exhausted' | 'refusal' } | { type: 'requires_action'; event_ids: string[] };
  /** `session.status_idle`: always null. */
  stopDetails?: null;
  /** `session.status_idle`: how the Run ended (`completed`, `cancelled`, `failed`). */
  outcome?: string | null;
  /**
   * `session.status_idle` of a failed Run (ours): why it failed, e.g. `{ type: 'overloaded_error',
   * message }`; `session.error`: the error, e.g. `tool_use_limit_reached_error`, with `retry_status`.
   */
  error?: { type: string; message: string; retry_status?: { type: 'exhausted' } };
}

/** Query of `client.sessions.events.list`. */
export interface ListSessionEventsParams extends RequestOptions {
  /** The `nextPage` of the previous page (opaque; keep the other parameters unchanged). */
  page?: string;
  /** 1–1000, default 100. */
  limit?: number;
  /** By `seq`: `asc` (default) or `desc`. */
  order?: 'asc' | 'desc';
}

/** A page of committed Session history. */
export interface SessionEventPage {
  data: SessionEvent[];
  /** Opaque; pass back as `page`. `null` when there is no next page. */
  nextPage: string | null;
  hasMore: boolean;
}

/** Options of `client.sessions.events.stream`. */
export interface StreamSessionEventsParams extends RequestOptions {
  /** Start after this position (the first connection only; reconnects use `Last-Event-ID`). */
  after?: string | number;
  /**
   * Called when the server answers a resume position after its newest event with a `resync`
   * frame (the iterator yields no item for it; the stream goes on after `latest`).
   */
  onResync?: (resync: StreamResync) => void;
}

/** A stream token (`client.createStreamToken`): pass `token` as `access_token` on a stream route until `expiresAt` (ms since the epoch). */
export interface StreamToken {
  token: string;
  expiresAt: number;
}
