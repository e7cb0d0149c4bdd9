/**
 * The write gate: the one place a write learns whether it may happen. Each helper loads the
 * write's target under its row lock (inside the write's transaction), reads the state the policy
 * table needs, and throws the table's refusal (`write-policy.ts`). Spec: platform.md "The write
 * gate" and "Storage" (decided atomically with the write).
 *
 * Internal to the core: services call it, adapters never do.
 */
import type { Principal } from '../context.js';
import { InboxKitError } from '../errors.js';
import { accessOf, loadProjectAccess, type ProjectAccess } from '../project-inbox/access.js';
import type { StoreTx } from '../ports/store.js';
import type { Project, ProjectInboxItem, Session } from '../records.js';
import { loadSessionAccess, loadSessionGate, type SessionAccess, type SessionGateAccess } from '../sessions/access.js';
import type { SessionGateCache } from '../sessions/gate-cache.js';
import { decideWrite, WORKSPACE_STATE, WRITE_POLICY, type WriteAction, type WriteRole, type WriteState } from './write-policy.js';

/**
 * Throws the table's refusal of `action` by `role` in `state`.
 * @throws InboxKitError with the table's code (403, 404, 409).
 */
export function assertWrite(action: WriteAction, role: WriteRole, state: WriteState): void {
  const refusal = decideWrite(action, role, state);
  if (refusal !== null) throw new InboxKitError(refusal.code, refusal.message);
}

/** The state of a write to a project (no Session involved). */
export function projectState(project: Project): WriteState {
  return { project: project.status, session: 'none', run: 'idle' };
}

/** The state of a write to `session` (of `project`, or none), with its Run state. */
export function sessionState(session: Session | undefined, project: Project | undefined, run: WriteState['run']): WriteState {
  return {
    project: project === undefined ? 'none' : project.status,
    session: session === undefined ? 'deleted' : session.archived_at === null ? 'live' : 'archived',
    run,
  };
}

/**
 * The Run state `action` is decided on, read inside `tx` (under the Session's lock): the
 * Session's running Run, else its parked one — or, with `run_id` (`run.commit`, `run.end`), the
 * state of that Run. Reads only what the action's row tells apart (a row that answers every Run
 * state alike reads nothing).
 */
async function runStateOf(tx: StoreTx, session_id: string, action: WriteAction, run_id?: string): Promise<WriteState['run']> {
  const row = WRITE_POLICY[action];
  if (row.running === row.awaiting && row.awaiting === row.idle) return 'idle';
  const running = await tx.getRunningRun(session_id);
  if (running !== undefined && (run_id === undefined || running.id === run_id)) return 'running';
  if (row.awaiting === row.idle || tx.getAwaitingRun === undefined) return 'idle';
  const awaiting = await tx.getAwaitingRun(session_id);
  return awaiting !== undefined && (run_id === undefined || awaiting.id === run_id) ? 'awaiting' : 'idle';
}

/**
 * The role of a workspace write's caller: `admin` for a key of kind admin, else `workspace`.
 * (Project and Session writes take the caller's role in the project instead.)
 */
export function workspaceRole(principal: Principal): WriteRole {
  return principal.key_kind === 'admin' ? 'admin' : 'workspace';
}

/**
 * A workspace write (the administration, `/v1/agents`): decided by the caller's role alone
 * (`write-policy.ts`, "workspace writes"); the write's own target rules stay with it.
 * @throws InboxKitError `permission_denied` (403) from the table.
 */
export function gateWorkspaceWrite(principal: Principal, action: WriteAction): void {
  assertWrite(action, workspaceRole(principal), WORKSPACE_STATE);
}

/**
 * A write to a project by the caller: the project locked (`lockProject`, so its status and the
 * caller's membership stay as read until commit), then the gate.
 * @throws InboxKitError `project_not_found` (404: missing, foreign, not a member), then the table's refusal.
 */
export async function gateProjectWrite(tx: StoreTx, principal: Principal, project_id: string, action: WriteAction): Promise<ProjectAccess> {
  const access = await loadProjectAccess(tx, principal, project_id, { lock: true });
  assertWrite(action, access.role, projectState(access.project));
  return access;
}

/**
 * A write to one inbox item by the caller ({@link gateProjectWrite}, then the item read under the
 * project's lock): with the store's `lockInboxItemWithAccess`, the lock, the access read and the
 * item are one statement; else `lockProject` (+ `getMembership`) and `getInboxItem`. Same checks,
 * same order: project visible (404), then the table's refusal; the item (`undefined` when missing
 * or of another project) is the caller's to check.
 * @throws InboxKitError `project_not_found`, then the table's refusal.
 */
export async function gateInboxItemWrite(
  tx: StoreTx, principal: Principal, project_id: string, item_id: string, action: WriteAction,
): Promise<{ access: ProjectAccess; item: ProjectInboxItem | undefined }> {
  if (!tx.lockInboxItemWithAccess) {
    const access = await gateProjectWrite(tx, principal, project_id, action);
    return { access, item: await tx.getInboxItem(access.project.id, item_id) };
  }
  const read = await tx.lockInboxItemWithAccess(principal.workspace_id, project_id, principal.account_id, item_id);
  const access = accessOf(read?.project, principal, read?.membership);
  assertWrite(action, access.role, projectState(access.project));
  return { access, item: read?.item };
}

/**
 * A write to a Session by the caller: project and Session locked (`lockProject`, `lockSession`),
 * the Session's Run read when the action's row depends on it, then the gate.
 * @throws InboxKitError `session_not_found` (404: missing, deleted, foreign, not visible), then the table's refusal.
 */
export async function gateSessionWrite(tx: StoreTx, principal: Principal, session_id: string, action: WriteAction): Promise<SessionAccess> {
  const access = await loadSessionAccess(tx, principal, session_id, { lock: true });
  assertWrite(action, access.role, sessionState(access.session, access.project, await runStateOf(tx, access.session.id, action)));
  return access;
}

/**
 * A write to a Session that touches no row (the Live Inbox queue is process memory), decided on a
 * plain read of what the gate needs (`loadSessionGate`); what it leads to is decided again under
 * the lock when it is committed. Same checks, same order as {@link gateSessionWrite}. With `gates`
 * (on the store itself only) the read may come from the store's {@link SessionGateCache}.
 * @throws InboxKitError `session_not_found` (404), then the table's refusal.
 */
export async function gateSessionWriteUnlocked(
  store: StoreTx, principal: Principal, session_id: string, action: WriteAction, gates?: SessionGateCache,
): Promise<SessionGateAccess> {
  const gate = await loadSessionGate(store, principal, session_id, gates);
  const state: WriteState = {
    project: gate.projectStatus ?? 'none', session: gate.sessionArchived ? 'archived' : 'live', run: await runStateOf(store, gate.session_id, action),
  };
  assertWrite(action, gate.role, state);
  return gate;
}

/**
 * A write of the Session Runtime for a Run of `session` (`run.start`, `run.commit`, `run.end`):
 * the Session locked (`lockSession`; a project's archive locks its Sessions, so it is ordered
 * against this write too), its project and Run state read. For `run.commit` and `run.end` the Run
 * state is that of `run_id` (running, parked or ended).
 * @returns the refusal, or `null` when the write is allowed (the caller decides what a refusal means).
 */
export async function runWriteRefusal(tx: StoreTx, session: Session, action: 'run.start' | 'run.commit' | 'run.end', run_id?: string): Promise<ReturnType<typeof decideWrite>> {
  const locked = await tx.lockSession(session.workspace_id, session.id);
  const project = locked?.project_id ? await tx.getProject(locked.workspace_id, locked.project_id) : undefined;
  return decideWrite(action, 'runtime', sessionState(locked, project, await runStateOf(tx, session.id, action, run_id)));
}

/**
 * {@link runWriteRefusal}, throwing the refusal.
 * @throws InboxKitError `conflict` (the Run has ended), `project_archived`, `session_archived`, `session_not_found`.
 */
export async function gateRunWrite(tx: StoreTx, session: Session, action: 'run.start' | 'run.commit' | 'run.end', run_id?: string): Promise<void> {
  const refusal = await runWriteRefusal(tx, session, action, run_id);
  if (refusal !== null) throw new InboxKitError(refusal.code, refusal.message);
}
