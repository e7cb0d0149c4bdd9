/**
 * The Project Inbox's role table, transition table and cursor paging over HTTP
 * (`http-suites-inbox.ts`). Data: each `run(ctx)` gets {@link InboxCtx}.
 */
import { expect } from 'vitest';
import { expectError } from './http-world.js';
import type { HttpSuiteCheck } from './http-suites-kit.js';
import { SEED_BODY, SEED_NOTE, type InboxCtx, type Item } from './http-suites-inbox.js';

const OUTCOME: Record<string, string> = {
  'pending/accept': 'accepted', 'pending/reject': 'rejected', 'pending/archive': 'archived',
  'accepted/accept': '409', 'accepted/reject': '409', 'accepted/archive': 'archived',
  'rejected/accept': '409', 'rejected/reject': '409', 'rejected/archive': 'archived',
  'archived/accept': '409', 'archived/reject': '409', 'archived/archive': 'noop',
};
const cells = Object.entries(OUTCOME).map(([k, v]) => [...k.split('/'), v] as [string, string, string]);

export const roleTableChecks: HttpSuiteCheck<InboxCtx>[] = [
  {
    name: 'owner: reads all, creates, decides',
    async run(ctx) {
      const { h, decide, itemIn } = ctx;
      const { project_id } = await h.newProject();
      const a = await itemIn('pending', project_id, 'acc_deriver');
      const b = await itemIn('pending', project_id, 'acc_deriver2');
      const c = await itemIn('pending', project_id, 'acc_owner');
      const list = await h.request('GET', `/projects/${project_id}/inbox`, { as: 'acc_owner' });
      expect(list.status).toBe(200);
      expect(Object.keys(list.body).sort()).toEqual(['items', 'next_cursor']);
      expect(list.body.items.map((i: Item) => i.id).sort()).toEqual([a.id, b.id, c.id].sort());
      for (const i of [a, b, c]) expect((await h.request('GET', `/projects/${project_id}/inbox/${i.id}`, { as: 'acc_owner' })).body.item).toEqual(i);
      expect((await decide('acc_owner', a.id, { decision: 'accept' }, project_id)).status).toBe(200);
    },
  },

  {
    name: 'deriver: reads only what it sent, creates, may not decide',
    async run(ctx) {
      const { h, decide, itemIn } = ctx;
      const { project_id } = await h.newProject();
      const mine = await itemIn('pending', project_id, 'acc_deriver');
      const theirs = await itemIn('pending', project_id, 'acc_deriver2');
      const owners = await itemIn('pending', project_id, 'acc_owner');
      const list = await h.request('GET', `/projects/${project_id}/inbox`, { as: 'acc_deriver' });
      expect(list.body).toEqual({ items: [mine], next_cursor: null });
      expect((await h.request('GET', `/projects/${project_id}/inbox?sender_account_id=acc_deriver`, { as: 'acc_deriver' })).body.items).toEqual([mine]);
      for (const sender of ['acc_deriver2', 'acc_owner']) {
        const other = await h.request('GET', `/projects/${project_id}/inbox?sender_account_id=${sender}`, { as: 'acc_deriver' });
        expect(other.status).toBe(200);
        expect(other.body).toEqual({ items: [], next_cursor: null });
      }
      expect((await h.request('GET', `/projects/${project_id}/inbox/${mine.id}`, { as: 'acc_deriver' })).status).toBe(200);
      expectError(await h.request('GET', `/projects/${project_id}/inbox/${theirs.id}`, { as: 'acc_deriver' }), 404, 'project_inbox_item_not_found');
      expectError(await h.request('GET', `/projects/${project_id}/inbox/${owners.id}`, { as: 'acc_deriver' }), 404, 'project_inbox_item_not_found');
      expectError(await decide('acc_deriver', mine.id, { decision: 'accept' }, project_id), 403, 'project_inbox_decide_denied');
    },
  },

  {
    name: 'observer: may not read, create or decide',
    async run(ctx) {
      const { h, create, decide, itemIn } = ctx;
      const { project_id } = await h.newProject();
      const item = await itemIn('pending', project_id);
      expectError(await h.request('GET', `/projects/${project_id}/inbox`, { as: 'acc_observer' }), 403, 'project_inbox_read_denied');
      expectError(await h.request('GET', `/projects/${project_id}/inbox/${item.id}`, { as: 'acc_observer' }), 403, 'project_inbox_read_denied');
      expectError(await create('acc_observer', { type: 't' }, project_id), 403, 'project_inbox_write_denied');
      expectError(await decide('acc_observer', item.id, { decision: 'archive' }, project_id), 403, 'project_inbox_decide_denied');
    },
  },

  {
    name: 'non-member: nothing is visible',
    async run(ctx) {
      const { h, create, decide, itemIn } = ctx;
      const { project_id } = await h.newProject();
      const item = await itemIn('pending', project_id);
      for (const as of ['acc_outsider', 'acc_stranger']) {
        expectError(await h.request('GET', `/projects/${project_id}/inbox`, { as }), 404, 'project_not_found');
        expectError(await h.request('GET', `/projects/${project_id}/inbox/${item.id}`, { as }), 404, 'project_not_found');
        expectError(await create(as, { type: 't' }, project_id), 404, 'project_not_found');
        expectError(await decide(as, item.id, { decision: 'accept' }, project_id), 404, 'project_not_found');
        expectError(await h.request('GET', `/projects/${project_id}/events`, { as }), 404, 'project_not_found');
      }
    },
  },
];

export const transitionChecks: HttpSuiteCheck<InboxCtx>[] = [
  {
    name: '%s + %s → %s', each: cells,
    async run(ctx, from, decision, outcome) {
      const { h, decide, itemIn, eventsOf } = ctx;
      const item = await itemIn(from);
      const before = await h.inboxRows();
      const res = await decide('acc_owner', item.id, { decision, note: 'n' });
      if (outcome === '409') {
        expectError(res, 409, 'project_inbox_invalid_transition');
        expect(await h.inboxRows()).toEqual(before);
      } else if (outcome === 'noop') {
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ item });
        expect(await h.inboxRows()).toEqual(before);
      } else {
        expect(res.status).toBe(200);
        expect(res.body.item).toMatchObject({ id: item.id, status: outcome, decided_by_account_id: 'acc_owner', created_at: item.created_at });
        expect(res.body.item.updated_at).toBe(res.body.item.decided_at);
        expect(await h.inboxRows()).toEqual({ items: before.items, logs: before.logs + 1, events: before.events + 1 });
        const [ev] = (await eventsOf('proj_main')).filter((e) => e.correlation_id === res.headers.get('x-request-id'));
        expect(ev!.type).toBe(`project_inbox.item.${outcome}`);
      }
      const got = await h.request('GET', `/projects/proj_main/inbox/${item.id}`, { as: 'acc_owner' });
      expect(got.body.item.status).toBe(outcome === '409' || outcome === 'noop' ? from : outcome);
    },
  },
];

export const cursorPagingChecks: HttpSuiteCheck<InboxCtx>[] = [
  {
    name: 'never skips or repeats rows that share one created_at',
    async run(ctx) {
      const { h, create } = ctx;
      const { project_id } = await h.newProject();
      const T = 1_800_000_000_000;
      h.clock.freeze(T);
      const ids: string[] = [];
      try {
        for (let batch = 0; batch < 3; batch++) {
          const made = await Promise.all(Array.from({ length: 10 }, (_, i) =>
            create(i % 3 === 0 ? 'acc_deriver2' : 'acc_deriver', { type: i % 2 ? 'odd' : 'even' }, project_id)));
          for (const r of made) {
            expect(r.status).toBe(201);
            expect(r.body.item.created_at).toBe(T);
            ids.push(r.body.item.id);
          }
        }
      } finally {
        h.clock.unfreeze();
      }
      const expected = [...ids].sort().reverse(); // created_at ties: id DESC (byte order)
      const all = await h.request('GET', `/projects/${project_id}/inbox?limit=200`, { as: 'acc_owner' });
      expect(all.body.items.map((i: Item) => i.id)).toEqual(expected);
      expect(all.body.next_cursor).toBeNull();

      for (const limit of [1, 3, 7, 29, 30]) {
        const seen: string[] = [];
        let cursor: string | null = null;
        let pages = 0;
        do {
          const res: { status: number; body: { items: Item[]; next_cursor: string | null } } = await h.request('GET',
            `/projects/${project_id}/inbox?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { as: 'acc_owner' });
          expect(res.status).toBe(200);
          expect(res.body.items.length).toBeLessThanOrEqual(limit);
          seen.push(...res.body.items.map((i) => i.id));
          cursor = res.body.next_cursor;
          pages++;
        } while (cursor !== null && pages < 100);
        expect(seen, `limit ${limit}`).toEqual(expected);
        expect(pages).toBe(Math.ceil(30 / limit));
      }

      // the same with a filter, as the deriver (only its own rows)
      const mineOdd = (await h.request('GET', `/projects/${project_id}/inbox?limit=200&type=odd`, { as: 'acc_deriver' })).body.items.map((i: Item) => i.id);
      expect(mineOdd.length).toBeGreaterThan(0);
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const res: { body: { items: Item[]; next_cursor: string | null } } = await h.request('GET',
          `/projects/${project_id}/inbox?limit=2&type=odd${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { as: 'acc_deriver' });
        for (const i of res.body.items) expect(i.sender_account_id).toBe('acc_deriver');
        seen.push(...res.body.items.map((i) => i.id));
        cursor = res.body.next_cursor;
      } while (cursor !== null);
      expect(seen).toEqual(mineOdd);
    },
  },

  {
    name: 'orders mixed timestamps created_at DESC, id DESC and pages across the boundaries',
    async run(ctx) {
      const { h, create } = ctx;
      const { project_id } = await h.newProject();
      const made: Item[] = [];
      try {
        for (const t of [5, 5, 9, 1, 9, 5, 1, 9, 5]) {
          h.clock.freeze(1_800_000_000_000 + t);
          made.push((await create('acc_deriver', { type: 't' }, project_id)).body.item);
        }
      } finally {
        h.clock.unfreeze();
      }
      const expected = [...made].sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? 1 : -1)).map((i) => i.id);
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const res: { body: { items: Item[]; next_cursor: string | null } } = await h.request('GET',
          `/projects/${project_id}/inbox?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { as: 'acc_owner' });
        seen.push(...res.body.items.map((i) => i.id));
        cursor = res.body.next_cursor;
      } while (cursor !== null);
      expect(seen).toEqual(expected);
    },
  },

  {
    name: 'filters by status, exact type, sender and source session',
    async run(ctx) {
      const { h, create, decide } = ctx;
      const { project_id, session_id } = await h.newProject();
      const a = (await create('acc_deriver', { type: 'review', source_session_id: session_id }, project_id)).body.item as Item;
      const b = (await create('acc_deriver2', { type: 'review.more' }, project_id)).body.item as Item;
      const c = (await create('acc_owner', { type: 'review' }, project_id)).body.item as Item;
      await decide('acc_owner', b.id, { decision: 'reject' }, project_id);
      const ids = async (q: string) => (await h.request('GET', `/projects/${project_id}/inbox?${q}`, { as: 'acc_owner' })).body.items.map((i: Item) => i.id).sort();
      expect(await ids('status=pending')).toEqual([a.id, c.id].sort());
      expect(await ids('status=rejected')).toEqual([b.id]);
      expect(await ids('type=review')).toEqual([a.id, c.id].sort());
      expect(await ids('type=revie')).toEqual([]);
      expect(await ids('type=review%25')).toEqual([]);
      expect(await ids('sender_account_id=acc_deriver2')).toEqual([b.id]);
      expect(await ids(`source_session_id=${session_id}`)).toEqual([a.id]);
    },
  },
];
