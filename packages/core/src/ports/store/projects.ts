/**
 * The projects sub-port of the storage port (`../store.ts`): projects and their members
 * (platform.md "Projects, members, sources"). Conformance group `projects`.
 */
import type { Membership, Project, ProjectStatus } from '../../records.js';
import type { KeysetQuery } from './common.js';

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
  /**
   * OPTIONAL (without it a write calls {@link lockProject}, then {@link getMembership} when the
   * caller is not the owner). Inside a transaction: the project locked exactly as
   * {@link lockProject} locks it (only if it is in `workspace_id`, else `undefined`) and
   * `account_id`'s membership of it (`undefined` when it has none), read once the lock is held —
   * one statement where the engine's lock re-reads it (SQLite: the write transaction holds the
   * database), a statement of its own after the lock on PostgreSQL (a `SELECT … FOR UPDATE` that
   * waited re-checks only the locked row, so a joined membership would be read as it was before the
   * transaction it waited for). MUST return what those two calls would. platform.md "The write gate".
   */
  lockProjectWithAccess?(workspace_id: string, project_id: string, account_id: string): Promise<{ project: Project; membership: Membership | undefined } | undefined>;
  /**
   * OPTIONAL (without it a read calls {@link getProject}, then {@link getMembership} when the caller
   * is not the owner). The project (only if it is in `workspace_id`, else `undefined`) and
   * `account_id`'s membership of it (`undefined` when it has none), unlocked, in one statement
   * where the engine can (one round trip on PostgreSQL). MUST return what those two calls would.
   * platform.md "The write gate".
   */
  getProjectWithAccess?(workspace_id: string, project_id: string, account_id: string): Promise<{ project: Project; membership: Membership | undefined } | undefined>;
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
