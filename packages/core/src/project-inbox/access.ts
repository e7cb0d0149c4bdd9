/**
 * Loads a project as the caller sees it: missing, foreign and not-a-member are one answer
 * (404 `project_not_found`, no id echoed). Spec: project-inbox.md "Roles and visibility".
 */
import { InboxKitError } from '../errors.js';
import type { Principal } from '../context.js';
import type { StoreTx } from '../ports/store.js';
import type { Membership, Project } from '../records.js';
import { roleOf, type ProjectRole } from './permissions.js';

export interface ProjectAccess {
  project: Project;
  role: Exclude<ProjectRole, null>;
}

export const projectNotFound = () => new InboxKitError('project_not_found', 'Project not found');

/** Options of {@link loadProjectAccess}. */
export interface ProjectAccessOptions {
  /**
   * Read the project with `tx.lockProject` (a write's transaction): its status and the caller's
   * membership then stay as read until the transaction ends, so an archive or a member change
   * racing the write commits wholly before or after it. Default false (reads).
   */
  lock?: boolean;
}

/**
 * @throws InboxKitError `project_not_found` when the project is missing, in another workspace, or
 *   the caller is neither its owner nor a member.
 */
export async function loadProjectAccess(tx: StoreTx, principal: Principal, project_id: string, options: ProjectAccessOptions = {}): Promise<ProjectAccess> {
  if (options.lock === true && tx.lockProjectWithAccess) {
    // The lock and the membership in one statement where the store has it (one round trip on PostgreSQL).
    const read = await tx.lockProjectWithAccess(principal.workspace_id, project_id, principal.account_id);
    return accessOf(read?.project, principal, read?.membership);
  }
  if (options.lock !== true && tx.getProjectWithAccess) {
    // The project and the membership in one read where the store has it (one round trip on PostgreSQL).
    const read = await tx.getProjectWithAccess(principal.workspace_id, project_id, principal.account_id);
    return accessOf(read?.project, principal, read?.membership);
  }
  const project = options.lock === true ? await tx.lockProject(principal.workspace_id, project_id) : await tx.getProject(principal.workspace_id, project_id);
  if (!project) throw projectNotFound();
  const membership = project.account_id === principal.account_id ? undefined : await tx.getMembership(project.id, principal.account_id);
  return accessOf(project, principal, membership);
}

/**
 * The caller's access to a project already read with its membership row (or `undefined`).
 * @throws InboxKitError `project_not_found` when the project is missing or the caller has no role in it.
 */
export function accessOf(project: Project | undefined, principal: Principal, membership: Membership | undefined): ProjectAccess {
  if (!project) throw projectNotFound();
  const role = roleOf(project, principal.account_id, membership?.project_id === project.id ? membership.role : undefined);
  if (role === null) throw projectNotFound();
  return { project, role };
}
