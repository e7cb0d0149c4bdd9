/**
 * The Project Inbox state machine as a pure, total function (project-inbox.md "PATCH").
 *
 * | from \ decision | accept   | reject   | archive              |
 * | pending         | accepted | rejected | archived             |
 * | accepted        | invalid  | invalid  | archived             |
 * | rejected        | invalid  | invalid  | archived             |
 * | archived        | invalid  | invalid  | noop (item unchanged)|
 */
import type { InboxDecision, InboxItemStatus } from '../records.js';

export const INBOX_STATUSES = ['pending', 'accepted', 'rejected', 'archived'] as const satisfies readonly InboxItemStatus[];
export const INBOX_DECISIONS = ['accept', 'reject', 'archive'] as const satisfies readonly InboxDecision[];

/** What a decision does to an item in a given status. */
export type InboxTransition =
  | { kind: 'change'; to: InboxItemStatus }
  | { kind: 'noop' }
  | { kind: 'invalid' };

const TARGET: Record<InboxDecision, InboxItemStatus> = { accept: 'accepted', reject: 'rejected', archive: 'archived' };

/** The transition for `decision` from `from`; never throws. */
export function transition(from: InboxItemStatus, decision: InboxDecision): InboxTransition {
  if (from === 'pending') return { kind: 'change', to: TARGET[decision] };
  if (decision !== 'archive') return { kind: 'invalid' };
  return from === 'archived' ? { kind: 'noop' } : { kind: 'change', to: 'archived' };
}

/** The Project Event type a decision that changed an item emits. */
export function decisionEventType(decision: InboxDecision): string {
  return `project_inbox.item.${TARGET[decision]}`;
}
