/**
 * ProjectInboxService over the in-memory reference store, with a frozen clock and sequential ids
 * (the world of `test-support.ts`): create: the documented item, its Operation Log row and Project
 * Event, per-project sequences; the payload size limit. Spec: project-inbox.md.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { MAX_PAYLOAD_BYTES } from '../validation.js';
import { makeWorld, T0, rejects, inboxRows, writesNothing, SEED_BODY, itemInOf, type World } from './test-support.js';
import type { InboxItemStatus } from '../records.js';

let w: World;
beforeEach(async () => {
  w = await makeWorld();
});
const itemIn = (status: InboxItemStatus, sender?: string) => itemInOf(w, status, sender);

describe('create', () => {
  it('files the seed page example as the deriver and returns the documented item', async () => {
    const item = await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', SEED_BODY);
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
      created_at: T0,
      updated_at: T0,
    });
    expect(w.mem.raw().items.get(item.id)).toEqual(item);
  });

  it('the owner may file items too; account_id is always the owner, sender is the caller', async () => {
    const item = await w.inbox.create(w.ctx('acc_owner'), 'proj_main', { type: 'note' });
    expect(item.account_id).toBe('acc_owner');
    expect(item.sender_account_id).toBe('acc_owner');
  });

  it('trims type and title, turns blank titles and null/absent payloads into null/{}', async () => {
    const a = await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { type: '  t  ', title: '   ' });
    expect(a.type).toBe('t');
    expect(a.title).toBeNull();
    expect(a.payload).toEqual({});
    const b = await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { type: 't', title: ' x ', payload: null });
    expect(b.title).toBe('x');
    expect(b.payload).toEqual({});
    const c = await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { type: 't', title: null, payload: undefined });
    expect(c.title).toBeNull();
    expect(c.payload).toEqual({});
  });

  it('counts characters as code points: 128-emoji type and 200-emoji title are accepted', async () => {
    const item = await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { type: '😀'.repeat(128), title: '😀'.repeat(200) });
    expect(item.type).toBe('😀'.repeat(128));
    expect(item.title).toBe('😀'.repeat(200));
  });

  it('passes any JSON payload through untouched and stores a copy', async () => {
    const payload = { a: [1, 2.5, -3, true, false, null, 'ü😀'], nested: { deep: { x: '' } }, camelCase: 1 };
    const input = structuredClone(payload);
    const item = await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { type: 't', payload: input });
    expect(item.payload).toEqual(payload);
    input.nested.deep.x = 'changed';
    expect(w.mem.raw().items.get(item.id)!.payload).toEqual(payload);
    for (const p of ['a string', 42, true, [1, 2]] as const) {
      expect((await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { type: 't', payload: p })).payload).toEqual(p);
    }
  });

  it('writes one item, one Operation Log row and one Project Event in the same unit', async () => {
    const before = inboxRows(w);
    const c = w.ctx('acc_deriver');
    const item = await w.inbox.create(c, 'proj_main', { ...SEED_BODY, source_event_id: w.events.main.id });
    expect(inboxRows(w)).toEqual({ items: before.items + 1, logs: before.logs + 1, events: before.events + 1 });

    const log = w.mem.raw().logs.at(-1)!;
    expect(log).toEqual({
      id: expect.stringMatching(/^oplog_/),
      workspace_id: 'ws_demo',
      project_id: 'proj_main',
      actor_account_id: 'acc_deriver',
      action: 'project_inbox_item.create',
      target_type: 'project_inbox_item',
      target_id: item.id,
      request_id: c.request_id,
      metadata: { payload_byte_count: Buffer.byteLength(JSON.stringify(SEED_BODY.payload)) },
      created_at: T0,
    });

    const event = w.mem.raw().events.at(-1)!;
    expect(event).toEqual({
      id: expect.stringMatching(/^evt_/),
      workspace_id: 'ws_demo',
      project_id: 'proj_main',
      sequence: expect.any(Number),
      type: 'project_inbox.item.created',
      actor_account_id: 'acc_deriver',
      session_id: 'sess_001',
      floor_id: null,
      page_id: null,
      operation_log_id: log.id,
      correlation_id: c.request_id,
      causation_event_id: w.events.main.id,
      visibility: 'owner',
      source: 'api',
      payload: {
        inbox_item_id: item.id,
        type: 'derived_output.review',
        title: '候选摘要待确认',
        status: 'pending',
        sender_account_id: 'acc_deriver',
        source_event_id: w.events.main.id,
        source_session_id: 'sess_001',
        source_floor_id: null,
        source_page_id: null,
      },
      created_at: T0,
    });
  });

  it('allocates per-project event sequences 1, 2, 3 … with no gaps', async () => {
    for (let i = 0; i < 5; i++) await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { type: `t${i}` });
    const item = await itemIn('accepted');
    await w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision: 'archive' });
    await w.inbox.create(w.ctx('acc_owner'), 'proj_side', { type: 'side' });
    for (const pid of ['proj_main', 'proj_side']) {
      const seqs = w.mem.raw().events.filter((e) => e.project_id === pid).map((e) => e.sequence);
      expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    }
  });
});

describe('payload size (262,144 bytes of compact UTF-8 JSON)', () => {
  // {"k":"…"} wraps the string in 8 bytes; {"kk":"…"} in 9.
  const cases: [string, unknown, unknown][] = [
    ['ASCII', { k: 'a'.repeat(MAX_PAYLOAD_BYTES - 8) }, { k: 'a'.repeat(MAX_PAYLOAD_BYTES - 7) }],
    ['2-byte é', { k: 'é'.repeat((MAX_PAYLOAD_BYTES - 8) / 2) }, { k: 'é'.repeat((MAX_PAYLOAD_BYTES - 8) / 2) + 'a' }],
    ['4-byte 😀', { k: '😀'.repeat((MAX_PAYLOAD_BYTES - 8) / 4) }, { kk: '😀'.repeat((MAX_PAYLOAD_BYTES - 8) / 4) }],
  ];

  it.each(cases)('%s: exactly 262,144 bytes is accepted and 262,145 gets 413', async (_, ok, tooBig) => {
    expect(Buffer.byteLength(JSON.stringify(ok))).toBe(262_144);
    expect(Buffer.byteLength(JSON.stringify(tooBig))).toBe(262_145);
    await writesNothing(w, () => rejects(w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { type: 't', payload: tooBig }), 'project_inbox_payload_too_large'));
    const item = await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { type: 't', payload: ok });
    expect(item.payload).toEqual(ok);
    expect(w.mem.raw().logs.at(-1)!.metadata).toEqual({ payload_byte_count: 262_144 });
  });

  it('the payload never appears in an event or an Operation Log row', async () => {
    const marker = 'PAYLOAD-MARKER-7f3a';
    const item = await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { type: 't', title: 'title', payload: { secret: marker, [marker]: 1 } });
    await w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision: 'accept' });
    await w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision: 'archive' });
    expect(JSON.stringify(w.mem.raw().events)).not.toContain(marker);
    expect(JSON.stringify(w.mem.raw().logs)).not.toContain(marker);
    expect(JSON.stringify(w.published)).not.toContain(marker);
  });
});
