/**
 * The Session gate cache (platform.md "The write gate"): the Live Inbox routes' plain read of a
 * Session's gate is served from the process for 1 s; a write through the services that moves a
 * gate (project archived, member added or removed, Session archived or deleted) drops it at once,
 * a change made elsewhere (another process, directly in storage) is seen within the lifetime.
 */
import { describe, expect, it } from 'vitest';
import { PlatformService } from '../platform/service.js';
import { createLocalEventBus } from '../ports/event-bus.js';
import type { SessionGate } from '../ports/store.js';
import { rejection, text } from '../test-support.js';
import { createMemoryStore } from '../testing/memory-store.js';
import { droppingSessionGates, SESSION_GATE_CACHE_MAX, SESSION_GATE_CACHE_TTL_MS, SessionGateCache, sessionGateCache } from './gate-cache.js';
import { closeRuntimesAfterEach, deriver, fixture, observer, owner } from './test-support.js';

closeRuntimesAfterEach();

const GATE: SessionGate = { session: { id: 'sess_1', project_id: 'proj_1', archived_at: null }, project: { account_id: 'acc_owner', status: 'active' }, role: undefined };

/** A store of one gate read, counting its reads; `answer` decides each one. */
function countingStore(answer: (session_id: string) => Promise<SessionGate | undefined> = async () => GATE) {
  const store = {
    reads: 0,
    async getSessionGate(_workspace_id: string, session_id: string) {
      store.reads += 1;
      return answer(session_id);
    },
  };
  return store;
}

describe('SessionGateCache', () => {
  it('answers from the process while an entry lives, then reads again', async () => {
    let now = 0;
    const cache = new SessionGateCache(() => now);
    const store = countingStore();
    expect(await cache.read(store, 'ws_a', 'sess_1', 'acc_owner')).toEqual(GATE);
    now = SESSION_GATE_CACHE_TTL_MS - 1;
    expect(await cache.read(store, 'ws_a', 'sess_1', 'acc_owner')).toEqual(GATE);
    expect(store.reads).toBe(1);
    now = SESSION_GATE_CACHE_TTL_MS;
    await cache.read(store, 'ws_a', 'sess_1', 'acc_owner');
    expect(store.reads).toBe(2);
  });

  it('keys by workspace, Session and caller', async () => {
    const cache = new SessionGateCache(() => 0);
    const store = countingStore();
    await cache.read(store, 'ws_a', 'sess_1', 'acc_owner');
    await cache.read(store, 'ws_a', 'sess_1', 'acc_other');
    await cache.read(store, 'ws_b', 'sess_1', 'acc_owner');
    await cache.read(store, 'ws_a', 'sess_2', 'acc_owner');
    expect(store.reads).toBe(4);
    expect(cache.size).toBe(4);
  });

  it('never caches a Session not found, nor a failing read', async () => {
    const cache = new SessionGateCache(() => 0);
    let fail = true;
    const store = countingStore(async (id) => {
      if (id === 'sess_gone') return undefined;
      if (fail) throw new Error('database is down');
      return GATE;
    });
    expect(await cache.read(store, 'ws_a', 'sess_gone', 'acc_owner')).toBeUndefined();
    expect(await cache.read(store, 'ws_a', 'sess_gone', 'acc_owner')).toBeUndefined();
    await expect(cache.read(store, 'ws_a', 'sess_1', 'acc_owner')).rejects.toThrow('database is down');
    fail = false;
    expect(await cache.read(store, 'ws_a', 'sess_1', 'acc_owner')).toEqual(GATE);
    expect(store.reads).toBe(4);
  });

  it('forget drops every entry, and a read in flight across it is not cached', async () => {
    const cache = new SessionGateCache(() => 0);
    const store = countingStore();
    await cache.read(store, 'ws_a', 'sess_1', 'acc_owner');
    cache.forget();
    expect(cache.size).toBe(0);
    let release!: (gate: SessionGate) => void;
    const slow = { getSessionGate: () => new Promise<SessionGate>((r) => (release = r)) };
    const inFlight = cache.read(slow, 'ws_a', 'sess_1', 'acc_owner');
    cache.forget();
    release(GATE);
    expect(await inFlight).toEqual(GATE);
    expect(cache.size).toBe(0);
  });

  it('a lifetime of 0 reads every time; past its bound the oldest entry goes', async () => {
    const off = new SessionGateCache(() => 0, 0);
    const store = countingStore();
    await off.read(store, 'ws_a', 'sess_1', 'acc_owner');
    await off.read(store, 'ws_a', 'sess_1', 'acc_owner');
    expect(store.reads).toBe(2);
    const small = new SessionGateCache(() => 0, SESSION_GATE_CACHE_TTL_MS, 2);
    for (const id of ['sess_1', 'sess_2', 'sess_3']) await small.read(store, 'ws_a', id, 'acc_owner');
    expect(small.size).toBe(2);
    await small.read(store, 'ws_a', 'sess_3', 'acc_owner');
    expect(store.reads).toBe(5);
    await small.read(store, 'ws_a', 'sess_1', 'acc_owner');
    expect(store.reads).toBe(6);
    expect(SESSION_GATE_CACHE_MAX).toBeGreaterThan(0);
  });

  it('a write dropping gates before any service read one leaves the lifetime to the reader', async () => {
    const store = createMemoryStore();
    const clock = { now: () => 0 };
    await droppingSessionGates({ store }, Promise.resolve());
    const cache = sessionGateCache({ store, clock, sessionGateCacheTtlMs: 0 });
    expect(sessionGateCache({ store, clock })).toBe(cache);
    const counting = countingStore();
    await cache.read(counting, 'ws_a', 'sess_1', 'acc_owner');
    await cache.read(counting, 'ws_a', 'sess_1', 'acc_owner');
    expect(counting.reads).toBe(2);
  });

  it('without getSessionGate there is nothing to cache', async () => {
    expect(await new SessionGateCache(() => 0).read({}, 'ws_a', 'sess_1', 'acc_owner')).toBeUndefined();
  });
});

/** The fixture's Runtime with a Run executing on `sess_p`, and a PlatformService on the same store ("this process"). */
async function steering() {
  const f = await fixture();
  let n = 0;
  const platform = new PlatformService({ store: f.store, bus: createLocalEventBus(), clock: f.clock, ids: { next: (prefix: string) => `${prefix}_here${(n += 1)}` } });
  await f.runtime.sendEvents(owner, 'sess_p', { events: [{ type: 'user.message', content: text('task') }] });
  const step = await f.model.next();
  const queue = () => f.runtime.liveInboxQueue(owner, 'sess_p', { content: text('more') }).then(() => 'queued', (e: { code: string }) => e.code);
  const finish = async () => {
    step.reply('ok');
    await f.runtime.whenIdle('sess_p');
  };
  return { f, platform, queue, finish };
}

describe('the Live Inbox on cached gates', () => {
  it('a project archived through this process refuses the next edit at once', async () => {
    const { platform, queue, finish } = await steering();
    expect(await queue()).toBe('queued');
    await platform.archiveProject(owner, 'proj_1');
    expect(await queue()).toBe('project_archived');
    await finish();
  });

  it('a member removed through this process no longer sees the Session at once', async () => {
    const { f, platform, finish } = await steering();
    expect((await f.runtime.liveInboxSnapshot(observer, 'sess_p')).active).toBe(true);
    await platform.removeMember(owner, 'proj_1', 'acc_observer');
    expect((await rejection(f.runtime.liveInboxSnapshot(observer, 'sess_p'))).code).toBe('session_not_found');
    // A member added is seen at once as well (it was cached as no role).
    expect((await rejection(f.runtime.liveInboxSnapshot(observer, 'sess_p'))).code).toBe('session_not_found');
    await platform.addMember(owner, 'proj_1', { account_id: 'acc_observer', role: 'observer' });
    expect((await f.runtime.liveInboxSnapshot(observer, 'sess_p')).active).toBe(true);
    expect((await rejection(f.runtime.liveInboxQueue(deriver, 'sess_p', { content: text('x') }))).code).toBe('permission_denied');
    await finish();
  });

  it('a Session deleted through this process is gone for the Live Inbox at once', async () => {
    const { f, finish } = await steering();
    await finish();
    expect(await f.runtime.liveInboxSnapshot(observer, 'sess_p')).toEqual({ active: false, version: 0, messages: [] });
    await f.runtime.deleteSession(owner, 'sess_p');
    expect((await rejection(f.runtime.liveInboxSnapshot(observer, 'sess_p'))).code).toBe('session_not_found');
  });

  it('a change made directly in storage (or by another process) is seen within the lifetime', async () => {
    const { f, queue, finish } = await steering();
    expect(await queue()).toBe('queued');
    await f.store.setProjectStatus('proj_1', 'archived', f.clock.now());
    f.clock.advance(SESSION_GATE_CACHE_TTL_MS - 1);
    expect(await queue()).toBe('queued');
    f.clock.advance(1);
    expect(await queue()).toBe('project_archived');
    await finish();
    // What was queued on the stale gate is decided again when committed (run.commit, under the lock): refused.
    expect((await f.events()).filter((e) => JSON.stringify(e.content).includes('"more"'))).toEqual([]);
  });
});
