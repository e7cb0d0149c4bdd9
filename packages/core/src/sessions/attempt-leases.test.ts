/**
 * Attempt leases on their own (routing end to end, through `SessionRuntimeService`, is
 * routing.test.ts): off without `routing`; with it, a held lease is claimed, visible to other
 * hosts and released; an interrupt is answered here while this process executes the Session's
 * Run, and forwarded to the lease holder otherwise. Over the in-memory reference store.
 */
import { describe, expect, it } from 'vitest';
import { LiveInboxHost } from '../live-inbox/registry.js';
import { PlatformService } from '../platform/service.js';
import { createManualClock, createSequentialIdGenerator } from '../ports/clock.js';
import { createLocalEventBus } from '../ports/event-bus.js';
import type { Run } from '../records.js';
import { createMemoryStore } from '../testing/memory-store.js';
import { ctxOf, text } from '../test-support.js';
import { AttemptLeases } from './attempt-leases.js';
import type { AttemptForwardRequest, AttemptRoutingOptions, LiveInboxOperation } from './routing.js';

const owner = ctxOf('ws_a', 'acc_owner');
const interrupt: LiveInboxOperation = { type: 'send_events', body: { events: [{ type: 'user.interrupt' }] } };

async function fixture(host_id: string | undefined, executing = new Set<string>()) {
  const clock = createManualClock(10_000);
  const store = createMemoryStore({ clock });
  const deps = { store, bus: createLocalEventBus(), clock, ids: createSequentialIdGenerator() };
  const platform = new PlatformService(deps);
  await platform.createWorkspace({ id: 'ws_a', name: 'A' });
  await platform.createAccount({ id: 'acc_owner', name: 'owner', workspace_ids: ['ws_a'] });
  await platform.createSession(owner, { id: 'sess_1', title: 'one' });
  const forwarded: AttemptForwardRequest[] = [];
  const errors: string[] = [];
  const routing: AttemptRoutingOptions | undefined = host_id === undefined ? undefined : {
    host_id, host_url: `http://${host_id}`, lease_ms: 30_000,
    forwarder: { forward: async (r) => { forwarded.push(r); return { status: 204, content_type: null, body: '' }; } },
    onRoutingError: (_e, info) => errors.push(`${info.action}:${info.session_id}`),
  };
  const leases = new AttemptLeases({ store, clock, host: new LiveInboxHost({ hostId: host_id ?? 'solo' }), routing, isExecuting: (sid) => executing.has(sid) });
  const run: Run = { id: 'run_1', session_id: 'sess_1', status: 'running', started_at: 10_000, ended_at: null, outcome: null };
  return { store, clock, leases, forwarded, errors, executing, run };
}

describe('AttemptLeases', () => {
  it('without routing: every request is local, holding stores nothing, no Run is held elsewhere', async () => {
    const f = await fixture(undefined);
    expect(await f.leases.route(owner, 'sess_1', interrupt)).toEqual({ route: 'local' });
    expect(await f.leases.route(owner, 'sess_1', { type: 'snapshot' })).toEqual({ route: 'local' });
    const release = await f.leases.hold('sess_1', 'run_1');
    expect(await f.store.findAttemptOwner('sess_1', 10_000)).toBeUndefined();
    await release();
    expect(await f.store.transaction((tx) => f.leases.leased(tx, f.run))).toBe(false);
  });

  it('a held lease is stored for this host until released; another host sees it as held elsewhere', async () => {
    const a = await fixture('host_a');
    const release = await a.leases.hold('sess_1', 'run_1');
    expect(await a.store.findAttemptOwner('sess_1', 10_000)).toMatchObject({ session_id: 'sess_1', run_id: 'run_1', host_id: 'host_a', host_url: 'http://host_a' });
    // A live lease names the Run, whoever holds it: it is no leftover, for this host or any other.
    expect(await a.store.transaction((tx) => a.leases.leased(tx, a.run))).toBe(true);
    const b = new AttemptLeases({ store: a.store, clock: a.clock, host: new LiveInboxHost({ hostId: 'host_b' }), isExecuting: () => false,
      routing: { host_id: 'host_b', host_url: 'http://host_b', forwarder: { forward: async () => ({ status: 204, content_type: null, body: '' }) } } });
    expect(await a.store.transaction((tx) => b.leased(tx, a.run))).toBe(true);
    await release();
    expect(await a.store.transaction((tx) => b.leased(tx, a.run))).toBe(false);
    expect(await a.store.findAttemptOwner('sess_1', 10_000)).toBeUndefined();
    expect(a.errors).toEqual([]);
  });

  it('leases are written and judged with the store\'s clock, not the process\'s: a process 20 s ahead sees a live lease as live', async () => {
    const a = await fixture('host_a');
    const release = await a.leases.hold('sess_1', 'run_1');
    expect((await a.store.findAttemptOwner('sess_1', 10_000))?.lease_expires_at).toBe(40_000);
    const ahead = { now: () => a.clock.now() + 20_000 };
    const b = new AttemptLeases({ store: a.store, clock: ahead, host: new LiveInboxHost({ hostId: 'host_b' }), isExecuting: () => false,
      routing: { host_id: 'host_b', host_url: 'http://host_b', lease_ms: 30_000, forwarder: { forward: async () => ({ status: 204, content_type: null, body: '' }) } } });
    a.clock.advance(15_000);
    // By b's own clock the lease ran out 5 s ago; by the store's it has 15 s left.
    expect(ahead.now()).toBeGreaterThan(40_000);
    expect(await a.store.transaction((tx) => b.leased(tx, a.run))).toBe(true);
    expect(await b.now()).toBe(25_000);
    a.clock.advance(15_000);
    expect(await a.store.transaction((tx) => b.leased(tx, a.run))).toBe(false);
    await release();
  });

  it('claimForRun leases a Run from the transaction that inserts it, replacing a late lease of an earlier Run of another host', async () => {
    const f = await fixture('host_b');
    await f.store.claimAttemptOwnership({ session_id: 'sess_1', run_id: 'run_0', host_id: 'host_a', host_url: 'http://host_a', lease_expires_at: 40_000 }, 10_000);
    expect(await f.store.transaction((tx) => f.leases.claimForRun(tx, f.run))).toBe(true);
    expect(await f.store.findAttemptOwner('sess_1', 10_000)).toMatchObject({ run_id: 'run_1', host_id: 'host_b', lease_expires_at: 40_000 });
  });

  it('an interrupt is answered here while this process executes the Run, else forwarded to the lease holder', async () => {
    const f = await fixture('host_b');
    await f.store.claimAttemptOwnership({ session_id: 'sess_1', run_id: 'run_1', host_id: 'host_a', host_url: 'http://host_a', lease_expires_at: 40_000 }, 10_000);
    f.executing.add('sess_1');
    expect(await f.leases.route(owner, 'sess_1', interrupt)).toEqual({ route: 'local' });
    expect(f.forwarded).toEqual([]);
    f.executing.delete('sess_1');
    expect(await f.leases.route(owner, 'sess_1', interrupt)).toEqual({ route: 'forwarded', reply: { status: 204, content_type: null, body: '' } });
    expect(f.forwarded).toEqual([expect.objectContaining({ session_id: 'sess_1', operation: interrupt, owner: expect.objectContaining({ host_id: 'host_a' }) })]);
    // Durable input without an interrupt never leaves this process.
    expect(await f.leases.route(owner, 'sess_1', { type: 'send_events', body: { events: [{ type: 'user.message', content: text('hi') }] } })).toEqual({ route: 'local' });
    expect(f.forwarded).toHaveLength(1);
  });
});
