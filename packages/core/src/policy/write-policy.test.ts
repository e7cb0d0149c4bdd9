/**
 * The write policy table (platform.md "The write gate"): every action × role × state has one
 * answer, and the answers keep the rules the specs state — checked exhaustively (the space is
 * small) and as properties. The same table through the HTTP API: the kit's write-gate suite.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../errors.js';
import { STATUS_BY_CODE } from '../http/errors.js';
import { decideWrite, WORKSPACE_STATE, WRITE_ACTIONS, WRITE_POLICY, WRITE_ROLES, WRITE_STATE_VALUES, type WriteAction, type WriteState } from './write-policy.js';

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
const INPUT: WriteAction[] = [
  'session.message', 'session.turn.commit', 'session.page.add', 'live_inbox.queue', 'live_inbox.replace', 'live_inbox.reorder', 'live_inbox.withdraw',
  'session.run.start', 'run.start', 'run.commit',
];
/** The administration's writes and those of `/v1/agents`: workspace writes. */
const WORKSPACE: WriteAction[] = ['account.create', 'account.disable', 'account.enable', 'api_key.create', 'api_key.rotate', 'api_key.revoke', 'agent.create', 'agent.update', 'agent.archive'];

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
      if (row.level === 'workspace') {
        // Workspace writes: the role alone, whatever state is passed.
        expect(verdict).toEqual(row.roles.includes(role) ? null : row.denied);
        return;
      }
      if (state.session === 'deleted') {
        expect(verdict?.code).toBe('session_not_found');
        return;
      }
      if (!row.roles.includes(role)) {
        expect(verdict).toEqual(row.denied);
        return;
      }
      const expected = (state.project === 'archived' ? row.archivedProject : null) ?? (state.session === 'archived' ? row.archivedSession : null)
        ?? (state.run === 'running' ? row.running : state.run === 'awaiting' ? row.awaiting : row.idle);
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
      if (WRITE_POLICY[action].level === 'workspace') continue;
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

  it('a parked Run (awaiting): no second Run starts and nothing of it commits; the Session may be deleted (the Run ends with it), interrupted, steered, given input', () => {
    const parked: WriteState = { project: 'active', session: 'live', run: 'awaiting' };
    for (const [action, role] of [['session.run.start', 'owner'], ['run.start', 'runtime']] as const) {
      const refusal = decideWrite(action, role, parked);
      expect(refusal?.code).toBe('session_running');
      expect(refusal?.message).toMatch(/awaits tool results or confirmations/);
    }
    expect(decideWrite('run.commit', 'runtime', parked)?.code).toBe('conflict');
    expect(decideWrite('run.end', 'runtime', parked)).toBeNull();
    for (const action of ['session.delete', 'session.interrupt', 'session.message', 'live_inbox.queue', 'session.update'] as const) expect(decideWrite(action, 'owner', parked)).toBeNull();
    // …while a running Run refuses a delete, and the archive still comes first.
    expect(decideWrite('session.delete', 'owner', { ...parked, run: 'running' })?.code).toBe('session_running');
    expect(decideWrite('session.run.start', 'owner', { ...parked, project: 'archived' })?.code).toBe('project_archived');
  });

  it('startRun (session.run.start) is the owner\'s, or on a Session outside projects any account\'s; one Run at a time', () => {
    const idle: WriteState = { project: 'active', session: 'live', run: 'idle' };
    expect(decideWrite('session.run.start', 'owner', idle)).toBeNull();
    expect(decideWrite('session.run.start', 'workspace', { ...idle, project: 'none' })).toBeNull();
    for (const role of ['deriver', 'observer', 'runtime', 'admin'] as const) expect(decideWrite('session.run.start', role, idle)?.code).toBe('permission_denied');
    expect(decideWrite('session.run.start', 'owner', { ...idle, run: 'running' })?.code).toBe('session_running');
    expect(decideWrite('session.run.start', 'owner', { ...idle, session: 'archived' })?.code).toBe('session_archived');
    expect(decideWrite('session.run.start', 'owner', { ...idle, session: 'deleted' })?.code).toBe('session_not_found');
  });

  it('workspace writes: the administration only with an admin key (403 otherwise), agents by any account of the workspace; no project, Session or Run state bears on them', () => {
    for (const action of WORKSPACE) expect(WRITE_POLICY[action].level).toBe('workspace');
    for (const action of WRITE_ACTIONS) if (!WORKSPACE.includes(action)) expect(WRITE_POLICY[action].level).not.toBe('workspace');
    for (const action of WORKSPACE.filter((a) => !a.startsWith('agent.'))) {
      expect(decideWrite(action, 'admin', WORKSPACE_STATE)).toBeNull();
      for (const role of ['owner', 'deriver', 'observer', 'workspace', 'runtime'] as const) {
        expect(decideWrite(action, role, WORKSPACE_STATE)).toEqual({ code: 'permission_denied', message: 'Only an API key of kind admin may administer the workspace' });
      }
    }
    for (const action of WORKSPACE.filter((a) => a.startsWith('agent.'))) {
      for (const role of ['workspace', 'admin'] as const) expect(decideWrite(action, role, WORKSPACE_STATE)).toBeNull();
      expect(decideWrite(action, 'runtime', WORKSPACE_STATE)?.code).toBe('permission_denied');
    }
    for (const { action, role, state } of every) if (WORKSPACE.includes(action)) expect(decideWrite(action, role, state)).toEqual(decideWrite(action, role, WORKSPACE_STATE));
  });

  it('is frozen data', () => {
    expect(Object.isFrozen(WRITE_POLICY)).toBe(true);
    for (const row of Object.values(WRITE_POLICY)) expect(Object.isFrozen(row)).toBe(true);
  });
});
