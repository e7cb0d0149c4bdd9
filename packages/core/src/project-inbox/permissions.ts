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

const TABLE: Readonly<Record<'owner' | MemberRole, Readonly<InboxPermissions>>> = Object.freeze({
  owner: { read: 'all', create: true, decide: true },
  deriver: { read: 'own', create: true, decide: false },
  observer: { read: 'none', create: false, decide: false },
});
Object.values(TABLE).forEach((p) => Object.freeze(p));

const NOTHING: Readonly<InboxPermissions> = Object.freeze({ read: 'none', create: false, decide: false });

/** The inbox permissions of a role. */
export function inboxPermissions(role: ProjectRole): Readonly<InboxPermissions> {
  return role === null ? NOTHING : TABLE[role];
}

/** The caller's role: owner by `project.account_id`, else the membership role, else `null`. */
export function roleOf(project: Pick<Project, 'account_id'>, account_id: string, membershipRole: MemberRole | undefined): ProjectRole {
  if (project.account_id === account_id) return 'owner';
  return membershipRole ?? null;
}

/**
 * Whether a Project Event is visible to a caller (platform.md "Project Events": visibility
 * follows read rights). Inbox events reach the owner and the item's sender while it is a deriver
 * (never an observer); other project events reach every member.
 */
export function canSeeEvent(role: ProjectRole, account_id: string, event: Pick<ProjectEvent, 'type' | 'payload'>): boolean {
  if (role === null) return false;
  if (!event.type.startsWith('project_inbox.')) return true;
  // Inbox events follow the inbox read right: all (owner), own (deriver: items it sent), none
  // (observer — also one that sent items before it was demoted).
  const read = inboxPermissions(role).read;
  return read === 'all' || (read === 'own' && event.payload['sender_account_id'] === account_id);
}
