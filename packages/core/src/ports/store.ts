/**
 * The storage port: what any inbox-kit store (in-memory, SQLite, PostgreSQL, or a third party's)
 * MUST provide. Written in domain verbs; each method's doc states the guarantee it MUST keep.
 * Grouped by aggregate into sub-ports — {@link IdentityStore}, {@link ProjectStore},
 * {@link InboxStore}, {@link ProjectEventStore}, {@link SessionStore}, {@link RunStore},
 * {@link IdempotencyStore}, {@link AgentStore} — whose sum is {@link StoreTx}; {@link Store} adds units of work. The
 * conformance kit (`@inbox-kit/core/testing`) checks these guarantees, grouped the same way. Each
 * sub-port and its query shapes live in `./store/<aggregate>.ts`; this file re-exports them all, so
 * adapters import the whole port from here.
 *
 * Parent rule: a row's parent (workspace, project, session, floor) MUST exist when the row is
 * written; adapters may refuse orphans (SQL adapters do, through foreign keys).
 *
 * Scoping rule: every lookup by id that takes a `workspace_id` MUST return `undefined` for a row of
 * another workspace, exactly as for a missing row (tenants learn nothing about each other).
 */
import type {
  Account, Agent, ApiKey, Floor, JsonValue, Membership, MemberRole, OperationLog, Page, Project,
  ProjectEvent, ProjectInboxItem, Run, Session, SessionEvent, Workspace, WorkspaceAccount,
} from '../records.js';
import type { AgentStore } from './store/agents.js';
import type { ProjectEventStore } from './store/events.js';
import type { IdempotencyStore } from './store/idempotency.js';
import type { IdentityStore } from './store/identity.js';
import type { InboxStore } from './store/inbox.js';
import type { ProjectStore } from './store/projects.js';
import type { RunStore } from './store/runs.js';
import type { SessionStore } from './store/sessions.js';

export type { TimeBounds, KeysetQuery } from './store/common.js';
export type { ApiKeyQuery, IdentityStore } from './store/identity.js';
export type { ProjectStore } from './store/projects.js';
export type { InboxItemQuery, InboxItemWithAccess, InboxItemsJson, InboxItemsWithAccess, InboxPageQuery, InboxDecisionPatch, InboxStore, UnchangedMembership, UnchangedProject } from './store/inbox.js';
export type { NewProjectEvent, ProjectEventQuery, ProjectEventStore } from './store/events.js';
export type { SessionWithAccess, SessionGate, SessionPageQuery, FloorPosition, SessionPatch, SessionEventQuery, NewSessionEvent, SessionStore } from './store/sessions.js';
export type { RunStatusChange, AttemptOwnership, AttemptOwnershipKey, RunStore } from './store/runs.js';
export type { IdempotencyScope, IdempotencyRecord, IdempotencyStore } from './store/idempotency.js';
export type { AgentPageQuery, AgentStore } from './store/agents.js';

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
