import { describe, expect, it } from 'vitest';
import { canSeeEvent, inboxPermissions, roleOf, visibilityOfEventType, type ProjectRole } from './permissions.js';

/** project-inbox.md "Roles and visibility". */
describe('inboxPermissions (role table)', () => {
  it.each<[ProjectRole, { read: string; create: boolean; decide: boolean }]>([
    ['owner', { read: 'all', create: true, decide: true }],
    ['deriver', { read: 'own', create: true, decide: false }],
    ['observer', { read: 'none', create: false, decide: false }],
    [null, { read: 'none', create: false, decide: false }],
  ])('%s → %j', (role, expected) => {
    expect(inboxPermissions(role)).toEqual(expected);
  });
});

describe('roleOf', () => {
  const project = { account_id: 'acc_owner' };
  it('the owner is the owner by project.account_id, whatever a membership says', () => {
    expect(roleOf(project, 'acc_owner', undefined)).toBe('owner');
    expect(roleOf(project, 'acc_owner', 'observer')).toBe('owner');
  });
  it('members get their membership role', () => {
    expect(roleOf(project, 'acc_d', 'deriver')).toBe('deriver');
    expect(roleOf(project, 'acc_o', 'observer')).toBe('observer');
  });
  it('anyone else is a non-member (null)', () => {
    expect(roleOf(project, 'acc_x', undefined)).toBeNull();
  });
});

describe('canSeeEvent (visibility follows read rights)', () => {
  const inbox = (type: string, sender: string) => ({ type, visibility: 'owner' as const, payload: { sender_account_id: sender, inbox_item_id: 'pinbox_1' } });
  const inboxTypes = ['project_inbox.item.created', 'project_inbox.item.accepted', 'project_inbox.item.rejected', 'project_inbox.item.archived'];
  const other = { type: 'project.member.added', visibility: 'project' as const, payload: { account_id: 'acc_x', role: 'deriver' } };

  it.each(inboxTypes)('%s: the owner sees every item event', (type) => {
    expect(canSeeEvent('owner', 'acc_owner', inbox(type, 'acc_deriver'))).toBe(true);
    expect(canSeeEvent('owner', 'acc_owner', inbox(type, 'acc_owner'))).toBe(true);
  });

  it.each(inboxTypes)('%s: a deriver sees events of items it sent, not of others', (type) => {
    expect(canSeeEvent('deriver', 'acc_deriver', inbox(type, 'acc_deriver'))).toBe(true);
    expect(canSeeEvent('deriver', 'acc_deriver', inbox(type, 'acc_deriver2'))).toBe(false);
    expect(canSeeEvent('deriver', 'acc_deriver', inbox(type, 'acc_owner'))).toBe(false);
  });

  it.each(inboxTypes)('%s: an observer sees no inbox events', (type) => {
    expect(canSeeEvent('observer', 'acc_observer', inbox(type, 'acc_deriver'))).toBe(false);
    expect(canSeeEvent('observer', 'acc_observer', inbox(type, 'acc_owner'))).toBe(false);
  });

  it('an observer that once sent items (as a deriver, since demoted) sees none of their events — observers may not read', () => {
    for (const type of inboxTypes) expect(canSeeEvent('observer', 'acc_observer', inbox(type, 'acc_observer')), type).toBe(false);
  });

  it('a non-member sees nothing', () => {
    expect(canSeeEvent(null, 'acc_x', other)).toBe(false);
    expect(canSeeEvent(null, 'acc_x', inbox('project_inbox.item.created', 'acc_x'))).toBe(false);
  });

  it('non-inbox project events reach every member', () => {
    for (const role of ['owner', 'deriver', 'observer'] as const) expect(canSeeEvent(role, 'acc_any', other)).toBe(true);
  });

  it('an `owner` event that is not an inbox event reaches the owner only, whoever it names', () => {
    const restricted = { type: 'project.audit.noted', visibility: 'owner' as const, payload: { sender_account_id: 'acc_deriver' } };
    expect(canSeeEvent('owner', 'acc_owner', restricted)).toBe(true);
    expect(canSeeEvent('deriver', 'acc_deriver', restricted)).toBe(false);
    expect(canSeeEvent('observer', 'acc_observer', restricted)).toBe(false);
  });
});

describe('visibilityOfEventType', () => {
  it('Project Inbox events are `owner`; every other project event is `project`', () => {
    for (const type of ['project_inbox.item.created', 'project_inbox.item.accepted', 'project_inbox.item.rejected', 'project_inbox.item.archived']) {
      expect(visibilityOfEventType(type), type).toBe('owner');
    }
    for (const type of ['project.created', 'project.archived', 'project.member.added', 'project.member.removed', 'session.created', 'project_inboxer']) {
      expect(visibilityOfEventType(type), type).toBe('project');
    }
  });
});
