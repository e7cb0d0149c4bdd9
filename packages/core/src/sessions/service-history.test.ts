/**
 * SessionRuntimeService over the in-memory store with a gated model (the world of `test-
 * support.ts`): paged history and the feed; who may steer a Session and in which order the checks
 * answer. Spec: live-inbox.md.
 */
import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../records.js';
import { rejection, text } from '../test-support.js';
import { SESSION_GATE_CACHE_TTL_MS } from './gate-cache.js';
import { owner, deriver, observer, outsider, stranger, fixture, closeRuntimesAfterEach } from './test-support.js';

closeRuntimesAfterEach();

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
    expect((await rejection(Promise.resolve().then(() => feed.authorize([])))).code).toBe('session_not_found');
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
          if ((prop === 'getSession' || prop === 'getSessionWithAccess' || prop === 'getSessionGate') && failing) return async () => { throw new Error('database is down'); };
          return Reflect.get(target, prop, receiver) as unknown;
        },
      }),
    });
    await f.runtime.sendEvents(owner, 'sess_p', { events: [{ type: 'user.message', content: text('task') }] });
    const s = await f.model.next();
    await f.runtime.liveInboxQueue(owner, 'sess_p', { content: text('keep') });
    const before = await f.runtime.liveInboxSnapshot(owner, 'sess_p');
    failing = true;
    // The Session's gate read above is cached for 1 s (platform.md "The write gate"): past it, the read is made again.
    f.clock.advance(SESSION_GATE_CACHE_TTL_MS);
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
