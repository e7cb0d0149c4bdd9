/**
 * ProjectInboxService over the in-memory reference store, with a frozen clock and sequential ids.
 * Spec: project-inbox.md (every row of the error table, the role table, the transition table,
 * source resolution, events + operation log in one unit of work, publish after commit).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { RequestContext, ServiceDeps } from '../context.js';
import { InboxKitError } from '../errors.js';
import { PlatformService, PROJECT_FEED_RECHECK_MS } from '../platform/service.js';
import { createManualClock, createSequentialIdGenerator } from '../ports/clock.js';
import { createLocalEventBus, type BusMessage, type EventBus } from '../ports/event-bus.js';
import type { Store, StoreTx } from '../ports/store.js';
import type { InboxDecision, InboxItemStatus, ProjectEvent, ProjectInboxItem } from '../records.js';
import { createMemoryStore, type MemoryStore } from '../testing/memory-store.js';
import { MAX_PAYLOAD_BYTES } from '../validation.js';
import { ProjectInboxService } from './service.js';
import { INBOX_DECISIONS, INBOX_STATUSES } from './transition.js';

const T0 = 1_735_689_600_000;

type Failure = { method: keyof StoreTx | null; when: 'before' | 'after'; error: Error };

/**
 * The world the tests run in:
 * - ws_demo: acc_owner, acc_deriver, acc_deriver2, acc_observer, acc_outsider.
 *   proj_main (owner acc_owner; deriver, deriver2, observer): sess_001 with floor A (pages A1, A2)
 *   and floor B (page B1); sess_002 with floor C (page C1). proj_side (owner acc_owner) with
 *   sess_side, floor S, page S1. sess_loose (no project) with floor L, page L1.
 * - ws_other: acc_stranger, proj_foreign with sess_foreign, floor F, page F1.
 */
async function makeWorld() {
  const mem = createMemoryStore();
  const clock = createManualClock(T0);
  const ids = createSequentialIdGenerator();
  const failure: Failure = { method: null, when: 'before', error: new Error('injected store failure') };
  let openTransactions = 0;
  // A store that can make one method fail inside transactions, and that tells whether a
  // transaction is still open (for "publish only after commit").
  const store: Store = new Proxy(mem, {
    get(target, prop, receiver) {
      if (prop === 'transaction') {
        return async <T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> => {
          openTransactions++;
          try {
            return await target.transaction((tx) =>
              fn(new Proxy(tx, {
                get(t, p, r) {
                  const real = Reflect.get(t, p, r) as unknown;
                  if (p !== failure.method || typeof real !== 'function') return real;
                  return async (...args: unknown[]) => {
                    if (failure.when === 'after') await (real as (...a: unknown[]) => Promise<unknown>).apply(t, args);
                    throw failure.error;
                  };
                },
              })),
            );
          } finally {
            openTransactions--;
          }
        };
      }
      return Reflect.get(target, prop, receiver);
    },
  });

  const local = createLocalEventBus();
  const published: { event: ProjectEvent; duringTransaction: boolean; committed: boolean }[] = [];
  const busState = { throwOnPublish: false };
  const bus: EventBus = {
    publish(message: BusMessage) {
      if (message.kind === 'project_event') {
        const e = message.event;
        published.push({
          event: structuredClone(e),
          duringTransaction: openTransactions > 0,
          committed: mem.raw().events.some((x) => x.id === e.id && x.sequence === e.sequence),
        });
      }
      if (busState.throwOnPublish) throw new Error('bus is down');
      local.publish(message);
    },
    subscribe: (topic, listener) => local.subscribe(topic, listener),
    subscriberCount: () => local.subscriberCount(),
  };
  const publishErrors: unknown[] = [];
  const deps: ServiceDeps = { store, bus, clock, ids, onPublishError: (e) => publishErrors.push(e) };
  const platform = new PlatformService(deps);
  const inbox = new ProjectInboxService(deps);

  let req = 0;
  const ctx = (account_id: string, workspace_id = account_id === 'acc_stranger' ? 'ws_other' : 'ws_demo'): RequestContext => ({
    principal: { workspace_id, account_id, key_id: `key_${account_id}`, key_kind: 'standard' },
    request_id: `req_test_${++req}`,
  });

  await platform.createWorkspace({ id: 'ws_demo', name: 'Demo' });
  await platform.createWorkspace({ id: 'ws_other', name: 'Other' });
  for (const id of ['acc_owner', 'acc_deriver', 'acc_deriver2', 'acc_observer', 'acc_outsider']) {
    await platform.createAccount({ id, name: id, workspace_ids: ['ws_demo'] });
  }
  await platform.createAccount({ id: 'acc_stranger', name: 'stranger', workspace_ids: ['ws_other'] });

  const owner = ctx('acc_owner');
  await platform.createProject(owner, { id: 'proj_main', name: 'Main' });
  await platform.addMember(owner, 'proj_main', { account_id: 'acc_deriver', role: 'deriver' });
  await platform.addMember(owner, 'proj_main', { account_id: 'acc_deriver2', role: 'deriver' });
  await platform.addMember(owner, 'proj_main', { account_id: 'acc_observer', role: 'observer' });
  await platform.createSession(owner, { id: 'sess_001', project_id: 'proj_main', title: 'First' });
  await platform.createSession(owner, { id: 'sess_002', project_id: 'proj_main', title: 'Second' });
  const A = await platform.commitTurn(owner, 'sess_001', { content: { text: 'turn A' } });
  const A2 = await platform.addPage(owner, 'sess_001', A.floor.id, { content: { text: 'turn A, regenerated' } });
  const B = await platform.commitTurn(owner, 'sess_001', { content: { text: 'turn B' } });
  const C = await platform.commitTurn(owner, 'sess_002', { content: { text: 'turn C' } });

  await platform.createProject(owner, { id: 'proj_side', name: 'Side' });
  await platform.createSession(owner, { id: 'sess_side', project_id: 'proj_side', title: null });
  const S = await platform.commitTurn(owner, 'sess_side', { content: 'side' });
  await platform.createSession(owner, { id: 'sess_loose', project_id: null, title: null });
  const L = await platform.commitTurn(owner, 'sess_loose', { content: 'loose' });

  const stranger = ctx('acc_stranger');
  await platform.createProject(stranger, { id: 'proj_foreign', name: 'Foreign' });
  await platform.createSession(stranger, { id: 'sess_foreign', project_id: 'proj_foreign', title: null });
  const F = await platform.commitTurn(stranger, 'sess_foreign', { content: 'foreign' });

  const mainEvent = mem.raw().events.find((e) => e.project_id === 'proj_main' && e.type === 'project.created')!;
  const sideEvent = mem.raw().events.find((e) => e.project_id === 'proj_side')!;
  const foreignEvent = mem.raw().events.find((e) => e.project_id === 'proj_foreign')!;

  published.length = 0;

  return {
    mem, store, bus, clock, ids, inbox, platform, ctx, failure, published, publishErrors, busState,
    floors: { A: A.floor, B: B.floor, C: C.floor, S: S.floor, L: L.floor, F: F.floor },
    pages: { A1: A.page, A2, B1: B.page, C1: C.page, S1: S.page, L1: L.page, F1: F.page },
    events: { main: mainEvent, side: sideEvent, foreign: foreignEvent },
  };
}

type World = Awaited<ReturnType<typeof makeWorld>>;

/** Awaits a rejection and checks it is an InboxKitError with `code`. */
async function rejects(p: Promise<unknown>, code: string): Promise<InboxKitError> {
  let caught: unknown;
  try {
    await p;
  } catch (error) {
    caught = error;
  }
  expect(caught, `expected ${code}`).toBeInstanceOf(InboxKitError);
  expect((caught as InboxKitError).code).toBe(code);
  return caught as InboxKitError;
}

const inboxRows = (w: World) => ({
  items: w.mem.raw().items.size,
  logs: w.mem.raw().logs.filter((l) => l.action.startsWith('project_inbox_item.')).length,
  events: w.mem.raw().events.filter((e) => e.type.startsWith('project_inbox.')).length,
});

/** Runs `fn` and checks that it changed nothing at all in the store and published nothing. */
async function writesNothing(w: World, fn: () => Promise<unknown>): Promise<void> {
  const before = structuredClone(w.mem.raw());
  const published = w.published.length;
  await fn();
  expect(w.mem.raw()).toEqual(before);
  expect(w.published.length).toBe(published);
}

const SEED_BODY = {
  type: 'derived_output.review',
  title: '候选摘要待确认',
  payload: { derived_output_id: 'dout_001', suggested_action: 'review' },
  source_session_id: 'sess_001',
};

let w: World;
beforeEach(async () => {
  w = await makeWorld();
});

/** Creates an item as `sender` and brings it to `status` through real decisions by the owner. */
async function itemIn(status: InboxItemStatus, sender = 'acc_deriver'): Promise<ProjectInboxItem> {
  const item = await w.inbox.create(w.ctx(sender), 'proj_main', { type: 'probe' });
  const decision: Record<InboxItemStatus, InboxDecision | null> = { pending: null, accepted: 'accept', rejected: 'reject', archived: 'archive' };
  const d = decision[status];
  if (d === null) return item;
  return w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision: d });
}

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

describe('error table', () => {
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

describe('decide', () => {
  const CELLS = INBOX_STATUSES.flatMap((from) => INBOX_DECISIONS.map((d) => [from, d] as const));
  const OUTCOME: Record<string, InboxItemStatus | 'invalid' | 'noop'> = {
    'pending/accept': 'accepted', 'pending/reject': 'rejected', 'pending/archive': 'archived',
    'accepted/accept': 'invalid', 'accepted/reject': 'invalid', 'accepted/archive': 'archived',
    'rejected/accept': 'invalid', 'rejected/reject': 'invalid', 'rejected/archive': 'archived',
    'archived/accept': 'invalid', 'archived/reject': 'invalid', 'archived/archive': 'noop',
  };

  it.each(CELLS)('%s + %s follows the transition table through the service', async (from, decision) => {
    const item = await itemIn(from);
    const outcome = OUTCOME[`${from}/${decision}`]!;
    w.clock.advance(1000);
    const owner = w.ctx('acc_owner');
    if (outcome === 'invalid') {
      await writesNothing(w, () => rejects(w.inbox.decide(owner, 'proj_main', item.id, { decision }), 'project_inbox_invalid_transition'));
      return;
    }
    if (outcome === 'noop') {
      await writesNothing(w, async () => {
        expect(await w.inbox.decide(owner, 'proj_main', item.id, { decision, note: 'again' })).toEqual(item);
      });
      return;
    }
    const before = inboxRows(w);
    const decided = await w.inbox.decide(owner, 'proj_main', item.id, { decision, note: '  why  ' });
    expect(decided).toEqual({
      ...item, status: outcome, decided_by_account_id: 'acc_owner', decided_at: T0 + 1000, updated_at: T0 + 1000,
    });
    expect(w.mem.raw().items.get(item.id)).toEqual(decided);
    expect(inboxRows(w)).toEqual({ items: before.items, logs: before.logs + 1, events: before.events + 1 });
    const log = w.mem.raw().logs.at(-1)!;
    expect(log).toMatchObject({
      action: 'project_inbox_item.decide', target_type: 'project_inbox_item', target_id: item.id, actor_account_id: 'acc_owner',
      request_id: owner.request_id, metadata: { decision, note: 'why' }, created_at: T0 + 1000,
    });
    expect(Object.keys(log.metadata).sort()).toEqual(['decision', 'note']);
    const event = w.mem.raw().events.at(-1)!;
    expect(event).toMatchObject({
      type: `project_inbox.item.${outcome}`, operation_log_id: log.id, correlation_id: owner.request_id, actor_account_id: 'acc_owner',
    });
    expect(event.payload).toEqual({
      inbox_item_id: item.id, type: item.type, status: outcome, decision, sender_account_id: item.sender_account_id,
      decided_by_account_id: 'acc_owner', source_event_id: null, source_session_id: null, source_floor_id: null, source_page_id: null,
    });
    expect(w.published.map((p) => p.event)).toContainEqual(event);
  });

  it('the note is stored only in the Operation Log metadata, trimmed; null when absent or blank', async () => {
    const note = 'NOTE-MARKER 已记录。';
    const item = await itemIn('pending');
    const accepted = await w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision: 'accept', note: `  ${note}  ` });
    expect(w.mem.raw().logs.at(-1)!.metadata).toEqual({ decision: 'accept', note });
    expect(JSON.stringify(accepted)).not.toContain('NOTE-MARKER');
    expect(JSON.stringify(w.mem.raw().items.get(item.id))).not.toContain('NOTE-MARKER');
    expect(JSON.stringify(w.mem.raw().events)).not.toContain('NOTE-MARKER');
    expect(JSON.stringify(w.published)).not.toContain('NOTE-MARKER');
    await w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision: 'archive', note: '   ' });
    expect(w.mem.raw().logs.at(-1)!.metadata).toEqual({ decision: 'archive', note: null });
    const other = await itemIn('pending');
    await w.inbox.decide(w.ctx('acc_owner'), 'proj_main', other.id, { decision: 'reject' });
    expect(w.mem.raw().logs.at(-1)!.metadata).toEqual({ decision: 'reject', note: null });
    const third = await itemIn('pending');
    await w.inbox.decide(w.ctx('acc_owner'), 'proj_main', third.id, { decision: 'reject', note: '😀'.repeat(500) });
    expect(w.mem.raw().logs.at(-1)!.metadata.note).toBe('😀'.repeat(500));
  });

  it('archiving a decided item records the last decision (decided_by, decided_at)', async () => {
    const item = await itemIn('pending');
    w.clock.set(T0 + 10);
    await w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision: 'reject' });
    w.clock.set(T0 + 20);
    const archived = await w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision: 'archive' });
    expect(archived).toMatchObject({ status: 'archived', decided_at: T0 + 20, updated_at: T0 + 20, created_at: T0 });
  });

  it('accept / reject / archive shorthands', async () => {
    const a = await itemIn('pending');
    expect((await w.inbox.accept(w.ctx('acc_owner'), 'proj_main', a.id, 'ok')).status).toBe('accepted');
    expect(w.mem.raw().logs.at(-1)!.metadata).toEqual({ decision: 'accept', note: 'ok' });
    const b = await itemIn('pending');
    expect((await w.inbox.reject(w.ctx('acc_owner'), 'proj_main', b.id)).status).toBe('rejected');
    expect((await w.inbox.archive(w.ctx('acc_owner'), 'proj_main', b.id)).status).toBe('archived');
  });

  it('accepting leaves every Session, Floor and Page byte-identical and writes nothing else', async () => {
    const item = await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', {
      type: 'derived_output.review', payload: { merge: 'into the session please', content: { text: 'replace me' } }, source_page_id: w.pages.A2.id,
    });
    const raw = () => w.mem.raw();
    const frozen = () => JSON.stringify({
      sessions: [...raw().sessions.entries()], floors: [...raw().floors.entries()], pages: [...raw().pages.entries()],
      runs: [...raw().runs.entries()], sessionEvents: raw().sessionEvents, projects: [...raw().projects.entries()],
      memberships: [...raw().memberships.entries()],
    });
    const before = frozen();
    const apiBefore = JSON.stringify([
      await w.platform.getSession(w.ctx('acc_owner'), 'sess_001'),
      await w.platform.listFloors(w.ctx('acc_owner'), 'sess_001'),
      await w.platform.listPages(w.ctx('acc_owner'), 'sess_001', w.floors.A.id),
    ]);
    w.clock.advance(5);
    await w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision: 'accept', note: '已记录。稍后由应用层决定是否写入主会话。' });
    expect(frozen()).toBe(before);
    expect(JSON.stringify([
      await w.platform.getSession(w.ctx('acc_owner'), 'sess_001'),
      await w.platform.listFloors(w.ctx('acc_owner'), 'sess_001'),
      await w.platform.listPages(w.ctx('acc_owner'), 'sess_001', w.floors.A.id),
    ])).toBe(apiBefore);
  });

  it('concurrent accept and reject: exactly one wins, the other sees the new status (409)', async () => {
    for (let round = 0; round < 5; round++) {
      const item = await itemIn('pending');
      const results = await Promise.allSettled([
        w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision: 'accept' }),
        w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision: 'reject' }),
      ]);
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect((lost[0]!.reason as InboxKitError).code).toBe('project_inbox_invalid_transition');
      const stored = w.mem.raw().items.get(item.id)!;
      expect(stored).toEqual((won[0] as PromiseFulfilledResult<ProjectInboxItem>).value);
      expect(w.mem.raw().events.filter((e) => e.payload.inbox_item_id === item.id && e.type !== 'project_inbox.item.created')).toHaveLength(1);
      expect(w.mem.raw().logs.filter((l) => l.target_id === item.id && l.action === 'project_inbox_item.decide')).toHaveLength(1);
    }
  });

  it('concurrent archives: one writes, the other is the no-op answer', async () => {
    const item = await itemIn('accepted');
    const results = await Promise.all([1, 2, 3].map(() => w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision: 'archive' })));
    for (const r of results) expect(r.status).toBe('archived');
    expect(w.mem.raw().events.filter((e) => e.type === 'project_inbox.item.archived')).toHaveLength(1);
  });

  it('a decision that loses the conditional update re-reads and answers from the new status', async () => {
    const item = await itemIn('pending');
    // Another writer rejects the item between our read and our conditional update.
    let interfered = false;
    const realTx = w.mem.transaction;
    w.mem.transaction = (fn) => realTx((tx) => fn(new Proxy(tx, {
      get(t, p, r) {
        if (p !== 'getInboxItem') return Reflect.get(t, p, r);
        return async (pid: string, id: string) => {
          const row = await t.getInboxItem(pid, id);
          if (!interfered && row && row.status === 'pending') {
            interfered = true;
            const live = w.mem.raw().items.get(id)!;
            Object.assign(live, { status: 'rejected', decided_by_account_id: 'acc_owner', decided_at: T0 + 1, updated_at: T0 + 1 });
          }
          return row;
        };
      },
    })));
    try {
      await rejects(w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision: 'accept' }), 'project_inbox_invalid_transition');
      expect(interfered).toBe(true);
      // (the in-memory store rolls the simulated writer back with our failed unit, so only the answer is checked here)
      expect(w.mem.raw().events.filter((e) => e.type === 'project_inbox.item.accepted')).toHaveLength(0);
      expect(w.mem.raw().logs.filter((l) => l.target_id === item.id && l.action === 'project_inbox_item.decide')).toHaveLength(0);
      // archive after losing the same race still succeeds (rejected → archived)
      interfered = false;
      const other = await itemIn('pending');
      const archived = await w.inbox.decide(w.ctx('acc_owner'), 'proj_main', other.id, { decision: 'archive' });
      expect(archived.status).toBe('archived');
      expect(w.mem.raw().events.filter((e) => e.payload.inbox_item_id === other.id && e.type === 'project_inbox.item.archived')).toHaveLength(1);
    } finally {
      w.mem.transaction = realTx;
    }
  });
});

describe('units of work', () => {
  const createFailures = ['appendProjectEvent', 'appendOperationLog', 'insertInboxItem'] as const;

  it.each(createFailures)('create: when %s fails, no item, log row or event remains and the error is rethrown', async (method) => {
    await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { type: 'before' });
    const before = structuredClone(w.mem.raw());
    const rows = inboxRows(w);
    for (const when of ['before', 'after'] as const) {
      Object.assign(w.failure, { method, when });
      let caught: unknown;
      try {
        await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { ...SEED_BODY, source_page_id: w.pages.A1.id, source_session_id: undefined });
      } catch (error) {
        caught = error;
      }
      expect(caught).toBe(w.failure.error);
      expect(inboxRows(w)).toEqual(rows);
      expect(w.mem.raw()).toEqual(before);
    }
    expect(w.published.map((p) => p.event.type)).toEqual(['project_inbox.item.created']);
    // the sequence a rolled-back write took is released: the next event follows without a gap
    w.failure.method = null;
    await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { type: 'after' });
    const seqs = w.mem.raw().events.filter((e) => e.project_id === 'proj_main').map((e) => e.sequence);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
  });

  it.each(['appendProjectEvent', 'appendOperationLog', 'decideInboxItem'] as const)(
    'decide: when %s fails, the item keeps its status and no log row or event remains', async (method) => {
      const item = await itemIn('pending');
      const before = structuredClone(w.mem.raw());
      const published = w.published.length;
      for (const when of ['before', 'after'] as const) {
        Object.assign(w.failure, { method, when });
        await expect(w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision: 'accept', note: 'n' })).rejects.toBe(w.failure.error);
        expect(w.mem.raw()).toEqual(before);
        expect(w.mem.raw().items.get(item.id)!.status).toBe('pending');
      }
      expect(w.published.length).toBe(published);
      w.failure.method = null;
      expect((await w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision: 'accept' })).status).toBe('accepted');
    });

  it('publishes only after commit, exactly the stored events', async () => {
    const item = await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', SEED_BODY);
    await w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision: 'accept' });
    await w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision: 'archive' });
    await w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision: 'archive' }); // no-op: nothing published
    expect(w.published.map((p) => p.event.type)).toEqual([
      'project_inbox.item.created', 'project_inbox.item.accepted', 'project_inbox.item.archived',
    ]);
    for (const p of w.published) {
      expect(p.duringTransaction).toBe(false);
      expect(p.committed).toBe(true);
      expect(w.mem.raw().events.find((e) => e.id === p.event.id)).toEqual(p.event);
    }
  });

  it('a bus that throws does not undo or hide the committed write', async () => {
    w.busState.throwOnPublish = true;
    const item = await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', SEED_BODY);
    expect(w.mem.raw().items.get(item.id)).toEqual(item);
    const accepted = await w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision: 'accept' });
    expect(accepted.status).toBe('accepted');
    expect(await w.inbox.get(w.ctx('acc_owner'), 'proj_main', item.id)).toEqual(accepted);
    expect(inboxRows(w)).toEqual({ items: 1, logs: 2, events: 2 });
    expect(w.publishErrors).toHaveLength(2);
    expect((w.publishErrors[0] as Error).message).toBe('bus is down');
  });

  it('subscribers of project:<id> receive the events after commit', async () => {
    const received: string[] = [];
    const unsubscribe = w.bus.subscribe('project:proj_main', (m) => {
      if (m.kind === 'project_event') received.push(m.event.type);
    });
    const item = await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { type: 't' });
    await w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision: 'reject' });
    await w.inbox.create(w.ctx('acc_owner'), 'proj_side', { type: 't' });
    unsubscribe();
    expect(received).toEqual(['project_inbox.item.created', 'project_inbox.item.rejected']);
  });
});

describe('get: one read with getInboxItemWithAccess, three without', () => {
  /** The same service over the same store, counting calls, with or without the optional method. */
  const serviceOver = (withMethod: boolean) => {
    const calls: string[] = [];
    const store = new Proxy(w.store, {
      get(target, prop, receiver) {
        if (prop === 'getInboxItemWithAccess' && !withMethod) return undefined;
        const real = Reflect.get(target, prop, receiver) as unknown;
        if (typeof real !== 'function') return real;
        return (...args: unknown[]) => {
          calls.push(String(prop));
          return (real as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    return { calls, inbox: new ProjectInboxService({ store, bus: w.bus, clock: w.clock, ids: w.ids }) };
  };

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

describe('Project Event visibility and source (platform.md "Project Events")', () => {
  it('every event the services write carries the visibility of its type and the source of its context', async () => {
    const before = w.mem.raw().events.length;
    const owner = w.ctx('acc_owner');
    await w.platform.addMember(owner, 'proj_main', { account_id: 'acc_outsider', role: 'observer' });
    await w.platform.createSession({ ...owner, source: 'system' }, { id: 'sess_sys', project_id: 'proj_main', title: null });
    const item = await w.inbox.create({ ...w.ctx('acc_deriver'), source: 'runtime_job' }, 'proj_main', { type: 'probe' });
    await w.inbox.accept(owner, 'proj_main', item.id);
    await w.platform.removeMember({ ...owner, source: 'runtime_job' }, 'proj_main', 'acc_outsider');
    await w.platform.archiveProject({ ...owner, source: 'system' }, 'proj_side');
    expect(w.mem.raw().events.slice(before).map((e) => [e.type, e.visibility, e.source])).toEqual([
      ['project.member.added', 'project', 'api'],
      ['session.created', 'project', 'system'],
      ['project_inbox.item.created', 'owner', 'runtime_job'],
      ['project_inbox.item.accepted', 'owner', 'api'],
      ['project.member.removed', 'project', 'runtime_job'],
      ['project.archived', 'project', 'system'],
    ]);
  });

  it('events listed carry both fields, and an observer sees only `project` events', async () => {
    await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { type: 'probe' });
    const asOwner = await w.platform.listProjectEvents(w.ctx('acc_owner'), 'proj_main', { limit: 200 });
    const asObserver = await w.platform.listProjectEvents(w.ctx('acc_observer'), 'proj_main', { limit: 200 });
    expect(asOwner.items.some((e) => e.visibility === 'owner')).toBe(true);
    for (const e of asOwner.items) expect(['api', 'runtime_job', 'system']).toContain(e.source);
    expect(asObserver.items.length).toBeGreaterThan(0);
    expect(asObserver.items.every((e) => e.visibility === 'project')).toBe(true);
  });
});

describe('projectEventFeed: authorised as of now', () => {
  it('latest names the newest sequence; a membership event naming the caller forces a check, other changes are seen within the recheck interval', async () => {
    const owner = w.ctx('acc_owner');
    const feed = await w.platform.projectEventFeed(w.ctx('acc_deriver'), 'proj_main');
    const latest = w.mem.raw().events.filter((e) => e.project_id === 'proj_main').length;
    expect(await feed.latest()).toBe(latest);
    const item = await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { type: 'probe' });
    const [created] = await feed.replay(latest, 10);
    expect(created?.data).toMatchObject({ type: 'project_inbox.item.created', visibility: 'owner', payload: { inbox_item_id: item.id } });
    await feed.authorize([created!]);
    expect(feed.visible(created!)).toBe(true);

    // Changed without an event (storage edited directly): seen once the recheck interval has passed.
    await w.store.upsertMembership({ project_id: 'proj_main', account_id: 'acc_deriver', role: 'observer', created_at: T0 });
    await feed.authorize([]);
    expect(feed.visible(created!)).toBe(true);
    w.clock.advance(PROJECT_FEED_RECHECK_MS);
    await feed.authorize([]);
    expect(feed.visible(created!)).toBe(false);

    // A membership event naming the caller is checked before it is delivered, whatever the time.
    await w.platform.addMember(owner, 'proj_main', { account_id: 'acc_deriver', role: 'deriver' });
    const [promoted] = await feed.replay(latest + 1, 10);
    expect(promoted?.type).toBe('project.member.added');
    await feed.authorize([promoted!]);
    expect(feed.visible(created!)).toBe(true);
    // Another member's change does not force one.
    await w.platform.addMember(owner, 'proj_main', { account_id: 'acc_outsider', role: 'observer' });
    await w.store.deleteMembership('proj_main', 'acc_deriver');
    const [other] = await feed.replay(latest + 2, 10);
    expect(other?.data.payload['account_id']).toBe('acc_outsider');
    await feed.authorize([other!]);
    expect(feed.visible(created!)).toBe(true);
    await w.platform.addMember(owner, 'proj_main', { account_id: 'acc_deriver', role: 'deriver' });
    await w.platform.removeMember(owner, 'proj_main', 'acc_deriver');
    const [, removed] = await feed.replay(latest + 3, 10);
    expect(removed?.type).toBe('project.member.removed');
    await expect(feed.authorize([removed!])).rejects.toMatchObject({ code: 'project_not_found' });
    expect(feed.visible({ id: 1, type: 'project.created', data: w.events.main })).toBe(false);
  });
});
