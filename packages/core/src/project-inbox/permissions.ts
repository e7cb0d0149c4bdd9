/**
 * Role → permission rules of the Project Inbox (project-inbox.md "Roles and visibility").
 */
import type { MemberRole, Project, ProjectEvent, ProjectEventVisibility } from '../records.js';

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
 * The visibility a Project Event of `type` is written with (platform.md "Project Events"): Project
 * Inbox events (`project_inbox.*`) follow the inbox read right and are `owner`; every other
 * project event is `project`.
 */
export function visibilityOfEventType(type: string): ProjectEventVisibility {
  return type.startsWith('project_inbox.') ? 'owner' : 'project';
}

/**
 * Whether a Project Event is visible to a caller (platform.md "Project Events": visibility
 * follows read rights). A `project` event reaches every member; an `owner` event reaches the
 * owner, and a Project Inbox event also its item's sender while it is a deriver (never an
 * observer — also one that sent items before it was demoted).
 */
export function canSeeEvent(role: ProjectRole, account_id: string, event: Pick<ProjectEvent, 'type' | 'payload' | 'visibility'>): boolean {
  if (role === null) return false;
  if (event.visibility === 'project') return true;
  if (role === 'owner') return true;
  return event.type.startsWith('project_inbox.') && inboxPermissions(role).read === 'own' && event.payload['sender_account_id'] === account_id;
}
