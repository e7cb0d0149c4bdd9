/**
 * The world of the ProjectInboxService unit tests (`service-*.test.ts`; not exported from the
 * package): the in-memory reference store behind a proxy that injects failures and counts open
 * transactions, a bus that records what was published and when, a frozen clock, sequential ids,
 * the seeded workspaces, projects, Sessions, Floors and Pages, and the assertions the tests share.
 */
import { expect } from 'vitest';
import type { RequestContext, ServiceDeps } from '../context.js';
import { InboxKitError } from '../errors.js';
import { PlatformService } from '../platform/service.js';
import { createManualClock, createSequentialIdGenerator } from '../ports/clock.js';
import { createLocalEventBus, type BusMessage, type EventBus } from '../ports/event-bus.js';
import type { Store, StoreTx } from '../ports/store.js';
import type { InboxDecision, InboxItemStatus, ProjectEvent, ProjectInboxItem } from '../records.js';
import { createMemoryStore } from '../testing/memory-store.js';
import { ProjectInboxService } from './service.js';

export const T0 = 1_735_689_600_000;

export type Failure = { method: keyof StoreTx | null; when: 'before' | 'after'; error: Error };

/**
 * The world the tests run in:
 * - ws_demo: acc_owner, acc_deriver, acc_deriver2, acc_observer, acc_outsider.
 *   proj_main (owner acc_owner; deriver, deriver2, observer): sess_001 with floor A (pages A1, A2)
 *   and floor B (page B1); sess_002 with floor C (page C1). proj_side (owner acc_owner) with
 *   sess_side, floor S, page S1. sess_loose (no project) with floor L, page L1.
 * - ws_other: acc_stranger, proj_foreign with sess_foreign, floor F, page F1.
 */
export async function makeWorld() {
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

export type World = Awaited<ReturnType<typeof makeWorld>>;

/** Awaits a rejection and checks it is an InboxKitError with `code`. */
export async function rejects(p: Promise<unknown>, code: string): Promise<InboxKitError> {
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

export const inboxRows = (w: World) => ({
  items: w.mem.raw().items.size,
  logs: w.mem.raw().logs.filter((l) => l.action.startsWith('project_inbox_item.')).length,
  events: w.mem.raw().events.filter((e) => e.type.startsWith('project_inbox.')).length,
});

/** Runs `fn` and checks that it changed nothing at all in the store and published nothing. */
export async function writesNothing(w: World, fn: () => Promise<unknown>): Promise<void> {
  const before = structuredClone(w.mem.raw());
  const published = w.published.length;
  await fn();
  expect(w.mem.raw()).toEqual(before);
  expect(w.published.length).toBe(published);
}

export const SEED_BODY = {
  type: 'derived_output.review',
  title: '候选摘要待确认',
  payload: { derived_output_id: 'dout_001', suggested_action: 'review' },
  source_session_id: 'sess_001',
};

/** Creates an item as `sender` and brings it to `status` through real decisions by the owner. */
export async function itemInOf(w: World, status: InboxItemStatus, sender = 'acc_deriver'): Promise<ProjectInboxItem> {
  const item = await w.inbox.create(w.ctx(sender), 'proj_main', { type: 'probe' });
  const decision: Record<InboxItemStatus, InboxDecision | null> = { pending: null, accepted: 'accept', rejected: 'reject', archived: 'archive' };
  const d = decision[status];
  if (d === null) return item;
  return w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision: d });
}
