/**
 * `Idempotency-Key` on Project Inbox creates (ProjectInboxService.create / createWithOutcome) over
 * the in-memory reference store: a repeat with the same key and body returns the first item and
 * writes nothing; another body with the key → 409; keys are scoped to workspace and acting
 * account; failed creates record nothing; keys are 1–255 printable ASCII.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { RequestContext, ServiceDeps } from '../context.js';
import type { StoreTx } from '../ports/store.js';
import { canonicalJson, idempotencyRequestHash, parseIdempotencyKey } from '../idempotency.js';
import { PlatformService } from '../platform/service.js';
import { createManualClock, createSequentialIdGenerator } from '../ports/clock.js';
import { createLocalEventBus, type BusMessage, type EventBus } from '../ports/event-bus.js';
import { createMemoryStore, type MemoryStore } from '../testing/memory-store.js';
import { ProjectInboxService } from './service.js';
import { rejection } from '../test-support.js';

interface World {
  mem: MemoryStore;
  inbox: ProjectInboxService;
  platform: PlatformService;
  published: BusMessage[];
  ctx(account_id: string, workspace_id?: string): RequestContext;
}

async function makeWorld(): Promise<World> {
  const mem = createMemoryStore();
  const local = createLocalEventBus();
  const published: BusMessage[] = [];
  const bus: EventBus = {
    publish: (m) => {
      published.push(m);
      local.publish(m);
    },
    subscribe: (topic, listener) => local.subscribe(topic, listener),
    subscriberCount: () => local.subscriberCount(),
  };
  const deps: ServiceDeps = { store: mem, bus, clock: createManualClock(), ids: createSequentialIdGenerator() };
  const platform = new PlatformService(deps);
  const ctx = (account_id: string, workspace_id = 'ws_demo'): RequestContext => ({
    principal: { workspace_id, account_id, key_id: `key_${account_id}`, key_kind: 'standard' },
    request_id: 'req_idem',
  });
  await platform.createWorkspace({ id: 'ws_demo', name: 'Demo' });
  for (const id of ['acc_owner', 'acc_deriver', 'acc_observer']) await platform.createAccount({ id, name: id, workspace_ids: ['ws_demo'] });
  await platform.createProject(ctx('acc_owner'), { id: 'proj_main', name: 'Main' });
  await platform.createProject(ctx('acc_owner'), { id: 'proj_side', name: 'Side' });
  await platform.addMember(ctx('acc_owner'), 'proj_main', { account_id: 'acc_deriver', role: 'deriver' });
  await platform.addMember(ctx('acc_owner'), 'proj_main', { account_id: 'acc_observer', role: 'observer' });
  published.length = 0;
  return { mem, inbox: new ProjectInboxService(deps), platform, published, ctx };
}

const counts = (w: World) => ({
  items: w.mem.raw().items.size,
  logs: w.mem.raw().logs.filter((l) => l.action === 'project_inbox_item.create').length,
  events: w.mem.raw().events.filter((e) => e.type === 'project_inbox.item.created').length,
  records: w.mem.raw().idempotency.size,
  published: w.published.length,
});

/** The InboxKitError code `p` rejects with (see `rejection`). */
const codeOf = async (p: Promise<unknown>): Promise<string> => (await rejection(p)).code;

describe('create with an Idempotency-Key', () => {
  let w: World;
  beforeEach(async () => {
    w = await makeWorld();
  });

  it('the same key and body returns the first item, replayed, and writes and publishes nothing more', async () => {
    const body = { type: 'summary', title: 'Once', payload: { a: 1, b: [1, 2] } };
    const first = await w.inbox.createWithOutcome(w.ctx('acc_deriver'), 'proj_main', body, { idempotency_key: 'key-1' });
    expect(first.replayed).toBe(false);
    const after = counts(w);
    expect(after).toEqual({ items: 1, logs: 1, events: 1, records: 1, published: 1 });
    const again = await w.inbox.createWithOutcome(w.ctx('acc_deriver'), 'proj_main', body, { idempotency_key: 'key-1' });
    expect(again).toEqual({ item: first.item, replayed: true });
    // Bodies that mean the same (key order, blank-padded title, absent optionals) replay too.
    const same = await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { payload: { b: [1, 2], a: 1 }, title: '  Once ', type: ' summary', source_page_id: null }, { idempotency_key: 'key-1' });
    expect(same).toEqual(first.item);
    expect(counts(w)).toEqual(after);
    const record = [...w.mem.raw().idempotency.values()][0];
    expect(record).toMatchObject({ workspace_id: 'ws_demo', account_id: 'acc_deriver', key: 'key-1', resource_type: 'project_inbox_item', resource_id: first.item.id });
    expect(record?.request_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('a replay answers only what the caller may see now: the checks of a fresh request run first', async () => {
    const item = await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { type: 't' }, { idempotency_key: 'k' });
    const accepted = await w.inbox.accept(w.ctx('acc_owner'), 'proj_main', item.id);
    // Still a deriver: the item as `get` shows it now.
    expect(await w.inbox.createWithOutcome(w.ctx('acc_deriver'), 'proj_main', { type: 't' }, { idempotency_key: 'k' })).toEqual({ item: accepted, replayed: true });
    expect(await w.inbox.get(w.ctx('acc_deriver'), 'proj_main', item.id)).toEqual(accepted);
    // Demoted to observer: 403 as a fresh create (and no decision fields leak).
    await w.platform.addMember(w.ctx('acc_owner'), 'proj_main', { account_id: 'acc_deriver', role: 'observer' });
    expect(await codeOf(w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { type: 't' }, { idempotency_key: 'k' }))).toBe('project_inbox_write_denied');
    // Removed: 404 as for any project the caller cannot see.
    await w.platform.removeMember(w.ctx('acc_owner'), 'proj_main', 'acc_deriver');
    expect(await codeOf(w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { type: 't' }, { idempotency_key: 'k' }))).toBe('project_not_found');
    expect(await codeOf(w.inbox.get(w.ctx('acc_deriver'), 'proj_main', item.id))).toBe('project_not_found');
    // Added back, then the project archived: 409 as a fresh create.
    await w.platform.addMember(w.ctx('acc_owner'), 'proj_main', { account_id: 'acc_deriver', role: 'deriver' });
    await w.platform.archiveProject(w.ctx('acc_owner'), 'proj_main');
    expect(await codeOf(w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { type: 't' }, { idempotency_key: 'k' }))).toBe('project_archived');
    expect(await codeOf(w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { type: 't' }))).toBe('project_archived');
    // Nothing was written by any of the refused replays.
    expect(counts(w)).toMatchObject({ items: 1, records: 1 });
  });

  it('the same key with another body, title, payload or project → 409 idempotency_key_reused, nothing written', async () => {
    await w.inbox.create(w.ctx('acc_owner'), 'proj_main', { type: 't', payload: { n: 1 } }, { idempotency_key: 'k' });
    const before = counts(w);
    for (const [project, body] of [
      ['proj_main', { type: 'other', payload: { n: 1 } }],
      ['proj_main', { type: 't', payload: { n: 2 } }],
      ['proj_main', { type: 't', title: 'now with a title', payload: { n: 1 } }],
      ['proj_main', { type: 't' }],
      ['proj_side', { type: 't', payload: { n: 1 } }],
    ] as const) {
      expect(await codeOf(w.inbox.create(w.ctx('acc_owner'), project, body, { idempotency_key: 'k' })), JSON.stringify(body)).toBe('idempotency_key_reused');
    }
    expect(counts(w)).toEqual(before);
  });

  it('keys are scoped to the acting account and workspace, and compared exactly', async () => {
    const a = await w.inbox.create(w.ctx('acc_owner'), 'proj_main', { type: 't' }, { idempotency_key: 'shared' });
    const b = await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { type: 't' }, { idempotency_key: 'shared' });
    const c = await w.inbox.create(w.ctx('acc_owner'), 'proj_main', { type: 't' }, { idempotency_key: 'Shared' });
    expect(new Set([a.id, b.id, c.id]).size).toBe(3);
    expect(counts(w)).toMatchObject({ items: 3, records: 3 });
  });

  it('a create that fails records nothing: the key stays free for a corrected retry', async () => {
    expect(await codeOf(w.inbox.create(w.ctx('acc_observer'), 'proj_main', { type: 't' }, { idempotency_key: 'k' }))).toBe('project_inbox_write_denied');
    expect(await codeOf(w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { type: 't', source_session_id: 'sess_missing' }, { idempotency_key: 'k' }))).toBe('session_not_found');
    expect(await codeOf(w.inbox.create(w.ctx('acc_deriver'), 'proj_missing', { type: 't' }, { idempotency_key: 'k' }))).toBe('project_not_found');
    expect(await codeOf(w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { type: '' }, { idempotency_key: 'k' }))).toBe('validation_error');
    expect(counts(w)).toMatchObject({ items: 0, records: 0, published: 0 });
    const ok = await w.inbox.createWithOutcome(w.ctx('acc_deriver'), 'proj_main', { type: 't' }, { idempotency_key: 'k' });
    expect(ok.replayed).toBe(false);
  });

  it('keys must be 1–255 printable ASCII characters (400 validation_error), checked before anything else', async () => {
    for (const key of ['', 'x'.repeat(256), 'tab\there', 'new\nline', 'ünï', '😀', '\u007f']) {
      expect(await codeOf(w.inbox.create(w.ctx('acc_observer'), 'proj_missing', { type: 't' }, { idempotency_key: key })), JSON.stringify(key)).toBe('validation_error');
    }
    for (const key of ['x', 'x'.repeat(255), ' !"#$%&\'()*+,-./0123456789:;<=>?@AZ[\\]^_`az{|}~']) {
      expect(parseIdempotencyKey(key)).toBe(key);
    }
    expect(counts(w)).toMatchObject({ items: 0, records: 0 });
  });

  it('10 concurrent creates with one key make one item, one log row, one event; all answer the same item', async () => {
    const body = { type: 'race', payload: { n: 1 } };
    const results = await Promise.all(Array.from({ length: 10 }, () => w.inbox.createWithOutcome(w.ctx('acc_deriver'), 'proj_main', body, { idempotency_key: 'race' })));
    expect(new Set(results.map((r) => r.item.id)).size).toBe(1);
    expect(results.filter((r) => !r.replayed)).toHaveLength(1);
    expect(counts(w)).toEqual({ items: 1, logs: 1, events: 1, records: 1, published: 1 });
  });

  it('the request hash is SHA-256 over method, path and the canonical body', async () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}');
    const h = await idempotencyRequestHash('post', '/projects/p/inbox', { b: 1, a: 2 });
    expect(h).toBe(await idempotencyRequestHash('POST', '/projects/p/inbox', { a: 2, b: 1 }));
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(h).not.toBe(await idempotencyRequestHash('POST', '/projects/q/inbox', { a: 2, b: 1 }));
  });
});

describe('retention of idempotency records (platform.md "Retention")', () => {
  const setup = async (ttl?: number) => {
    const mem = createMemoryStore();
    const clock = createManualClock();
    const ids = createSequentialIdGenerator();
    const deps: ServiceDeps = { store: mem, bus: createLocalEventBus(), clock, ids, ...(ttl === undefined ? {} : { idempotencyTtlMs: ttl }) };
    const platform = new PlatformService(deps);
    const ctx: RequestContext = { principal: { workspace_id: 'ws_demo', account_id: 'acc_owner', key_id: 'key_owner', key_kind: 'standard' }, request_id: 'req_ttl' };
    await platform.createWorkspace({ id: 'ws_demo', name: 'Demo' });
    await platform.createAccount({ id: 'acc_owner', name: 'o', workspace_ids: ['ws_demo'] });
    await platform.createProject(ctx, { id: 'proj_main', name: 'Main' });
    return { mem, clock, ids, inbox: new ProjectInboxService(deps), ctx };
  };

  it('a key keeps its first answer for 24 h by default; after that a repeat creates anew', async () => {
    const { clock, inbox, ctx } = await setup();
    const first = await inbox.createWithOutcome(ctx, 'proj_main', { type: 't' }, { idempotency_key: 'k' });
    clock.advance(86_400_000 - 1);
    const replay = await inbox.createWithOutcome(ctx, 'proj_main', { type: 't' }, { idempotency_key: 'k' });
    expect(replay).toEqual({ item: first.item, replayed: true });
    clock.advance(2);
    const fresh = await inbox.createWithOutcome(ctx, 'proj_main', { type: 't' }, { idempotency_key: 'k' });
    expect(fresh.replayed).toBe(false);
    expect(fresh.item.id).not.toBe(first.item.id);
    // …and the key now answers with the new item (another body is refused again).
    expect((await inbox.createWithOutcome(ctx, 'proj_main', { type: 't' }, { idempotency_key: 'k' })).item.id).toBe(fresh.item.id);
    expect((await rejection(inbox.create(ctx, 'proj_main', { type: 'other' }, { idempotency_key: 'k' }))).code).toBe('idempotency_key_reused');
  });

  it('sweepExpiredIdempotencyKeys deletes only records past the window, in batches; the window is configurable', async () => {
    const { mem, clock, inbox, ctx } = await setup(60_000);
    for (let i = 0; i < 5; i++) await inbox.create(ctx, 'proj_main', { type: `old${i}` }, { idempotency_key: `old-${i}` });
    clock.advance(30_000);
    for (let i = 0; i < 3; i++) await inbox.create(ctx, 'proj_main', { type: `new${i}` }, { idempotency_key: `new-${i}` });
    expect(await inbox.sweepExpiredIdempotencyKeys()).toBe(0);
    clock.advance(30_001);
    expect(await inbox.sweepExpiredIdempotencyKeys({ batch: 2 })).toBe(5);
    expect([...mem.raw().idempotency.values()].map((r) => r.key).sort()).toEqual(['new-0', 'new-1', 'new-2']);
    // The items themselves stay: only the keys' records expire.
    expect(mem.raw().items.size).toBe(8);
    expect(() => new ProjectInboxService({ store: mem, bus: createLocalEventBus(), clock, ids: createSequentialIdGenerator(), idempotencyTtlMs: 0 })).toThrow(TypeError);
  });

  it('on a store without sweepIdempotencyRecords keys never expire (the sweep does nothing)', async () => {
    const { mem, clock, ids, ctx } = await setup();
    // A store of an older release: no sweepIdempotencyRecords, in or out of transactions.
    const hide = <T extends object>(target: T): T => new Proxy(target, { get: (t, p, r) => (p === 'sweepIdempotencyRecords' ? undefined : Reflect.get(t, p, r)) });
    const store = new Proxy(hide(mem), {
      get: (t, p, r) => (p === 'transaction' ? (fn: (tx: StoreTx) => Promise<unknown>) => mem.transaction((tx) => fn(hide(tx))) : Reflect.get(t, p, r)),
    });
    const inbox = new ProjectInboxService({ store, bus: createLocalEventBus(), clock, ids });
    const first = await inbox.create(ctx, 'proj_main', { type: 't' }, { idempotency_key: 'k' });
    clock.advance(10 * 86_400_000);
    expect(await inbox.sweepExpiredIdempotencyKeys()).toBe(0);
    expect((await inbox.createWithOutcome(ctx, 'proj_main', { type: 't' }, { idempotency_key: 'k' })).item.id).toBe(first.id);
  });
});
