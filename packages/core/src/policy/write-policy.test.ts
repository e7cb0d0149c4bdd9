/**
 * The write policy table (platform.md "The write gate"): every action × role × state has one
 * answer, and the answers keep the rules the specs state — checked exhaustively (the space is
 * small) and as properties. The same table through the HTTP API: the kit's write-gate suite.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../errors.js';
import { STATUS_BY_CODE } from '../http/errors.js';
import { decideWrite, WRITE_ACTIONS, WRITE_POLICY, WRITE_ROLES, WRITE_STATE_VALUES, type WriteAction, type WriteState } from './write-policy.js';

const states: WriteState[] = WRITE_STATE_VALUES.project.flatMap((project) =>
  WRITE_STATE_VALUES.session.flatMap((session) => WRITE_STATE_VALUES.run.map((run) => ({ project, session, run }))));
const every = WRITE_ACTIONS.flatMap((action) => WRITE_ROLES.flatMap((role) => states.map((state) => ({ action, role, state }))));

const stateArb = fc.record({
  project: fc.constantFrom(...WRITE_STATE_VALUES.project),
  session: fc.constantFrom(...WRITE_STATE_VALUES.session),
  run: fc.constantFrom(...WRITE_STATE_VALUES.run),
});
const caseArb = fc.record({ action: fc.constantFrom(...WRITE_ACTIONS), role: fc.constantFrom(...WRITE_ROLES), state: stateArb });

/** Session input: what an archived project or Session never takes. */
const INPUT: WriteAction[] = ['session.message', 'session.turn.commit', 'session.page.add', 'live_inbox.queue', 'live_inbox.replace', 'live_inbox.reorder', 'live_inbox.withdraw', 'run.start', 'run.commit'];

describe('write policy table', () => {
  it(`is total: each of the ${every.length} action × role × state cases is allowed or refused with a 403, 404 or 409 code`, () => {
    for (const { action, role, state } of every) {
      const verdict = decideWrite(action, role, state);
      if (verdict === null) continue;
      expect(ERROR_CODES).toContain(verdict.code);
      expect([403, 404, 409]).toContain(STATUS_BY_CODE[verdict.code]);
      expect(verdict.message.length).toBeGreaterThan(0);
    }
  });

  it('checks in one order: deleted Session (404) → role (403) → archived project → archived Session → Run (409)', () => {
    fc.assert(fc.property(caseArb, ({ action, role, state }) => {
      const row = WRITE_POLICY[action];
      const verdict = decideWrite(action, role, state);
      if (state.session === 'deleted') {
        expect(verdict?.code).toBe('session_not_found');
        return;
      }
      if (!row.roles.includes(role)) {
        expect(verdict).toEqual(row.denied);
        return;
      }
      const expected = (state.project === 'archived' ? row.archivedProject : null) ?? (state.session === 'archived' ? row.archivedSession : null)
        ?? (state.run === 'running' ? row.running : row.idle);
      expect(verdict?.code ?? null).toBe(expected);
    }), { numRuns: 2_000 });
  });

  it('archiving only ever adds refusals: what is allowed while archived is allowed while active', () => {
    for (const { action, role, state } of every) {
      if (decideWrite(action, role, state) !== null) continue;
      expect(decideWrite(action, role, { ...state, project: state.project === 'archived' ? 'active' : state.project })).toBeNull();
      expect(decideWrite(action, role, { ...state, session: state.session === 'archived' ? 'live' : state.session })).toBeNull();
    }
  });

  it('an archived project takes no write but its own archive again, an interrupt and a Run\'s end', () => {
    const allowed = new Set<string>();
    for (const { action, role, state } of every) {
      if (state.project === 'archived' && state.session !== 'deleted' && decideWrite(action, role, state) === null) allowed.add(action);
    }
    expect([...allowed].sort()).toEqual(['project.archive', 'run.end', 'session.interrupt']);
  });

  it('an archived Session takes no input (durable messages, turns, pages, Live Inbox edits, Run starts and commits): 409 session_archived', () => {
    for (const action of INPUT) {
      const role = WRITE_POLICY[action].roles[0]!;
      expect(decideWrite(action, role, { project: 'active', session: 'archived', run: 'running' })?.code).toBe('session_archived');
      expect(decideWrite(action, role, { project: 'none', session: 'archived', run: 'running' })?.code).toBe('session_archived');
      expect(decideWrite(action, role, { project: 'archived', session: 'live', run: 'running' })?.code).toBe('project_archived');
    }
    // …while its owner may still rename, archive again, delete (once idle) and interrupt it.
    for (const action of ['session.update', 'session.archive', 'session.interrupt'] as const) expect(decideWrite(action, 'owner', { project: 'active', session: 'archived', run: 'idle' })).toBeNull();
    expect(decideWrite('session.delete', 'owner', { project: 'active', session: 'archived', run: 'idle' })).toBeNull();
    expect(decideWrite('session.delete', 'owner', { project: 'active', session: 'archived', run: 'running' })?.code).toBe('session_running');
  });

  it('the rules of the specs, one by one', () => {
    const active: WriteState = { project: 'active', session: 'live', run: 'idle' };
    // project-inbox.md: owner and deriver create, only the owner decides; archived → 409 after the role.
    expect(decideWrite('project_inbox.create', 'deriver', active)).toBeNull();
    expect(decideWrite('project_inbox.create', 'observer', { ...active, project: 'archived' })?.code).toBe('project_inbox_write_denied');
    expect(decideWrite('project_inbox.decide', 'deriver', active)?.code).toBe('project_inbox_decide_denied');
    expect(decideWrite('project_inbox.decide', 'owner', { ...active, project: 'archived' })?.code).toBe('project_archived');
    // platform.md: the owner manages members; observers create no Sessions; any account writes a Session outside projects.
    expect(decideWrite('project.member.add', 'deriver', active)?.code).toBe('permission_denied');
    expect(decideWrite('session.create', 'observer', active)?.code).toBe('permission_denied');
    expect(decideWrite('session.message', 'workspace', { project: 'none', session: 'live', run: 'idle' })).toBeNull();
    // live-inbox.md: only the owner steers; the Live Inbox of an archived project or Session answers 409.
    expect(decideWrite('live_inbox.queue', 'deriver', { ...active, run: 'running' })?.code).toBe('permission_denied');
    expect(decideWrite('live_inbox.queue', 'owner', { ...active, project: 'archived', run: 'running' })?.code).toBe('project_archived');
    expect(decideWrite('live_inbox.replace', 'workspace', { project: 'none', session: 'archived', run: 'running' })?.code).toBe('session_archived');
    // A Run commits only while it runs; its end is always written.
    expect(decideWrite('run.commit', 'runtime', { ...active, run: 'idle' })?.code).toBe('conflict');
    expect(decideWrite('run.commit', 'runtime', { ...active, run: 'running' })).toBeNull();
    expect(decideWrite('run.end', 'runtime', { project: 'archived', session: 'archived', run: 'running' })).toBeNull();
    expect(decideWrite('run.commit', 'owner', { ...active, run: 'running' })?.code).toBe('permission_denied');
  });

  it('is frozen data', () => {
    expect(Object.isFrozen(WRITE_POLICY)).toBe(true);
    for (const row of Object.values(WRITE_POLICY)) expect(Object.isFrozen(row)).toBe(true);
  });
});
