/**
 * The one seeded test world of `@inbox-kit/core/testing`, written once and used by the HTTP kit
 * (`http-world.ts`, `withHttpSubject`), the adapters' own tests (http-fastify's `harness.ts`) and
 * anything else that needs the demo's cast: accounts, API keys, projects, members, Sessions with
 * turns, a recording event bus, a clock tests may freeze, a model that holds a Run in its first
 * step, the raw row reader a store's test supplies, and (for store-level tests) the storage kit's
 * record builders. Loads no test runner.
 *
 * World (ws_demo): acc_owner, acc_deriver, acc_deriver2, acc_observer, acc_outsider.
 *   proj_main (owner acc_owner; acc_deriver + acc_deriver2 derivers, acc_observer observer):
 *   sess_001 (floor A with pages A1, A2; floor B with page B1), sess_002 (floor C, page C1).
 *   proj_side (owner acc_owner): sess_side (floor S, page S1). sess_loose (no project, floor L, page L1).
 * World (ws_other): acc_stranger; proj_foreign with sess_foreign (floor F, page F1).
 * Keys: one per account, `service` (ws_demo, may act as any ws_demo account), `revoked`, and the
 * `admin` keys `admin` (acc_owner's, ws_demo) and `admin_other` (acc_stranger's, ws_other); their
 * ids in `keyIds`. A probe account of the administration routes, `acc_probe` (ws_demo), with a
 * key whose id is `keyIds.probe` (no secret: nothing authenticates with it).
 */
import type { Model } from '../live-inbox/agent-loop.js';
import { systemClock, type Clock } from '../ports/clock.js';
import { createLocalEventBus, type EventBus } from '../ports/event-bus.js';
import type { PlatformService } from '../platform/service.js';
import type { Floor, Page, ProjectEvent } from '../records.js';

export { newEvent, newItem, newLog, newProject, newSessionEvent, seedWorld as seedStoreWorld, type World as StoreWorld } from './conformance-checks/support.js';

/** What {@link seedTestWorld} made: secrets and key ids by name, and the seeded floors and pages. */
export interface SeededWorld {
  /** Secrets by name: the accounts' own keys, `service`, `revoked`, `admin`, `admin_other`. */
  keys: Record<string, string>;
  /** The id of each key of `keys`, and `probe` (acc_probe's key). */
  keyIds: Record<string, string>;
  floors: Record<'A' | 'B' | 'C' | 'S' | 'L' | 'F', Floor>;
  pages: Record<'A1' | 'A2' | 'B1' | 'C1' | 'S1' | 'L1' | 'F1', Page>;
}

/** The ws_demo accounts of the world, each with its own key. */
export const WORLD_ACCOUNTS = ['acc_owner', 'acc_deriver', 'acc_deriver2', 'acc_observer', 'acc_outsider'] as const;

/**
 * Seeds the world of the module comment through `platform` (so every write is the services'
 * own: Operation Log rows and Project Events included) on an empty store.
 * @throws whatever the services throw (e.g. `InboxKitError` `conflict` on a store already seeded).
 */
export async function seedTestWorld(platform: PlatformService): Promise<SeededWorld> {
  await platform.createWorkspace({ id: 'ws_demo', name: 'Demo workspace' });
  await platform.createWorkspace({ id: 'ws_other', name: 'Another tenant' });
  const keys: Record<string, string> = {};
  const keyIds: Record<string, string> = {};
  const issue = async (name: string, workspace_id: string, account_id: string, kind: 'standard' | 'service' | 'admin' = 'standard') => {
    const { key, secret } = await platform.issueApiKey({ workspace_id, account_id, kind });
    keys[name] = secret;
    keyIds[name] = key.id;
    return key;
  };
  for (const id of WORLD_ACCOUNTS) {
    await platform.createAccount({ id, name: id, workspace_ids: ['ws_demo'] });
    await issue(id, 'ws_demo', id);
  }
  await platform.createAccount({ id: 'acc_stranger', name: 'Sam Stranger', workspace_ids: ['ws_other'] });
  await issue('acc_stranger', 'ws_other', 'acc_stranger');
  await issue('service', 'ws_demo', 'acc_owner', 'service');
  await platform.revokeApiKey((await issue('revoked', 'ws_demo', 'acc_owner')).id);
  await issue('admin', 'ws_demo', 'acc_owner', 'admin');
  await issue('admin_other', 'ws_other', 'acc_stranger', 'admin');
  await platform.createAccount({ id: 'acc_probe', name: 'Probe', workspace_ids: ['ws_demo'] });
  keyIds.probe = (await platform.issueApiKey({ workspace_id: 'ws_demo', account_id: 'acc_probe' })).key.id;
  const owner = { principal: await platform.authenticate(keys.acc_owner!), request_id: 'req_seed' };
  const stranger = { principal: await platform.authenticate(keys.acc_stranger!), request_id: 'req_seed' };
  await platform.createProject(owner, { id: 'proj_main', name: 'Main project' });
  for (const [account_id, role] of [['acc_deriver', 'deriver'], ['acc_deriver2', 'deriver'], ['acc_observer', 'observer']] as const) {
    await platform.addMember(owner, 'proj_main', { account_id, role });
  }
  await platform.createSession(owner, { id: 'sess_001', project_id: 'proj_main', title: 'First session' });
  await platform.createSession(owner, { id: 'sess_002', project_id: 'proj_main', title: 'Second session' });
  const A = await platform.commitTurn(owner, 'sess_001', { content: { text: 'turn A' } });
  const A2 = await platform.addPage(owner, 'sess_001', A.floor.id, { content: { text: 'turn A again' } });
  const B = await platform.commitTurn(owner, 'sess_001', { content: { text: 'turn B' } });
  const C = await platform.commitTurn(owner, 'sess_002', { content: { text: 'turn C' } });
  await platform.createProject(owner, { id: 'proj_side', name: 'Side project' });
  await platform.createSession(owner, { id: 'sess_side', project_id: 'proj_side', title: null });
  const S = await platform.commitTurn(owner, 'sess_side', { content: 'side' });
  await platform.createSession(owner, { id: 'sess_loose', project_id: null, title: null });
  const L = await platform.commitTurn(owner, 'sess_loose', { content: 'loose' });
  await platform.createProject(stranger, { id: 'proj_foreign', name: 'Foreign project' });
  await platform.createSession(stranger, { id: 'sess_foreign', project_id: 'proj_foreign', title: null });
  const F = await platform.commitTurn(stranger, 'sess_foreign', { content: 'foreign' });
  return {
    keys, keyIds,
    floors: { A: A.floor, B: B.floor, C: C.floor, S: S.floor, L: L.floor, F: F.floor },
    pages: { A1: A.page, A2, B1: B.page, C1: C.page, S1: S.page, L1: L.page, F1: F.page },
  };
}

/** An event bus that also records every Project Event published to it (`published`, in order). */
export function recordingBus(): { bus: EventBus; published: ProjectEvent[] } {
  const local = createLocalEventBus();
  const published: ProjectEvent[] = [];
  const bus: EventBus = {
    publish: (m) => {
      if (m.kind === 'project_event') published.push(m.event);
      local.publish(m);
    },
    subscribe: (topic, listener) => local.subscribe(topic, listener),
    subscriberCount: () => local.subscriberCount(),
  };
  return { bus, published };
}

/** A clock tests may freeze: the wall clock (ms) unless frozen at `ms`. */
export interface TestClock extends Clock {
  freeze(ms: number): void;
  unfreeze(): void;
}

/** A {@link TestClock}, running. */
export function testClock(): TestClock {
  let frozen: number | undefined;
  return { now: () => frozen ?? systemClock.now(), freeze: (ms) => { frozen = ms; }, unfreeze: () => { frozen = undefined; } };
}

/**
 * The raw reader a store's test supplies to the HTTP kit (`openStore`): every table's row count
 * and every row, each as JSON, sorted per table, read with raw queries — not through the adapter
 * under test nor the Store port (for SQL stores: `kyselyRowReader` of `@inbox-kit/storage-kysely/testing`).
 */
export interface WorldRawReader {
  rowCounts?: () => Promise<Record<string, number>>;
  dumpRows?: () => Promise<Record<string, string[]>>;
}

/** A model whose steps wait until `release()` (then every step answers at once); `waiting()` resolves once a step is pending. */
export interface HeldModel extends Model {
  release(): void;
  waiting(): Promise<void>;
}

/** A {@link HeldModel}: a Run stays in its first step, so the Live Inbox is active, until released. */
export function heldModel(): HeldModel {
  let released = false;
  let wake: (() => void)[] = [];
  let onStep: (() => void)[] = [];
  let stepping = 0;
  return {
    step(_transcript, signal) {
      if (released) return Promise.resolve({ content: [{ type: 'text', text: 'done' }], continue: false });
      stepping++;
      for (const f of onStep.splice(0)) f();
      return new Promise((resolve, reject) => {
        if (signal.aborted) return reject(signal.reason);
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
        wake.push(() => resolve({ content: [{ type: 'text', text: 'done' }], continue: false }));
      });
    },
    release() {
      released = true;
      for (const f of wake.splice(0)) f();
      wake = [];
    },
    waiting() {
      return stepping > 0 ? Promise.resolve() : new Promise<void>((ok) => onStep.push(ok));
    },
  };
}
