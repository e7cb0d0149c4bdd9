import { describe, expect, it } from 'vitest';
import type { InboxDecision, InboxItemStatus } from '../records.js';
import { INBOX_DECISIONS, INBOX_STATUSES, decisionEventType, transition, type InboxTransition } from './transition.js';

/** project-inbox.md "PATCH", every cell. */
const TABLE: Record<InboxItemStatus, Record<InboxDecision, InboxTransition>> = {
  pending: { accept: { kind: 'change', to: 'accepted' }, reject: { kind: 'change', to: 'rejected' }, archive: { kind: 'change', to: 'archived' } },
  accepted: { accept: { kind: 'invalid' }, reject: { kind: 'invalid' }, archive: { kind: 'change', to: 'archived' } },
  rejected: { accept: { kind: 'invalid' }, reject: { kind: 'invalid' }, archive: { kind: 'change', to: 'archived' } },
  archived: { accept: { kind: 'invalid' }, reject: { kind: 'invalid' }, archive: { kind: 'noop' } },
};

const CELLS = INBOX_STATUSES.flatMap((from) => INBOX_DECISIONS.map((decision) => [from, decision, TABLE[from][decision]] as const));

describe('Project Inbox transition table', () => {
  it('has exactly the four statuses and three decisions', () => {
    expect([...INBOX_STATUSES]).toEqual(['pending', 'accepted', 'rejected', 'archived']);
    expect([...INBOX_DECISIONS]).toEqual(['accept', 'reject', 'archive']);
    expect(CELLS).toHaveLength(12);
  });

  it.each(CELLS)('%s + %s → %j', (from, decision, expected) => {
    expect(transition(from, decision)).toEqual(expected);
  });

  it('the seed page allows exactly five status changes', () => {
    const changes = CELLS.flatMap(([from, decision]) => {
      const t = transition(from, decision);
      return t.kind === 'change' ? [`${from} -> ${t.to}`] : [];
    });
    expect(changes.sort()).toEqual(
      ['pending -> accepted', 'pending -> rejected', 'pending -> archived', 'accepted -> archived', 'rejected -> archived'].sort(),
    );
  });

  it('only archive on archived is a no-op', () => {
    expect(CELLS.filter(([f, d]) => transition(f, d).kind === 'noop').map(([f, d]) => `${f}/${d}`)).toEqual(['archived/archive']);
  });

  it('statuses only move forward: no change leads back to pending, nothing leaves archived', () => {
    for (const [from, decision] of CELLS) {
      const t = transition(from, decision);
      if (t.kind === 'change') {
        expect(t.to).not.toBe('pending');
        expect(from).not.toBe('archived');
      }
    }
  });

  it('is total and pure: the same answer every time, never throws', () => {
    for (const [from, decision] of CELLS) {
      expect(() => transition(from, decision)).not.toThrow();
      expect(transition(from, decision)).toEqual(transition(from, decision));
    }
  });

  it.each([
    ['accept', 'project_inbox.item.accepted'],
    ['reject', 'project_inbox.item.rejected'],
    ['archive', 'project_inbox.item.archived'],
  ] as const)('decision %s emits %s', (decision, type) => {
    expect(decisionEventType(decision)).toBe(type);
  });
});
