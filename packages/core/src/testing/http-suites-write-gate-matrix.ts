/**
 * What the write gate's checks run (`http-suites-write-gate.ts`): every write of one state by
 * every role on fresh fixtures, the workspace writes by role, and the Live Inbox of a project or
 * Session archived during its Run.
 */
import { expect } from 'vitest';
import { STATUS_BY_CODE } from '../http/errors.js';
import { decideWrite, type WriteAction, type WriteRole, type WriteState } from '../policy/write-policy.js';
import type { HttpConformanceOptions } from './http-conformance-checks.js';
import { expectError, heldModel, startHttpWorld, type HttpWorld, type WorldResponse } from './http-world.js';
import { ALONE, SHARED, WRITES, text, type Target, type WorkspaceWrite } from './http-suites-write-gate.js';

/** Runs every write that applies in `state`, by each of `roles`, on fresh fixtures of a fresh world, and checks each answer against the table. */
export async function writeMatrix(kit: HttpConformanceOptions, state: WriteState, roles: WriteRole[]): Promise<void> {
  let h: HttpWorld;
  const world = () => startHttpWorld(kit, { model: heldModel(), managedSessions: true, budgets: { runsPerAccount: 10_000, runsPerKey: 10_000, sessionsPerMinute: 0 } });

  const must = async (res: Promise<WorldResponse>, status: number, what: string) => {
    const r = await res;
    if (r.status !== status) throw new Error(`${what}: expected ${status}, got ${r.status}: ${r.text.slice(0, 300)}`);
    return r.body;
  };
  const waitFor = async (check: () => Promise<boolean>, what: string) => {
    for (const deadline = Date.now() + 20_000; !(await check());) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  /** What a refused write must leave as it was: the project's events, the Session's ledger, floors, items and members. */
  const footprint = async (t: Target) => {
    const store = h.store;
    const project = t.project_id === null ? [] : await store.listProjectEvents({ project_id: t.project_id, after: 0, limit: 1000 });
    const members = t.project_id === null ? [] : await store.listMemberships(t.project_id);
    const items = t.project_id === null ? [] : await store.listInboxItems({ project_id: t.project_id, limit: 1000 });
    const ledger = await store.listSessionEvents({ session_id: t.session_id, after: 0, limit: 1000 });
    const floors = await store.listFloors(t.session_id);
    const sessions = await store.listSessions('ws_demo', { project_id: t.project_id });
    return JSON.stringify({ project: project.length, members: members.map((m) => [m.account_id, m.role]), items: items.map((i) => [i.id, i.status]), ledger: ledger.length, floors: floors.length, sessions: sessions.map((x) => [x.id, x.title, x.archived_at]) });
  };

  /** Builds a fixture in `state`: a fresh project (or a Session outside projects), with what the writes need. */
  const fixture = async (state: WriteState): Promise<Target> => {
    let project_id: string | null = null;
    let session_id: string;
    let actor = 'acc_owner';
    if (state.project === 'none') {
      actor = 'acc_outsider';
      session_id = (await must(h.request('POST', '/sessions', { as: actor, body: {} }), 201, 'loose session')).session.id;
    } else {
      ({ project_id, session_id } = await h.newProject());
    }
    const floor_id = (await must(h.request('POST', `/sessions/${session_id}/floors`, { as: actor, body: { content: 'first' } }), 201, 'turn')).floor.id;
    const item_id = project_id === null ? null
      : (await must(h.request('POST', `/projects/${project_id}/inbox`, { as: 'acc_deriver', body: { type: 'to_decide' } }), 201, 'item')).item.id;
    let message_id = 1;
    if (state.run === 'running') {
      await must(h.request('POST', `/v1/sessions/${session_id}/events`, { as: actor, body: { events: [{ type: 'user.message', content: text('start') }] } }), 200, 'start a Run');
      await waitFor(async () => (await h.request('GET', `/v1/awaken/sessions/${session_id}/live-inbox`, { as: actor })).body.active === true, 'an active attempt');
      message_id = (await must(h.request('POST', `/v1/awaken/sessions/${session_id}/live-inbox`, { as: actor, body: { content: text('queued first') } }), 200, 'queue')).id;
    }
    if (state.session === 'archived') await must(h.request('POST', `/v1/sessions/${session_id}/archive`, { as: actor }), 200, 'archive the Session');
    if (state.session === 'deleted') await must(h.request('DELETE', `/v1/sessions/${session_id}`, { as: actor }), 200, 'delete the Session');
    if (state.project === 'archived') await must(h.request('POST', `/projects/${project_id}/archive`, { as: 'acc_owner' }), 200, 'archive the project');
    return { project_id, session_id, floor_id, item_id, message_id, as: { owner: 'acc_owner', deriver: 'acc_deriver', observer: 'acc_observer', workspace: 'acc_outsider', admin: 'admin' } };
  };
  /** Ends the fixture's Run, if one still runs (an interrupt is allowed in every state). */
  const settle = async (t: Target, state: WriteState) => {
    if (state.session === 'deleted') return;
    const actor = state.project === 'none' ? 'acc_outsider' : 'acc_owner';
    if (await h.store.getRunningRun(t.session_id)) await h.request('POST', `/v1/sessions/${t.session_id}/events`, { as: actor, body: { events: [{ type: 'user.interrupt' }] } });
    await waitFor(async () => (await h.store.getRunningRun(t.session_id)) === undefined, 'the Run to end');
  };

  /** Runs `action` by each role on `t` (in `state`) and checks the answer against the table. */
  const check = async (t: Target, state: WriteState, roles: WriteRole[], action: keyof typeof WRITES) => {
    const write = WRITES[action];
    for (const role of roles) {
      const verdict = decideWrite(action, role, state);
      const [method, path, body] = write.call(t);
      const before = verdict === null ? '' : await footprint(t);
      const res = await h.request(method, path, { as: t.as[role as Exclude<WriteRole, 'runtime'>], ...(body === undefined ? {} : { body }) });
      const what = `${action} by ${role} in ${JSON.stringify(state)}`;
      if (verdict !== null) {
        expect(res.status, `${what}: ${res.text.slice(0, 300)}`).toBe(STATUS_BY_CODE[verdict.code]);
        expectError(res, STATUS_BY_CODE[verdict.code]!, verdict.code);
        expect(await footprint(t), `${what} wrote something`).toBe(before);
      } else if (action.startsWith('live_inbox.') && state.run === 'idle') {
        // Allowed by the table; with no active attempt the Live Inbox answers 410 after the gate.
        expectError(res, 410, 'live_inbox_inactive');
      } else {
        expect(res.status, `${what}: ${res.text.slice(0, 300)}`).toBe(write.ok);
      }
    }
  };

  const level = state.session === 'none' ? 'project' : 'session';
  // Writes to a project are decided in project states; outside projects only a Session can be created there.
  const applies = (action: WriteAction) => action in WRITES && WRITES[action as keyof typeof WRITES].level === level
    && (state.project !== 'none' || level === 'session' || action === 'session.create');
  const groups = [SHARED.filter(applies), ...ALONE.filter(applies).map((a) => [a])].filter((g) => g.length > 0);
  h = await world();
  try {
    for (const group of groups) {
      const t = await fixture(state);
      try {
        for (const action of group) await check(t, state, roles, action as keyof typeof WRITES);
      } finally {
        await settle(t, state);
      }
    }
  } finally {
    await h.close();
  }
}

/** The targets a workspace write acts on, made fresh by the admin key for each write. */
export interface WorkspaceTarget { account_id: string; key_id: string; agent_id: string }
export const WORKSPACE_WRITES: Record<WorkspaceWrite, { call(t: WorkspaceTarget): [string, string, unknown?]; ok: number }> = {
  'account.create': { call: () => ['POST', '/admin/accounts', { name: 'Gate account' }], ok: 201 },
  'account.disable': { call: (t) => ['POST', `/admin/accounts/${t.account_id}/disable`], ok: 200 },
  'account.enable': { call: (t) => ['POST', `/admin/accounts/${t.account_id}/enable`], ok: 200 },
  'api_key.create': { call: (t) => ['POST', `/admin/accounts/${t.account_id}/keys`, {}], ok: 201 },
  'api_key.rotate': { call: (t) => ['POST', `/admin/keys/${t.key_id}/rotate`, {}], ok: 200 },
  'api_key.revoke': { call: (t) => ['DELETE', `/admin/keys/${t.key_id}`], ok: 204 },
  'agent.create': { call: () => ['POST', '/v1/agents', { name: 'Gate agent', model: 'claude-sonnet-4-5' }], ok: 200 },
  'agent.update': { call: (t) => ['POST', `/v1/agents/${t.agent_id}`, { version: 1, name: 'Gate agent, renamed' }], ok: 200 },
  'agent.archive': { call: (t) => ['POST', `/v1/agents/${t.agent_id}/archive`], ok: 200 },
};
/** Who acts as each role: a standard key of the workspace, and its admin key (refused roles first). */
const AS: [WriteRole, string][] = [['workspace', 'acc_outsider'], ['admin', 'admin']];

/** Runs workspace write `action` by a standard key and by the admin key, and checks each answer against the table. */
export async function workspaceWrite(kit: HttpConformanceOptions, action: WorkspaceWrite): Promise<void> {
  const h = await startHttpWorld(kit, { model: heldModel(), managedSessions: true });
  try {
    const must = async (res: Promise<WorldResponse>, status: number, what: string) => {
      const r = await res;
      if (r.status !== status) throw new Error(`${what}: expected ${status}, got ${r.status}: ${r.text.slice(0, 300)}`);
      return r.body;
    };
    /** Fresh targets for each role's attempt (an allowed write changes its target). */
    const target = async (): Promise<WorkspaceTarget> => {
      const account_id = (await must(h.request('POST', '/admin/accounts', { as: 'admin', body: { name: 'Target' } }), 201, 'account')).account.id as string;
      const key_id = (await must(h.request('POST', `/admin/accounts/${account_id}/keys`, { as: 'admin', body: {} }), 201, 'key')).key.id as string;
      const agent_id = (await must(h.request('POST', '/v1/agents', { as: 'acc_owner', body: { name: 'Target agent', model: 'claude-sonnet-4-5' } }), 200, 'agent')).id as string;
      return { account_id, key_id, agent_id };
    };
    const store = h.store;
    const footprint = async () => JSON.stringify({
      logs: (await store.listWorkspaceOperationLogs?.({ workspace_id: 'ws_demo', limit: 1000 }))?.length,
      accounts: (await store.listWorkspaceAccounts?.('ws_demo'))?.map((a) => [a.id, a.disabled_at]),
      keys: (await store.listApiKeys?.('ws_demo', {}))?.map((k) => [k.id, k.revoked_at]),
      agents: (await store.pageAgents?.('ws_demo', { order: 'desc', limit: 1000, include_archived: true }))?.map((a) => [a.id, a.version, a.archived_at]),
    });
    for (const [role, as] of AS) {
      const verdict = decideWrite(action, role, { project: 'none', session: 'none', run: 'idle' });
      const [method, path, body] = WORKSPACE_WRITES[action].call(await target());
      const before = await footprint();
      const res = await h.request(method, path, { as, ...(body === undefined ? {} : { body }) });
      const what = `${action} by ${role}`;
      if (verdict !== null) {
        expectError(res, STATUS_BY_CODE[verdict.code]!, verdict.code);
        expect(await footprint(), `${what} wrote something`).toBe(before);
      } else {
        expect(res.status, `${what}: ${res.text.slice(0, 300)}`).toBe(WORKSPACE_WRITES[action].ok);
      }
    }
  } finally {
    await h.close();
  }
}

/** A world whose held Run is queued to, then its project or Session archived: the Live Inbox answers 409, nothing is committed after; the Run is released at the end. */
export async function archivedDuringRun(kit: HttpConformanceOptions, what: 'project' | 'session'): Promise<void> {
  const model = heldModel();
  const h = await startHttpWorld(kit, { model, managedSessions: true });
  try {
    const { project_id, session_id } = await h.newProject();
    const inbox = `/v1/awaken/sessions/${session_id}/live-inbox`;
    expect((await h.request('POST', `/v1/sessions/${session_id}/events`, { as: 'acc_owner', body: { events: [{ type: 'user.message', content: text('work') }] } })).status).toBe(200);
    await model.waiting();
    const queued = await h.request('POST', inbox, { as: 'acc_owner', body: { content: text('queued before the archive') } });
    expect(queued.status).toBe(200);
    const id = queued.body.id as number;
    const archive = what === 'project' ? await h.request('POST', `/projects/${project_id}/archive`, { as: 'acc_owner' }) : await h.request('POST', `/v1/sessions/${session_id}/archive`, { as: 'acc_owner' });
    expect(archive.status).toBe(200);
    const code = what === 'project' ? 'project_archived' : 'session_archived';
    const ledger = async () => h.store.listSessionEvents({ session_id, after: 0, limit: 1000 });
    const before = await ledger();

    // Every Live Inbox write answers 409 and changes nothing; the window still reads.
    expectError(await h.request('POST', inbox, { as: 'acc_owner', body: { content: text('after the archive') } }), 409, code);
    expectError(await h.request('PUT', `${inbox}/${id}`, { as: 'acc_owner', body: { content: text('replaced after the archive') } }), 409, code);
    expectError(await h.request('PUT', `${inbox}/order`, { as: 'acc_owner', body: { order: [id] } }), 409, code);
    expectError(await h.request('DELETE', `${inbox}/${id}`, { as: 'acc_owner' }), 409, code);
    expectError(await h.request('POST', `/v1/sessions/${session_id}/events`, { as: 'acc_owner', body: { events: [{ type: 'user.message', content: text('durable after the archive') } ] } }), 409, code);
    const window = await h.request('GET', inbox, { as: 'acc_owner' });
    expect(window.status).toBe(200);
    expect(window.body.messages).toEqual([{ id, content: text('queued before the archive') }]);

    // The Run's next commit (its step and the drained message) is refused by the gate: nothing is committed after the archive.
    model.release();
    for (const deadline = Date.now() + 20_000; await h.store.getRunningRun(session_id);) {
      if (Date.now() > deadline) throw new Error('the Run did not end');
      await new Promise((r) => setTimeout(r, 5));
    }
    const after = await ledger();
    const added = after.slice(before.length);
    expect(added.map((e) => e.type)).toEqual(['session.status_idle']);
    expect(added[0]!.content).toMatchObject({ outcome: 'failed', error: { type: 'invalid_request_error' } });
    expect(after.some((e) => e.type === 'agent.message' || (e.message_id ?? '').includes('-inbox-'))).toBe(false);
    // The archived project or Session starts no follow-up Run either.
    expect(await h.store.getRunningRun(session_id)).toBeUndefined();
  } finally {
    model.release();
    await h.close();
  }
}
