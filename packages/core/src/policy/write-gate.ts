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
import { loadProjectAccess, type ProjectAccess } from '../project-inbox/access.js';
import type { StoreTx } from '../ports/store.js';
import type { Project, Session } from '../records.js';
import { loadSessionAccess, type SessionAccess } from '../sessions/access.js';
import { decideWrite, WRITE_POLICY, type WriteAction, type WriteRole, type WriteState } from './write-policy.js';

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
export function sessionState(session: Session | undefined, project: Project | undefined, running: boolean): WriteState {
  return {
    project: project === undefined ? 'none' : project.status,
    session: session === undefined ? 'deleted' : session.archived_at === null ? 'live' : 'archived',
    run: running ? 'running' : 'idle',
  };
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

/** Options of {@link gateSessionWrite}. */
export interface SessionWriteOptions {
  /**
   * Lock the project, then the Session (default true; inside the write's transaction). False
   * only for writes that touch no row (the Live Inbox queue is process memory): they are decided
   * on a plain read, and what they lead to is decided again under the lock when it is committed.
   */
  lock?: boolean;
}

/**
 * A write to a Session by the caller: project and Session locked (`lockProject`, `lockSession`),
 * the Session's Run read when the action's row depends on it, then the gate.
 * @throws InboxKitError `session_not_found` (404: missing, deleted, foreign, not visible), then the table's refusal.
 */
export async function gateSessionWrite(tx: StoreTx, principal: Principal, session_id: string, action: WriteAction, options: SessionWriteOptions = {}): Promise<SessionAccess> {
  const access = await loadSessionAccess(tx, principal, session_id, { lock: options.lock ?? true });
  const row = WRITE_POLICY[action];
  const running = row.running !== null || row.idle !== null ? (await tx.getRunningRun(access.session.id)) !== undefined : false;
  assertWrite(action, access.role, {
    project: access.project === undefined ? 'none' : access.project.status,
    session: access.session.archived_at === null ? 'live' : 'archived',
    run: running ? 'running' : 'idle',
  });
  return access;
}

/**
 * A write of the Session Runtime for a Run of `session` (`run.start`, `run.commit`, `run.end`):
 * the Session locked (`lockSession`; a project's archive locks its Sessions, so it is ordered
 * against this write too), its project and running Run read. For `run.commit` the Run state is
 * whether `run_id` still runs.
 * @returns the refusal, or `null` when the write is allowed (the caller decides what a refusal means).
 */
export async function runWriteRefusal(tx: StoreTx, session: Session, action: 'run.start' | 'run.commit' | 'run.end', run_id?: string): Promise<ReturnType<typeof decideWrite>> {
  const locked = await tx.lockSession(session.workspace_id, session.id);
  const project = locked?.project_id ? await tx.getProject(locked.workspace_id, locked.project_id) : undefined;
  const running = await tx.getRunningRun(session.id);
  return decideWrite(action, 'runtime', sessionState(locked, project, run_id === undefined ? running !== undefined : running?.id === run_id));
}

/**
 * {@link runWriteRefusal}, throwing the refusal.
 * @throws InboxKitError `conflict` (the Run has ended), `project_archived`, `session_archived`, `session_not_found`.
 */
export async function gateRunWrite(tx: StoreTx, session: Session, action: 'run.start' | 'run.commit' | 'run.end', run_id?: string): Promise<void> {
  const refusal = await runWriteRefusal(tx, session, action, run_id);
  if (refusal !== null) throw new InboxKitError(refusal.code, refusal.message);
}
