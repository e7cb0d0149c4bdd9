/**
 * The storage port: what any inbox-kit store (in-memory, SQLite, PostgreSQL, or a third party's)
 * MUST provide. Written in domain verbs; each method's doc states the guarantee it MUST keep.
 * Grouped by aggregate into sub-ports — {@link IdentityStore}, {@link ProjectStore},
 * {@link InboxStore}, {@link ProjectEventStore}, {@link SessionStore}, {@link RunStore},
 * {@link IdempotencyStore}, {@link AgentStore} — whose sum is {@link StoreTx}; {@link Store} adds units of work. The
 * conformance kit (`@inbox-kit/core/testing`) checks these guarantees, grouped the same way.
 *
 * Parent rule: a row's parent (workspace, project, session, floor) MUST exist when the row is
 * written; adapters may refuse orphans (SQL adapters do, through foreign keys).
 *
 * Scoping rule: every lookup by id that takes a `workspace_id` MUST return `undefined` for a row of
 * another workspace, exactly as for a missing row (tenants learn nothing about each other).
 */
import type {
  Account, Agent, ApiKey, Floor, InboxItemStatus, JsonValue, Membership, MemberRole, OperationLog, Page, Project,
  ProjectEvent, ProjectInboxItem, ProjectStatus, Run, RunStatus, Session, SessionEvent, Workspace, WorkspaceAccount,
} from '../records.js';

/** Filters and keyset position of one inbox page. Order is `created_at DESC, id DESC`. */
export interface InboxItemQuery {
  project_id: string;
  status?: InboxItemStatus;
  type?: string;
  sender_account_id?: string;
  source_session_id?: string;
  /** Return only rows strictly after this position in the order (i.e. older, or same ms and smaller id). */
  after?: { created_at: number; id: string };
  /** Maximum rows to return (1–1000). */
  limit: number;
}

/** What {@link InboxStore.getInboxItemWithAccess} reads in one go. */
export interface InboxItemWithAccess {
  /** The project (of the asked workspace). */
  project: Project;
  /** `account_id`'s membership row of the project, or `undefined` when it has none (an owner usually has none). */
  membership: Membership | undefined;
  /** The item, only if it belongs to the project; `undefined` when missing or of another project. */
  item: ProjectInboxItem | undefined;
}

/** What {@link SessionStore.getSessionWithAccess} reads in one go. */
export interface SessionWithAccess {
  /** The session (of the asked workspace). */
  session: Session;
  /** Its project (of the same workspace), or `undefined` when the session has none or it is missing. */
  project: Project | undefined;
  /** `account_id`'s membership of that project, or `undefined`. */
  membership: Membership | undefined;
}

/** A Project Event before the store allocates its sequence. */
export type NewProjectEvent = Omit<ProjectEvent, 'sequence'>;

/** Filters of one page of Project Events, ascending by sequence. */
export interface ProjectEventQuery {
  project_id: string;
  /** Return events with `sequence > after` (0 = from the start). */
  after: number;
  types?: string[];
  session_id?: string;
  limit: number;
}

/** The decision columns a conditional update writes. */
export interface InboxDecisionPatch {
  status: InboxItemStatus;
  decided_by_account_id: string;
  decided_at: number;
  updated_at: number;
}

/** Bounds on a time column, in ms: `gt` / `gte` (after) and `lt` / `lte` (before); each optional. */
export interface TimeBounds {
  gt?: number;
  gte?: number;
  lt?: number;
  lte?: number;
}

/** Query of {@link SessionStore.pageSessions}. */
export interface SessionPageQuery {
  order: 'asc' | 'desc';
  /** Keyset: the last `(created_at, id)` of the previous page. */
  after?: { created_at: number; id: string };
  limit: number;
  visible_project_ids?: string[];
  /**
   * OPTIONAL filter (added after the method): only Sessions of this project. A store that ignores
   * it still works (the services drop other rows and read on), but scans more.
   */
  project_id?: string;
  include_archived?: boolean;
  agent_id?: string;
  created_at?: TimeBounds;
}

/** One keyset page by `(created_at, id)`: rows strictly after `after` in the method's order, at most `limit`. */
export interface KeysetQuery {
  after?: { created_at: number; id: string };
  /** Maximum rows to return (≥ 1). */
  limit: number;
}

/** Position of a Floor in a Session's `(number, branch, id)` order (strings in byte order). */
export interface FloorPosition {
  number: number;
  branch: string;
  id: string;
}

/** Changes of {@link SessionStore.updateSession}: only the fields present are set. */
export interface SessionPatch {
  title?: string | null;
  metadata?: Record<string, string>;
  archived_at?: number | null;
  updated_at: number;
}

/** Query of {@link SessionStore.listSessionEvents}. */
export interface SessionEventQuery {
  session_id: string;
  after: number;
  before?: number;
  order?: 'asc' | 'desc';
  types?: string[];
  processed_at?: TimeBounds;
  limit: number;
}

/** Query of {@link AgentStore.pageAgents}. */
export interface AgentPageQuery {
  order: 'asc' | 'desc';
  /** Keyset: the last `(created_at, id)` of the previous page. */
  after?: { created_at: number; id: string };
  limit: number;
  /** False (default): archived agents are left out. */
  include_archived?: boolean;
  created_at?: TimeBounds;
}

/**
 * The change of {@link RunStore.updateRunStatus}: the new `status`, and for `idle` the `outcome`
 * and `ended_at` of the end.
 */
export type RunStatusChange =
  | { status: Exclude<RunStatus, 'idle'> }
  | { status: 'idle'; outcome: string; ended_at: number };

/** A Session ledger entry before the store allocates its `seq`. */
export type NewSessionEvent = Omit<SessionEvent, 'seq'>;

/** Who used an `Idempotency-Key`: the key is unique per workspace and acting account. */
export interface IdempotencyScope {
  workspace_id: string;
  account_id: string;
  /** The caller's key: 1–255 printable ASCII characters, compared byte for byte. */
  key: string;
}

/**
 * One recorded use of an `Idempotency-Key`: which request claimed the key and what it created.
 * Written in the same transaction as the write it guards, so it exists exactly when that write
 * committed.
 */
export interface IdempotencyRecord extends IdempotencyScope {
  /** Hex SHA-256 of the request (method, path and canonical body); another request with the key → 409. */
  request_hash: string;
  /** What the request created, e.g. `project_inbox_item`. */
  resource_type: string;
  /** The id of the created resource (the response is rebuilt from it on a replay). */
  resource_id: string;
  created_at: number;
}

/**
 * Which server process hosts the active native attempt of a Session, as recorded in storage so
 * that other processes sharing the database can route Live Inbox requests to it (live-inbox.md
 * "Scale"). At most one row per Session. A row whose `lease_expires_at` is not after "now" is
 * expired: it names nobody, and any host may claim the Session. "Now" is the store's clock
 * ({@link RunStore.now}) for every process, so the processes agree on which leases are live.
 */
export interface AttemptOwnership {
  session_id: string;
  /** The Run whose attempt the host executes. */
  run_id: string;
  /** The owning process (unique per process instance). */
  host_id: string;
  /** Base URL at which the owning process is reachable by its peers, e.g. `http://10.0.0.5:3000`. */
  host_url: string;
  /** ms since the epoch; the lease is live while `now < lease_expires_at`. */
  lease_expires_at: number;
}

/** Identifies one lease: the Session, the Run and the host that claimed it. */
export type AttemptOwnershipKey = Pick<AttemptOwnership, 'session_id' | 'run_id' | 'host_id'>;

/** Query of {@link IdentityStore.listApiKeys}. */
export interface ApiKeyQuery {
  /** Only the keys of this account (of the asked workspace). */
  account_id?: string;
  /**
   * Only the keys still accepted at this time (ms): `revoked_at` null or after it (a key in a
   * rotation's grace period is listed until its grace ends). Absent: revoked keys too.
   */
  active_at?: number;
}

/**
 * What {@link Store.readiness} answers: ready, or why not: `unreachable` (the database does not
 * answer) or `not_migrated` (migrations of this release are pending). A database a newer release
 * migrated further is ready (storage README "Migrations": a release serves on the schema of the
 * next one).
 */
export type StoreReadiness =
  | { ready: true }
  | { ready: false; reason: 'unreachable' | 'not_migrated'; message: string };

/**
 * Workspaces, accounts and API keys: who is calling (platform.md "Identity", "Administration").
 * Conformance group `identity`. The methods marked OPTIONAL arrived with the administration
 * routes (storage README "How the port grows"): without them the `/admin` use cases that need
 * them answer 400 `unsupported_capability`, and everything else works.
 */
export interface IdentityStore {
  insertWorkspace(workspace: Workspace): Promise<void>;
  getWorkspace(id: string): Promise<Workspace | undefined>;
  /** OPTIONAL. Every workspace, oldest first (`created_at` ascending, then `id` in byte order). */
  listWorkspaces?(): Promise<Workspace[]>;
  insertAccount(account: Account, workspace_ids: string[]): Promise<void>;
  /**
   * The account, only if it is a member of `workspace_id` and not disabled there
   * ({@link disableWorkspaceAccount}): a disabled account is treated exactly as a non-member.
   */
  getWorkspaceAccount(workspace_id: string, account_id: string): Promise<Account | undefined>;
  /**
   * OPTIONAL. Every account of the workspace with its membership (`disabled_at` included),
   * newest first (`created_at` descending, then `id` descending in byte order).
   */
  listWorkspaceAccounts?(workspace_id: string): Promise<WorkspaceAccount[]>;
  /**
   * OPTIONAL. The account of the workspace, disabled or not (`undefined` when it is not a member),
   * holding its membership row against concurrent writers until the caller's transaction ends
   * (as {@link ProjectStore.lockProject}; outside a transaction a plain read). Issuing a key and
   * disabling the account both call it first in their transaction, so no key is issued to an
   * account after its disabling committed.
   */
  lockWorkspaceAccount?(workspace_id: string, account_id: string): Promise<WorkspaceAccount | undefined>;
  /**
   * OPTIONAL. Conditional and atomic: sets the membership's `disabled_at = at` only while it is
   * null, and in the same transaction revokes (as {@link revokeApiKey}, at `at`) every key of the
   * account in that workspace. Returns the updated account, or `undefined` when it is not a
   * member or was already disabled (then nothing is written). Keys of the account in other
   * workspaces are untouched.
   */
  disableWorkspaceAccount?(workspace_id: string, account_id: string, at: number): Promise<WorkspaceAccount | undefined>;
  insertApiKey(key: ApiKey): Promise<void>;
  /** The key with this hash, revoked or not (the caller checks `revoked_at`). */
  findApiKeyByHash(key_hash: string): Promise<ApiKey | undefined>;
  /** OPTIONAL. The key `key_id`, only if it belongs to `workspace_id` (scoping rule), revoked or not. */
  getApiKey?(workspace_id: string, key_id: string): Promise<ApiKey | undefined>;
  /**
   * OPTIONAL. The workspace's keys matching `query`, newest first (`created_at` descending, then
   * `id` descending in byte order). Never a key of another workspace.
   */
  listApiKeys?(workspace_id: string, query: ApiKeyQuery): Promise<ApiKey[]>;
  /**
   * Revokes the key from `at` on (ms; a future time schedules it: a rotation's grace period).
   * MUST keep the earliest revocation: sets `revoked_at = at` only while it is null or later than
   * `at`, so a revocation can be brought forward and never postponed.
   */
  revokeApiKey(id: string, at: number): Promise<void>;
  /**
   * OPTIONAL. Records that the key authenticated a request at `at` (ms): sets `last_used_at = at`
   * only while it is null or earlier than `at` (never backwards). The services call it at most
   * about once a minute per key, never awaiting it on a request's path.
   */
  recordApiKeyUse?(id: string, at: number): Promise<void>;
}

/**
 * Projects and their members: the project row (status, owner) and the member roles every
 * permission reads (project-inbox.md "Roles"). Conformance group `projects`.
 */
export interface ProjectStore {
  insertProject(project: Project): Promise<void>;
  getProject(workspace_id: string, project_id: string): Promise<Project | undefined>;
  /**
   * {@link getProject}, holding the row against concurrent writers until the caller's transaction
   * ends (PostgreSQL: `SELECT … FOR NO KEY UPDATE`; an engine that serialises write transactions
   * may read plainly). Every write whose validity depends on the project's status or on its
   * members calls it first, inside its transaction, and reads members after it: a concurrent
   * archive or member change then commits wholly before or wholly after that write (storage README
   * "Conditional writes"). Lock order: a project before any of its sessions.
   */
  lockProject(workspace_id: string, project_id: string): Promise<Project | undefined>;
  /** Projects of the workspace that `account_id` owns or is a member of, newest first. */
  listProjectsForAccount(workspace_id: string, account_id: string): Promise<Project[]>;
  /**
   * OPTIONAL (without it the services page {@link listProjectsForAccount} in memory). One keyset
   * page of those projects in `(created_at DESC, id DESC)` order (ids in byte order): only rows
   * strictly after `query.after` in that order, at most `query.limit`. MUST return exactly the
   * rows {@link listProjectsForAccount} would, in its order, from that position.
   */
  pageProjectsForAccount?(workspace_id: string, account_id: string, query: KeysetQuery): Promise<Project[]>;
  /** MUST be conditional: sets status only where it differs; returns the updated row. */
  setProjectStatus(project_id: string, status: ProjectStatus, at: number): Promise<Project | undefined>;
  getMembership(project_id: string, account_id: string): Promise<Membership | undefined>;
  /** Inserts or changes the role of a member. */
  upsertMembership(membership: Membership): Promise<Membership>;
  /** Returns true when a row was removed. */
  deleteMembership(project_id: string, account_id: string): Promise<boolean>;
  /** Members of a project, oldest first: `(created_at ASC, account_id ASC)`. */
  listMemberships(project_id: string): Promise<Membership[]>;
  /**
   * OPTIONAL (without it the services page {@link listMemberships} in memory). One keyset page of
   * the members in `(created_at ASC, account_id ASC)` order (byte order): only rows strictly after
   * `query.after` (`id` = the account id), at most `query.limit`; exactly the rows of
   * {@link listMemberships} from that position.
   */
  pageMemberships?(project_id: string, query: KeysetQuery): Promise<Membership[]>;
}

/**
 * Project Inbox items: insert, read, keyset pages and the conditional decision
 * (project-inbox.md "Resource: ProjectInboxItem"). Conformance group `inbox`.
 */
export interface InboxStore {
  insertInboxItem(item: ProjectInboxItem): Promise<void>;
  /** The item only if it belongs to `project_id`. */
  getInboxItem(project_id: string, item_id: string): Promise<ProjectInboxItem | undefined>;
  /**
   * OPTIONAL (a store without it still works: the Project Inbox then calls `getProject`,
   * `getMembership` and `getInboxItem`). Everything a get needs in one read, one round trip on a
   * networked database: the project `project_id` only if it is in `workspace_id` (else
   * `undefined`, exactly as for a missing project — scoping rule), `account_id`'s membership of it,
   * and the item `item_id` only if it belongs to that project. MUST return exactly what those three
   * methods would return at one moment (one statement, or one snapshot), never a membership or an
   * item of another project.
   */
  getInboxItemWithAccess?(workspace_id: string, project_id: string, account_id: string, item_id: string): Promise<InboxItemWithAccess | undefined>;
  /**
   * OPTIONAL (a store without it still works: a decision then calls `lockProject`, `getMembership`
   * and `getInboxItem`). Inside a transaction, what a decision reads before it writes, in one
   * statement (one round trip on a networked database): the project locked exactly as
   * {@link ProjectStore.lockProject} locks it (only if it is in `workspace_id`, else `undefined`),
   * `account_id`'s membership of it and the item `item_id` only if it belongs to that project — as
   * {@link getInboxItemWithAccess} reads them, under the project's lock. project-inbox.md "Decide".
   */
  lockInboxItemWithAccess?(workspace_id: string, project_id: string, account_id: string, item_id: string): Promise<InboxItemWithAccess | undefined>;
  /** One keyset page in `created_at DESC, id DESC` order; never skips or repeats rows that share a `created_at`. */
  listInboxItems(query: InboxItemQuery): Promise<ProjectInboxItem[]>;
  /**
   * Conditional update: applies `patch` only if the item's status is still `seen_status`
   * (`… WHERE id = ? AND status = ?`), and returns the updated item, or `undefined` when another
   * writer changed it first. MUST NOT be check-then-write: of N concurrent calls with the same
   * `seen_status`, exactly one returns an item.
   */
  decideInboxItem(project_id: string, item_id: string, seen_status: InboxItemStatus, patch: InboxDecisionPatch): Promise<ProjectInboxItem | undefined>;
}

/**
 * The Project Event stream (gap-free `sequence` per project) and the Operation Log
 * (platform.md "Project Events"). Conformance group `events`.
 */
export interface ProjectEventStore {
  /**
   * Appends an event with the project's next `sequence` (1, 2, 3 … with no gap and no duplicate,
   * also under concurrent writers), allocated inside the caller's transaction so a rollback
   * releases it. Returns the stored event.
   */
  appendProjectEvent(event: NewProjectEvent): Promise<ProjectEvent>;
  getProjectEvent(project_id: string, event_id: string): Promise<ProjectEvent | undefined>;
  /** Events with `sequence > after`, ascending, at most `limit`. */
  listProjectEvents(query: ProjectEventQuery): Promise<ProjectEvent[]>;
  /**
   * The highest committed `sequence` of the project's events (0 when it has none, or the project
   * does not exist). Stream resume uses it to tell a position beyond the latest event.
   */
  lastProjectEventSequence(project_id: string): Promise<number>;
  appendOperationLog(entry: OperationLog): Promise<void>;
  /**
   * Optional (the services call {@link appendOperationLog} then {@link appendProjectEvent} without
   * it): appends `entry` to the Operation Log and `event` with the project's next `sequence`, as
   * those two calls would, in one round trip where the engine can (a data-modifying `WITH` on
   * PostgreSQL). MUST write both or neither (inside the caller's transaction, or atomically on its
   * own), with the same guarantees as `appendProjectEvent` (gap-free, no duplicate, released by a
   * rollback); returns the stored event.
   */
  appendAudited?(entry: OperationLog, event: NewProjectEvent): Promise<ProjectEvent>;
  /** Operation Log rows of a project, newest first, keyset after `(created_at, id)`. */
  listOperationLogs(query: { project_id: string; after?: { created_at: number; id: string }; limit: number }): Promise<OperationLog[]>;
  /**
   * OPTIONAL. The workspace's Operation Log rows that belong to no project (`project_id` null: the
   * administration writes), newest first, keyset strictly after `(created_at, id)`, at most
   * `limit`. Never a row of another workspace or of a project.
   */
  listWorkspaceOperationLogs?(query: { workspace_id: string; after?: { created_at: number; id: string }; limit: number }): Promise<OperationLog[]>;
}

/**
 * Sessions and their turns: the Session rows, Floors and Pages, and the Session ledger (gap-free
 * `seq` per Session) (live-inbox.md, platform.md "Sessions"). Conformance group `sessions`.
 */
export interface SessionStore {
  insertSession(session: Session): Promise<void>;
  /** The Session, unless it is in another workspace or was deleted ({@link deleteSession}). */
  getSession(workspace_id: string, session_id: string): Promise<Session | undefined>;
  /**
   * {@link getSession} (so never a deleted Session), holding the row against concurrent writers
   * of the Session until the caller's transaction ends (as {@link ProjectStore.lockProject}). Writes that depend on the Session's Run
   * state (start or end a Run, commit drained input to a Run) call it first, inside their
   * transaction. Take the project's lock first when both are needed.
   */
  lockSession(workspace_id: string, session_id: string): Promise<Session | undefined>;
  /**
   * OPTIONAL (without it, a Run left by a dead process is ended but its Session's queued durable
   * input waits for the next input: the takeover cannot start the follow-up Run). The Session by
   * its id alone, in whatever workspace, never a deleted one (`undefined`, as for a missing one).
   * For the Runtime's own bookkeeping (taking over the Runs of a dead process, platform.md "Many
   * processes"), never to answer a request: requests MUST use the scoped {@link getSession}.
   */
  findSession?(session_id: string): Promise<Session | undefined>;
  /** Sessions of the workspace, newest first; `project_id: null` lists those outside any project. Never a deleted one. */
  listSessions(workspace_id: string, filter: { project_id?: string | null }): Promise<Session[]>;
  /**
   * OPTIONAL (without it, callers use `getSession`, `getProject` and `getMembership`). The session
   * `session_id` only if it is in `workspace_id` (else `undefined`, as for a missing one), its
   * project (only if in the same workspace) and `account_id`'s membership of that project, in one
   * read: MUST return exactly what those three methods would return at one moment (so never a
   * deleted Session: `undefined`, as for a missing one).
   */
  getSessionWithAccess?(workspace_id: string, session_id: string, account_id: string): Promise<SessionWithAccess | undefined>;
  /**
   * One keyset page of the workspace's Sessions (`GET /v1/sessions`), never a deleted one:
   * ordered by `(created_at, id)` (`desc` or `asc`, id in byte order), strictly after `after` in
   * that order, at most `limit`. Filters: `visible_project_ids` keeps Sessions outside any project
   * plus those of the listed projects; `include_archived` false drops archived ones; `agent_id`
   * matches the snapshot's `agent.id`; `created_at` bounds in ms.
   */
  pageSessions(workspace_id: string, query: SessionPageQuery): Promise<Session[]>;
  /**
   * Conditional update of a live (not deleted) Session: sets the given fields and `updated_at`.
   * Returns the updated Session, or undefined when there is none (or it was deleted).
   */
  updateSession(workspace_id: string, session_id: string, patch: SessionPatch): Promise<Session | undefined>;
  /**
   * Deletes a Session: from then on every read of the port treats it as absent (its ledger and
   * turns stay stored). Returns whether a live Session was deleted (false: none, or already deleted).
   */
  deleteSession(workspace_id: string, session_id: string, at: number): Promise<boolean>;
  insertFloor(floor: Floor): Promise<void>;
  getFloor(workspace_id: string, floor_id: string): Promise<Floor | undefined>;
  /** Floors of a session in `(number, branch, id)` ascending order. */
  listFloors(session_id: string): Promise<Floor[]>;
  /**
   * OPTIONAL (without it the services page {@link listFloors} in memory). One keyset page of a
   * Session's Floors in `(number ASC, branch ASC, id ASC)` order (strings in byte order): only
   * rows strictly after `query.after`, at most `query.limit`.
   */
  pageFloors?(session_id: string, query: { after?: FloorPosition; limit: number }): Promise<Floor[]>;
  /** The highest floor number of a session on a branch (0 when none). */
  lastFloorNumber(session_id: string, branch: string): Promise<number>;
  insertPage(page: Page): Promise<void>;
  getPage(workspace_id: string, page_id: string): Promise<Page | undefined>;
  /** Pages of a floor, ascending by version. */
  listPages(floor_id: string): Promise<Page[]>;
  /**
   * OPTIONAL (without it the services page {@link listPages} in memory). One keyset page of a
   * Floor's Pages by `version` ascending: only versions greater than `query.after_version`, at
   * most `query.limit`.
   */
  pagePages?(floor_id: string, query: { after_version?: number; limit: number }): Promise<Page[]>;
  /** Appends ledger entries with the session's next `seq` values, in order, atomically. */
  appendSessionEvents(events: NewSessionEvent[]): Promise<SessionEvent[]>;
  /**
   * Ledger entries with `seq > after` (and `seq < before` when given), ascending by `seq` (or
   * descending with `order: 'desc'`), at most `limit`. Optional filters: `types` (any of these
   * types; an empty list matches none), `processed_at` bounds in ms.
   */
  listSessionEvents(query: SessionEventQuery): Promise<SessionEvent[]>;
  /** The highest committed `seq` of the session's ledger (0 when it has none, or the session does not exist). */
  lastSessionEventSeq(session_id: string): Promise<number>;
}

/**
 * Runs of a Session and which process owns the active attempt (cross-process routing of the Live
 * Inbox, live-inbox.md "Scale"). Conformance group `runs`.
 */
export interface RunStore {
  /**
   * OPTIONAL (without it, the Runtime reads lease times from its own `Clock`, which is right only
   * when every process sharing the store reads one clock). The store's clock: the current time in
   * integer ms since the epoch, as the database reads it — PostgreSQL `clock_timestamp()` on the
   * server, the machine's clock for an embedded engine (every process on that machine reads it).
   * Every process sharing the store MUST get the same clock from it, whatever its own clock says:
   * leases are written and judged with it (platform.md "Many processes"), so a process whose clock
   * is skewed never ends a healthy Run nor lets two Runs of one Session run at once. Inside a
   * transaction it is the time of the call (not of the transaction's start). MUST NOT go back
   * between two calls by more than the database's own clock does.
   */
  now?(): Promise<number>;
  insertRun(run: Run): Promise<void>;
  /** The session's running Run, if any. */
  getRunningRun(session_id: string): Promise<Run | undefined>;
  /**
   * Every Run with status `running`, of every Session, oldest first (`started_at` ascending, then
   * `id` ascending in byte order), at most `limit` (a non-negative integer; 0 returns none). MUST
   * NOT return an ended Run. Used at start-up to end Runs left running by a dead process.
   */
  listRunningRuns(limit: number): Promise<Run[]>;
  /** Conditional: ends the Run only while it is `running`; returns whether it did. */
  endRun(run_id: string, outcome: string, at: number): Promise<boolean>;
  /**
   * OPTIONAL (without it the Runtime cannot park a Run on client tool results or confirmations:
   * such tool uses get an error result instead; live-inbox.md "Tools and boundaries").
   * Conditional status change: applies `change` to the Run only while its status is `from`
   * (`… WHERE id = ? AND status = ?`), and returns whether it did. MUST NOT be check-then-write:
   * of N concurrent calls with the same `from`, exactly one returns `true`. A Run moved to `idle`
   * gets `outcome` and `ended_at`; `running` ↔ `awaiting` changes only `status`.
   */
  updateRunStatus?(run_id: string, from: Exclude<RunStatus, 'idle'>, change: RunStatusChange): Promise<boolean>;
  /**
   * OPTIONAL (with {@link updateRunStatus}). The Session's Run with status `awaiting` (parked on
   * client tool results or confirmations), if any; at most one Run of a Session is `running` or
   * `awaiting` at a time.
   */
  getAwaitingRun?(session_id: string): Promise<Run | undefined>;
  /**
   * Conditional claim (`now` and `claim.lease_expires_at` read from {@link now} when the store has
   * it): records `claim` as the owner of `claim.session_id` only if the Session has
   * no ownership row, its row is expired (`lease_expires_at <= now`), or its row is held by the
   * same `host_id` (a host re-claiming for its next Run); the written row replaces the previous
   * one entirely. Returns `true` when `claim` was written, `false` when another host holds a live
   * lease (the stored row is left unchanged). MUST NOT be check-then-write: of N concurrent claims
   * by different hosts for a Session with no live owner, exactly one returns `true`.
   */
  claimAttemptOwnership(claim: AttemptOwnership, now: number): Promise<boolean>;
  /**
   * Conditional renewal: sets `lease_expires_at` only while the Session's row still names exactly
   * `key` (same `run_id` and `host_id`), whether or not the lease has expired meanwhile. Returns
   * whether it did; `false` means the lease was lost (released, or claimed by another host).
   */
  renewAttemptOwnership(key: AttemptOwnershipKey, lease_expires_at: number): Promise<boolean>;
  /**
   * Conditional release: removes the Session's row only while it names exactly `key`. Returns
   * whether it did; a lease already lost to another host is never removed.
   */
  releaseAttemptOwnership(key: AttemptOwnershipKey): Promise<boolean>;
  /**
   * The live owner of `session_id`: its row only if `lease_expires_at > now`, else `undefined`
   * (also for an expired row, which MUST be treated exactly as a missing one).
   */
  findAttemptOwner(session_id: string, now: number): Promise<AttemptOwnership | undefined>;
}

/**
 * Recorded uses of `Idempotency-Key` (platform.md "Idempotency"). Conformance group `idempotency`.
 */
export interface IdempotencyStore {
  /**
   * The committed record of `(workspace_id, account_id, key)`, or `undefined`. MUST match all three
   * exactly (byte for byte: no case folding, no trimming); a record of another workspace or account
   * is never returned. Inside a transaction it MUST also see the transaction's own insert.
   */
  findIdempotencyRecord(scope: IdempotencyScope): Promise<IdempotencyRecord | undefined>;
  /**
   * Conditional insert: stores `record` only if no record of its `(workspace_id, account_id, key)`
   * exists, and returns `true` when it did, `false` when the key is already taken (the stored record
   * is left unchanged). MUST NOT be check-then-write: of N concurrent calls for one scope (in
   * transactions or not), exactly one returns `true`; a caller whose competitor has not committed
   * yet waits for its outcome (its rollback frees the key, and then this insert succeeds). Inside a
   * transaction the record is released by a rollback.
   */
  insertIdempotencyRecord(record: IdempotencyRecord): Promise<boolean>;
  /**
   * OPTIONAL (without it records never expire: the services then keep answering a key with its
   * first outcome forever, as before expiry existed). Deletes records whose `created_at` is before
   * `query.created_before` (ms), oldest first, at most `query.limit` (≥ 1) of them; with
   * `query.scope`, only that scope's record. Returns how many it deleted. MUST NOT delete a record
   * created at or after `created_before`, nor (with `scope`) one of another scope; MUST be safe
   * concurrently with inserts and with itself (a record is deleted at most once; a record inserted
   * meanwhile stays). After it, the scope of a deleted record is free: `insertIdempotencyRecord`
   * for it returns true. Inside a transaction, a rollback restores what it deleted.
   * Retention: platform.md "Retention".
   */
  sweepIdempotencyRecords?(query: { created_before: number; scope?: IdempotencyScope; limit: number }): Promise<number>;
}

/**
 * Agents created through `/v1/agents` (live-inbox.md "Agents"): versioned rows of one workspace.
 * Conformance group `agents`. Every method is OPTIONAL (added in a minor release; without them the
 * `/v1/agents` routes answer 400 `unsupported_capability` and only the deployment's configured
 * agents exist), but a store implements all of them or none.
 */
export interface AgentStore {
  /**
   * Inserts `agent` (its `version`, normally 1) as the agent's current version. A second insert of
   * the same id fails (the driver's unique violation).
   */
  insertAgent?(agent: Agent): Promise<void>;
  /**
   * The agent `agent_id` of `workspace_id` (scoping rule: another workspace's → `undefined`): its
   * `version` when given (`undefined` when it has none such), else its current (highest) version.
   * `archived_at` is the agent's, on every version.
   */
  getAgent?(workspace_id: string, agent_id: string, version?: number): Promise<Agent | undefined>;
  /**
   * One keyset page of the workspace's agents, each at its current version: ordered by
   * `(created_at, id)` (`desc` or `asc`, id in byte order), strictly after `after`, at most `limit`;
   * archived ones only with `include_archived`; `created_at` bounds in ms.
   */
  pageAgents?(workspace_id: string, query: AgentPageQuery): Promise<Agent[]>;
  /**
   * The versions of one agent of `workspace_id`, by `version` (`desc` newest first, or `asc`),
   * strictly after `after_version` in that order, at most `limit`.
   */
  listAgentVersions?(workspace_id: string, agent_id: string, query: { order: 'asc' | 'desc'; after_version?: number; limit: number }): Promise<Agent[]>;
  /**
   * Conditional update: stores `next` (whose `version` MUST be `expected_version + 1`) as the
   * agent's new current version only while its current version is `expected_version` and it is
   * not archived, and returns `next`; else `undefined` (another writer won, or it was archived).
   * MUST NOT be check-then-write: of N concurrent updates from one version, exactly one succeeds.
   * Older versions stay readable.
   */
  updateAgent?(workspace_id: string, agent_id: string, expected_version: number, next: Agent): Promise<Agent | undefined>;
  /**
   * Archives the agent (every version) once: sets `archived_at` where it is null. Returns the
   * current version as stored afterwards (archived earlier: unchanged), or `undefined` when the
   * workspace has no such agent.
   */
  archiveAgent?(workspace_id: string, agent_id: string, at: number): Promise<Agent | undefined>;
}

/**
 * Reads and writes available inside a unit of work: the sub-ports of each aggregate together.
 * Outside `transaction`, each call runs on its own (autocommit).
 *
 * How the port grows (storage README "How the port grows"): a method added to a sub-port in a
 * minor release is OPTIONAL (`method?`), and every caller keeps a fallback built from the methods
 * that already existed (as `getInboxItemWithAccess` and `getSessionWithAccess`), so a third-party
 * store written against an older release keeps compiling and working; its conformance check runs
 * only where the method exists. A method becomes required only in a major release.
 */
export interface StoreTx extends IdentityStore, ProjectStore, InboxStore, ProjectEventStore, SessionStore, RunStore, IdempotencyStore, AgentStore {}

/** A store: the reads and writes of {@link StoreTx}, plus units of work. */
export interface Store extends StoreTx {
  /**
   * Runs `fn` in one database transaction: every write inside commits together or not at all
   * (a thrown error rolls back and is rethrown unchanged). Conditional updates inside see rows
   * committed by concurrent transactions (READ COMMITTED or stronger). Inside `fn`, use only
   * `tx`: calling the store's own methods there may wait for the transaction itself (deadlock).
   * Nor may `fn` wait for another `transaction()` promise: an adapter may commit several units of
   * work in one database transaction (group commit), each settling after that commit, and the
   * promise awaited may be one of them. The resolved value is returned only once the writes are
   * committed.
   */
  transaction<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T>;
  /**
   * OPTIONAL (without it the services read a workspace and call the store ready when that
   * answers). Whether the store can serve now: the database answers and holds every migration of
   * this release. MUST NOT throw (a failure is `{ ready: false, reason, message }`, the message in
   * plain words, never a password or a connection string) and SHOULD answer within a second; the
   * caller bounds the wait (`GET /ready`: 2 s).
   */
  readiness?(): Promise<StoreReadiness>;
  /** Releases connections. */
  close(): Promise<void>;
}

/** Re-exported for adapter authors. */
export type { Account, Agent, ApiKey, Floor, JsonValue, Membership, MemberRole, OperationLog, Page, Project, ProjectEvent, ProjectInboxItem, Run, Session, SessionEvent, Workspace, WorkspaceAccount };
