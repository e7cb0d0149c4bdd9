/**
 * ProjectInboxService over the in-memory reference store, with a frozen clock and sequential ids
 * (the world of `test-support.ts`): list (filters, keyset pages, visibility) and get (one read
 * with getInboxItemWithAccess, three without). Spec: project-inbox.md.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { InboxKitError } from '../errors.js';
import type { ProjectInboxItem } from '../records.js';
import { ProjectInboxService } from './service.js';
import { makeWorld, T0, rejects, itemInOf, type World } from './test-support.js';
import type { InboxItemStatus } from '../records.js';

let w: World;
beforeEach(async () => {
  w = await makeWorld();
});
const itemIn = (status: InboxItemStatus, sender?: string) => itemInOf(w, status, sender);

/**
 * The same service over the same store, counting the store calls it makes (`calls`), with or
 * without the store's optional `method`.
 */
function countingService(method: 'getInboxItemWithAccess' | 'listInboxItemsWithAccess', withMethod: boolean) {
  const calls: string[] = [];
  const store = new Proxy(w.store, {
    get(target, prop, receiver) {
      if (prop === method && !withMethod) return undefined;
      const real = Reflect.get(target, prop, receiver) as unknown;
      if (typeof real !== 'function') return real;
      return (...args: unknown[]) => {
        calls.push(String(prop));
        return (real as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { calls, inbox: new ProjectInboxService({ store, bus: w.bus, clock: w.clock, ids: w.ids }) };
}

describe('list', () => {
  it('orders by created_at DESC, id DESC', async () => {
    const made: ProjectInboxItem[] = [];
    for (const dt of [0, 5, 5, -3, 5, 0]) {
      w.clock.set(T0 + dt);
      made.push(await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { type: 't' }));
    }
    const expected = [...made].sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? 1 : -1)).map((i) => i.id);
    expect((await w.inbox.list(w.ctx('acc_owner'), 'proj_main')).items.map((i) => i.id)).toEqual(expected);
  });

  it('filters by status, exact type, sender and source session', async () => {
    const a = await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { type: 'review', source_session_id: 'sess_001' });
    const b = await w.inbox.create(w.ctx('acc_deriver2'), 'proj_main', { type: 'review.extra', source_session_id: 'sess_002' });
    const c = await w.inbox.create(w.ctx('acc_owner'), 'proj_main', { type: 'review' });
    await w.inbox.decide(w.ctx('acc_owner'), 'proj_main', b.id, { decision: 'reject' });
    const ids = async (q: Record<string, string>) => (await w.inbox.list(w.ctx('acc_owner'), 'proj_main', q)).items.map((i) => i.id).sort();
    expect(await ids({ status: 'pending' })).toEqual([a.id, c.id].sort());
    expect(await ids({ status: 'rejected' })).toEqual([b.id]);
    expect(await ids({ status: 'accepted' })).toEqual([]);
    expect(await ids({ type: 'review' })).toEqual([a.id, c.id].sort());
    expect(await ids({ type: 'revie' })).toEqual([]);
    expect(await ids({ sender_account_id: 'acc_deriver2' })).toEqual([b.id]);
    expect(await ids({ source_session_id: 'sess_001' })).toEqual([a.id]);
    expect(await ids({ source_session_id: 'sess_002', status: 'rejected', type: 'review.extra', sender_account_id: 'acc_deriver2' })).toEqual([b.id]);
  });

  it('pages over 23 rows that share one created_at without skipping or repeating', async () => {
    const made = new Set<string>();
    for (let i = 0; i < 23; i++) made.add((await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { type: 't' })).id);
    for (const limit of [1, 2, 4, 5, 22, 23]) {
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await w.inbox.list(w.ctx('acc_owner'), 'proj_main', { limit, ...(cursor ? { cursor } : {}) });
        expect(page.items.length).toBeLessThanOrEqual(limit);
        seen.push(...page.items.map((i) => i.id));
        cursor = page.next_cursor ?? undefined;
        pages++;
      } while (cursor && pages < 100);
      expect(seen).toHaveLength(23);
      expect(new Set(seen)).toEqual(made);
      expect(seen).toEqual([...made].sort().reverse());
      expect(pages).toBe(Math.ceil(23 / limit));
    }
  });

  it('pages over mixed timestamps and ties, for the deriver and with filters', async () => {
    const mine: ProjectInboxItem[] = [];
    for (let i = 0; i < 30; i++) {
      w.clock.set(T0 + Math.floor(i / 7));
      const who = i % 3 === 0 ? 'acc_deriver2' : 'acc_deriver';
      const item = await w.inbox.create(w.ctx(who), 'proj_main', { type: i % 2 ? 'odd' : 'even' });
      if (who === 'acc_deriver' && item.type === 'odd') mine.push(item);
    }
    const expected = mine.sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? 1 : -1)).map((i) => i.id);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await w.inbox.list(w.ctx('acc_deriver'), 'proj_main', { limit: 3, type: 'odd', ...(cursor ? { cursor } : {}) });
      for (const i of page.items) expect(i.sender_account_id).toBe('acc_deriver');
      seen.push(...page.items.map((i) => i.id));
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(expected);
  });

  it('rows added at the same ms after a page was served do not disturb the following pages', async () => {
    const first: string[] = [];
    for (let i = 0; i < 6; i++) first.push((await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { type: 't' })).id);
    const p1 = await w.inbox.list(w.ctx('acc_owner'), 'proj_main', { limit: 3 });
    for (let i = 0; i < 3; i++) await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { type: 't' });
    const p2 = await w.inbox.list(w.ctx('acc_owner'), 'proj_main', { limit: 3, cursor: p1.next_cursor! });
    expect([...p1.items, ...p2.items].map((i) => i.id)).toEqual([...first].reverse());
    expect(p2.next_cursor).toBeNull();
  });

  it('next_cursor is null when no row follows (also when the last page is exactly full)', async () => {
    expect(await w.inbox.list(w.ctx('acc_owner'), 'proj_main')).toEqual({ items: [], next_cursor: null });
    for (let i = 0; i < 4; i++) await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { type: 't' });
    expect((await w.inbox.list(w.ctx('acc_owner'), 'proj_main', { limit: 4 })).next_cursor).toBeNull();
    const p1 = await w.inbox.list(w.ctx('acc_owner'), 'proj_main', { limit: 2 });
    expect(p1.next_cursor).toEqual(expect.any(String));
    expect((await w.inbox.list(w.ctx('acc_owner'), 'proj_main', { limit: 2, cursor: p1.next_cursor! })).next_cursor).toBeNull();
  });

  it('limit defaults to 50', async () => {
    for (let i = 0; i < 51; i++) await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { type: 't' });
    const page = await w.inbox.list(w.ctx('acc_owner'), 'proj_main');
    expect(page.items).toHaveLength(50);
    expect(page.next_cursor).not.toBeNull();
  });

  it('a cursor minted for another filter set or another project is invalid_cursor', async () => {
    for (let i = 0; i < 3; i++) await w.inbox.create(w.ctx('acc_owner'), 'proj_main', { type: 't' });
    for (let i = 0; i < 3; i++) await w.inbox.create(w.ctx('acc_owner'), 'proj_side', { type: 't' });
    const owner = () => w.ctx('acc_owner');
    const plain = (await w.inbox.list(owner(), 'proj_main', { limit: 1 })).next_cursor!;
    const filtered = (await w.inbox.list(owner(), 'proj_main', { limit: 1, status: 'pending' })).next_cursor!;
    const side = (await w.inbox.list(owner(), 'proj_side', { limit: 1 })).next_cursor!;
    expect(plain && filtered && side).toBeTruthy();
    await rejects(w.inbox.list(owner(), 'proj_main', { limit: 1, cursor: plain, status: 'pending' }), 'invalid_cursor');
    await rejects(w.inbox.list(owner(), 'proj_main', { limit: 1, cursor: plain, type: 't' }), 'invalid_cursor');
    await rejects(w.inbox.list(owner(), 'proj_main', { limit: 1, cursor: filtered }), 'invalid_cursor');
    await rejects(w.inbox.list(owner(), 'proj_main', { limit: 1, cursor: filtered, status: 'accepted' }), 'invalid_cursor');
    await rejects(w.inbox.list(owner(), 'proj_main', { limit: 1, cursor: side }), 'invalid_cursor');
    await rejects(w.inbox.list(owner(), 'proj_side', { limit: 1, cursor: plain }), 'invalid_cursor');
    // the limit may change between pages
    expect((await w.inbox.list(owner(), 'proj_main', { limit: 5, cursor: plain })).items).toHaveLength(2);
  });
});

describe('get: one read with getInboxItemWithAccess, three without', () => {
  const serviceOver = (withMethod: boolean) => countingService('getInboxItemWithAccess', withMethod);

  it('gives the same answer or error either way, for every role and miss', async () => {
    const own = await itemIn('accepted');
    const other = await itemIn('pending', 'acc_deriver2');
    const side = await w.inbox.create(w.ctx('acc_owner'), 'proj_side', { type: 'side' });
    const cases: Array<[string, string, string]> = [
      ['acc_owner', 'proj_main', own.id],
      ['acc_owner', 'proj_main', other.id],
      ['acc_deriver', 'proj_main', own.id],
      ['acc_deriver', 'proj_main', other.id], // not its own: 404 item
      ['acc_observer', 'proj_main', own.id], // 403
      ['acc_outsider', 'proj_main', own.id], // 404 project
      ['acc_stranger', 'proj_main', own.id], // other workspace: 404 project
      ['acc_owner', 'proj_missing', own.id],
      ['acc_owner', 'proj_main', 'pinbox_missing'],
      ['acc_owner', 'proj_main', side.id], // item of another project: 404 item
      ['acc_owner', 'proj_side', side.id],
    ];
    const outcome = (p: Promise<ProjectInboxItem>) => p.then((item) => ({ item }), (error: unknown) => ({ error: (error as InboxKitError).code }));
    const one = serviceOver(true);
    const three = serviceOver(false);
    const answers = [];
    for (const [account, project, item] of cases) {
      const a = await outcome(one.inbox.get(w.ctx(account), project, item));
      const b = await outcome(three.inbox.get(w.ctx(account), project, item));
      expect(a, `${account} ${project} ${item}`).toEqual(b);
      answers.push('item' in a ? 'item' : a.error);
    }
    expect(answers).toEqual([
      'item', 'item', 'item', 'project_inbox_item_not_found', 'project_inbox_read_denied', 'project_not_found', 'project_not_found',
      'project_not_found', 'project_inbox_item_not_found', 'project_inbox_item_not_found', 'item',
    ]);
  });

  it('reads once when the store has the method, and falls back to the three reads when not', async () => {
    const item = await itemIn('pending');
    const one = serviceOver(true);
    expect(await one.inbox.get(w.ctx('acc_deriver'), 'proj_main', item.id)).toEqual(item);
    expect(one.calls).toEqual(['getInboxItemWithAccess']);
    const three = serviceOver(false);
    expect(await three.inbox.get(w.ctx('acc_deriver'), 'proj_main', item.id)).toEqual(item);
    expect(three.calls).toEqual(['getProject', 'getMembership', 'getInboxItem']);
  });
});

describe('list: one read with listInboxItemsWithAccess, the two-step reads without', () => {
  const serviceOver = (withMethod: boolean) => countingService('listInboxItemsWithAccess', withMethod);
  const outcome = (p: Promise<{ items: ProjectInboxItem[]; next_cursor: string | null }>) =>
    p.then((page) => ({ page }), (error: unknown) => ({ error: (error as InboxKitError).code }));

  it('gives the same page or error either way, for every role, filter, cursor and miss', async () => {
    for (let i = 0; i < 4; i++) {
      w.clock.set(T0 + i);
      await itemIn('pending');
      await itemIn(i % 2 ? 'accepted' : 'pending', 'acc_deriver2');
      await w.inbox.create(w.ctx('acc_owner'), 'proj_main', { type: 'by-owner' });
    }
    await w.inbox.create(w.ctx('acc_owner'), 'proj_side', { type: 'side' });
    const plain = (await w.inbox.list(w.ctx('acc_owner'), 'proj_main', { limit: 2 })).next_cursor!;
    const mine = (await w.inbox.list(w.ctx('acc_deriver'), 'proj_main', { limit: 2 })).next_cursor!;
    const pending = (await w.inbox.list(w.ctx('acc_owner'), 'proj_main', { limit: 2, status: 'pending' })).next_cursor!;
    const side = (await w.inbox.list(w.ctx('acc_owner'), 'proj_side', { limit: 1 })).next_cursor;
    expect(plain && mine && pending).toBeTruthy();
    const queries: Array<Record<string, string | number>> = [
      {}, { limit: 2 }, { limit: 2, cursor: plain }, { limit: 3, cursor: mine }, { status: 'pending', limit: 2, cursor: pending },
      { sender_account_id: 'acc_deriver' }, { sender_account_id: 'acc_deriver2' }, { sender_account_id: 'acc_deriver', limit: 1 },
      { status: 'accepted' }, { type: 'by-owner', limit: 1 }, { cursor: 'not-a-cursor' }, { cursor: plain, status: 'pending' },
      ...(side ? [{ cursor: side }] : []),
    ];
    const callers = ['acc_owner', 'acc_deriver', 'acc_deriver2', 'acc_observer', 'acc_outsider', 'acc_stranger'];
    const one = serviceOver(true);
    const two = serviceOver(false);
    const answers = new Set<string>();
    for (const account of callers) {
      for (const project of ['proj_main', 'proj_side', 'proj_missing']) {
        for (const q of queries) {
          const a = await outcome(one.inbox.list(w.ctx(account), project, q));
          const b = await outcome(two.inbox.list(w.ctx(account), project, q));
          expect(a, `${account} ${project} ${JSON.stringify(q)}`).toEqual(b);
          if ('page' in a) {
            if (account !== 'acc_owner') for (const i of a.page.items) expect(i.sender_account_id).toBe(account);
            answers.add(a.page.items.length > 0 ? 'items' : 'empty');
          } else {
            answers.add(a.error);
          }
        }
      }
    }
    expect([...answers].sort()).toEqual(['empty', 'invalid_cursor', 'items', 'project_inbox_read_denied', 'project_not_found']);
    // A bad query is refused before anything is read, either way.
    await rejects(one.inbox.list(w.ctx('acc_owner'), 'proj_missing', { limit: 0 }), 'validation_error');
  });

  it('reads once for the owner and a deriver, and falls back without the method or on a cursor it cannot decode', async () => {
    await itemIn('pending');
    const one = serviceOver(true);
    await one.inbox.list(w.ctx('acc_owner'), 'proj_main');
    expect(one.calls).toEqual(['listInboxItemsWithAccess']);
    one.calls.length = 0;
    expect((await one.inbox.list(w.ctx('acc_deriver'), 'proj_main')).items).toHaveLength(1);
    expect((await one.inbox.list(w.ctx('acc_deriver2'), 'proj_main')).items).toEqual([]);
    expect(one.calls).toEqual(['listInboxItemsWithAccess', 'listInboxItemsWithAccess']);
    one.calls.length = 0;
    await rejects(one.inbox.list(w.ctx('acc_owner'), 'proj_main', { cursor: 'not-a-cursor' }), 'invalid_cursor');
    expect(one.calls).toEqual(['getProject']);
    const two = serviceOver(false);
    await two.inbox.list(w.ctx('acc_deriver'), 'proj_main');
    expect(two.calls).toEqual(['getProject', 'getMembership', 'listInboxItems']);
  });

  it('never shows a deriver another sender\'s item, even from a store whose page holds one', async () => {
    const own = await itemIn('pending');
    const other = await itemIn('pending', 'acc_deriver2');
    const leaky = new Proxy(w.store, {
      get(target, prop, receiver) {
        if (prop === 'listInboxItemsWithAccess') {
          return async (...args: Parameters<NonNullable<typeof target.listInboxItemsWithAccess>>) => {
            const read = await target.listInboxItemsWithAccess!(...args);
            return read && { ...read, items: await target.listInboxItems({ ...args[3], project_id: args[1], sender_account_id: undefined }) };
          };
        }
        return Reflect.get(target, prop, receiver) as unknown;
      },
    });
    const inbox = new ProjectInboxService({ store: leaky, bus: w.bus, clock: w.clock, ids: w.ids });
    expect((await inbox.list(w.ctx('acc_deriver'), 'proj_main')).items.map((i) => i.id)).toEqual([own.id]);
    expect((await inbox.list(w.ctx('acc_owner'), 'proj_main')).items.map((i) => i.id).sort()).toEqual([own.id, other.id].sort());
  });
});

describe('listJson: the page as JSON text, from the store\'s listInboxItemsJson or JSON.stringify', () => {
  /** A store whose listInboxItemsJson is built from its listInboxItems (its reference), in the key order of no record. */
  const jsonStore = (calls: string[]) => new Proxy(w.store, {
    get(target, prop, receiver) {
      if (prop === 'listInboxItemsWithAccess') return undefined;
      if (prop === 'listInboxItemsJson') {
        return async (q: Parameters<typeof target.listInboxItems>[0]) => {
          calls.push('listInboxItemsJson');
          const rows = await target.listInboxItems({ ...q, limit: q.limit + 1 });
          const page = rows.slice(0, q.limit);
          const last = page[page.length - 1];
          const reversed = page.map((i) => Object.fromEntries(Object.entries(i).reverse()));
          return { json: JSON.stringify(reversed, null, 1), more: rows.length > q.limit, last: rows.length > q.limit && last ? { created_at: last.created_at, id: last.id } : undefined };
        };
      }
      const real = Reflect.get(target, prop, receiver) as unknown;
      return typeof real === 'function' ? (...args: unknown[]) => { calls.push(String(prop)); return (real as (...a: unknown[]) => unknown).apply(target, args); } : real;
    },
  });
  const outcome = (p: Promise<unknown>) => p.then((page) => ({ page: typeof page === 'string' ? JSON.parse(page) as unknown : page }), (error: unknown) => ({ error: (error as InboxKitError).code }));

  it('parses to what list gives, for every role, filter, cursor and miss, with the store\'s JSON page and without', async () => {
    for (let i = 0; i < 4; i++) {
      w.clock.set(T0 + i);
      await itemIn('pending');
      await itemIn(i % 2 ? 'accepted' : 'pending', 'acc_deriver2');
      await w.inbox.create(w.ctx('acc_owner'), 'proj_main', { type: 'by-owner', title: 'quote " \\ \u2028 ✓' });
    }
    const plain = (await w.inbox.list(w.ctx('acc_owner'), 'proj_main', { limit: 2 })).next_cursor!;
    const mine = (await w.inbox.list(w.ctx('acc_deriver'), 'proj_main', { limit: 2 })).next_cursor!;
    const queries: Array<Record<string, string | number>> = [
      {}, { limit: 2 }, { limit: 2, cursor: plain }, { limit: 3, cursor: mine }, { limit: 12 }, { limit: 13 }, { sender_account_id: 'acc_deriver2' },
      { sender_account_id: 'acc_deriver', limit: 1 }, { status: 'accepted' }, { cursor: 'not-a-cursor' }, { cursor: plain, status: 'pending' }, { limit: 0 },
    ];
    const calls: string[] = [];
    const withJson = new ProjectInboxService({ store: jsonStore(calls), bus: w.bus, clock: w.clock, ids: w.ids });
    const seen = new Set<string>();
    for (const account of ['acc_owner', 'acc_deriver', 'acc_deriver2', 'acc_observer', 'acc_stranger']) {
      for (const project of ['proj_main', 'proj_missing']) {
        for (const q of queries) {
          const expected = await outcome(w.inbox.list(w.ctx(account), project, q));
          const what = `${account} ${project} ${JSON.stringify(q)}`;
          expect(await outcome(withJson.listJson(w.ctx(account), project, q)), what).toEqual(expected);
          expect(await outcome(w.inbox.listJson(w.ctx(account), project, q)), what).toEqual(expected);
          seen.add('page' in expected ? (expected.page as { next_cursor: string | null }).next_cursor ? 'more' : 'last' : expected.error);
        }
      }
    }
    expect([...seen].sort()).toEqual(['invalid_cursor', 'last', 'more', 'project_inbox_read_denied', 'project_not_found', 'validation_error']);
    calls.length = 0;
    await withJson.listJson(w.ctx('acc_deriver'), 'proj_main');
    expect(calls).toEqual(['getProject', 'getMembership', 'listInboxItemsJson']);
  });
});
