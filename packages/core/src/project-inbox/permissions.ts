/**
 * Role → permission rules of the Project Inbox (project-inbox.md "Roles and visibility").
 */
import type { MemberRole, Project, ProjectEvent } from '../records.js';

/** A caller's role in a project; `null` = not a member (nothing is visible). */
export type ProjectRole = 'owner' | MemberRole | null;

export interface InboxPermissions {
  /** `all` items, only the caller's `own`, or `none`. */
  read: 'all' | 'own' | 'none';
  create: boolean;
  decide: boolean;
}

const TABLE: Record<'owner' | MemberRole, InboxPermissions> = {
  owner: { read: 'all', create: true, decide: true },
  deriver: { read: 'own', create: true, decide: false },
  observer: { read: 'none', create: false, decide: false },
};

const NOTHING: InboxPermissions = { read: 'none', create: false, decide: false };

/** The inbox permissions of a role. */
export function inboxPermissions(role: ProjectRole): InboxPermissions {
  return role === null ? NOTHING : TABLE[role];
}

/** The caller's role: owner by `project.account_id`, else the membership role, else `null`. */
export function roleOf(project: Pick<Project, 'account_id'>, account_id: string, membershipRole: MemberRole | undefined): ProjectRole {
  if (project.account_id === account_id) return 'owner';
  return membershipRole ?? null;
}

/**
 * Whether a Project Event is visible to a caller (platform.md "Project Events": visibility
 * follows read rights). Inbox events reach the owner and the item's sender only; other project
 * events reach every member.
 */
export function canSeeEvent(role: ProjectRole, account_id: string, event: Pick<ProjectEvent, 'type' | 'payload'>): boolean {
  if (role === null) return false;
  if (role === 'owner') return true;
  if (event.type.startsWith('project_inbox.')) return event.payload['sender_account_id'] === account_id;
  return true;
}
