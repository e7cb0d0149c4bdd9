/**
 * The Session ledger on its own (the Run supervisor and the facade are tested through
 * `SessionRuntimeService` in service.test.ts): what one committed message writes, the status
 * events' shapes, the transcript a Run starts from, the follow-up rule, and the agent loop's
 * commit that refuses an ended Run. Over the in-memory reference store.
 */
import { describe, expect, it } from 'vitest';
import { PlatformService } from '../platform/service.js';
import { createManualClock, createSequentialIdGenerator } from '../ports/clock.js';
import { createLocalEventBus, type BusMessage } from '../ports/event-bus.js';
import type { NewSessionEvent, Store, StoreTx } from '../ports/store.js';
import type { Run } from '../records.js';
import { createMemoryStore } from '../testing/memory-store.js';
import { ctxOf, rejection, text } from '../test-support.js';
import { SessionLedger } from './ledger.js';

const owner = ctxOf('ws_a', 'acc_owner');

async function fixture() {
  const store = createMemoryStore();
  const bus = createLocalEventBus();
  const published: BusMessage[] = [];
  bus.subscribe('session:sess_1', (m) => published.push(m));
  const clock = createManualClock(1_000);
  const deps = { store, bus, clock, ids: createSequentialIdGenerator() };
  const platform = new PlatformService(deps);
  await platform.createWorkspace({ id: 'ws_a', name: 'A' });
  await platform.createAccount({ id: 'acc_owner', name: 'owner', workspace_ids: ['ws_a'] });
  const session = await platform.createSession(owner, { id: 'sess_1', title: 'one' });
  const ledger = new SessionLedger(deps);
  const run = (id: string): Run => ({ id, session_id: session.id, status: 'running', started_at: 1_000, ended_at: null, outcome: null });
  return { store, ledger, session, published, run, history: () => store.listSessionEvents({ session_id: 'sess_1', after: 0, limit: 100 }) };
}

/** Appends `rows` (built by `build` inside one transaction) and returns what was stored. */
async function commit(store: Store, build: (tx: StoreTx) => Promise<NewSessionEvent[]>) {
  return store.transaction(async (tx) => tx.appendSessionEvents(await build(tx)));
}

describe('SessionLedger', () => {
  it('a message writes the next Floor and its Page, and is a Session event pointing at both', async () => {
    const f = await fixture();
    const [first, second] = await commit(f.store, async (tx) => [
      await f.ledger.message(tx, f.session, { role: 'user', run_id: null, message_id: null, content: text('hi') }, 2_000),
      await f.ledger.message(tx, f.session, { role: 'assistant', run_id: 'run_x', message_id: 'run_x-step-1', content: text('hello') }, 2_000),
    ]);
    expect(first).toMatchObject({ type: 'user.message', run_id: null, message_id: null, content: text('hi'), processed_at: 2_000 });
    expect(second).toMatchObject({ type: 'agent.message', run_id: 'run_x', message_id: 'run_x-step-1', content: text('hello') });
    const floors = await f.store.listFloors('sess_1');
    expect(floors.map((fl) => [fl.id, fl.number, fl.branch])).toEqual([[first!.floor_id, 1, 'main'], [second!.floor_id, 2, 'main']]);
    const pages = await f.store.listPages(first!.floor_id!);
    expect(pages).toEqual([expect.objectContaining({ id: first!.page_id, version: 1, content: { role: 'user', message_id: null, event_id: first!.id, content: text('hi') } })]);
  });

  it('status events: interrupt, running, idle with and without an error', async () => {
    const f = await fixture();
    expect(f.ledger.interrupt('sess_1', null, 5)).toMatchObject({ type: 'user.interrupt', run_id: null, content: null, floor_id: null, page_id: null, processed_at: 5 });
    expect(f.ledger.running('sess_1', 'run_1', 5)).toMatchObject({ type: 'session.status_running', run_id: 'run_1', content: null });
    expect(f.ledger.idle('sess_1', 'run_1', 'completed', 5).content).toEqual({ outcome: 'completed' });
    expect(f.ledger.idle('sess_1', 'run_1', 'failed', 5, { type: 'overloaded_error', message: 'busy' }).content)
      .toEqual({ outcome: 'failed', error: { type: 'overloaded_error', message: 'busy' } });
  });

  it('the transcript holds the messages up to a seq, with Run-scoped ids or the event id', async () => {
    const f = await fixture();
    const stored = await commit(f.store, async (tx) => [
      await f.ledger.message(tx, f.session, { role: 'user', run_id: null, message_id: null, content: text('one') }, 1),
      f.ledger.running('sess_1', 'run_1', 1),
      await f.ledger.message(tx, f.session, { role: 'assistant', run_id: 'run_1', message_id: 'run_1-step-1', content: text('two') }, 1),
      await f.ledger.message(tx, f.session, { role: 'user', run_id: null, message_id: null, content: text('three') }, 1),
    ]);
    expect(await f.ledger.transcript('sess_1', stored[2]!.seq)).toEqual([
      { id: stored[0]!.id, role: 'user', content: text('one') },
      { id: 'run_1-step-1', role: 'assistant', content: text('two') },
    ]);
  });

  it('durable input after a seq counts for a follow-up unless an interrupt came after it; drained inbox input never does', async () => {
    const f = await fixture();
    const start = (await commit(f.store, async () => [f.ledger.running('sess_1', 'run_1', 1)]))[0]!.seq;
    const follows = () => f.store.transaction((tx) => f.ledger.hasDurableInputAfter(tx, 'sess_1', start));
    expect(await follows()).toBe(false);
    await commit(f.store, async (tx) => [await f.ledger.message(tx, f.session, { role: 'user', run_id: 'run_1', message_id: 'run_1-inbox-1', content: text('drained') }, 1)]);
    expect(await follows()).toBe(false);
    await commit(f.store, async (tx) => [await f.ledger.message(tx, f.session, { role: 'user', run_id: null, message_id: null, content: text('durable') }, 1)]);
    expect(await follows()).toBe(true);
    await commit(f.store, async () => [f.ledger.interrupt('sess_1', 'run_1', 1)]);
    expect(await follows()).toBe(false);
  });

  it("the agent loop's commit lands in a running Run and is published; an ended Run commits nothing (conflict)", async () => {
    const f = await fixture();
    await f.store.transaction((tx) => tx.insertRun(f.run('run_1')));
    const runLedger = f.ledger.runLedger(f.session);
    await runLedger.commit({ session_id: 'sess_1', run_id: 'run_1', messages: [{ id: 'run_1-step-1', role: 'assistant', content: text('done') }] });
    expect((await f.history()).map((e) => `${e.type}:${e.message_id}`)).toEqual(['agent.message:run_1-step-1']);
    expect(f.published.map((m) => (m.kind === 'session_event' ? m.event.message_id : null))).toEqual(['run_1-step-1']);

    await f.store.transaction((tx) => tx.endRun('run_1', 'completed', 3_000));
    const error = await rejection(runLedger.commit({ session_id: 'sess_1', run_id: 'run_1', messages: [{ id: 'run_1-step-2', role: 'assistant', content: text('late') }] }));
    expect(error.code).toBe('conflict');
    expect(await f.history()).toHaveLength(1);
    expect(await f.store.listFloors('sess_1')).toHaveLength(1);
  });
});
