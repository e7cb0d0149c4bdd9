/**
 * The Project Inbox's payload limit at its exact bytes, the events page per role, and concurrent
 * decisions over HTTP (`http-suites-inbox.ts`). Data: each `run(ctx)` gets {@link InboxCtx}.
 */
import { expect } from 'vitest';
import { expectError } from './http-world.js';
import type { HttpSuiteCheck } from './http-suites-kit.js';
import { SEED_BODY, SEED_NOTE, type InboxCtx, type Item } from './http-suites-inbox.js';

// [name, payload of exactly 262,144 bytes, payload of 262,145 bytes]
const cases: [string, unknown, unknown][] = [
  ['an ASCII string', 'a'.repeat(262_142), 'a'.repeat(262_143)],
  ['an ASCII object', { k: 'a'.repeat(262_136) }, { k: 'a'.repeat(262_137) }],
  ['2-byte é', { k: 'é'.repeat(131_068) }, { k: 'é'.repeat(131_068) + 'a' }],
  ['an é string', 'é'.repeat(131_071), 'é'.repeat(131_071) + 'a'],
  ['4-byte 😀', { k: '😀'.repeat(65_534) }, { kk: '😀'.repeat(65_534) }],
  ['3-byte 中 and escapes', { k: '中'.repeat(87_378) + '"' }, { k: '中'.repeat(87_378) + '"a' }],
];

export const payloadLimitChecks: HttpSuiteCheck<InboxCtx>[] = [
  {
    name: '%s: 262,144 bytes → 201, 262,145 bytes → 413 with nothing written', each: cases,
    async run(ctx, _, ok, tooBig) {
      const { h, create, logsOf, utf8Bytes } = ctx;
      expect(utf8Bytes(JSON.stringify(ok))).toBe(262_144);
      expect(utf8Bytes(JSON.stringify(tooBig))).toBe(262_145);
      const before = await h.inboxRows();
      const big = await create('acc_deriver', { type: 't', title: '😀'.repeat(200), payload: tooBig });
      expectError(big, 413, 'project_inbox_payload_too_large');
      expect(await h.inboxRows()).toEqual(before);

      const res = await create('acc_deriver', { type: 't', title: '😀'.repeat(200), payload: ok });
      expect(res.status, res.text.slice(0, 300)).toBe(201);
      expect(res.body.item.payload).toEqual(ok);
      const got = await h.request('GET', `/projects/proj_main/inbox/${res.body.item.id}`, { as: 'acc_owner' });
      expect(got.body.item.payload).toEqual(ok);
      const [log] = (await logsOf('proj_main')).filter((l) => l.target_id === res.body.item.id);
      expect(log!.metadata).toEqual({ payload_byte_count: 262_144 });
    },
  },

  {
    name: 'payloads pass through untouched: key order, unicode, NUL, numbers, null → {}',
    async run(ctx) {
      const { h, create } = ctx;
      const payload = { z: 1, a: [1.5, -0.25, 1e21, true, null], 'ü😀': 'a\u0000b', nested: { b: { derivedOutputId: 'x' }, a: '' } };
      const res = await create('acc_deriver', { type: 't', payload });
      expect(res.status).toBe(201);
      const got = await h.request('GET', `/projects/proj_main/inbox/${res.body.item.id}`, { as: 'acc_owner' });
      expect(JSON.stringify(got.body.item.payload)).toBe(JSON.stringify(payload));
      expect((await create('acc_deriver', { type: 't', payload: null })).body.item.payload).toEqual({});
      expect((await create('acc_deriver', { type: 't' })).body.item.payload).toEqual({});
      expect((await create('acc_deriver', { type: 't', payload: [] })).body.item.payload).toEqual([]);
      expect((await create('acc_deriver', { type: 't', payload: 0 })).body.item.payload).toBe(0);
    },
  },
];

export const eventsPageChecks: HttpSuiteCheck<InboxCtx>[] = [
  {
    name: 'shows the created and decided events with gap-free sequences, only the visible ones per role',
    async run(ctx) {
      const { h, decide, itemIn } = ctx;
      const { project_id } = await h.newProject();
      const mine = await itemIn('pending', project_id, 'acc_deriver');
      const theirs = await itemIn('pending', project_id, 'acc_deriver2');
      const accepted = await decide('acc_owner', mine.id, { decision: 'accept' }, project_id);
      await decide('acc_owner', theirs.id, { decision: 'reject' }, project_id);
      await decide('acc_owner', mine.id, { decision: 'archive' }, project_id);

      type Ev = { sequence: number; type: string; payload: Record<string, unknown>; correlation_id: string };
      const page = async (as: string, q = 'limit=500') => {
        const res = await h.request('GET', `/projects/${project_id}/events?${q}`, { as });
        expect(res.status).toBe(200);
        expect(Object.keys(res.body).sort()).toEqual(['has_more', 'items', 'next_after']);
        return res.body as { items: Ev[]; next_after: number; has_more: boolean };
      };
      const owner = await page('acc_owner');
      expect(owner.items.map((e) => e.sequence)).toEqual(owner.items.map((_, i) => i + 1));
      const inbox = owner.items.filter((e) => e.type.startsWith('project_inbox.'));
      expect(inbox.map((e) => [e.type, e.payload.inbox_item_id])).toEqual([
        ['project_inbox.item.created', mine.id],
        ['project_inbox.item.created', theirs.id],
        ['project_inbox.item.accepted', mine.id],
        ['project_inbox.item.rejected', theirs.id],
        ['project_inbox.item.archived', mine.id],
      ]);
      expect(inbox[2]!.correlation_id).toBe(accepted.headers.get('x-request-id'));
      for (const e of inbox) {
        expect(e.payload).not.toHaveProperty('payload');
        expect(e.payload).not.toHaveProperty('note');
      }
      expect(owner.has_more).toBe(false);

      const deriver = await page('acc_deriver');
      expect(deriver.items.filter((e) => e.type.startsWith('project_inbox.')).map((e) => e.type)).toEqual([
        'project_inbox.item.created', 'project_inbox.item.accepted', 'project_inbox.item.archived',
      ]);
      for (const e of deriver.items.filter((x) => x.type.startsWith('project_inbox.'))) expect(e.payload.inbox_item_id).toBe(mine.id);
      expect(deriver.items.some((e) => e.type === 'project.created')).toBe(true);

      const deriver2 = await page('acc_deriver2');
      expect(deriver2.items.filter((e) => e.type.startsWith('project_inbox.')).map((e) => e.payload.inbox_item_id)).toEqual([theirs.id, theirs.id]);

      const observer = await page('acc_observer');
      expect(observer.items.filter((e) => e.type.startsWith('project_inbox.'))).toEqual([]);
      expect(observer.items.length).toBeGreaterThan(0);

      // paging by sequence
      const first = await page('acc_owner', 'limit=2');
      expect(first.items.map((e) => e.sequence)).toEqual([1, 2]);
      expect(first.has_more).toBe(true);
      const next = await page('acc_owner', `after=${first.next_after}&limit=2`);
      expect(next.items.map((e) => e.sequence)).toEqual([3, 4]);
      const types = await page('acc_owner', 'types=project_inbox.item.created');
      expect(types.items.map((e) => e.payload.inbox_item_id)).toEqual([mine.id, theirs.id]);
    },
  },

  {
    name: 'a deriver demoted to observer no longer sees the inbox events of items it sent',
    async run(ctx) {
      const { h, itemIn } = ctx;
      const { project_id } = await h.newProject();
      await itemIn('pending', project_id, 'acc_deriver2');
      const demoted = await h.request('POST', `/projects/${project_id}/members`, { as: 'acc_owner', body: { account_id: 'acc_deriver2', role: 'observer' } });
      expect(demoted.status).toBe(201);
      expectError(await h.request('GET', `/projects/${project_id}/inbox`, { as: 'acc_deriver2' }), 403, 'project_inbox_read_denied');
      const events = await h.request('GET', `/projects/${project_id}/events`, { as: 'acc_deriver2' });
      expect(events.status).toBe(200);
      expect(events.body.items.filter((e: { type: string }) => e.type.startsWith('project_inbox.'))).toEqual([]);
    },
  },
];

export const concurrencyChecks: HttpSuiteCheck<InboxCtx>[] = [
  {
    name: 'concurrent accept/reject on one item: exactly one wins, the others see the new status (409)',
    async run(ctx) {
      const { h, decide, itemIn, logsOf, eventsOf } = ctx;
      for (let round = 0; round < 3; round++) {
        const item = await itemIn('pending');
        const results = await Promise.all(Array.from({ length: 8 }, (_, i) => decide('acc_owner', item.id, { decision: i % 2 ? 'reject' : 'accept' })));
        const winners = results.filter((r) => r.status === 200);
        expect(winners).toHaveLength(1);
        for (const r of results.filter((x) => x.status !== 200)) expectError(r, 409, 'project_inbox_invalid_transition');
        const row = await h.store.getInboxItem('proj_main', item.id);
        expect(row!.status).toBe(winners[0]!.body.item.status);
        expect((await logsOf()).filter((l) => l.target_id === item.id && l.action === 'project_inbox_item.decide')).toHaveLength(1);
        expect((await eventsOf()).filter((e) => ['project_inbox.item.accepted', 'project_inbox.item.rejected'].includes(e.type) && JSON.stringify(e.payload).includes(item.id))).toHaveLength(1);
      }
    },
  },

  {
    name: 'concurrent archives: all answer 200 archived, exactly one writes',
    async run(ctx) {
      const { decide, itemIn, eventsOf } = ctx;
      const item = await itemIn('accepted');
      const results = await Promise.all(Array.from({ length: 6 }, () => decide('acc_owner', item.id, { decision: 'archive' })));
      for (const r of results) {
        expect(r.status).toBe(200);
        expect(r.body.item.status).toBe('archived');
      }
      expect((await eventsOf()).filter((e) => e.type === 'project_inbox.item.archived' && JSON.stringify(e.payload).includes(item.id))).toHaveLength(1);
    },
  },

  {
    name: 'concurrent creates get unique, gap-free event sequences',
    async run(ctx) {
      const { h, create, eventsOf, itemsOf } = ctx;
      const { project_id } = await h.newProject();
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => create(i % 2 ? 'acc_deriver' : 'acc_owner', { type: `c${i}` }, project_id)));
      for (const r of results) expect(r.status).toBe(201);
      const seqs = (await eventsOf(project_id)).map((e) => e.sequence);
      expect(seqs).toEqual(seqs.map((_, i) => i + 1));
      expect(await itemsOf(project_id)).toHaveLength(20);
    },
  },
];
