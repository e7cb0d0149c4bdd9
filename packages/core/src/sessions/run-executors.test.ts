/**
 * The Run executor port and the public Live Inbox bridge (live-inbox.md "Run executors", "The
 * bridge"): Runs an application executes itself (`startRun` / `finish`), a background executor
 * that is not the native loop, durable input during such Runs (never a native attempt), and the
 * delete of a Session whose Run is parked.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LiveInboxHost, type Model, type TranscriptMessage } from '../live-inbox/index.js';
import { PlatformService } from '../platform/service.js';
import { createManualClock, createSequentialIdGenerator } from '../ports/clock.js';
import { createLocalEventBus } from '../ports/event-bus.js';
import type { SessionEvent } from '../records.js';
import { createMemoryStore, type MemoryStore } from '../testing/memory-store.js';
import type { RunAttempt, RunExecutor, RunOutcome } from './executor.js';
import { SessionRuntimeService, type SessionRuntimeDeps } from './service.js';
import { ctxOf, rejection, text, waitFor } from '../test-support.js';

const owner = ctxOf('ws_a', 'acc_owner');
const textOf = (content: unknown): string => (Array.isArray(content) ? content.map((b: { text?: string }) => b.text ?? '').join('') : '');
const open: SessionRuntimeService[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((r) => r.close()));
});

async function fixture(extra: Partial<SessionRuntimeDeps> = {}): Promise<{ store: MemoryStore; host: LiveInboxHost; runtime: SessionRuntimeService; events(): Promise<SessionEvent[]> }> {
  const store = createMemoryStore();
  const deps = { store, bus: createLocalEventBus(), clock: createManualClock(), ids: createSequentialIdGenerator() };
  const platform = new PlatformService(deps);
  await platform.createWorkspace({ id: 'ws_a', name: 'A' });
  await platform.createAccount({ id: 'acc_owner', name: 'owner', workspace_ids: ['ws_a'] });
  await platform.createSession(owner, { id: 'sess_1', title: 'one' });
  const host = new LiveInboxHost({ hostId: 'test' });
  const runtime = new SessionRuntimeService({ ...deps, host, ...extra });
  open.push(runtime);
  return { store, host, runtime, events: () => store.listSessionEvents({ session_id: 'sess_1', after: 0, limit: 1000 }) };
}

const brief = (events: SessionEvent[]) => events.map((e) => `${e.type}${e.message_id ? `:${e.message_id}` : ''}`);

/** A background executor of "another framework": each attempt answers one step per user turn it sees, drains at its boundaries. */
function echoExecutor(log: RunAttempt[], gate?: () => Promise<void>): RunExecutor {
  return {
    kind: 'echo',
    async execute(attempt): Promise<RunOutcome> {
      log.push(attempt);
      await gate?.();
      const step = attempt.bridge.step({ text: `echo: ${textOf(attempt.transcript.at(-1)!.content)}` });
      const drained = attempt.bridge.drain();
      await attempt.bridge.commit(drained, { output: [step] });
      if (drained.length > 0) {
        const again = attempt.bridge.step({ text: `steered: ${drained.map((m) => textOf(m.content)).join(', ')}` });
        await attempt.bridge.commit([], { output: [again] });
      }
      return { status: 'completed' };
    },
  };
}

describe('Runs an application executes (startRun / finish)', () => {
  it('needs no model: the bridge registers the attempt, drains, commits {run_id}-inbox-{n} and step ids, and finish ends the Run', async () => {
    const f = await fixture();
    expect(f.runtime.executor).toBeUndefined();
    const run = await f.runtime.startRun(owner, 'sess_1', { content: text('task') });
    expect(run.transcript.map((m) => `${m.role}:${textOf(m.content)}`)).toEqual(['user:task']);
    expect(await f.runtime.liveInboxSnapshot(owner, 'sess_1')).toEqual({ active: true, version: 0, messages: [] });
    expect(f.runtime.isRunning('sess_1')).toBe(true);

    // Step 0 calls a tool; two messages are queued, one replaced, one withdrawn during it.
    const a = await f.runtime.liveInboxQueue(owner, 'sess_1', { content: text('first') });
    const b = await f.runtime.liveInboxQueue(owner, 'sess_1', { content: text('second') });
    await f.runtime.liveInboxReorder(owner, 'sess_1', { order: [b.id, a.id] });
    await f.runtime.liveInboxReplace(owner, 'sess_1', a.id, { content: text('first, replaced') });
    await f.runtime.liveInboxWithdraw(owner, 'sess_1', b.id);
    const step = run.bridge.step({ text: 'looking', tool_calls: [{ id: 'call_x', name: 'search', input: { q: 'x' } }] });
    const results = run.bridge.results(step, [{ id: 'call_x', output: 'found x' }]);
    const drained = run.bridge.drain();
    expect(drained).toEqual([{ id: `${run.run_id}-inbox-0`, role: 'user', content: text('first, replaced') }]);
    // Drained: no longer editable.
    expect((await rejection(f.runtime.liveInboxWithdraw(owner, 'sess_1', a.id))).code).toBe('live_inbox_message_not_found');
    await run.bridge.commit(drained, { output: [step, results] });
    const final = run.bridge.step({ text: 'done' });
    await run.bridge.commit([], { output: [final] });
    expect(await run.finish({ status: 'completed' })).toEqual({ ended: true, follow_up_run_id: null });
    expect(await run.finish({ status: 'failed' })).toEqual({ ended: true, follow_up_run_id: null });

    const events = await f.events();
    const r = run.run_id;
    expect(brief(events)).toEqual([
      'user.message', 'session.status_running', `agent.message:${r}-step-0`, `agent.tool_use:${r}-step-0`, `agent.tool_result:${r}-step-0-results`,
      `user.message:${r}-inbox-0`, `agent.message:${r}-step-1`, 'session.status_idle',
    ]);
    expect(events.find((e) => e.type === 'agent.tool_use')).toMatchObject({ id: `${r}-tool-0`, content: { name: 'search', input: { q: 'x' }, evaluated_permission: 'allow' } });
    expect(events.at(-1)).toMatchObject({ content: { outcome: 'completed' } });
    expect(await f.runtime.liveInboxSnapshot(owner, 'sess_1')).toEqual({ active: false, version: 0, messages: [] });
    expect(f.runtime.isRunning('sess_1')).toBe(false);
  });

  it('durable input during the Run starts no native attempt; it waits for the next startRun (no executor), which runs it', async () => {
    const f = await fixture();
    const run = await f.runtime.startRun(owner, 'sess_1', { content: text('one') });
    await f.runtime.sendEvents(owner, 'sess_1', { events: [{ type: 'user.message', content: text('two') }] });
    // The application's attempt is still the active one: its inbox is not closed by the durable input.
    expect((await f.runtime.liveInboxSnapshot(owner, 'sess_1')).active).toBe(true);
    await run.bridge.commit([], { output: [run.bridge.step({ text: 'answer one' })] });
    expect(await run.finish({ status: 'completed' })).toEqual({ ended: true, follow_up_run_id: null });
    expect(f.runtime.isRunning('sess_1')).toBe(false);
    // Durable input alone starts nothing here (no executor): the next startRun runs it.
    await f.runtime.sendEvents(owner, 'sess_1', { events: [{ type: 'user.message', content: text('three') }] });
    expect(f.runtime.isRunning('sess_1')).toBe(false);
    const next = await f.runtime.startRun(owner, 'sess_1');
    expect(next.transcript.map((m) => `${m.role}:${textOf(m.content)}`)).toEqual(['user:one', 'assistant:answer one', 'user:two', 'user:three']);
    await next.finish({ status: 'completed' });
    expect((await rejection(f.runtime.startRun(owner, 'sess_1'))).code).toBe('validation_error');
  });

  it('a second startRun while one runs is 409; an interrupt aborts the Run\'s signal and commits what it still queued', async () => {
    const f = await fixture();
    const run = await f.runtime.startRun(owner, 'sess_1', { content: text('one') });
    expect((await rejection(f.runtime.startRun(owner, 'sess_1', { content: text('again') }))).code).toBe('session_running');
    await f.runtime.liveInboxQueue(owner, 'sess_1', { content: text('queued') });
    await f.runtime.interrupt(owner, 'sess_1');
    expect(run.signal.aborted).toBe(true);
    expect(run.bridge.superseded).toBe(true);
    expect(run.bridge.drain()).toEqual([]);
    await run.finish({ status: 'cancelled' });
    const events = await f.events();
    expect(brief(events).slice(-3)).toEqual(['user.message', 'user.interrupt', 'session.status_idle']);
    expect(textOf(events.at(-3)!.content)).toBe('queued');
    expect(events.at(-1)).toMatchObject({ content: { outcome: 'cancelled' } });
  });

  it('input queued after the last drain is carried over and gets a follow-up Run with the Run\'s executor', async () => {
    const log: RunAttempt[] = [];
    const f = await fixture();
    const run = await f.runtime.startRun(owner, 'sess_1', { content: text('one'), executor: echoExecutor(log) });
    await run.bridge.commit([], { output: [run.bridge.step({ text: 'answer one' })] });
    await f.runtime.liveInboxQueue(owner, 'sess_1', { content: text('late') });
    const finished = await run.finish({ status: 'completed' });
    expect(finished.follow_up_run_id).toEqual(expect.any(String));
    await f.runtime.whenIdle('sess_1');
    expect(log).toHaveLength(1);
    // The follow-up's first boundary drained the carried message: its transcript ends with it.
    expect(log[0]!.transcript.at(-1)).toMatchObject({ id: `${finished.follow_up_run_id}-inbox-0`, role: 'user', content: text('late') });
    expect(textOf((await f.events()).filter((e) => e.type === 'agent.message').at(-1)!.content)).toBe('echo: late');
  });
});

describe('a background executor that is not the native loop', () => {
  it('runs the Runs durable input starts, and their follow-ups; steering reaches it; no model is needed', async () => {
    const log: RunAttempt[] = [];
    let release!: () => void;
    const gate = () => new Promise<void>((r) => (release = r));
    const f = await fixture({ executor: echoExecutor(log, gate) });
    await f.runtime.sendEvents(owner, 'sess_1', { events: [{ type: 'user.message', content: text('hello') }] });
    await waitFor(() => log.length === 1);
    expect(log[0]!.bridge.attempt.executor).toBe('framework');
    await f.runtime.liveInboxQueue(owner, 'sess_1', { content: text('steer') });
    await f.runtime.sendEvents(owner, 'sess_1', { events: [{ type: 'user.message', content: text('durable') }] });
    release();
    await waitFor(() => log.length === 2);
    release();
    await f.runtime.whenIdle('sess_1');
    const messages = (await f.events()).filter((e) => e.type === 'agent.message').map((e) => textOf(e.content));
    expect(messages).toEqual(['echo: hello', 'steered: steer', 'echo: durable']);
    const follow = log[1]!.transcript.map((m: TranscriptMessage) => textOf(m.content));
    expect(follow).toEqual(['hello', 'echo: hello', 'steer', 'steered: steer', 'durable']);
  });
});

describe('deleting a Session whose Run is parked', () => {
  it('ends the parked Run (cancelled, its round closed) in the delete\'s transaction', async () => {
    const model: Model = {
      async step() {
        return { content: [{ type: 'tool_use', id: 't', name: 'ask_user', input: {} }], stop_reason: 'tool_use' };
      },
    };
    const f = await fixture({ model, tools: [{ name: 'ask_user', description: 'asks', input_schema: { type: 'object' } }] });
    await f.runtime.sendEvents(owner, 'sess_1', { events: [{ type: 'user.message', content: text('hi') }] });
    await waitFor(async () => (await f.store.getAwaitingRun!('sess_1')) !== undefined);
    await f.runtime.whenIdle('sess_1');
    const parked = (await f.store.getAwaitingRun!('sess_1'))!;
    await f.runtime.deleteSession(owner, 'sess_1');
    expect(await f.store.getAwaitingRun!('sess_1')).toBeUndefined();
    const events = await f.events();
    expect(brief(events).slice(-2)).toEqual([`agent.tool_result:${parked.id}-step-0-results`, 'session.status_idle']);
    expect(events.at(-1)).toMatchObject({ run_id: parked.id, content: { outcome: 'cancelled' } });
    expect((await rejection(f.runtime.sendEvents(owner, 'sess_1', { events: [{ type: 'user.message', content: text('x') }] }))).code).toBe('session_not_found');
  });
});
