/**
 * Who may use a Session, and the one way a turn is written: the access rule and the Floor/Page
 * write that the Platform (sessions, turns, pages), the Session ledger and the Managed Sessions
 * service share. Internal to the core (not exported from the package entry). Spec: platform.md
 * ("Sessions", "Floors and Pages"), live-inbox.md ("Who may steer").
 */
import type { Principal, ServiceDeps } from '../context.js';
import { InboxKitError } from '../errors.js';
import { roleOf, type ProjectRole } from '../project-inbox/permissions.js';
import type { SessionGate, SessionWithAccess, StoreTx } from '../ports/store.js';
import type { Floor, JsonValue, Membership, Page, Project, ProjectStatus, Session } from '../records.js';
import type { SessionGateCache } from './gate-cache.js';

/** A Session as its caller may use it. */
export interface SessionAccess {
  session: Session;
  /** Owner of the session's project, or any workspace account for a session outside projects. */
  canWrite: boolean;
  role: Exclude<ProjectRole, null> | 'workspace';
  /** True when the session's project is archived (it then accepts no new input). */
  archived: boolean;
  /** The Session's project (as read, locked with `options.lock`); undefined for a Session outside projects. */
  project: Project | undefined;
}

const sessionNotFound = () => new InboxKitError('session_not_found', 'Session not found');

/** 403 for a caller who may read a Session but not send events to it or steer it. */
export const sessionWriteDenied = (): InboxKitError =>
  new InboxKitError('permission_denied', 'Only the project owner may send events to or steer this session');

/**
 * Who may use a Session (live-inbox issue "Who may steer"): a session in a project is visible to
 * the project's owner and members (only the owner writes); a session outside any project is open
 * to every account of its workspace. Everything else is 404 `session_not_found`. With
 * `options.lock` (inside a write's transaction) the project and then the Session are read with
 * `lockProject` / `lockSession`, so archive, membership and Run state stay as read until commit;
 * without it, a store's optional `getSessionWithAccess` reads all three at once.
 */
export async function loadSessionAccess(tx: StoreTx, principal: Principal, session_id: string, options: { lock?: boolean } = {}): Promise<SessionAccess> {
  let session: Session | undefined;
  let project: Project | undefined;
  let membership: Membership | undefined;
  if (options.lock === true) {
    // A write's transaction: the project, then the Session (the port's lock order), both locked;
    // the one-read fast path below is for reads only.
    const found = await tx.getSession(principal.workspace_id, session_id);
    if (!found) throw sessionNotFound();
    project = found.project_id === null ? undefined : await tx.lockProject(principal.workspace_id, found.project_id);
    session = await tx.lockSession(principal.workspace_id, session_id);
    if (project && project.account_id !== principal.account_id) membership = await tx.getMembership(project.id, principal.account_id);
  } else if (tx.getSessionWithAccess) {
    // One read (one round trip on PostgreSQL) for the session, its project and the membership.
    const read = await tx.getSessionWithAccess(principal.workspace_id, session_id, principal.account_id);
    session = read?.session;
    project = read?.project;
    membership = read?.membership?.project_id === project?.id ? read?.membership : undefined;
  } else {
    session = await tx.getSession(principal.workspace_id, session_id);
    if (session?.project_id) {
      project = await tx.getProject(principal.workspace_id, session.project_id);
      if (project && project.account_id !== principal.account_id) membership = await tx.getMembership(project.id, principal.account_id);
    }
  }
  if (!session) throw sessionNotFound();
  if (session.project_id === null) return { session, canWrite: true, role: 'workspace', archived: false, project: undefined };
  if (!project) throw sessionNotFound();
  const role = roleOf(project, principal.account_id, membership?.role);
  if (role === null) throw sessionNotFound();
  return { session, canWrite: role === 'owner', role, archived: project.status === 'archived', project };
}

/** What a Session's access rule and write gate decide on, read without a lock ({@link loadSessionGate}). */
export interface SessionGateAccess {
  session_id: string;
  /** As {@link SessionAccess.canWrite}. */
  canWrite: boolean;
  role: Exclude<ProjectRole, null> | 'workspace';
  /** The project's status; undefined for a Session outside projects. */
  projectStatus: ProjectStatus | undefined;
  /** True when the Session itself is archived (`archived_at` set). */
  sessionArchived: boolean;
}

/**
 * The {@link SessionGate} of a {@link SessionWithAccess}: its columns the access rule and the
 * write gate decide on (what a store's `getSessionGate` answers; the memory store and the store
 * conformance kit derive theirs with it).
 */
export function sessionGateOf({ session, project, membership }: SessionWithAccess): SessionGate {
  return {
    session: { id: session.id, project_id: session.project_id, archived_at: session.archived_at },
    project: project && { account_id: project.account_id, status: project.status },
    role: membership?.role,
  };
}

/**
 * {@link loadSessionAccess} without a lock, narrowed to what the access rule and the write gate
 * decide on: the store's optional `getSessionGate` (one statement of six columns) when it has it,
 * else the whole access read. Same rule, same 404 `session_not_found`. With `gates` (the store's
 * {@link SessionGateCache}, only for reads on the store itself, never in a transaction) the read
 * comes from the cache while its entry lives.
 */
export async function loadSessionGate(store: StoreTx, principal: Principal, session_id: string, gates?: SessionGateCache): Promise<SessionGateAccess> {
  if (store.getSessionGate === undefined) {
    const access = await loadSessionAccess(store, principal, session_id);
    return {
      session_id: access.session.id, canWrite: access.canWrite, role: access.role,
      projectStatus: access.project?.status, sessionArchived: access.session.archived_at !== null,
    };
  }
  const read = gates === undefined
    ? await store.getSessionGate(principal.workspace_id, session_id, principal.account_id)
    : await gates.read(store, principal.workspace_id, session_id, principal.account_id);
  if (read === undefined) throw sessionNotFound();
  const { session, project } = read;
  const sessionArchived = session.archived_at !== null;
  if (session.project_id === null) return { session_id: session.id, canWrite: true, role: 'workspace', projectStatus: undefined, sessionArchived };
  if (project === undefined) throw sessionNotFound();
  const role = roleOf(project, principal.account_id, read.role);
  if (role === null) throw sessionNotFound();
  return { session_id: session.id, canWrite: role === 'owner', role, projectStatus: project.status, sessionArchived };
}

/** Writes the next Floor of `session` on `branch` and its first Page, inside `tx`. */
export async function writeTurn(
  tx: StoreTx, deps: Pick<ServiceDeps, 'ids' | 'clock'>, session: Session, content: JsonValue, branch = 'main',
): Promise<{ floor: Floor; page: Page }> {
  const now = deps.clock.now();
  const floor: Floor = {
    id: deps.ids.next('floor'), workspace_id: session.workspace_id, session_id: session.id,
    number: (await tx.lastFloorNumber(session.id, branch)) + 1, branch, state: 'committed', created_at: now,
  };
  await tx.insertFloor(floor);
  const page: Page = { id: deps.ids.next('page'), workspace_id: session.workspace_id, session_id: session.id, floor_id: floor.id, version: 1, content, created_at: now };
  await tx.insertPage(page);
  return { floor, page };
}

