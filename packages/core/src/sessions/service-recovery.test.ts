/**
 * SessionRuntimeService over the in-memory store with a gated model (the world of `test-
 * support.ts`): Runs left running by another process (lazy and eager recovery, recoverStaleRuns:
 * false), archived input, close() and strict bodies. Spec: live-inbox.md.
 */
import { describe, expect, it } from 'vitest';
import { LiveInboxHost } from '../live-inbox/index.js';
import { PlatformService } from '../platform/service.js';
import { createIdGenerator, createManualClock, createSequentialIdGenerator } from '../ports/clock.js';
import { createLocalEventBus } from '../ports/event-bus.js';
import { createMemoryStore } from '../testing/memory-store.js';
import { SessionRuntimeService } from './service.js';
import { rejection, text } from '../test-support.js';
import { gatedModel, owner, fixture, brief, closeRuntimesAfterEach, open } from './test-support.js';

closeRuntimesAfterEach();

describe('SessionRuntimeService — leftover Runs', () => {
  it('ends a Run left running by a previous process when durable input arrives', async () => {
    const f = await fixture();
    await f.store.insertRun({ id: 'run_old', session_id: 'sess_p', status: 'running', started_at: 1, ended_at: null, outcome: null });
    expect(await f.runtime.liveInboxSnapshot(owner, 'sess_p')).toMatchObject({ active: false });
    await f.runtime.sendEvents(owner, 'sess_p', { events: [{ type: 'user.message', content: text('hello') }] });
    const s = await f.model.next();
    expect(f.store.raw().runs.get('run_old')).toMatchObject({ status: 'idle', outcome: 'failed' });
    const events = await f.events();
    expect(events[0]).toMatchObject({ type: 'session.status_idle', run_id: 'run_old', content: { outcome: 'failed', error: { type: 'api_error', message: expect.stringContaining('stopped before the Run ended') } } });
    expect(brief(events)).toEqual(['session.status_idle', 'user.message', 'session.status_running']);
    s.reply('ok');
    await f.runtime.whenIdle('sess_p');
  });

  it('leaves alone a Run another live process started after this instance (input waits for its follow-up)', async () => {
    const f = await fixture();
    const later = f.store.raw().sessions.get('sess_p')!.created_at + 1;
    await f.store.insertRun({ id: 'run_peer', session_id: 'sess_p', status: 'running', started_at: later, ended_at: null, outcome: null });
    await f.runtime.sendEvents(owner, 'sess_p', { events: [{ type: 'user.message', content: text('queued durably') }] });
    expect(f.store.raw().runs.get('run_peer')).toMatchObject({ status: 'running' });
    expect(brief(await f.events())).toEqual(['user.message']);
    expect((await f.events())[0]).toMatchObject({ run_id: null });
    expect(f.runtime.isRunning('sess_p')).toBe(false);
  });

  it('recoverStaleRuns() ends a leftover at once, without input: Run failed, status_idle appended and published', async () => {
    const f = await fixture();
    // This instance executes a Run of sess_free; "another process" left run_old running on sess_p.
    await f.runtime.sendEvents(owner, 'sess_free', { events: [{ type: 'user.message', content: text('mine') }] });
    const mine = await f.model.next();
    const ownRun = (await f.store.getRunningRun('sess_free'))!;
    await f.store.insertRun({ id: 'run_old', session_id: 'sess_p', status: 'running', started_at: 1, ended_at: null, outcome: null });
    // A live peer's Run, started after this instance was built, is no leftover either.
    const later = f.store.raw().sessions.get('sess_b')!.created_at + 1;
    await f.store.insertRun({ id: 'run_peer', session_id: 'sess_b', status: 'running', started_at: later, ended_at: null, outcome: null });

    expect(await f.runtime.recoverStaleRuns()).toBe(1);
    expect(f.store.raw().runs.get('run_old')).toMatchObject({ status: 'idle', outcome: 'failed', ended_at: expect.any(Number) });
    const events = await f.events();
    expect(events).toEqual([expect.objectContaining({ type: 'session.status_idle', run_id: 'run_old', content: { outcome: 'failed', error: { type: 'api_error', message: expect.stringContaining('stopped before the Run ended') } } })]);
    expect(f.published).toEqual([{ kind: 'session_event', event: events[0] }]);
    expect(f.store.raw().runs.get(ownRun.id)).toMatchObject({ status: 'running' });
    expect(f.runtime.isRunning('sess_free')).toBe(true);
    expect(f.store.raw().runs.get('run_peer')).toMatchObject({ status: 'running' });
    expect(await f.runtime.recoverStaleRuns()).toBe(0);

    // The Session takes new durable input normally.
    await f.runtime.sendEvents(owner, 'sess_p', { events: [{ type: 'user.message', content: text('hello') }] });
    const step = await f.model.next();
    expect(brief(await f.events())).toEqual(['session.status_idle', 'user.message', 'session.status_running']);
    step.reply('ok');
    mine.reply('done');
    await f.runtime.whenIdle('sess_p');
    await f.runtime.whenIdle('sess_free');
    expect(brief(await f.events('sess_free')).at(-1)).toBe('session.status_idle');
  });

  it('recoverStaleRuns() racing durable input ends the leftover exactly once', async () => {
    const f = await fixture();
    await f.store.insertRun({ id: 'run_old', session_id: 'sess_p', status: 'running', started_at: 1, ended_at: null, outcome: null });
    const [ended] = await Promise.all([
      f.runtime.recoverStaleRuns(),
      f.runtime.sendEvents(owner, 'sess_p', { events: [{ type: 'user.message', content: text('hello') }] }),
    ]);
    const step = await f.model.next();
    const idles = (await f.events()).filter((e) => e.run_id === 'run_old');
    expect(idles).toEqual([expect.objectContaining({ type: 'session.status_idle', content: { outcome: 'failed', error: { type: 'api_error', message: expect.stringContaining('stopped before the Run ended') } } })]);
    expect(ended).toBeLessThanOrEqual(1);
    expect((await f.store.getRunningRun('sess_p'))?.id).not.toBe('run_old');
    expect(f.runtime.isRunning('sess_p')).toBe(true);
    step.reply('ok');
    await f.runtime.whenIdle('sess_p');
  });

  it('with recoverStaleRuns: false, never ends a Run it does not execute', async () => {
    const store = createMemoryStore();
    const runtime = new SessionRuntimeService({
      store, bus: createLocalEventBus(), clock: createManualClock(), ids: createSequentialIdGenerator(),
      host: new LiveInboxHost(), model: gatedModel(), recoverStaleRuns: false,
    });
    open.push(runtime);
    const platform = new PlatformService({ store, bus: createLocalEventBus(), clock: createManualClock(), ids: createSequentialIdGenerator() });
    await platform.createWorkspace({ id: 'ws_a', name: 'A' });
    await platform.createAccount({ id: 'acc_owner', name: 'o', workspace_ids: ['ws_a'] });
    await platform.createSession(owner, { id: 'sess_x' });
    await store.insertRun({ id: 'run_old', session_id: 'sess_x', status: 'running', started_at: 1, ended_at: null, outcome: null });
    expect(await runtime.recoverStaleRuns()).toBe(0);
    await runtime.sendEvents(owner, 'sess_x', { events: [{ type: 'user.message', content: text('hi') }] });
    expect(store.raw().runs.get('run_old')).toMatchObject({ status: 'running' });
    expect(runtime.isRunning('sess_x')).toBe(false);
  });
});

describe('SessionRuntimeService — archive, shutdown and bodies', () => {
  it('a Session of an archived Project refuses new user.message input (409) and writes nothing', async () => {
    const f = await fixture();
    // Its own ids must not repeat the fixture's (ids are primary keys in every store).
    await new PlatformService({ store: f.store, bus: createLocalEventBus(), clock: createManualClock(), ids: createIdGenerator() })
      .archiveProject(owner, 'proj_1');
    const before = await f.events();
    await expect(f.runtime.sendEvents(owner, 'sess_p', { events: [{ type: 'user.message', content: [{ type: 'text', text: 'hi' }] }] }))
      .rejects.toMatchObject({ code: 'project_archived' });
    expect(await f.events()).toEqual(before);
    // A session outside any project is unaffected.
    await expect(f.runtime.sendEvents(owner, 'sess_free', { events: [{ type: 'user.interrupt' }] })).resolves.toBeDefined();
  });

  it('close() aborts running Runs, ends them cancelled and refuses new input', async () => {
    const f = await fixture();
    await f.runtime.sendEvents(owner, 'sess_p', { events: [{ type: 'user.message', content: text('task') }] });
    await f.model.next();
    await f.runtime.close();
    expect(f.runtime.isRunning('sess_p')).toBe(false);
    expect(await f.store.getRunningRun('sess_p')).toBeUndefined();
    expect((await f.events()).at(-1)).toMatchObject({ type: 'session.status_idle', content: { outcome: 'cancelled' } });
    expect((await rejection(f.runtime.sendEvents(owner, 'sess_p', { events: [{ type: 'user.message', content: text('x') }] }))).code).toBe('overloaded');
  });

  it('validates bodies strictly', async () => {
    const f = await fixture();
    const bad = [
      { events: [] },
      { events: [{ type: 'user.message', content: [] }] },
      { events: [{ type: 'user.message', content: text('x'), extra: 1 }] },
      { events: [{ type: 'agent.message', content: text('x') }] },
      { events: Array.from({ length: 51 }, () => ({ type: 'user.interrupt' })) },
      { events: [{ type: 'user.interrupt' }], more: true },
    ];
    for (const body of bad) {
      expect((await rejection(f.runtime.sendEvents(owner, 'sess_p', body as never))).code).toBe('validation_error');
    }
    expect((await rejection(f.runtime.liveInboxQueue(owner, 'sess_p', { content: [{ type: 'video' }] } as never))).code).toBe('validation_error');
    expect((await rejection(f.runtime.liveInboxReorder(owner, 'sess_p', { order: [1.5] }))).code).toBe('validation_error');
    expect(await f.events()).toEqual([]);
  });
});
