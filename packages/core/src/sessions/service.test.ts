import { afterEach, describe, expect, it } from 'vitest';
import { LiveInboxHost, ModelError, type Model, type ModelStepResult, type TranscriptMessage } from '../live-inbox/index.js';
import { PlatformService } from '../platform/service.js';
import { createIdGenerator, createManualClock, createSequentialIdGenerator } from '../ports/clock.js';
import { createLocalEventBus, type BusMessage } from '../ports/event-bus.js';
import type { Store } from '../ports/store.js';
import type { SessionEvent } from '../records.js';
import { createMemoryStore, type MemoryStore } from '../testing/memory-store.js';
import { SessionRuntimeService } from './service.js';
import { ctxOf, rejection, text, waitFor } from '../test-support.js';

const textOf = (content: unknown): string =>
  Array.isArray(content) ? content.map((b: { type: string; text?: string }) => (b.type === 'text' ? b.text : '<image>')).join('') : '';

interface PendingStep {
  transcript: readonly TranscriptMessage[];
  signal: AbortSignal;
  reply(t: string, more?: boolean): void;
  fail(error: unknown): void;
}

/** A model whose steps the test releases one by one: no timers, fully deterministic. */
function gatedModel(): Model & { next(): Promise<PendingStep>; calls: PendingStep[] } {
  const calls: PendingStep[] = [];
  let taken = 0;
  let wake: (() => void) | undefined;
  return {
    calls,
    step(transcript, signal) {
      return new Promise<ModelStepResult>((resolve, reject) => {
        const onAbort = () => reject(signal.reason);
        if (signal.aborted) return onAbort();
        signal.addEventListener('abort', onAbort, { once: true });
        calls.push({
          transcript,
          signal,
          reply: (t, more = false) => {
            signal.removeEventListener('abort', onAbort);
            resolve({ content: text(t), continue: more });
          },
          fail: (error) => {
            signal.removeEventListener('abort', onAbort);
            reject(error);
          },
        });
        wake?.();
      });
    },
    async next() {
      while (calls.length <= taken) await new Promise<void>((r) => (wake = r));
      return calls[taken++] as PendingStep;
    },
  };
}


const owner = ctxOf('ws_a', 'acc_owner');
const deriver = ctxOf('ws_a', 'acc_deriver');
const observer = ctxOf('ws_a', 'acc_observer');
const outsider = ctxOf('ws_a', 'acc_outsider');
const stranger = ctxOf('ws_b', 'acc_stranger');

interface Fixture {
  store: MemoryStore;
  clock: ReturnType<typeof createManualClock>;
  host: LiveInboxHost;
  model: ReturnType<typeof gatedModel>;
  runtime: SessionRuntimeService;
  published: BusMessage[];
  runErrors: unknown[];
  events(session_id?: string): Promise<SessionEvent[]>;
}

const open: SessionRuntimeService[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((r) => r.close()));
});

async function fixture(options: { store?: (store: MemoryStore) => Store } = {}): Promise<Fixture> {
  const store = createMemoryStore();
  const bus = createLocalEventBus();
  const published: BusMessage[] = [];
  bus.subscribe('session:sess_p', (m) => published.push(m));
  const clock = createManualClock();
  const deps = { store, bus, clock, ids: createSequentialIdGenerator() };
  const platform = new PlatformService(deps);
  await platform.createWorkspace({ id: 'ws_a', name: 'A' });
  await platform.createWorkspace({ id: 'ws_b', name: 'B' });
  for (const id of ['acc_owner', 'acc_deriver', 'acc_observer', 'acc_outsider']) await platform.createAccount({ id, name: id, workspace_ids: ['ws_a'] });
  await platform.createAccount({ id: 'acc_stranger', name: 'stranger', workspace_ids: ['ws_b'] });
  await platform.createProject(owner, { id: 'proj_1', name: 'P' });
  await platform.addMember(owner, 'proj_1', { account_id: 'acc_deriver', role: 'deriver' });
  await platform.addMember(owner, 'proj_1', { account_id: 'acc_observer', role: 'observer' });
  await platform.createSession(owner, { id: 'sess_p', project_id: 'proj_1', title: 'in a project' });
  await platform.createSession(owner, { id: 'sess_free', title: 'outside any project' });
  await platform.createSession(stranger, { id: 'sess_b', title: 'other tenant' });
  const host = new LiveInboxHost({ hostId: 'test' });
  const model = gatedModel();
  const runErrors: unknown[] = [];
  const runtime = new SessionRuntimeService({
    ...deps, store: options.store ? options.store(store) : store, host, model, onRunError: (e) => runErrors.push(e),
  });
  open.push(runtime);
  return {
    store, clock, host, model, runtime, published, runErrors,
    events: async (session_id = 'sess_p') => store.listSessionEvents({ session_id, after: 0, limit: 1000 }),
  };
}

const brief = (events: SessionEvent[]) => events.map((e) => `${e.type}${e.message_id ? `:${e.message_id}` : ''}`);

describe('SessionRuntimeService — durable events and Runs', () => {
  it('commits a user.message, starts a Run, executes it and ends it idle', async () => {
    const f = await fixture();
    expect(await f.runtime.liveInboxSnapshot(owner, 'sess_p')).toEqual({ active: false, version: 0, messages: [] });

    const receipt = await f.runtime.sendEvents(owner, 'sess_p', { events: [{ type: 'user.message', content: text('hello') }] });
    expect(receipt.data).toHaveLength(1);
    expect(receipt.data[0]).toMatchObject({ type: 'user.message', id: expect.stringMatching(/^sevt_/), processed_at: expect.any(Number), content: text('hello') });

    const step = await f.model.next();
    expect(step.transcript.map((m) => `${m.role}:${textOf(m.content)}`)).toEqual(['user:hello']);
    expect(await f.runtime.liveInboxSnapshot(owner, 'sess_p')).toEqual({ active: true, version: 0, messages: [] });
    const run = await f.store.getRunningRun('sess_p');
    expect(run?.status).toBe('running');

    step.reply('hi there');
    await f.runtime.whenIdle('sess_p');
    const events = await f.events();
    expect(brief(events)).toEqual(['user.message', 'session.status_running', `agent.message:${run!.id}-step-0`, 'session.status_idle']);
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    expect(events[0]).toMatchObject({ run_id: run!.id, message_id: null, content: text('hello') });
    expect(events[2]).toMatchObject({ run_id: run!.id, content: text('hi there') });
    expect(events[3]).toMatchObject({ run_id: run!.id, content: { outcome: 'completed' } });
    expect(await f.store.getRunningRun('sess_p')).toBeUndefined();
    expect(f.store.raw().runs.get(run!.id)).toMatchObject({ status: 'idle', outcome: 'completed' });
    expect(await f.runtime.liveInboxSnapshot(owner, 'sess_p')).toEqual({ active: false, version: 0, messages: [] });

    // Every committed message points at its own Floor and Page.
    const floors = await f.store.listFloors('sess_p');
    expect(floors.map((x) => x.number)).toEqual([1, 2]);
    expect(events[0]!.floor_id).toBe(floors[0]!.id);
    expect(events[2]!.floor_id).toBe(floors[1]!.id);
    const pages = await f.store.listPages(floors[1]!.id);
    expect(pages[0]).toMatchObject({ id: events[2]!.page_id, content: { role: 'assistant', message_id: `${run!.id}-step-0`, content: text('hi there') } });

    // Published after commit, in seq order.
    expect(f.published.map((m) => (m.kind === 'session_event' ? m.event.seq : -1))).toEqual([1, 2, 3, 4]);
  });

  it('drains steering at the boundary: Run-scoped ids, committed before the next model call', async () => {
    const f = await fixture();
    await f.runtime.sendEvents(owner, 'sess_p', { events: [{ type: 'user.message', content: text('task') }] });
    const s0 = await f.model.next();
    const run = (await f.store.getRunningRun('sess_p'))!;

    expect(await f.runtime.liveInboxQueue(owner, 'sess_p', { content: text('first') })).toEqual({ id: 1 });
    expect(await f.runtime.liveInboxQueue(owner, 'sess_p', { content: text('second') })).toEqual({ id: 2 });
    await f.runtime.liveInboxReorder(owner, 'sess_p', { order: [2, 1] });
    await f.runtime.liveInboxReplace(owner, 'sess_p', 2, { content: text('second, edited') });
    await f.runtime.liveInboxWithdraw(owner, 'sess_p', 1);
    expect((await rejection(f.runtime.liveInboxWithdraw(owner, 'sess_p', 1))).code).toBe('live_inbox_message_not_found');
    const before = await f.runtime.liveInboxSnapshot(owner, 'sess_p');
    expect(before).toEqual({ active: true, version: 5, messages: [{ id: 2, content: text('second, edited') }] });
    expect((await rejection(f.runtime.liveInboxReorder(owner, 'sess_p', { order: [1, 2] }))).code).toBe('live_inbox_order_conflict');
    expect(await f.runtime.liveInboxSnapshot(owner, 'sess_p')).toEqual(before);

    s0.reply('working', true);
    const s1 = await f.model.next();
    // The drained message is in the transcript and already committed before this call.
    expect(s1.transcript.map((m) => m.id).slice(-2)).toEqual([`${run.id}-step-0`, `${run.id}-inbox-0`]);
    expect(brief(await f.events())).toEqual([
      'user.message', 'session.status_running', `agent.message:${run.id}-step-0`, `user.message:${run.id}-inbox-0`,
    ]);
    expect((await f.events())[3]).toMatchObject({ run_id: run.id, content: text('second, edited') });
    expect(await f.runtime.liveInboxSnapshot(owner, 'sess_p')).toEqual({ active: true, version: 5, messages: [] });
    expect((await rejection(f.runtime.liveInboxReplace(owner, 'sess_p', 2, { content: text('late') }))).code).toBe('live_inbox_message_not_found');
    s1.reply('done');
    await f.runtime.whenIdle('sess_p');
    expect(brief(await f.events()).slice(-2)).toEqual([`agent.message:${run.id}-step-1`, 'session.status_idle']);
  });

  it('a message queued during the final step keeps the Run alive for one more step', async () => {
    const f = await fixture();
    await f.runtime.sendEvents(owner, 'sess_p', { events: [{ type: 'user.message', content: text('task') }] });
    const s0 = await f.model.next();
    const run = (await f.store.getRunningRun('sess_p'))!;
    await f.runtime.liveInboxQueue(owner, 'sess_p', { content: text('one more thing') });
    s0.reply('final answer', false);
    const s1 = await f.model.next();
    expect(textOf(s1.transcript.at(-1)?.content)).toBe('one more thing');
    s1.reply('ack');
    await f.runtime.whenIdle('sess_p');
    expect(brief(await f.events())).toEqual([
      'user.message', 'session.status_running', `agent.message:${run.id}-step-0`, `user.message:${run.id}-inbox-0`,
      `agent.message:${run.id}-step-1`, 'session.status_idle',
    ]);
  });

  it('interrupt cancels the Run; what it still queued is committed ahead of the interrupt and reaches the next Run in acknowledgement order', async () => {
    const f = await fixture();
    await f.runtime.sendEvents(owner, 'sess_p', { events: [{ type: 'user.message', content: text('task') }] });
    await f.model.next();
    const run1 = (await f.store.getRunningRun('sess_p'))!;
    expect(await f.runtime.liveInboxQueue(owner, 'sess_p', { content: text('carry me') })).toEqual({ id: 1 });
    expect(await f.runtime.liveInboxQueue(owner, 'sess_p', { content: text('and me') })).toEqual({ id: 2 });

    const receipt = await f.runtime.interrupt(owner, 'sess_p');
    // The receipt answers the request's own events; the queued input is in the history, before the interrupt.
    expect(receipt.data.map((r) => r.type)).toEqual(['user.interrupt']);
    await f.runtime.whenIdle('sess_p');
    expect(f.store.raw().runs.get(run1.id)).toMatchObject({ status: 'idle', outcome: 'cancelled' });
    const history = await f.events();
    expect(history.at(-1)).toMatchObject({ type: 'session.status_idle', content: { outcome: 'cancelled' } });
    expect(history.filter((e) => e.type === 'user.message' || e.type === 'user.interrupt').map((e) => [e.type, e.run_id, e.message_id, textOf(e.content)]))
      .toEqual([['user.message', run1.id, null, 'task'], ['user.message', null, null, 'carry me'], ['user.message', null, null, 'and me'], ['user.interrupt', run1.id, null, '']]);
    expect(f.host.pendingCarryOver('sess_p')).toEqual([]);
    expect((await rejection(f.runtime.liveInboxQueue(owner, 'sess_p', { content: text('x') }))).code).toBe('live_inbox_inactive');

    await f.runtime.sendEvents(owner, 'sess_p', { events: [{ type: 'user.message', content: text('again') }] });
    const s = await f.model.next();
    const run2 = (await f.store.getRunningRun('sess_p'))!;
    expect(run2.id).not.toBe(run1.id);
    // Acknowledgement order: the steering queued before the interrupt comes before the newer message.
    expect(s.transcript.map((m) => textOf(m.content)).slice(-3)).toEqual(['carry me', 'and me', 'again']);
    s.reply('ok');
    await f.runtime.whenIdle('sess_p');
  });

  it('a user.message during a Run is committed, not queued, and starts a follow-up Run', async () => {
    const f = await fixture();
    await f.runtime.sendEvents(owner, 'sess_p', { events: [{ type: 'user.message', content: text('first') }] });
    const s0 = await f.model.next();
    const run1 = (await f.store.getRunningRun('sess_p'))!;
    await f.runtime.sendEvents(owner, 'sess_p', { events: [{ type: 'user.message', content: text('second') }] });
    expect((await f.events()).at(-1)).toMatchObject({ type: 'user.message', run_id: null, message_id: null, content: text('second') });
    expect(await f.runtime.liveInboxSnapshot(owner, 'sess_p')).toEqual({ active: true, version: 0, messages: [] });
    s0.reply('answer to first');

    const s1 = await f.model.next();
    const run2 = (await f.store.getRunningRun('sess_p'))!;
    expect(run2.id).not.toBe(run1.id);
    expect(s1.transcript.map((m) => textOf(m.content))).toEqual(['first', 'second', 'answer to first']);
    s1.reply('answer to second');
    await f.runtime.whenIdle('sess_p');
    expect(brief(await f.events())).toEqual([
      'user.message', 'session.status_running', 'user.message', `agent.message:${run1.id}-step-0`, 'session.status_idle',
      'session.status_running', `agent.message:${run2.id}-step-0`, 'session.status_idle',
    ]);
  });

  it('an interrupt drops the follow-up for messages before it; a message after it starts one', async () => {
    const f = await fixture();
    await f.runtime.sendEvents(owner, 'sess_p', { events: [{ type: 'user.message', content: text('a') }] });
    await f.model.next();
    await f.runtime.sendEvents(owner, 'sess_p', { events: [{ type: 'user.message', content: text('b') }, { type: 'user.interrupt' }] });
    await f.runtime.whenIdle('sess_p');
    expect(f.model.calls).toHaveLength(1);
    expect(await f.store.getRunningRun('sess_p')).toBeUndefined();

    await f.runtime.sendEvents(owner, 'sess_p', { events: [{ type: 'user.message', content: text('c') }] });
    const s = await f.model.next();
    await f.runtime.sendEvents(owner, 'sess_p', { events: [{ type: 'user.interrupt' }, { type: 'user.message', content: text('d') }] });
    const follow = await f.model.next();
    expect(s.signal.aborted).toBe(true);
    expect(follow.transcript.map((m) => textOf(m.content))).toEqual(['a', 'b', 'c', 'd']);
    follow.reply('done');
    await f.runtime.whenIdle('sess_p');
  });

  it('a model failure ends the Run failed, reports it, and carries the queue over', async () => {
    const f = await fixture();
    await f.runtime.sendEvents(owner, 'sess_p', { events: [{ type: 'user.message', content: text('task') }] });
    const s0 = await f.model.next();
    await f.runtime.liveInboxQueue(owner, 'sess_p', { content: text('pending') });
    s0.fail(new Error('model down'));
    await f.runtime.whenIdle('sess_p');
    expect((await f.events()).at(-1)).toMatchObject({ type: 'session.status_idle', content: { outcome: 'failed' } });
    expect(f.runErrors).toHaveLength(1);
    expect(f.host.pendingCarryOver('sess_p')).toEqual([text('pending')]);
  });

  it('a drain racing the Run\'s end (ended elsewhere) commits nothing to the ended Run; the input moves to the next attempt', async () => {
    const f = await fixture();
    await f.runtime.sendEvents(owner, 'sess_p', { events: [{ type: 'user.message', content: text('task') }] });
    const s0 = await f.model.next();
    const run = (await f.store.getRunningRun('sess_p'))!;
    await f.runtime.liveInboxQueue(owner, 'sess_p', { content: text('steer') });
    // Another process (its recovery, or its input treating the Run as a leftover) ends the Run now.
    expect(await f.store.endRun(run.id, 'failed', 5)).toBe(true);
    s0.reply('working', true);
    await f.runtime.whenIdle('sess_p');
    // Nothing of the Run commits after its end: not the step, not the drained message.
    expect(brief(await f.events())).toEqual(['user.message', 'session.status_running']);
    expect(f.store.raw().runs.get(run.id)).toMatchObject({ status: 'idle', outcome: 'failed' });
    expect(f.runErrors.some((e) => String((e as Error).message).includes('has ended'))).toBe(true);
    expect(f.host.pendingCarryOver('sess_p')).toEqual([text('steer')]);
  });

  it('a failed Run records the error on session.status_idle: a ModelError in its own words, anything else as a fixed api_error', async () => {
    const f = await fixture();
    await f.runtime.sendEvents(owner, 'sess_p', { events: [{ type: 'user.message', content: text('task') }] });
    (await f.model.next()).fail(new ModelError('overloaded_error', 'The model provider is overloaded (529), 3 attempts.', { status: 529, attempts: 3 }));
    await f.runtime.whenIdle('sess_p');
    expect((await f.events()).at(-1)).toMatchObject({
      type: 'session.status_idle',
      content: { outcome: 'failed', error: { type: 'overloaded_error', message: 'The model provider is overloaded (529), 3 attempts.' } },
    });

    await f.runtime.sendEvents(owner, 'sess_p', { events: [{ type: 'user.message', content: text('again') }] });
    (await f.model.next()).fail(new Error('SELECT secret FROM somewhere failed'));
    await f.runtime.whenIdle('sess_p');
    const idle = (await f.events()).at(-1);
    expect(idle?.content).toEqual({ outcome: 'failed', error: { type: 'api_error', message: 'The Run failed on an internal error.' } });
    expect(f.runErrors).toHaveLength(2);
  });

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

describe('SessionRuntimeService — history and feed', () => {
  it('pages committed history with next_page / has_more', async () => {
    const f = await fixture();
    await f.runtime.sendEvents(owner, 'sess_p', {
      events: [{ type: 'user.interrupt' }, { type: 'user.interrupt' }, { type: 'user.interrupt' }],
    });
    const p1 = await f.runtime.listEvents(owner, 'sess_p', { limit: 2 });
    expect(p1.data.map((e) => e.seq)).toEqual([1, 2]);
    expect(p1).toMatchObject({ has_more: true, next_page: expect.any(String) });
    const p2 = await f.runtime.listEvents(observer, 'sess_p', { page: p1.next_page!, limit: 2 });
    expect(p2.data.map((e) => e.seq)).toEqual([3]);
    expect(p2).toMatchObject({ has_more: false, next_page: null });
    expect((await f.runtime.listEvents(owner, 'sess_p', { after: 1 })).data.map((e) => e.seq)).toEqual([2, 3]);
    expect((await rejection(f.runtime.listEvents(owner, 'sess_p', { limit: 0 }))).code).toBe('validation_error');
  });

  it('pages history descending, by types and by processed_at (RFC 3339); a page cursor is bound to its filters and Session', async () => {
    const f = await fixture();
    const clock = f.clock;
    clock.set(Date.parse('2026-01-01T00:00:00.000Z'));
    await f.runtime.sendEvents(owner, 'sess_free', { events: [{ type: 'user.interrupt' }, { type: 'user.interrupt' }] });
    clock.set(Date.parse('2026-01-01T00:00:01.000Z'));
    await f.runtime.sendEvents(owner, 'sess_free', { events: [{ type: 'user.interrupt' }, { type: 'user.interrupt' }, { type: 'user.interrupt' }] });
    const seqs = (p: { data: SessionEvent[] }) => p.data.map((e) => e.seq);

    const d1 = await f.runtime.listEvents(owner, 'sess_free', { order: 'desc', limit: 2 });
    expect(seqs(d1)).toEqual([5, 4]);
    const d2 = await f.runtime.listEvents(owner, 'sess_free', { order: 'desc', limit: 2, page: d1.next_page! });
    expect(seqs(d2)).toEqual([3, 2]);
    const d3 = await f.runtime.listEvents(owner, 'sess_free', { order: 'desc', limit: 2, page: d2.next_page! });
    expect(d3).toMatchObject({ has_more: false, next_page: null });
    expect(seqs(d3)).toEqual([1]);

    expect(seqs(await f.runtime.listEvents(owner, 'sess_free', { 'created_at[gte]': '2026-01-01T00:00:01Z' }))).toEqual([3, 4, 5]);
    expect(seqs(await f.runtime.listEvents(owner, 'sess_free', { 'created_at[lt]': '2026-01-01T01:00:01+01:00' }))).toEqual([1, 2]);
    expect(seqs(await f.runtime.listEvents(owner, 'sess_free', { 'created_at[gt]': '2026-01-01T00:00:00Z', 'created_at[lte]': '2026-01-01T00:00:01.000Z' }))).toEqual([3, 4, 5]);
    expect(seqs(await f.runtime.listEvents(owner, 'sess_free', { 'types[]': ['user.message'] }))).toEqual([]);
    expect(seqs(await f.runtime.listEvents(owner, 'sess_free', { 'types[]': 'user.interrupt', limit: 1 }))).toEqual([1]);

    // A cursor replayed with other filters, another order or on another Session is refused.
    expect((await rejection(f.runtime.listEvents(owner, 'sess_free', { order: 'asc', limit: 2, page: d1.next_page! }))).code).toBe('invalid_cursor');
    expect((await rejection(f.runtime.listEvents(owner, 'sess_free', { order: 'desc', 'types[]': ['user.interrupt'], page: d1.next_page! }))).code).toBe('invalid_cursor');
    expect((await rejection(f.runtime.listEvents(owner, 'sess_p', { order: 'desc', limit: 2, page: d1.next_page! }))).code).toBe('invalid_cursor');
    for (const bad of [{ 'created_at[gt]': 'yesterday' }, { 'created_at[gt]': '2026-01-01' }, { order: 'up' }, { 'types[]': ['Not A Type'] }, { page: 'x' }, { unknown: '1' }]) {
      const code = (await rejection(f.runtime.listEvents(owner, 'sess_free', bad as never))).code;
      expect([code, bad]).toEqual([bad.page === undefined ? 'validation_error' : 'invalid_cursor', bad]);
    }
  });

  it('Managed Agents input this Runtime does not host is 400 unsupported_capability, nothing written', async () => {
    const f = await fixture();
    for (const event of [
      { type: 'user.tool_result', tool_use_id: 'x' }, { type: 'user.define_outcome', description: 'd' }, { type: 'system.message', content: [] },
    ]) {
      const error = await rejection(f.runtime.sendEvents(owner, 'sess_free', { events: [{ type: 'user.interrupt' }, event] } as never));
      expect([error.code, error.details]).toEqual(['unsupported_capability', [{ path: 'events.1.type', message: `${event.type} is not supported` }]]);
    }
    expect((await rejection(f.runtime.sendEvents(owner, 'sess_free', { events: [{ type: 'user.nonsense' }] } as never))).code).toBe('validation_error');
    expect(await f.events('sess_free')).toEqual([]);
  });

  it('an archived Session refuses a user.message (409 session_archived) and still takes an interrupt', async () => {
    const f = await fixture();
    await f.store.updateSession('ws_a', 'sess_free', { archived_at: 5, updated_at: 5 });
    expect((await rejection(f.runtime.sendEvents(owner, 'sess_free', { events: [{ type: 'user.message', content: text('late') }] }))).code).toBe('session_archived');
    expect(await f.events('sess_free')).toEqual([]);
    expect((await f.runtime.sendEvents(owner, 'sess_free', { events: [{ type: 'user.interrupt' }] })).data.map((e) => e.type)).toEqual(['user.interrupt']);
  });

  it('feeds stored events and live ones', async () => {
    const f = await fixture();
    await f.runtime.sendEvents(owner, 'sess_p', { events: [{ type: 'user.interrupt' }] });
    const feed = await f.runtime.eventFeed(deriver, 'sess_p');
    expect((await feed.replay(0, 10)).map((i) => [i.id, i.type])).toEqual([[1, 'user.interrupt']]);
    const live: number[] = [];
    const off = feed.subscribe((item) => live.push(item.id));
    await f.runtime.sendEvents(owner, 'sess_p', { events: [{ type: 'user.interrupt' }] });
    await f.runtime.sendEvents(owner, 'sess_free', { events: [{ type: 'user.interrupt' }] });
    off();
    expect(live).toEqual([2]);
    expect(feed.visible({ id: 2, type: 'user.interrupt', data: (await f.events())[1]! })).toBe(true);
  });

  it('latest names the newest seq; authorize re-reads the read right as of now', async () => {
    const f = await fixture();
    const feed = await f.runtime.eventFeed(deriver, 'sess_p');
    expect(await feed.latest()).toBe(0);
    await f.runtime.sendEvents(owner, 'sess_p', { events: [{ type: 'user.interrupt' }, { type: 'user.interrupt' }] });
    expect(await feed.latest()).toBe(2);
    await feed.authorize([]);
    await f.store.upsertMembership({ project_id: 'proj_1', account_id: 'acc_deriver', role: 'observer', created_at: 1 });
    await feed.authorize([]); // an observer may still read the Session (as a fresh request)
    await f.store.deleteMembership('proj_1', 'acc_deriver');
    expect((await rejection(feed.authorize([]))).code).toBe('session_not_found');
  });
});

describe('SessionRuntimeService — who may steer and check order', () => {
  it('idle Session: GET inactive, every mutation 410 (not 404)', async () => {
    const f = await fixture();
    expect(await f.runtime.liveInboxSnapshot(owner, 'sess_p')).toEqual({ active: false, version: 0, messages: [] });
    const codes = await Promise.all([
      rejection(f.runtime.liveInboxQueue(owner, 'sess_p', { content: text('x') })),
      rejection(f.runtime.liveInboxReplace(owner, 'sess_p', 1, { content: text('x') })),
      rejection(f.runtime.liveInboxWithdraw(owner, 'sess_p', 1)),
      rejection(f.runtime.liveInboxReorder(owner, 'sess_p', { order: [] })),
    ]);
    expect(codes.map((e) => e.code)).toEqual(['live_inbox_inactive', 'live_inbox_inactive', 'live_inbox_inactive', 'live_inbox_inactive']);
  });

  it('derivers and observers read but get 403 on mutations (before 410); outsiders and strangers get 404', async () => {
    const f = await fixture();
    for (const ctx of [deriver, observer]) {
      expect(await f.runtime.liveInboxSnapshot(ctx, 'sess_p')).toMatchObject({ active: false });
      expect((await f.runtime.listEvents(ctx, 'sess_p')).data).toEqual([]);
      await f.runtime.eventFeed(ctx, 'sess_p');
      expect((await rejection(f.runtime.liveInboxWithdraw(ctx, 'sess_p', 1))).code).toBe('permission_denied');
      expect((await rejection(f.runtime.sendEvents(ctx, 'sess_p', { events: [{ type: 'user.message', content: text('x') }] }))).code).toBe('permission_denied');
    }
    for (const ctx of [outsider, stranger]) {
      expect((await rejection(f.runtime.liveInboxSnapshot(ctx, 'sess_p'))).code).toBe('session_not_found');
      expect((await rejection(f.runtime.liveInboxQueue(ctx, 'sess_p', { content: text('x') }))).code).toBe('session_not_found');
      expect((await rejection(f.runtime.listEvents(ctx, 'sess_p'))).code).toBe('session_not_found');
      expect((await rejection(f.runtime.eventFeed(ctx, 'sess_p'))).code).toBe('session_not_found');
      expect((await rejection(f.runtime.sendEvents(ctx, 'sess_p', { events: [{ type: 'user.interrupt' }] }))).code).toBe('session_not_found');
    }
    expect((await rejection(f.runtime.liveInboxSnapshot(owner, 'sess_b'))).code).toBe('session_not_found');
    expect((await rejection(f.runtime.liveInboxSnapshot(owner, 'sess_missing'))).code).toBe('session_not_found');
    expect(await f.events()).toEqual([]);
  });

  it('a Session outside any Project is open to every account of its workspace', async () => {
    const f = await fixture();
    await f.runtime.sendEvents(outsider, 'sess_free', { events: [{ type: 'user.message', content: text('hi') }] });
    const s = await f.model.next();
    expect(await f.runtime.liveInboxQueue(observer, 'sess_free', { content: text('steer') })).toEqual({ id: 1 });
    expect(await f.runtime.liveInboxSnapshot(deriver, 'sess_free')).toMatchObject({ active: true, messages: [{ id: 1 }] });
    expect((await rejection(f.runtime.liveInboxSnapshot(stranger, 'sess_free'))).code).toBe('session_not_found');
    s.reply('ok');
    await f.model.next().then((x) => x.reply('ok'));
    await f.runtime.whenIdle('sess_free');
  });

  it('a stranger on a running Session is 404 everywhere and leaves no trace', async () => {
    const f = await fixture();
    await f.runtime.sendEvents(owner, 'sess_p', { events: [{ type: 'user.message', content: text('task') }] });
    const s = await f.model.next();
    const ops = [
      f.runtime.liveInboxSnapshot(stranger, 'sess_p'),
      f.runtime.liveInboxQueue(stranger, 'sess_p', { content: text('evil') }),
      f.runtime.liveInboxReplace(stranger, 'sess_p', 1, { content: text('evil') }),
      f.runtime.liveInboxWithdraw(stranger, 'sess_p', 1),
      f.runtime.liveInboxReorder(stranger, 'sess_p', { order: [] }),
      f.runtime.sendEvents(stranger, 'sess_p', { events: [{ type: 'user.interrupt' }] }),
      f.runtime.listEvents(stranger, 'sess_p'),
    ];
    for (const op of ops) expect((await rejection(op)).code).toBe('session_not_found');
    expect(await f.runtime.liveInboxSnapshot(owner, 'sess_p')).toEqual({ active: true, version: 0, messages: [] });
    expect(await f.runtime.liveInboxQueue(owner, 'sess_p', { content: text('mine') })).toEqual({ id: 1 });
    expect(s.signal.aborted).toBe(false);
    s.reply('ok');
    await f.model.next().then((x) => x.reply('ok'));
    await f.runtime.whenIdle('sess_p');
  });

  it('a failing ownership read is 500 session_ownership_unavailable and the queue is untouched', async () => {
    let failing = false;
    const f = await fixture({
      store: (store) => new Proxy(store, {
        get(target, prop, receiver) {
          // Either read path of the ownership check (the one-read port method, or getSession).
          if ((prop === 'getSession' || prop === 'getSessionWithAccess') && failing) return async () => { throw new Error('database is down'); };
          return Reflect.get(target, prop, receiver) as unknown;
        },
      }),
    });
    await f.runtime.sendEvents(owner, 'sess_p', { events: [{ type: 'user.message', content: text('task') }] });
    const s = await f.model.next();
    await f.runtime.liveInboxQueue(owner, 'sess_p', { content: text('keep') });
    const before = await f.runtime.liveInboxSnapshot(owner, 'sess_p');
    failing = true;
    const attempts = [
      f.runtime.liveInboxSnapshot(owner, 'sess_p'),
      f.runtime.liveInboxQueue(owner, 'sess_p', { content: text('x') }),
      f.runtime.liveInboxReplace(owner, 'sess_p', 1, { content: text('x') }),
      f.runtime.liveInboxWithdraw(owner, 'sess_p', 1),
      f.runtime.liveInboxReorder(owner, 'sess_p', { order: [1] }),
    ];
    for (const op of attempts) expect((await rejection(op)).code).toBe('session_ownership_unavailable');
    failing = false;
    expect(await f.runtime.liveInboxSnapshot(owner, 'sess_p')).toEqual(before);
    s.reply('ok');
    await f.model.next().then((x) => x.reply('ok'));
    await f.runtime.whenIdle('sess_p');
  });
});
