/**
 * SessionRuntimeService over the in-memory store with a gated model (the world of `test-
 * support.ts`): durable input starts, drains, interrupts and ends Runs; follow-up Runs; failed
 * Runs and what they record. Spec: live-inbox.md.
 */
import { describe, expect, it } from 'vitest';
import { ModelError } from '../live-inbox/index.js';
import { rejection, text } from '../test-support.js';
import { textOf, owner, fixture, brief, closeRuntimesAfterEach } from './test-support.js';

closeRuntimesAfterEach();

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
});

describe('SessionRuntimeService — follow-ups and failures', () => {
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
    // Durable input sent during a Run comes after that Run's own steps: the new input is last (no trailing assistant turn).
    expect(s1.transcript.map((m) => textOf(m.content))).toEqual(['first', 'answer to first', 'second']);
    expect(s1.transcript.at(-1)!.role).toBe('user');
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
});
