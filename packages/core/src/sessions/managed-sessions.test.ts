import { afterEach, describe, expect, it } from 'vitest';
import { LiveInboxHost } from '../live-inbox/index.js';
import { PlatformService } from '../platform/service.js';
import { createManualClock, createSequentialIdGenerator } from '../ports/clock.js';
import { createLocalEventBus } from '../ports/event-bus.js';
import { fakeModel } from '../testing/fake-model.js';
import { createMemoryStore } from '../testing/memory-store.js';
import { ctxOf, rejection, text } from '../test-support.js';
import { ManagedSessionsService } from './managed-sessions.js';
import { SessionRuntimeService } from './service.js';

const owner = ctxOf('ws_a', 'acc_owner');
const observer = ctxOf('ws_a', 'acc_observer');
const outsider = ctxOf('ws_a', 'acc_outsider');
const stranger = ctxOf('ws_b', 'acc_stranger');

/** A model whose step never ends until the Run is aborted. */
const holdingModel = fakeModel({ then: 'hold' });

const open: SessionRuntimeService[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((r) => r.close()));
});

async function fixture() {
  const store = createMemoryStore();
  const clock = createManualClock(Date.parse('2026-01-01T00:00:00.000Z'));
  const deps = { store, bus: createLocalEventBus(), clock, ids: createSequentialIdGenerator() };
  const platform = new PlatformService(deps);
  await platform.createWorkspace({ id: 'ws_a', name: 'A' });
  await platform.createWorkspace({ id: 'ws_b', name: 'B' });
  for (const id of ['acc_owner', 'acc_observer', 'acc_outsider']) await platform.createAccount({ id, name: id, workspace_ids: ['ws_a'] });
  await platform.createAccount({ id: 'acc_stranger', name: 'stranger', workspace_ids: ['ws_b'] });
  await platform.createProject(owner, { id: 'proj_1', name: 'P' });
  await platform.addMember(owner, 'proj_1', { account_id: 'acc_observer', role: 'observer' });
  const runtime = new SessionRuntimeService({ ...deps, host: new LiveInboxHost({ hostId: 't' }), model: holdingModel });
  open.push(runtime);
  const sessions = new ManagedSessionsService({
    store, clock, platform, runtime, agents: [{ id: 'assistant', name: 'Assistant', model: 'scripted', version: 2 }],
  });
  return { store, clock, platform, runtime, sessions };
}

describe('ManagedSessionsService', () => {
  it('creates a Session with the agent snapshot, environment_id and metadata as given, in the caller\'s workspace', async () => {
    const f = await fixture();
    const s = await f.sessions.create(owner, { agent: 'assistant', environment_id: 'env_x', metadata: { k: 'v', ' ': '' }, title: 'Hi' });
    expect(s).toMatchObject({
      type: 'session', environment_id: 'env_x', metadata: { k: 'v', ' ': '' }, title: 'Hi', status: 'idle', workspace_id: 'ws_a', project_id: null,
      agent: { type: 'agent', id: 'assistant', version: 2, name: 'Assistant', model: { id: 'scripted' } },
      created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z', archived_at: null,
    });
    expect(await f.sessions.retrieve(owner, String(s.id))).toEqual(s);
    expect((await rejection(f.sessions.retrieve(stranger, String(s.id)))).code).toBe('session_not_found');
    const inProject = await f.sessions.create(owner, { agent: { type: 'agent', id: 'assistant', version: 2 }, environment_id: 'e', project_id: 'proj_1' });
    expect(inProject.project_id).toBe('proj_1');
    expect((await rejection(f.sessions.create(observer, { agent: 'assistant', environment_id: 'e', project_id: 'proj_1' }))).code).toBe('permission_denied');
  });

  it('refuses what this runtime cannot do, writing nothing', async () => {
    const f = await fixture();
    const cases: [unknown, string][] = [
      [{ agent: 'nobody', environment_id: 'e' }, 'agent_not_found'],
      [{ agent: { type: 'agent', id: 'assistant', version: 1 }, environment_id: 'e' }, 'agent_not_found'],
      [{ agent: { type: 'agent_with_overrides', id: 'assistant', tools: [{ type: 'agent_toolset_20260401' }] }, environment_id: 'e' }, 'unsupported_capability'],
      [{ agent: 'assistant', environment_id: 'e', resources: [{ type: 'file', file_id: 'f' }] }, 'unsupported_capability'],
      [{ agent: 'assistant', environment_id: 'e', vault_ids: ['vlt_1'] }, 'unsupported_capability'],
      [{ agent: 'assistant', environment_id: 'e', budget: { type: 'limit' } }, 'unsupported_capability'],
      [{ agent: 'assistant', environment_id: 'e', initial_events: [{ type: 'user.define_outcome', description: 'x' }] }, 'unsupported_capability'],
      [{ agent: 'assistant' }, 'validation_error'],
      [{ agent: 'assistant', environment_id: 'e', metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) }, 'validation_error'],
      [{ agent: 'assistant', environment_id: 'e', metadata: { k: 'x'.repeat(513) } }, 'validation_error'],
      [{ agent: 'assistant', environment_id: 'e', extra: 1 }, 'validation_error'],
      [{ agent: 'assistant', environment_id: 'e', project_id: 'proj_none' }, 'project_not_found'],
    ];
    for (const [body, code] of cases) expect([(await rejection(f.sessions.create(owner, body as never))).code, body]).toEqual([code, body]);
    expect(await f.store.listSessions('ws_a', {})).toEqual([]);
  });

  it('sends initial_events: the Session is running', async () => {
    const f = await fixture();
    const s = await f.sessions.create(owner, { agent: 'assistant', environment_id: 'e', initial_events: [{ type: 'user.message', content: text('go') }] });
    expect(s.status).toBe('running');
    const history = await f.runtime.listEvents(owner, String(s.id));
    expect(history.data.map((e) => e.type)).toEqual(['user.message', 'session.status_running']);
    // A running Session cannot be deleted; interrupt first.
    expect((await rejection(f.sessions.delete(owner, String(s.id)))).code).toBe('session_running');
    await f.runtime.interrupt(owner, String(s.id));
    await f.runtime.whenIdle(String(s.id));
    expect(await f.sessions.delete(owner, String(s.id))).toEqual({ id: s.id, type: 'session_deleted' });
    expect((await rejection(f.sessions.retrieve(owner, String(s.id)))).code).toBe('session_not_found');
    expect((await rejection(f.runtime.listEvents(owner, String(s.id)))).code).toBe('session_not_found');
    expect((await rejection(f.sessions.delete(owner, String(s.id)))).code).toBe('session_not_found');
  });

  it('updates title and patches metadata; archives once; only a writer may', async () => {
    const f = await fixture();
    const s = await f.sessions.create(owner, { agent: 'assistant', environment_id: 'e', metadata: { a: '1', b: '2' }, project_id: 'proj_1' });
    const id = String(s.id);
    f.clock.advance(1000);
    expect(await f.sessions.update(owner, id, { title: 'New', metadata: { a: null, c: '3' } })).toMatchObject({
      title: 'New', metadata: { b: '2', c: '3' }, updated_at: '2026-01-01T00:00:01.000Z', created_at: '2026-01-01T00:00:00.000Z',
    });
    expect(await f.sessions.update(owner, id, { metadata: null })).toMatchObject({ title: 'New', metadata: { b: '2', c: '3' } });
    expect(await f.sessions.update(owner, id, { title: null })).toMatchObject({ title: null });
    expect((await rejection(f.sessions.update(owner, id, { vault_ids: ['v'] }))).code).toBe('unsupported_capability');
    expect((await rejection(f.sessions.update(owner, id, { agent: { tools: [] } }))).code).toBe('unsupported_capability');
    expect((await rejection(f.sessions.update(owner, id, { metadata: Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`k${i}`, 'v'])) }))).code).toBe('validation_error');
    expect((await rejection(f.sessions.update(observer, id, { title: 'x' }))).code).toBe('permission_denied');
    expect((await rejection(f.sessions.update(outsider, id, { title: 'x' }))).code).toBe('session_not_found');
    f.clock.advance(1000);
    const archived = await f.sessions.archive(owner, id);
    expect(archived).toMatchObject({ archived_at: '2026-01-01T00:00:02.000Z' });
    f.clock.advance(1000);
    expect(await f.sessions.archive(owner, id)).toEqual(archived);
    expect((await rejection(f.runtime.sendEvents(owner, id, { events: [{ type: 'user.message', content: text('x') }] }))).code).toBe('session_archived');
  });

  it('lists visible Sessions in cursor pages, newest first by default, with filters', async () => {
    const f = await fixture();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      f.clock.advance(1000);
      ids.push(String((await f.sessions.create(owner, { agent: 'assistant', environment_id: 'e', project_id: i === 4 ? 'proj_1' : null })).id));
    }
    await f.platform.createSession(stranger, { title: 'other tenant' });
    const all: string[] = [];
    let page = await f.sessions.list(owner, { limit: 2 });
    for (;;) {
      all.push(...page.data.map((s) => String(s.id)));
      if (page.next_page === null) break;
      page = await f.sessions.list(owner, { limit: 2, page: page.next_page });
    }
    expect(all).toEqual([...ids].reverse());
    expect((await f.sessions.list(owner, { order: 'asc' })).data.map((s) => s.id)).toEqual(ids);
    // An outsider of proj_1 does not see its Session.
    expect((await f.sessions.list(outsider, {})).data.map((s) => s.id)).toEqual(ids.slice(0, 4).reverse());
    await f.sessions.archive(owner, ids[0]!);
    expect((await f.sessions.list(owner, {})).data.map((s) => s.id)).not.toContain(ids[0]);
    expect((await f.sessions.list(owner, { include_archived: 'true' })).data.map((s) => s.id)).toContain(ids[0]);
    expect((await f.sessions.list(owner, { 'created_at[gte]': '2026-01-01T00:00:03Z', 'created_at[lt]': '2026-01-01T00:00:05Z', order: 'asc' })).data.map((s) => s.id))
      .toEqual(ids.slice(2, 4));
    expect((await f.sessions.list(owner, { agent_id: 'assistant', agent_version: '2' })).data).toHaveLength(4);
    expect((await f.sessions.list(owner, { agent_id: 'assistant', agent_version: '1' })).data).toEqual([]);
    expect((await f.sessions.list(owner, { agent_id: 'other' })).data).toEqual([]);
    expect((await f.sessions.list(owner, { deployment_id: 'dep_1' })).data).toEqual([]);

    await f.runtime.sendEvents(owner, ids[1]!, { events: [{ type: 'user.message', content: text('go') }] });
    const running = await f.sessions.list(owner, { 'statuses[]': ['running'], limit: 1 });
    expect(running).toMatchObject({ next_page: null, data: [{ id: ids[1], status: 'running' }] });
    const idle = await f.sessions.list(owner, { 'statuses[]': 'idle', limit: 1 });
    expect(idle.data.map((s) => s.id)).toEqual([ids[4]]);
    const idle2 = await f.sessions.list(owner, { 'statuses[]': 'idle', limit: 2, page: idle.next_page! });
    expect(idle2).toMatchObject({ next_page: null });
    expect(idle2.data.map((s) => s.id)).toEqual([ids[3], ids[2]]);
    // The cursor is bound to its filters and caller.
    expect((await rejection(f.sessions.list(owner, { page: idle.next_page! }))).code).toBe('invalid_cursor');
    expect((await rejection(f.sessions.list(outsider, { 'statuses[]': 'idle', page: idle.next_page! }))).code).toBe('invalid_cursor');
    expect((await rejection(f.sessions.list(owner, { order: 'sideways' } as never))).code).toBe('validation_error');
    expect((await rejection(f.sessions.list(owner, { limit: '101' }))).code).toBe('validation_error');
  });
});
