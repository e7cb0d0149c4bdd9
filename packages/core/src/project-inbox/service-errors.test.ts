/**
 * ProjectInboxService over the in-memory reference store, with a frozen clock and sequential ids
 * (the world of `test-support.ts`): every row of the error table, source resolution (page → floor
 * → session), the role table and the check order. Spec: project-inbox.md.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { MAX_PAYLOAD_BYTES } from '../validation.js';
import { INBOX_DECISIONS } from './transition.js';
import { makeWorld, rejects, inboxRows, writesNothing, SEED_BODY, itemInOf, type World } from './test-support.js';
import type { InboxItemStatus } from '../records.js';

let w: World;
beforeEach(async () => {
  w = await makeWorld();
});
const itemIn = (status: InboxItemStatus, sender?: string) => itemInOf(w, status, sender);

describe('error table: 400', () => {
  it('400 validation_error: body does not match the schema, with one detail per issue; nothing written', async () => {
    const c = () => w.ctx('acc_deriver');
    const bad: unknown[] = [
      {},
      { type: '' },
      { type: '   ' },
      { type: 'x'.repeat(129) },
      { type: '😀'.repeat(129) },
      { type: 'a\ud83d' },
      { type: 42 },
      { type: 't', title: 'x'.repeat(201) },
      { type: 't', title: 'bad \udc00' },
      { type: 't', extra: 1 },
      { type: 't', sourceSessionId: 'sess_001' },
      { type: 't', source_session_id: '' },
      { type: 't', source_session_id: 'has space' },
      { type: 't', source_page_id: 7 },
    ];
    for (const body of bad) {
      await writesNothing(w, async () => {
        const e = await rejects(w.inbox.create(c(), 'proj_main', body as never), 'validation_error');
        expect(e.details.length).toBeGreaterThan(0);
      });
    }
    const e = await rejects(w.inbox.create(c(), 'proj_main', { type: '', extra: 1, title: 5 } as never), 'validation_error');
    expect(e.details.length).toBeGreaterThanOrEqual(3);
  });

  it('400 validation_error: decision body and list query', async () => {
    const item = await itemIn('pending');
    for (const body of [{}, { decision: 'approve' }, { decision: 'accept', note: 'x'.repeat(501) }, { decision: 'accept', extra: true }, { decision: 'accept', note: 5 }]) {
      await writesNothing(w, () => rejects(w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, body as never), 'validation_error'));
    }
    for (const query of [{ limit: 0 }, { limit: 201 }, { limit: '0' }, { limit: '201' }, { limit: 'ten' }, { limit: '-1' }, { limit: 1.5 }, { status: 'done' }, { extra: 'x' }]) {
      await rejects(w.inbox.list(w.ctx('acc_owner'), 'proj_main', query as never), 'validation_error');
    }
    expect((await w.inbox.list(w.ctx('acc_owner'), 'proj_main', { limit: 1 })).items).toHaveLength(1);
    expect((await w.inbox.list(w.ctx('acc_owner'), 'proj_main', { limit: '200' })).items).toHaveLength(1);
  });

  it('400 invalid_cursor: garbage', async () => {
    for (const cursor of ['garbage', 'eyJ2IjoxfQ', 'AAAA']) {
      await rejects(w.inbox.list(w.ctx('acc_owner'), 'proj_main', { cursor }), 'invalid_cursor');
    }
  });

  it('400 project_inbox_payload_invalid: BigInt, cycles, functions, undefined; nothing written', async () => {
    const cycle: Record<string, unknown> = {};
    cycle.me = cycle;
    for (const payload of [1n, { n: 2n }, cycle, () => 1, { f: () => 1 }, { u: undefined }, [undefined], Symbol('s'), { x: Number.NaN }]) {
      await writesNothing(w, () => rejects(w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { type: 't', payload }), 'project_inbox_payload_invalid'));
    }
  });
});

describe('error table: 403 and 404', () => {
  it('403 project_inbox_read_denied: the observer lists or gets', async () => {
    const item = await itemIn('pending');
    await rejects(w.inbox.list(w.ctx('acc_observer'), 'proj_main'), 'project_inbox_read_denied');
    await rejects(w.inbox.get(w.ctx('acc_observer'), 'proj_main', item.id), 'project_inbox_read_denied');
  });

  it('403 project_inbox_write_denied: the observer creates; nothing written', async () => {
    await writesNothing(w, () => rejects(w.inbox.create(w.ctx('acc_observer'), 'proj_main', SEED_BODY), 'project_inbox_write_denied'));
  });

  it('403 project_inbox_decide_denied: deriver (even the sender) and observer decide; nothing written', async () => {
    const item = await itemIn('pending');
    for (const who of ['acc_deriver', 'acc_deriver2', 'acc_observer']) {
      for (const decision of INBOX_DECISIONS) {
        await writesNothing(w, () => rejects(w.inbox.decide(w.ctx(who), 'proj_main', item.id, { decision }), 'project_inbox_decide_denied'));
      }
    }
    expect(w.mem.raw().items.get(item.id)!.status).toBe('pending');
  });

  it('404 project_not_found: non-member, unknown project and another tenant\'s project answer identically', async () => {
    const item = await itemIn('pending');
    const attempts: [string, string][] = [
      ['acc_outsider', 'proj_main'],
      ['acc_stranger', 'proj_main'],
      ['acc_owner', 'proj_missing'],
      ['acc_owner', 'proj_foreign'],
      ['acc_deriver', 'proj_side'],
    ];
    const seen: string[] = [];
    for (const [who, pid] of attempts) {
      const errors = [
        await rejects(w.inbox.list(w.ctx(who), pid), 'project_not_found'),
        await rejects(w.inbox.get(w.ctx(who), pid, item.id), 'project_not_found'),
        await rejects(w.inbox.create(w.ctx(who), pid, SEED_BODY), 'project_not_found'),
        await rejects(w.inbox.decide(w.ctx(who), pid, item.id, { decision: 'accept' }), 'project_not_found'),
      ];
      for (const e of errors) {
        seen.push(JSON.stringify({ code: e.code, message: e.message, details: e.details }));
        expect(e.message).not.toContain(pid);
      }
    }
    expect(new Set(seen).size).toBe(1);
    expect(w.mem.raw().items.get(item.id)!.status).toBe('pending');
    expect(inboxRows(w)).toEqual({ items: 1, logs: 1, events: 1 });
  });

  it('404 project_inbox_item_not_found: missing, of another project, or (deriver) not its own — identical', async () => {
    const mine = await itemIn('pending', 'acc_deriver');
    const theirs = await itemIn('pending', 'acc_deriver2');
    const owners = await itemIn('pending', 'acc_owner');
    const side = await w.inbox.create(w.ctx('acc_owner'), 'proj_side', { type: 't' });
    const errors = [
      await rejects(w.inbox.get(w.ctx('acc_owner'), 'proj_main', 'pinbox_missing'), 'project_inbox_item_not_found'),
      await rejects(w.inbox.get(w.ctx('acc_owner'), 'proj_main', side.id), 'project_inbox_item_not_found'),
      await rejects(w.inbox.get(w.ctx('acc_deriver'), 'proj_main', theirs.id), 'project_inbox_item_not_found'),
      await rejects(w.inbox.get(w.ctx('acc_deriver'), 'proj_main', owners.id), 'project_inbox_item_not_found'),
      await rejects(w.inbox.get(w.ctx('acc_deriver'), 'proj_main', 'pinbox_missing'), 'project_inbox_item_not_found'),
      await rejects(w.inbox.decide(w.ctx('acc_owner'), 'proj_main', 'pinbox_missing', { decision: 'accept' }), 'project_inbox_item_not_found'),
      await rejects(w.inbox.decide(w.ctx('acc_owner'), 'proj_main', side.id, { decision: 'accept' }), 'project_inbox_item_not_found'),
    ];
    expect(new Set(errors.map((e) => JSON.stringify([e.code, e.message, e.details]))).size).toBe(1);
    expect(await w.inbox.get(w.ctx('acc_deriver'), 'proj_main', mine.id)).toEqual(mine);
    expect(w.mem.raw().items.get(side.id)!.status).toBe('pending');
  });

  it('404 session_not_found / floor_not_found / page_not_found: missing sources; nothing written', async () => {
    const c = () => w.ctx('acc_deriver');
    await writesNothing(w, () => rejects(w.inbox.create(c(), 'proj_main', { type: 't', source_session_id: 'sess_missing' }), 'session_not_found'));
    await writesNothing(w, () => rejects(w.inbox.create(c(), 'proj_main', { type: 't', source_floor_id: 'floor_missing' }), 'floor_not_found'));
    await writesNothing(w, () => rejects(w.inbox.create(c(), 'proj_main', { type: 't', source_page_id: 'page_missing' }), 'page_not_found'));
  });

  it('404 for sources in another workspace (treated as missing, no hint of other tenants)', async () => {
    const c = () => w.ctx('acc_deriver');
    const s = await rejects(w.inbox.create(c(), 'proj_main', { type: 't', source_session_id: 'sess_foreign' }), 'session_not_found');
    const f = await rejects(w.inbox.create(c(), 'proj_main', { type: 't', source_floor_id: w.floors.F.id }), 'floor_not_found');
    const p = await rejects(w.inbox.create(c(), 'proj_main', { type: 't', source_page_id: w.pages.F1.id }), 'page_not_found');
    const sMissing = await rejects(w.inbox.create(c(), 'proj_main', { type: 't', source_session_id: 'sess_nope' }), 'session_not_found');
    const fMissing = await rejects(w.inbox.create(c(), 'proj_main', { type: 't', source_floor_id: 'floor_nope' }), 'floor_not_found');
    const pMissing = await rejects(w.inbox.create(c(), 'proj_main', { type: 't', source_page_id: 'page_nope' }), 'page_not_found');
    expect([s.message, f.message, p.message]).toEqual([sMissing.message, fMissing.message, pMissing.message]);
    expect(inboxRows(w)).toEqual({ items: 0, logs: 0, events: 0 });
  });
});

describe('error table: 409 and 413', () => {
  it('409 project_archived on create and decide; reads still work', async () => {
    const item = await itemIn('pending');
    await w.platform.archiveProject(w.ctx('acc_owner'), 'proj_main');
    await writesNothing(w, async () => {
      await rejects(w.inbox.create(w.ctx('acc_owner'), 'proj_main', { type: 't' }), 'project_archived');
      await rejects(w.inbox.create(w.ctx('acc_deriver'), 'proj_main', SEED_BODY), 'project_archived');
      for (const decision of INBOX_DECISIONS) {
        await rejects(w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision }), 'project_archived');
      }
    });
    expect((await w.inbox.list(w.ctx('acc_owner'), 'proj_main')).items.map((i) => i.id)).toEqual([item.id]);
    expect(await w.inbox.get(w.ctx('acc_owner'), 'proj_main', item.id)).toEqual(item);
    expect(await w.inbox.get(w.ctx('acc_deriver'), 'proj_main', item.id)).toEqual(item);
  });

  it('409 project_inbox_invalid_transition: decided items cannot be accepted or rejected; nothing written', async () => {
    for (const from of ['accepted', 'rejected', 'archived'] as const) {
      const item = await itemIn(from);
      for (const decision of ['accept', 'reject'] as const) {
        await writesNothing(w, () => rejects(w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision }), 'project_inbox_invalid_transition'));
      }
    }
  });

  it('409 project_inbox_source_scope_mismatch: sources outside this project or inconsistent; nothing written', async () => {
    const c = () => w.ctx('acc_deriver');
    const { A, B, C, S, L } = w.floors;
    const { A1, B1, C1, S1, L1 } = w.pages;
    const mismatches: Record<string, unknown>[] = [
      { source_page_id: A1.id, source_floor_id: B.id }, // page of another floor, same session
      { source_page_id: A1.id, source_floor_id: C.id }, // page of another floor, other session
      { source_floor_id: A.id, source_session_id: 'sess_002' }, // floor of another session
      { source_page_id: C1.id, source_session_id: 'sess_001' }, // page of another session
      { source_page_id: B1.id, source_floor_id: B.id, source_session_id: 'sess_002' },
      { source_session_id: 'sess_side' }, // session of another project, same workspace
      { source_floor_id: S.id },
      { source_page_id: S1.id },
      { source_session_id: 'sess_loose' }, // session outside any project
      { source_floor_id: L.id },
      { source_page_id: L1.id },
      { source_event_id: w.events.side.id }, // event of another project
      { source_event_id: 'evt_missing' }, // missing event
      { source_event_id: w.events.foreign.id }, // event of another tenant
    ];
    for (const sources of mismatches) {
      await writesNothing(w, () => rejects(w.inbox.create(c(), 'proj_main', { type: 't', ...sources }), 'project_inbox_source_scope_mismatch'));
    }
  });

  it('413 project_inbox_payload_too_large', async () => {
    await writesNothing(w, () =>
      rejects(w.inbox.create(w.ctx('acc_owner'), 'proj_main', { type: 't', payload: 'x'.repeat(MAX_PAYLOAD_BYTES) }), 'project_inbox_payload_too_large'));
  });
});

describe('source resolution: page → floor → session', () => {
  const c = () => w.ctx('acc_deriver');
  it('a page fills in its floor and session', async () => {
    const item = await w.inbox.create(c(), 'proj_main', { type: 't', source_page_id: w.pages.A2.id });
    expect(item).toMatchObject({ source_page_id: w.pages.A2.id, source_floor_id: w.floors.A.id, source_session_id: 'sess_001', source_event_id: null });
    const event = w.mem.raw().events.at(-1)!;
    expect(event).toMatchObject({ session_id: 'sess_001', floor_id: w.floors.A.id, page_id: w.pages.A2.id });
    expect(event.payload).toMatchObject({ source_page_id: w.pages.A2.id, source_floor_id: w.floors.A.id, source_session_id: 'sess_001' });
  });

  it('a floor fills in its session', async () => {
    const item = await w.inbox.create(c(), 'proj_main', { type: 't', source_floor_id: w.floors.C.id });
    expect(item).toMatchObject({ source_page_id: null, source_floor_id: w.floors.C.id, source_session_id: 'sess_002' });
  });

  it('a session alone, and consistent page + floor + session + event', async () => {
    expect(await w.inbox.create(c(), 'proj_main', { type: 't', source_session_id: 'sess_002' })).toMatchObject({
      source_session_id: 'sess_002', source_floor_id: null, source_page_id: null,
    });
    const item = await w.inbox.create(c(), 'proj_main', {
      type: 't', source_page_id: w.pages.B1.id, source_floor_id: w.floors.B.id, source_session_id: 'sess_001', source_event_id: w.events.main.id,
    });
    expect(item).toMatchObject({ source_page_id: w.pages.B1.id, source_floor_id: w.floors.B.id, source_session_id: 'sess_001', source_event_id: w.events.main.id });
  });

  it('an inbox event of this project is a valid source', async () => {
    const first = await w.inbox.create(c(), 'proj_main', { type: 't' });
    const created = w.mem.raw().events.find((e) => e.payload.inbox_item_id === first.id)!;
    const second = await w.inbox.create(c(), 'proj_main', { type: 't', source_event_id: created.id });
    expect(second.source_event_id).toBe(created.id);
  });

  it('resolves in order: a missing page is reported before a missing floor or session', async () => {
    await rejects(w.inbox.create(c(), 'proj_main', { type: 't', source_page_id: 'page_x', source_floor_id: 'floor_x', source_session_id: 'sess_x' }), 'page_not_found');
    await rejects(w.inbox.create(c(), 'proj_main', { type: 't', source_floor_id: 'floor_x', source_session_id: 'sess_x' }), 'floor_not_found');
    await rejects(w.inbox.create(c(), 'proj_main', { type: 't', source_page_id: w.pages.A1.id, source_floor_id: 'floor_x' }), 'floor_not_found');
    await rejects(w.inbox.create(c(), 'proj_main', { type: 't', source_page_id: w.pages.A1.id, source_session_id: 'sess_x' }), 'session_not_found');
  });
});

describe('role table', () => {
  it('owner: reads all, creates, decides', async () => {
    const d = await itemIn('pending', 'acc_deriver');
    const d2 = await itemIn('pending', 'acc_deriver2');
    const o = await w.inbox.create(w.ctx('acc_owner'), 'proj_main', { type: 't' });
    const page = await w.inbox.list(w.ctx('acc_owner'), 'proj_main');
    expect(page.items.map((i) => i.id).sort()).toEqual([d.id, d2.id, o.id].sort());
    for (const i of [d, d2, o]) expect(await w.inbox.get(w.ctx('acc_owner'), 'proj_main', i.id)).toEqual(i);
    expect((await w.inbox.decide(w.ctx('acc_owner'), 'proj_main', d.id, { decision: 'accept' })).status).toBe('accepted');
  });

  it('deriver: reads only what it sent, creates, may not decide', async () => {
    const mine = await itemIn('pending', 'acc_deriver');
    const theirs = await itemIn('pending', 'acc_deriver2');
    const owners = await w.inbox.create(w.ctx('acc_owner'), 'proj_main', { type: 't' });
    expect((await w.inbox.list(w.ctx('acc_deriver'), 'proj_main')).items.map((i) => i.id)).toEqual([mine.id]);
    expect((await w.inbox.list(w.ctx('acc_deriver'), 'proj_main', { sender_account_id: 'acc_deriver' })).items.map((i) => i.id)).toEqual([mine.id]);
    for (const sender of ['acc_deriver2', 'acc_owner', 'acc_nobody']) {
      expect(await w.inbox.list(w.ctx('acc_deriver'), 'proj_main', { sender_account_id: sender })).toEqual({ items: [], next_cursor: null });
    }
    expect(await w.inbox.get(w.ctx('acc_deriver'), 'proj_main', mine.id)).toEqual(mine);
    await rejects(w.inbox.get(w.ctx('acc_deriver'), 'proj_main', theirs.id), 'project_inbox_item_not_found');
    await rejects(w.inbox.get(w.ctx('acc_deriver'), 'proj_main', owners.id), 'project_inbox_item_not_found');
    await rejects(w.inbox.decide(w.ctx('acc_deriver'), 'proj_main', mine.id, { decision: 'accept' }), 'project_inbox_decide_denied');
  });

  it('observer: may not read, create or decide', async () => {
    const item = await itemIn('pending');
    await rejects(w.inbox.list(w.ctx('acc_observer'), 'proj_main'), 'project_inbox_read_denied');
    await rejects(w.inbox.get(w.ctx('acc_observer'), 'proj_main', item.id), 'project_inbox_read_denied');
    await rejects(w.inbox.create(w.ctx('acc_observer'), 'proj_main', { type: 't' }), 'project_inbox_write_denied');
    await rejects(w.inbox.decide(w.ctx('acc_observer'), 'proj_main', item.id, { decision: 'archive' }), 'project_inbox_decide_denied');
  });

  it('non-member: nothing is visible (404 everywhere)', async () => {
    const item = await itemIn('pending');
    for (const who of ['acc_outsider', 'acc_stranger']) {
      await rejects(w.inbox.list(w.ctx(who), 'proj_main'), 'project_not_found');
      await rejects(w.inbox.get(w.ctx(who), 'proj_main', item.id), 'project_not_found');
      await rejects(w.inbox.create(w.ctx(who), 'proj_main', { type: 't' }), 'project_not_found');
      await rejects(w.inbox.decide(w.ctx(who), 'proj_main', item.id, { decision: 'accept' }), 'project_not_found');
    }
  });

  it('a removed member loses access; a demoted deriver can no longer read or create', async () => {
    const item = await itemIn('pending', 'acc_deriver');
    await w.platform.addMember(w.ctx('acc_owner'), 'proj_main', { account_id: 'acc_deriver', role: 'observer' });
    await rejects(w.inbox.get(w.ctx('acc_deriver'), 'proj_main', item.id), 'project_inbox_read_denied');
    await rejects(w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { type: 't' }), 'project_inbox_write_denied');
    await w.platform.removeMember(w.ctx('acc_owner'), 'proj_main', 'acc_deriver');
    await rejects(w.inbox.get(w.ctx('acc_deriver'), 'proj_main', item.id), 'project_not_found');
  });
});

describe('check order', () => {
  it('a non-member of an archived project gets 404, not 409', async () => {
    const item = await itemIn('pending');
    await w.platform.archiveProject(w.ctx('acc_owner'), 'proj_main');
    await rejects(w.inbox.create(w.ctx('acc_outsider'), 'proj_main', { type: 't' }), 'project_not_found');
    await rejects(w.inbox.decide(w.ctx('acc_outsider'), 'proj_main', item.id, { decision: 'accept' }), 'project_not_found');
    await rejects(w.inbox.create(w.ctx('acc_stranger'), 'proj_main', { type: 't' }), 'project_not_found');
  });

  it('role checks come before item lookups: deriver/observer deciding a missing item get 403', async () => {
    await rejects(w.inbox.decide(w.ctx('acc_deriver'), 'proj_main', 'pinbox_missing', { decision: 'accept' }), 'project_inbox_decide_denied');
    await rejects(w.inbox.decide(w.ctx('acc_observer'), 'proj_main', 'pinbox_missing', { decision: 'reject' }), 'project_inbox_decide_denied');
    await rejects(w.inbox.get(w.ctx('acc_observer'), 'proj_main', 'pinbox_missing'), 'project_inbox_read_denied');
  });

  it('the owner deciding a missing item of an archived project gets 409 project_archived', async () => {
    await w.platform.archiveProject(w.ctx('acc_owner'), 'proj_main');
    await rejects(w.inbox.decide(w.ctx('acc_owner'), 'proj_main', 'pinbox_missing', { decision: 'accept' }), 'project_archived');
  });

  it('an oversized payload does not tell a non-member or an observer anything beyond 404/403', async () => {
    const big = { type: 't', payload: 'x'.repeat(MAX_PAYLOAD_BYTES) };
    await rejects(w.inbox.create(w.ctx('acc_outsider'), 'proj_main', big), 'project_not_found');
    await rejects(w.inbox.create(w.ctx('acc_observer'), 'proj_main', big), 'project_inbox_write_denied');
  });
});
