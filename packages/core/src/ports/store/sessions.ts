/**
 * The Session sub-port of the storage port (`../store.ts`): Sessions, Floors, Pages and the
 * Session ledger (`seq`-ordered events) (live-inbox.md "Drain, commit, carry-over", "Managed
 * Agents compatibility"). Conformance group `sessions`.
 */
import type { Floor, MemberRole, Membership, Page, Project, Session, SessionEvent } from '../../records.js';
import type { TimeBounds } from './common.js';

/** What {@link SessionStore.getSessionWithAccess} reads in one go. */
export interface SessionWithAccess {
  /** The session (of the asked workspace). */
  session: Session;
  /** Its project (of the same workspace), or `undefined` when the session has none or it is missing. */
  project: Project | undefined;
  /** `account_id`'s membership of that project, or `undefined`. */
  membership: Membership | undefined;
}

/**
 * What {@link SessionStore.getSessionGate} reads: the columns the Session's access rule and write
 * gate decide on (live-inbox.md "Who may steer"; platform.md "The write gate"), nothing else.
 */
export interface SessionGate {
  /** The Session's `id`, `project_id` (null outside projects) and `archived_at` (ms, null while live). */
  session: Pick<Session, 'id' | 'project_id' | 'archived_at'>;
  /** Its project's owner (`account_id`) and `status`; `undefined` when the Session has no project or it is missing or of another workspace. */
  project: Pick<Project, 'account_id' | 'status'> | undefined;
  /** `account_id`'s membership role in that project, or `undefined` (no project, or no membership row). */
  role: MemberRole | undefined;
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

/** A Session ledger entry before the store allocates its `seq`. */
export type NewSessionEvent = Omit<SessionEvent, 'seq'>;

/**
 * Sessions and their turns: the Session rows, Floors and Pages, and the Session ledger (gap-free
 * `seq` per Session) (live-inbox.md "Drain, commit, carry-over",
 * "Managed Agents compatibility"). Conformance group `sessions`.
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
   * OPTIONAL (without it, callers use `getSessionWithAccess`, or `getSession`, `getProject` and
   * `getMembership`). {@link getSessionWithAccess} narrowed to what the access rule and the write
   * gate decide on ({@link SessionGate}), in one read (one statement), for the reads that decide a
   * Session's access without a lock (the Live Inbox, attempt routing): MUST return exactly those
   * fields of what `getSessionWithAccess` would return at one moment (`undefined` for a Session
   * missing, deleted or of another workspace; `project` only in the same workspace; `role` only
   * from a membership of that project).
   */
  getSessionGate?(workspace_id: string, session_id: string, account_id: string): Promise<SessionGate | undefined>;
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
