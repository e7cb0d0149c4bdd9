// Attempt routing (live-inbox.md "Scale"): two Runtime instances ("processes" A and B) with their
// own attempt hosts share one in-memory store; a fake forwarder stands in for HTTP and answers
// with the other instance, as its route would (routeLiveInbox with `forwarded`, then the method).
import { afterEach, describe, expect, it } from 'vitest';
import type { RequestContext } from '../context.js';
import { isInboxKitError } from '../errors.js';
import { LiveInboxHost } from '../live-inbox/index.js';
import { PlatformService } from '../platform/service.js';
import { createManualClock, createSequentialIdGenerator } from '../ports/clock.js';
import { createLocalEventBus } from '../ports/event-bus.js';
import type { Store } from '../ports/store.js';
import { fakeModel } from '../testing/fake-model.js';
import { createMemoryStore, type MemoryStore } from '../testing/memory-store.js';
import type { AttemptForwardRequest, AttemptForwarder, AttemptRoutingErrorInfo, ForwardedReply, LiveInboxOperation } from './routing.js';
import { SessionRuntimeService } from './service.js';
import { ctxOf, rejection, text, waitFor } from '../test-support.js';

const owner = ctxOf('ws_a', 'acc_owner');
const deriver = ctxOf('ws_a', 'acc_deriver');
const stranger = ctxOf('ws_b', 'acc_stranger');

/** A model whose steps hold until the test answers them (`answerHeld()`: the steps held now), or the Run is aborted. */
const heldModel = () => fakeModel({ then: 'hold' });

/** What an HTTP route does with an operation on the receiving instance, as a reply. */
async function answer(runtime: SessionRuntimeService, ctx: RequestContext, session_id: string, op: LiveInboxOperation, forwarded: boolean): Promise<ForwardedReply> {
  try {
    const route = await runtime.routeLiveInbox(ctx, session_id, op, { forwarded });
    if (route.route === 'forwarded') return route.reply;
    let value: unknown;
    switch (op.type) {
      case 'snapshot': value = await runtime.liveInboxSnapshot(ctx, session_id); break;
      case 'queue': value = await runtime.liveInboxQueue(ctx, session_id, op.body); break;
      case 'replace': await runtime.liveInboxReplace(ctx, session_id, op.message_id, op.body); break;
      case 'withdraw': await runtime.liveInboxWithdraw(ctx, session_id, op.message_id); break;
      case 'reorder': await runtime.liveInboxReorder(ctx, session_id, op.body); break;
      case 'send_events': value = await runtime.sendEvents(ctx, session_id, op.body); break;
    }
    return value === undefined ? { status: 204, content_type: null, body: '' } : { status: 200, content_type: 'application/json', body: JSON.stringify(value) };
  } catch (error) {
    if (!isInboxKitError(error)) throw error;
    return { status: 499, content_type: 'application/json', body: JSON.stringify({ code: error.code }) };
  }
}

interface Proc {
  host: LiveInboxHost;
  model: ReturnType<typeof heldModel>;
  runtime: SessionRuntimeService;
  forwarded: AttemptForwardRequest[];
  routingErrors: Array<{ error: unknown; info: AttemptRoutingErrorInfo }>;
  /** When set, this instance's forwarder rejects (the owner is unreachable). */
  unreachable: boolean;
  /** When set, every store call of this instance fails: it has lost the database (or is frozen), as good as dead to the others. */
  dead: boolean;
}

/** `store`, whose every call fails while `dead()` holds. */
function deadable(store: Store, dead: () => boolean): Store {
  return new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => (dead() ? Promise.reject(new Error('connection lost')) : (value as (...a: unknown[]) => unknown).apply(target, args));
    },
  });
}

const open: SessionRuntimeService[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((r) => r.close()));
});

async function world(options: {
  routing?: boolean; lease_ms?: number; takeover_check_ms?: number; wrapStore?: (s: MemoryStore) => Store;
  /** ms each instance's own Clock is ahead of the store's (a skewed process). */
  skewMs?: { a?: number; b?: number };
} = {}) {
  const clock = createManualClock();
  // The store's clock (the "database's") is the manual one: leases are judged with it.
  const store = createMemoryStore({ clock });
  const ids = createSequentialIdGenerator();
  const deps = { store, bus: createLocalEventBus(), clock, ids };
  const platform = new PlatformService(deps);
  await platform.createWorkspace({ id: 'ws_a', name: 'A' });
  await platform.createWorkspace({ id: 'ws_b', name: 'B' });
  for (const id of ['acc_owner', 'acc_deriver']) await platform.createAccount({ id, name: id, workspace_ids: ['ws_a'] });
  await platform.createAccount({ id: 'acc_stranger', name: 'stranger', workspace_ids: ['ws_b'] });
  await platform.createProject(owner, { id: 'proj_1', name: 'P' });
  await platform.addMember(owner, 'proj_1', { account_id: 'acc_deriver', role: 'deriver' });
  await platform.createSession(owner, { id: 'sess_p', project_id: 'proj_1', title: 'in a project' });
  const procs = new Map<string, Proc>();
  const make = (name: string, peer: string): Proc => {
    const proc: Proc = {
      host: new LiveInboxHost({ hostId: name }), model: heldModel(), runtime: undefined as unknown as SessionRuntimeService,
      forwarded: [], routingErrors: [], unreachable: false, dead: false,
    };
    const forwarder: AttemptForwarder = {
      async forward(request) {
        proc.forwarded.push(request);
        if (proc.unreachable) throw new Error('connect ECONNREFUSED');
        expect(request.owner.host_url).toBe(`http://${peer}.test`);
        const target = procs.get(peer)!;
        return answer(target.runtime, { principal: request.principal, request_id: request.request_id }, request.session_id, request.operation, true);
      },
    };
    const skew = options.skewMs?.[name as 'a' | 'b'] ?? 0;
    proc.runtime = new SessionRuntimeService({
      ...deps, store: deadable(options.wrapStore ? options.wrapStore(store) : store, () => proc.dead), host: proc.host, model: proc.model,
      clock: { now: () => clock.now() + skew },
      ...(options.routing === false ? {} : {
        routing: {
          host_id: `host_${name}`, host_url: `http://${name}.test`, forwarder, lease_ms: options.lease_ms ?? 10_000,
          // Off unless a test asks: the manual clock jumps would otherwise let the periodic check end Runs mid-test.
          takeover_check_ms: options.takeover_check_ms ?? 0,
          onRoutingError: (error, info) => proc.routingErrors.push({ error, info }),
        },
      }),
    });
    open.push(proc.runtime);
    procs.set(name, proc);
    return proc;
  };
  const a = make('a', 'b');
  const b = make('b', 'a');
  /** Starts a Run on A and waits until its attempt is open and its lease recorded. */
  const startOnA = async () => {
    await a.runtime.sendEvents(owner, 'sess_p', { events: [{ type: 'user.message', content: text('work') }] });
    await waitFor(() => a.host.liveInbox('sess_p'), 'the attempt on A');
    await waitFor(() => store.raw().attemptOwners.get('sess_p'), 'the lease of A');
  };
  return { store, clock, a, b, startOnA };
}

const bodyOf = (reply: ForwardedReply): unknown => (reply.body === '' ? undefined : JSON.parse(reply.body));

describe('many processes — takeover and skewed clocks (platform.md "Many processes")', () => {
  const runningRuns = (w: { store: MemoryStore }) => [...w.store.raw().runs.values()].filter((r) => r.status === 'running').length;

  it('a Run whose owner is gone is ended failed, with its reason, by the periodic check once its lease expired; the input it left then runs here; the Session is usable', async () => {
    const w = await world({ lease_ms: 10_000, takeover_check_ms: 5 });
    await w.startOnA();
    const dead = (await w.store.getRunningRun('sess_p'))!;
    w.a.dead = true; // A is gone: it renews nothing, commits nothing
    // Durable input while the owner is gone: committed, not yet run (A cannot be reached for it).
    await w.b.runtime.sendEvents(owner, 'sess_p', { events: [{ type: 'user.message', content: text('still there?') }] });
    expect((await w.store.getRunningRun('sess_p'))?.id).toBe(dead.id);
    // Within the lease nobody takes the Run: checks run meanwhile (real time), the store's clock has not reached the expiry.
    w.clock.advance(9_999);
    await new Promise((r) => setTimeout(r, 30));
    expect((await w.store.getRunningRun('sess_p'))?.id).toBe(dead.id);
    w.clock.advance(1);
    const followUp = await waitFor(async () => {
      const run = await w.store.getRunningRun('sess_p');
      return run !== undefined && run.id !== dead.id ? run : undefined;
    }, 'the takeover and the follow-up Run');
    expect(w.store.raw().runs.get(dead.id)).toMatchObject({ status: 'idle', outcome: 'failed' });
    const events = await w.store.listSessionEvents({ session_id: 'sess_p', after: 0, limit: 100 });
    const idle = events.find((e) => e.type === 'session.status_idle' && e.run_id === dead.id);
    expect(idle?.content).toEqual({ outcome: 'failed', error: { type: 'api_error', message: expect.stringContaining('its lease expired') } });
    // The follow-up runs on B (leased by B), and B's attempt steers and stops like any other.
    expect(await w.store.findAttemptOwner('sess_p', w.clock.now())).toMatchObject({ run_id: followUp.id, host_id: 'host_b' });
    await waitFor(() => w.b.host.liveInbox('sess_p'), 'the attempt on B');
    expect(runningRuns(w)).toBe(1);
    expect((await w.b.runtime.liveInboxQueue(owner, 'sess_p', { content: text('steer') })).id).toBe(1);
    await w.b.runtime.interrupt(owner, 'sess_p');
    await w.b.runtime.whenIdle('sess_p');
    expect(w.store.raw().runs.get(followUp.id)).toMatchObject({ status: 'idle', outcome: 'cancelled' });
    expect(runningRuns(w)).toBe(0);
  });

  it('a process whose clock is 20 s ahead (or behind) neither ends a healthy Run nor starts a second one', async () => {
    for (const skew of [20_000, -20_000]) {
      const w = await world({ lease_ms: 10_000, takeover_check_ms: 5, skewMs: { b: skew } });
      await w.startOnA();
      const run = (await w.store.getRunningRun('sess_p'))!;
      for (let i = 0; i < 4; i++) {
        // Up to 8 s into a 10 s lease: live by the store's clock, though B's own clock is 20 s off.
        w.clock.advance(2_000);
        await new Promise((r) => setTimeout(r, 20)); // B's periodic checks (every 5 ms) run meanwhile
        expect(await w.b.runtime.recoverStaleRuns()).toBe(0);
        await w.b.runtime.sendEvents(owner, 'sess_p', { events: [{ type: 'user.message', content: text(`more ${i}`) }] });
        expect((await w.store.getRunningRun('sess_p'))?.id).toBe(run.id);
        expect(runningRuns(w)).toBe(1);
        // Live Inbox requests on B still reach A's attempt.
        expect(await w.b.runtime.routeLiveInbox(owner, 'sess_p', { type: 'snapshot' })).toMatchObject({ route: 'forwarded' });
      }
      expect(w.a.routingErrors).toEqual([]);
      w.a.model.answerHeld();
      // The input sent to B runs in A's follow-up Run, one Run at a time.
      await waitFor(async () => (await w.store.getRunningRun('sess_p'))?.id !== run.id, 'the follow-up');
      expect(w.store.raw().runs.get(run.id)).toMatchObject({ outcome: 'completed' });
      expect(runningRuns(w)).toBe(1);
      w.a.model.answerHeld();
      await w.a.runtime.whenIdle('sess_p');
      expect(runningRuns(w)).toBe(0);
    }
  });
});

describe('attempt routing — ownership leases', () => {
  it('a native attempt claims the Session with its run, host and URL, and releases it when the Run ends', async () => {
    const w = await world();
    await w.startOnA();
    const run = await w.store.getRunningRun('sess_p');
    expect(await w.store.findAttemptOwner('sess_p', w.clock.now())).toEqual({
      session_id: 'sess_p', run_id: run!.id, host_id: 'host_a', host_url: 'http://a.test', lease_expires_at: w.clock.now() + 10_000,
    });
    w.a.model.answerHeld();
    await w.a.runtime.whenIdle('sess_p');
    expect(w.store.raw().attemptOwners.has('sess_p')).toBe(false);
    expect(w.a.routingErrors).toEqual([]);
  });

  it('the lease is renewed while the attempt lives', async () => {
    const w = await world({ lease_ms: 30 });
    await w.startOnA();
    w.clock.advance(60_000);
    expect(await w.store.findAttemptOwner('sess_p', w.clock.now())).toBeUndefined();
    await waitFor(async () => (await w.store.findAttemptOwner('sess_p', w.clock.now())) !== undefined, 'a renewal');
    w.a.model.answerHeld();
    await w.a.runtime.whenIdle('sess_p');
    expect(w.store.raw().attemptOwners.has('sess_p')).toBe(false);
  });

  it('the Run is leased from its start transaction: a late lease another host still holds for an earlier Run is replaced', async () => {
    const w = await world();
    await w.store.claimAttemptOwnership({ session_id: 'sess_p', run_id: 'run_x', host_id: 'host_z', host_url: 'http://z.test', lease_expires_at: w.clock.now() + 60_000 }, w.clock.now());
    await w.a.runtime.sendEvents(owner, 'sess_p', { events: [{ type: 'user.message', content: text('work') }] });
    const run = (await w.store.getRunningRun('sess_p'))!;
    // Already leased when sendEvents returns, before the attempt opens.
    expect(await w.store.findAttemptOwner('sess_p', w.clock.now())).toMatchObject({ run_id: run.id, host_id: 'host_a' });
    await waitFor(() => w.a.host.liveInbox('sess_p'), 'the attempt on A');
    expect(w.a.routingErrors).toEqual([]);
    expect((await w.b.runtime.routeLiveInbox(owner, 'sess_p', { type: 'snapshot' }))).toMatchObject({ route: 'forwarded' });
  });

  it('durable input on another process does not end a Run whose attempt holds a live lease', async () => {
    const w = await world();
    await w.startOnA();
    const run = await w.store.getRunningRun('sess_p');
    // B was built at the same (manual) time the Run started: without the lease it would take the Run for a leftover.
    await w.b.runtime.sendEvents(owner, 'sess_p', { events: [{ type: 'user.message', content: text('more') }] });
    expect((await w.store.getRunningRun('sess_p'))?.id).toBe(run!.id);
    expect(w.a.host.liveInbox('sess_p')).toBeDefined();
  });

  it('recoverStaleRuns() on another process leaves a Run whose attempt holds a live lease, and ends it once the lease expired', async () => {
    const w = await world({ lease_ms: 10_000 });
    await w.startOnA();
    const run = (await w.store.getRunningRun('sess_p'))!;
    // B was built at the same (manual) time the Run started: without the lease it would take the Run for a leftover.
    expect(await w.b.runtime.recoverStaleRuns()).toBe(0);
    expect(await w.a.runtime.recoverStaleRuns()).toBe(0);
    expect(w.store.raw().runs.get(run.id)).toMatchObject({ status: 'running' });
    expect(w.a.host.liveInbox('sess_p')).toBeDefined();
    w.clock.advance(10_000);
    expect(await w.b.runtime.recoverStaleRuns()).toBe(1);
    expect(w.store.raw().runs.get(run.id)).toMatchObject({ status: 'idle', outcome: 'failed' });
  });

  it('once the lease has expired (the owner is gone), the Run is a leftover again', async () => {
    const w = await world({ lease_ms: 10_000 });
    await w.startOnA();
    const run = await w.store.getRunningRun('sess_p');
    w.clock.advance(10_000);
    await w.b.runtime.sendEvents(owner, 'sess_p', { events: [{ type: 'user.message', content: text('more') }] });
    const now = await w.store.getRunningRun('sess_p');
    expect(now?.id).not.toBe(run!.id);
  });
});

describe('attempt routing — routeLiveInbox', () => {
  it('is local without reading storage when routing is off, when forwarded, or when this process hosts the attempt', async () => {
    let lookups = 0;
    const w = await world({ wrapStore: (s) => ({ ...s, findAttemptOwner: (...args) => { lookups++; return s.findAttemptOwner(...args); } }) });
    await w.startOnA();
    expect(await w.a.runtime.routeLiveInbox(owner, 'sess_p', { type: 'snapshot' })).toEqual({ route: 'local' });
    expect(await w.a.runtime.routeLiveInbox(owner, 'sess_p', { type: 'queue', body: { content: text('x') } })).toEqual({ route: 'local' });
    expect(await w.a.runtime.routeLiveInbox(owner, 'sess_p', { type: 'send_events', body: { events: [{ type: 'user.interrupt' }] } })).toEqual({ route: 'local' });
    expect(await w.b.runtime.routeLiveInbox(owner, 'sess_p', { type: 'snapshot' }, { forwarded: true })).toEqual({ route: 'local' });
    expect(await w.b.runtime.routeLiveInbox(owner, 'sess_p', { type: 'send_events', body: { events: [{ type: 'user.message', content: text('m') }] } })).toEqual({ route: 'local' });
    expect(lookups).toBe(0);

    const off = await world({ routing: false });
    await off.a.runtime.sendEvents(owner, 'sess_p', { events: [{ type: 'user.message', content: text('work') }] });
    await waitFor(() => off.a.host.liveInbox('sess_p'), 'the attempt on A');
    expect(off.store.raw().attemptOwners.size).toBe(0);
    expect(await off.b.runtime.routeLiveInbox(owner, 'sess_p', { type: 'snapshot' })).toEqual({ route: 'local' });
    expect((await rejection(off.b.runtime.liveInboxQueue(owner, 'sess_p', { content: text('x') }))).code).toBe('live_inbox_inactive');
  });

  it('forwards every Live Inbox operation to the owner and relays its answers, errors included', async () => {
    const w = await world();
    await w.startOnA();
    const via = (op: LiveInboxOperation, ctx = owner) => answer(w.b.runtime, ctx, 'sess_p', op, false);
    const first = await via({ type: 'queue', body: { content: text('one') } });
    expect([first.status, bodyOf(first)]).toEqual([200, { id: 1 }]);
    expect(bodyOf(await via({ type: 'queue', body: { content: text('two') } }))).toEqual({ id: 2 });
    expect((await via({ type: 'queue', body: { content: text('three') } })).status).toBe(200);
    expect((await via({ type: 'replace', message_id: 1, body: { content: text('one, edited') } })).status).toBe(204);
    expect((await via({ type: 'reorder', body: { order: [3, 1, 2] } })).status).toBe(204);
    expect((await via({ type: 'withdraw', message_id: 2 })).status).toBe(204);
    // The owner's own errors come back as it answered them.
    expect(bodyOf(await via({ type: 'withdraw', message_id: 2 }))).toEqual({ code: 'live_inbox_message_not_found' });
    expect(bodyOf(await via({ type: 'reorder', body: { order: [1] } }))).toEqual({ code: 'live_inbox_order_conflict' });
    const snapshot = await via({ type: 'snapshot' });
    expect(bodyOf(snapshot)).toEqual(await w.a.runtime.liveInboxSnapshot(owner, 'sess_p'));
    expect(bodyOf(snapshot)).toMatchObject({ active: true, messages: [{ id: 3, content: text('three') }, { id: 1, content: text('one, edited') }] });
    // A reader (deriver) may read the window through B; the forward carries its principal and request id.
    expect(bodyOf(await via({ type: 'snapshot' }, deriver))).toMatchObject({ active: true });
    const last = w.b.forwarded[w.b.forwarded.length - 1]!;
    expect(last.principal).toEqual(deriver.principal);
    expect(last.request_id).toBe(deriver.request_id);
    expect(last.owner.host_id).toBe('host_a');
    expect(w.a.forwarded).toEqual([]);
  });

  it('checks visibility and permission locally first (404, 403), forwarding nothing', async () => {
    const w = await world();
    await w.startOnA();
    expect((await rejection(w.b.runtime.routeLiveInbox(stranger, 'sess_p', { type: 'snapshot' }))).code).toBe('session_not_found');
    expect((await rejection(w.b.runtime.routeLiveInbox(owner, 'sess_missing', { type: 'queue', body: { content: text('x') } }))).code).toBe('session_not_found');
    expect((await rejection(w.b.runtime.routeLiveInbox(deriver, 'sess_p', { type: 'queue', body: { content: text('x') } }))).code).toBe('permission_denied');
    expect((await rejection(w.b.runtime.routeLiveInbox(deriver, 'sess_p', { type: 'send_events', body: { events: [{ type: 'user.interrupt' }] } }))).code).toBe('permission_denied');
    expect(w.b.forwarded).toEqual([]);
  });

  it('a failing Session read is 500 session_ownership_unavailable, as locally', async () => {
    const w = await world({ wrapStore: (s) => ({
      ...s, getSession: async () => { throw new Error('db down'); }, getSessionWithAccess: async () => { throw new Error('db down'); },
      getSessionGate: async () => { throw new Error('db down'); },
    }) });
    const error = await rejection(w.b.runtime.routeLiveInbox(owner, 'sess_p', { type: 'snapshot' }));
    expect(error.code).toBe('session_ownership_unavailable');
  });

  it('a forwarded request is answered where it lands (one hop at most): 410 without a local attempt', async () => {
    const w = await world();
    await w.startOnA();
    const reply = await answer(w.b.runtime, owner, 'sess_p', { type: 'queue', body: { content: text('x') } }, true);
    expect(bodyOf(reply)).toEqual({ code: 'live_inbox_inactive' });
    expect(w.b.forwarded).toEqual([]);
  });

  it('an unreachable owner is reported and the request answered as if no attempt were active', async () => {
    const w = await world();
    await w.startOnA();
    w.b.unreachable = true;
    expect(bodyOf(await answer(w.b.runtime, owner, 'sess_p', { type: 'queue', body: { content: text('x') } }, false))).toEqual({ code: 'live_inbox_inactive' });
    expect(bodyOf(await answer(w.b.runtime, owner, 'sess_p', { type: 'snapshot' }, false))).toEqual({ active: false, version: 0, messages: [] });
    expect(w.b.routingErrors.map((e) => [e.info.action, e.info.owner?.host_id])).toEqual([['forward', 'host_a'], ['forward', 'host_a']]);
    expect(w.a.host.liveInbox('sess_p')?.snapshot().messages).toEqual([]);
  });

  it('no live owner (none, expired, or this host) → local 410', async () => {
    const w = await world();
    expect(await w.b.runtime.routeLiveInbox(owner, 'sess_p', { type: 'queue', body: { content: text('x') } })).toEqual({ route: 'local' });
    await w.startOnA();
    w.clock.advance(10_000);
    expect(await w.b.runtime.routeLiveInbox(owner, 'sess_p', { type: 'snapshot' })).toEqual({ route: 'local' });
    w.clock.advance(-10_000);
    // A lease naming this host (e.g. its attempt just ended) is not forwarded to itself.
    await w.store.claimAttemptOwnership({ session_id: 'sess_p', run_id: 'run_old', host_id: 'host_b', host_url: 'http://b.test', lease_expires_at: w.clock.now() + 60_000 }, w.clock.now() + 20_000);
    expect(await w.b.runtime.routeLiveInbox(owner, 'sess_p', { type: 'snapshot' })).toEqual({ route: 'local' });
    expect(w.b.forwarded).toEqual([]);
  });

  it('after the Run ends, the other process answers 410 itself', async () => {
    const w = await world();
    await w.startOnA();
    expect(bodyOf(await answer(w.b.runtime, owner, 'sess_p', { type: 'queue', body: { content: text('steer') } }, false))).toEqual({ id: 1 });
    w.a.model.answerHeld();
    await waitFor(() => w.a.model.steps.length >= 2, 'the step after the drain');
    w.a.model.answerHeld();
    await w.a.runtime.whenIdle('sess_p');
    const events = await w.store.listSessionEvents({ session_id: 'sess_p', after: 0, limit: 100 });
    const run = events.find((e) => e.type === 'session.status_running')!.run_id;
    expect(events.find((e) => e.message_id === `${run}-inbox-0`)?.content).toEqual(text('steer'));
    const forwards = w.b.forwarded.length;
    expect(bodyOf(await answer(w.b.runtime, owner, 'sess_p', { type: 'queue', body: { content: text('late') } }, false))).toEqual({ code: 'live_inbox_inactive' });
    expect(w.b.forwarded.length).toBe(forwards);
  });

  it('a user.interrupt sent to another process is forwarded: the owner commits it and cancels its Run', async () => {
    const w = await world();
    await w.startOnA();
    const reply = await answer(w.b.runtime, owner, 'sess_p', { type: 'send_events', body: { events: [{ type: 'user.interrupt' }] } }, false);
    expect(reply.status).toBe(200);
    expect((bodyOf(reply) as { data: Array<{ type: string }> }).data.map((r) => r.type)).toEqual(['user.interrupt']);
    await w.a.runtime.whenIdle('sess_p');
    const events = await w.store.listSessionEvents({ session_id: 'sess_p', after: 0, limit: 100 });
    expect(events.find((e) => e.type === 'session.status_idle')?.content).toEqual({ outcome: 'cancelled' });
    expect(w.store.raw().attemptOwners.has('sess_p')).toBe(false);
  });

  it('an interrupt whose owner is unreachable is committed locally (the Run keeps running)', async () => {
    const w = await world();
    await w.startOnA();
    w.b.unreachable = true;
    const reply = await answer(w.b.runtime, owner, 'sess_p', { type: 'send_events', body: { events: [{ type: 'user.interrupt' }] } }, false);
    expect(reply.status).toBe(200);
    expect(w.b.routingErrors.map((e) => e.info.action)).toEqual(['forward']);
    expect(w.a.host.liveInbox('sess_p')).toBeDefined();
  });
});
