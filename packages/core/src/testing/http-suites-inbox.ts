/**
 * The Project Inbox end to end over real HTTP: the seed page's flow, the role table, the transition
 * table, cursor paging over shared timestamps, the payload limit at its exact bytes, Operation Log
 * and Project Event rows per write, the events page per role, and concurrent decisions. Spec:
 * project-inbox.md. Moved from `@inbox-kit/http-fastify`'s `inbox.test.ts` so every adapter runs
 * it; registered by `runHttpConformance`. Stored rows are read through the Store port.
 */
import { afterAll, afterEach, beforeAll, describe, expect} from 'vitest';
import { describeFor, kitIt } from './http-kit.js';
import type { HttpConformanceOptions } from './http-conformance-checks.js';
import { expectError, startHttpWorld, type HttpWorld } from './http-world.js';

const SEED_BODY = {
  type: 'derived_output.review',
  title: '候选摘要待确认',
  payload: { derived_output_id: 'dout_001', suggested_action: 'review' },
  source_session_id: 'sess_001',
};
const SEED_NOTE = '已记录。稍后由应用层决定是否写入主会话。';

interface Item {
  id: string;
  status: string;
  sender_account_id: string;
  created_at: number;
  [k: string]: unknown;
}

/** Registers the Project Inbox suite for the adapter `kit` starts. */
export function projectInboxSuite(kit: HttpConformanceOptions): void {
  const it = kitIt(kit, 'Project Inbox over HTTP');
  describe('Project Inbox over HTTP', () => {
    let h: HttpWorld;
    beforeAll(async () => {
      h = await startHttpWorld(kit);
    });
    afterEach(() => {
      h.clock.unfreeze();
    });
    afterAll(async () => {
      await h?.close();
    });

    const create = (as: string, body: unknown, project = 'proj_main') => h.request('POST', `/projects/${project}/inbox`, { as, body });
    const decide = (as: string, id: string, body: unknown, project = 'proj_main') => h.request('PATCH', `/projects/${project}/inbox/${id}`, { as, body });
    async function itemIn(status: string, project = 'proj_main', as = 'acc_deriver'): Promise<Item> {
      const res = await create(as, { type: 'probe' }, project);
      expect(res.status).toBe(201);
      const decision = { pending: null, accepted: 'accept', rejected: 'reject', archived: 'archive' }[status];
      if (!decision) return res.body.item;
      const d = await decide('acc_owner', res.body.item.id, { decision }, project);
      expect(d.status).toBe(200);
      return d.body.item;
    }
    /** Every Session, Floor and Page of the world, by id (read through the Store port). */
    const sessionRows = async () => {
      const sessions = [...await h.store.listSessions('ws_demo', {}), ...await h.store.listSessions('ws_other', {})].sort((x, y) => (x.id < y.id ? -1 : 1));
      const floors = (await Promise.all(sessions.map((s) => h.store.listFloors(s.id)))).flat().sort((x, y) => (x.id < y.id ? -1 : 1));
      const pages = (await Promise.all(floors.map((f) => h.store.listPages(f.id)))).flat().sort((x, y) => (x.id < y.id ? -1 : 1));
      return JSON.stringify([sessions, floors, pages]);
    };
    /** Every project of the world. */
    const projectIds = async () => [...await h.store.listProjectsForAccount('ws_demo', 'acc_owner'), ...await h.store.listProjectsForAccount('ws_other', 'acc_stranger')].map((p) => p.id);
    /** Operation Log rows, Project Events and inbox items of one project, or of every project (read through the Store port). */
    const logsOf = async (project_id?: string) => (await Promise.all((project_id ? [project_id] : await projectIds()).map((id) => h.store.listOperationLogs({ project_id: id, limit: 1000 })))).flat();
    const eventsOf = async (project_id?: string) => (await Promise.all((project_id ? [project_id] : await projectIds()).map((id) => h.store.listProjectEvents({ project_id: id, after: 0, limit: 1000 })))).flat();
    const itemsOf = async (project_id?: string) => (await Promise.all((project_id ? [project_id] : await projectIds()).map((id) => h.store.listInboxItems({ project_id: id, limit: 1000 })))).flat();
    const utf8Bytes = (text: string) => new TextEncoder().encode(text).length;

    it.both('runs the seed page flow: the deriver files, the owner accepts, the session is untouched', async () => {
      const sessionsBefore = await sessionRows();
      const created = await create('acc_deriver', SEED_BODY);
      expect(created.status).toBe(201);
      expect(Object.keys(created.body)).toEqual(['item']);
      const item = created.body.item as Item;
      expect(item).toEqual({
        id: expect.stringMatching(/^pinbox_[A-Za-z0-9_-]{21}$/),
        workspace_id: 'ws_demo',
        project_id: 'proj_main',
        account_id: 'acc_owner',
        sender_account_id: 'acc_deriver',
        type: 'derived_output.review',
        title: '候选摘要待确认',
        payload: { derived_output_id: 'dout_001', suggested_action: 'review' },
        source_event_id: null,
        source_session_id: 'sess_001',
        source_floor_id: null,
        source_page_id: null,
        status: 'pending',
        decided_by_account_id: null,
        decided_at: null,
        created_at: expect.any(Number),
        updated_at: item.created_at,
      });
      expect(Number.isInteger(item.created_at)).toBe(true);

      const got = await h.request('GET', `/projects/proj_main/inbox/${item.id}`, { as: 'acc_deriver' });
      expect(got.status).toBe(200);
      expect(got.body).toEqual({ item });

      const accepted = await decide('acc_owner', item.id, { decision: 'accept', note: SEED_NOTE });
      expect(accepted.status).toBe(200);
      expect(Object.keys(accepted.body)).toEqual(['item']);
      expect(accepted.body.item).toEqual({
        ...item,
        status: 'accepted',
        decided_by_account_id: 'acc_owner',
        decided_at: expect.any(Number),
        updated_at: accepted.body.item.decided_at,
      });
      expect(accepted.body.item.decided_at).toBeGreaterThanOrEqual(item.created_at);
      expect(await sessionRows()).toBe(sessionsBefore);

      const stored = await h.store.getInboxItem('proj_main', item.id);
      expect({ status: stored!.status, decided_by_account_id: stored!.decided_by_account_id }).toEqual({ status: 'accepted', decided_by_account_id: 'acc_owner' });
      const log = (await logsOf('proj_main')).find((l) => l.target_id === item.id && l.action === 'project_inbox_item.decide');
      expect(log!.metadata).toEqual({ decision: 'accept', note: SEED_NOTE });
      const events = (await eventsOf()).filter((e) => e.type.startsWith('project_inbox.'));
      for (const e of events) expect(JSON.stringify(e.payload)).not.toContain('已记录');
    });

    it('writes one Operation Log row and one Project Event per write, tied to the request id', async () => {
      const before = await h.inboxRows();
      h.clock.freeze(1_800_000_000_000);
      const created = await h.request('POST', '/projects/proj_main/inbox', { as: 'acc_deriver', body: { ...SEED_BODY, source_page_id: h.pages.A2.id, source_session_id: undefined } });
      expect(created.status).toBe(201);
      const id = created.body.item.id as string;
      const createReq = created.headers.get('x-request-id')!;
      expect(await h.inboxRows()).toEqual({ items: before.items + 1, logs: before.logs + 1, events: before.events + 1 });
      const [log] = (await logsOf('proj_main')).filter((l) => l.target_id === id);
      expect(log).toEqual({
        id: expect.stringMatching(/^oplog_/), workspace_id: 'ws_demo', project_id: 'proj_main', actor_account_id: 'acc_deriver',
        action: 'project_inbox_item.create', target_type: 'project_inbox_item', target_id: id, request_id: createReq,
        metadata: { payload_byte_count: utf8Bytes(JSON.stringify(SEED_BODY.payload)) }, created_at: created.body.item.created_at,
      });
      const [event] = (await eventsOf('proj_main')).filter((e) => e.operation_log_id === log!.id);
      expect(event).toEqual({
        id: expect.stringMatching(/^evt_/), workspace_id: 'ws_demo', project_id: 'proj_main', sequence: expect.any(Number),
        type: 'project_inbox.item.created', actor_account_id: 'acc_deriver', session_id: 'sess_001', floor_id: h.floors.A.id, page_id: h.pages.A2.id,
        operation_log_id: log!.id, correlation_id: createReq, causation_event_id: null, created_at: created.body.item.created_at,
        visibility: 'owner', source: 'api',
        payload: {
          inbox_item_id: id, type: 'derived_output.review', title: '候选摘要待确认', status: 'pending', sender_account_id: 'acc_deriver',
          source_event_id: null, source_session_id: 'sess_001', source_floor_id: h.floors.A.id, source_page_id: h.pages.A2.id,
        },
      });

      const decided = await decide('acc_owner', id, { decision: 'reject', note: '  not now  ' });
      h.clock.unfreeze();
      const decideReq = decided.headers.get('x-request-id')!;
      expect(await h.inboxRows()).toEqual({ items: before.items + 1, logs: before.logs + 2, events: before.events + 2 });
      const [dlog] = (await logsOf('proj_main')).filter((l) => l.target_id === id && l.action === 'project_inbox_item.decide');
      expect(dlog!.request_id).toBe(decideReq);
      expect(dlog!.metadata).toEqual({ decision: 'reject', note: 'not now' });
      const [devent] = (await eventsOf('proj_main')).filter((e) => e.operation_log_id === dlog!.id);
      expect(devent!.type).toBe('project_inbox.item.rejected');
      expect(devent!.correlation_id).toBe(decideReq);
      expect(devent!.sequence).toBe(event!.sequence + 1);
      expect(devent!.payload).toEqual({
        inbox_item_id: id, type: 'derived_output.review', status: 'rejected', decision: 'reject', sender_account_id: 'acc_deriver',
        decided_by_account_id: 'acc_owner', source_event_id: null, source_session_id: 'sess_001', source_floor_id: h.floors.A.id, source_page_id: h.pages.A2.id,
      });

      // the owner reads the same rows through the Operation Log route; a deriver may not
      const logs = await h.request('GET', '/projects/proj_main/operation-logs?limit=200', { as: 'acc_owner' });
      expect(logs.status).toBe(200);
      expect(logs.body.items.filter((l: { target_id: string }) => l.target_id === id).map((l: { action: string }) => l.action).sort())
        .toEqual(['project_inbox_item.create', 'project_inbox_item.decide']);
      expectError(await h.request('GET', '/projects/proj_main/operation-logs', { as: 'acc_deriver' }), 403);
    });

    it('accepts the seed page\'s full request body shape (explicit null sources, a source event)', async () => {
      const seedRequest = {
        type: 'derived_output.review',
        title: '候选摘要待确认',
        payload: { derived_output_id: 'dout_001', suggested_action: 'review' },
        source_event_id: 'evt_001',
        source_session_id: 'sess_001',
        source_floor_id: null,
        source_page_id: null,
      };
      // evt_001 is the page's illustrative id: not an event of this project → 409, nothing written
      const before = await h.inboxRows();
      expectError(await create('acc_deriver', seedRequest), 409, 'project_inbox_source_scope_mismatch');
      expect(await h.inboxRows()).toEqual(before);
      const [event] = await h.store.listProjectEvents({ project_id: 'proj_main', after: 0, limit: 1 });
      const res = await create('acc_deriver', { ...seedRequest, source_event_id: event!.id });
      expect(res.status).toBe(201);
      expect(res.body.item).toMatchObject({ source_event_id: event!.id, source_session_id: 'sess_001', source_floor_id: null, source_page_id: null });
      const [row] = (await eventsOf()).filter((e) => e.correlation_id === res.headers.get('x-request-id'));
      expect(row!.causation_event_id).toBe(event!.id);
    });

    it('never stores the payload in an event or a log row', async () => {
      const marker = 'PAYLOAD-MARKER-c0ffee';
      const res = await create('acc_deriver', { type: 't', payload: { secret: marker, nested: [marker] } });
      await decide('acc_owner', res.body.item.id, { decision: 'accept' });
      await decide('acc_owner', res.body.item.id, { decision: 'archive' });
      expect((await eventsOf()).filter((e) => JSON.stringify(e.payload).includes(marker))).toHaveLength(0);
      expect((await logsOf()).filter((l) => JSON.stringify(l.metadata).includes(marker))).toHaveLength(0);
      expect((await itemsOf()).filter((i) => JSON.stringify(i.payload).includes(marker))).toHaveLength(1);
    });

    describeFor(kit, 'behaviour')('role table', () => {
      it('owner: reads all, creates, decides', async () => {
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
      });

      it('deriver: reads only what it sent, creates, may not decide', async () => {
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
      });

      it('observer: may not read, create or decide', async () => {
        const { project_id } = await h.newProject();
        const item = await itemIn('pending', project_id);
        expectError(await h.request('GET', `/projects/${project_id}/inbox`, { as: 'acc_observer' }), 403, 'project_inbox_read_denied');
        expectError(await h.request('GET', `/projects/${project_id}/inbox/${item.id}`, { as: 'acc_observer' }), 403, 'project_inbox_read_denied');
        expectError(await create('acc_observer', { type: 't' }, project_id), 403, 'project_inbox_write_denied');
        expectError(await decide('acc_observer', item.id, { decision: 'archive' }, project_id), 403, 'project_inbox_decide_denied');
      });

      it('non-member: nothing is visible', async () => {
        const { project_id } = await h.newProject();
        const item = await itemIn('pending', project_id);
        for (const as of ['acc_outsider', 'acc_stranger']) {
          expectError(await h.request('GET', `/projects/${project_id}/inbox`, { as }), 404, 'project_not_found');
          expectError(await h.request('GET', `/projects/${project_id}/inbox/${item.id}`, { as }), 404, 'project_not_found');
          expectError(await create(as, { type: 't' }, project_id), 404, 'project_not_found');
          expectError(await decide(as, item.id, { decision: 'accept' }, project_id), 404, 'project_not_found');
          expectError(await h.request('GET', `/projects/${project_id}/events`, { as }), 404, 'project_not_found');
        }
      });
    });

    describeFor(kit, 'behaviour')('transition table', () => {
      const OUTCOME: Record<string, string> = {
        'pending/accept': 'accepted', 'pending/reject': 'rejected', 'pending/archive': 'archived',
        'accepted/accept': '409', 'accepted/reject': '409', 'accepted/archive': 'archived',
        'rejected/accept': '409', 'rejected/reject': '409', 'rejected/archive': 'archived',
        'archived/accept': '409', 'archived/reject': '409', 'archived/archive': 'noop',
      };
      const cells = Object.entries(OUTCOME).map(([k, v]) => [...k.split('/'), v] as [string, string, string]);

      it.each(cells)('%s + %s → %s', async (from, decision, outcome) => {
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
      });
    });

    describeFor(kit, 'behaviour')('cursor paging', () => {
      it('never skips or repeats rows that share one created_at', async () => {
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
      });

      it('orders mixed timestamps created_at DESC, id DESC and pages across the boundaries', async () => {
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
      });

      it('filters by status, exact type, sender and source session', async () => {
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
      });
    });

    describeFor(kit, 'behaviour')('payload limit (262,144 bytes of compact UTF-8 JSON)', () => {
      // [name, payload of exactly 262,144 bytes, payload of 262,145 bytes]
      const cases: [string, unknown, unknown][] = [
        ['an ASCII string', 'a'.repeat(262_142), 'a'.repeat(262_143)],
        ['an ASCII object', { k: 'a'.repeat(262_136) }, { k: 'a'.repeat(262_137) }],
        ['2-byte é', { k: 'é'.repeat(131_068) }, { k: 'é'.repeat(131_068) + 'a' }],
        ['an é string', 'é'.repeat(131_071), 'é'.repeat(131_071) + 'a'],
        ['4-byte 😀', { k: '😀'.repeat(65_534) }, { kk: '😀'.repeat(65_534) }],
        ['3-byte 中 and escapes', { k: '中'.repeat(87_378) + '"' }, { k: '中'.repeat(87_378) + '"a' }],
      ];

      it.each(cases)('%s: 262,144 bytes → 201, 262,145 bytes → 413 with nothing written', async (_, ok, tooBig) => {
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
      });

      it('payloads pass through untouched: key order, unicode, NUL, numbers, null → {}', async () => {
        const payload = { z: 1, a: [1.5, -0.25, 1e21, true, null], 'ü😀': 'a\u0000b', nested: { b: { derivedOutputId: 'x' }, a: '' } };
        const res = await create('acc_deriver', { type: 't', payload });
        expect(res.status).toBe(201);
        const got = await h.request('GET', `/projects/proj_main/inbox/${res.body.item.id}`, { as: 'acc_owner' });
        expect(JSON.stringify(got.body.item.payload)).toBe(JSON.stringify(payload));
        expect((await create('acc_deriver', { type: 't', payload: null })).body.item.payload).toEqual({});
        expect((await create('acc_deriver', { type: 't' })).body.item.payload).toEqual({});
        expect((await create('acc_deriver', { type: 't', payload: [] })).body.item.payload).toEqual([]);
        expect((await create('acc_deriver', { type: 't', payload: 0 })).body.item.payload).toBe(0);
      });
    });

    describeFor(kit, 'behaviour')('Project Events page', () => {
      it('shows the created and decided events with gap-free sequences, only the visible ones per role', async () => {
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
      });

      it('a deriver demoted to observer no longer sees the inbox events of items it sent', async () => {
        const { project_id } = await h.newProject();
        await itemIn('pending', project_id, 'acc_deriver2');
        const demoted = await h.request('POST', `/projects/${project_id}/members`, { as: 'acc_owner', body: { account_id: 'acc_deriver2', role: 'observer' } });
        expect(demoted.status).toBe(201);
        expectError(await h.request('GET', `/projects/${project_id}/inbox`, { as: 'acc_deriver2' }), 403, 'project_inbox_read_denied');
        const events = await h.request('GET', `/projects/${project_id}/events`, { as: 'acc_deriver2' });
        expect(events.status).toBe(200);
        expect(events.body.items.filter((e: { type: string }) => e.type.startsWith('project_inbox.'))).toEqual([]);
      });
    });

    describeFor(kit, 'behaviour')('concurrency', () => {
      it('concurrent accept/reject on one item: exactly one wins, the others see the new status (409)', async () => {
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
      });

      it('concurrent archives: all answer 200 archived, exactly one writes', async () => {
        const item = await itemIn('accepted');
        const results = await Promise.all(Array.from({ length: 6 }, () => decide('acc_owner', item.id, { decision: 'archive' })));
        for (const r of results) {
          expect(r.status).toBe(200);
          expect(r.body.item.status).toBe('archived');
        }
        expect((await eventsOf()).filter((e) => e.type === 'project_inbox.item.archived' && JSON.stringify(e.payload).includes(item.id))).toHaveLength(1);
      });

      it('concurrent creates get unique, gap-free event sequences', async () => {
        const { project_id } = await h.newProject();
        const results = await Promise.all(Array.from({ length: 20 }, (_, i) => create(i % 2 ? 'acc_deriver' : 'acc_owner', { type: `c${i}` }, project_id)));
        for (const r of results) expect(r.status).toBe(201);
        const seqs = (await eventsOf(project_id)).map((e) => e.sequence);
        expect(seqs).toEqual(seqs.map((_, i) => i + 1));
        expect(await itemsOf(project_id)).toHaveLength(20);
      });
    });
  });
}
