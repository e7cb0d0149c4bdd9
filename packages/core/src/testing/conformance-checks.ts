/**
 * The checks of the storage conformance kit, as plain async functions (no test framework): each
 * takes a fresh subject `{ store, raw }`, exercises one guarantee of the storage port
 * (`ports/store.ts`) and throws a {@link ConformanceError} naming what broke. `conformance.ts`
 * registers them as a vitest suite; adapter authors can also call one directly (e.g. to prove that
 * a deliberately broken adapter fails it).
 *
 * The assertions do not trust the adapter under test where a second read path exists: counts,
 * sequences, statuses and stored JSON are read through the {@link RawReader} the adapter author
 * writes with raw queries (SQL, or the in-memory rows).
 *
 * Every check creates its own workspace, accounts and projects with fresh random ids, so checks
 * also work on a store shared between them.
 */
import type { AttemptOwnership, IdempotencyRecord, IdempotencyScope, InboxItemQuery, NewProjectEvent, NewSessionEvent, Store, StoreTx } from '../ports/store.js';
import type {
  Account, ApiKey, Floor, InboxItemStatus, JsonValue, Membership, OperationLog, Page, Project, ProjectEvent,
  ProjectInboxItem, Run, Session, SessionEvent, Workspace,
} from '../records.js';

/** Tables whose rows the kit counts per project. */
export type RawTable = 'project_inbox_items' | 'project_events' | 'operation_logs';

/**
 * A second read path into the adapter's storage, written by the adapter author with raw queries
 * (not through the `Store` under test). Every method reads committed state.
 */
export interface RawReader {
  /** Number of rows of `table` whose `project_id` is `project_id`. */
  countRows(table: RawTable, project_id: string): Promise<number>;
  /** The stored `sequence` of every Project Event of the project, ascending, duplicates included. */
  eventSequences(project_id: string): Promise<number[]>;
  /** The stored `seq` of every Session ledger entry of the session, ascending, duplicates included. */
  sessionEventSeqs(session_id: string): Promise<number[]>;
  /** The stored `status` of an inbox item, or `undefined` when there is no such row. */
  itemStatus(item_id: string): Promise<string | undefined>;
  /** The stored payload of an inbox item as JSON text (as kept in the column), or `undefined`. */
  itemPayloadText(item_id: string): Promise<string | undefined>;
  /** The stored `role` of a project member, or `undefined` when there is no such row. */
  memberRole(project_id: string, account_id: string): Promise<string | undefined>;
  /** The stored `status` of a Run, or `undefined`. */
  runStatus(run_id: string): Promise<string | undefined>;
  /**
   * The stored `request_hash` of every idempotency record of exactly this workspace, account and
   * key (byte-exact match), duplicates included.
   */
  idempotencyRequestHashes(scope: IdempotencyScope): Promise<string[]>;
  /**
   * The stored `host_id` of every attempt ownership row of the session, expired ones included
   * (at most one row is allowed; duplicates are returned so the check can see them).
   */
  attemptOwnerHosts(session_id: string): Promise<string[]>;
}

/** What a conformance factory returns: a fresh store, its raw reader, and how to dispose of both. */
export interface StoreConformanceSubject {
  store: Store;
  raw: RawReader;
  close(): Promise<void>;
}

/**
 * The sub-ports of the storage port (`ports/store.ts`), by which the kit groups its checks:
 * `identity` (IdentityStore), `projects` (ProjectStore), `inbox` (InboxStore), `events`
 * (ProjectEventStore), `sessions` (SessionStore), `runs` (RunStore), `idempotency`
 * (IdempotencyStore).
 */
export const STORE_PORT_GROUPS = ['identity', 'projects', 'inbox', 'events', 'sessions', 'runs', 'idempotency'] as const;

/** One sub-port of the storage port, as the kit names it. */
export type StorePortGroup = (typeof STORE_PORT_GROUPS)[number];

/** The methods of each sub-port (optional ones included), e.g. to build a partial store in a test. */
export const STORE_PORT_METHODS = {
  identity: ['insertWorkspace', 'getWorkspace', 'insertAccount', 'getWorkspaceAccount', 'insertApiKey', 'findApiKeyByHash', 'revokeApiKey'],
  projects: [
    'insertProject', 'getProject', 'lockProject', 'listProjectsForAccount', 'setProjectStatus', 'getMembership', 'upsertMembership',
    'deleteMembership', 'listMemberships',
  ],
  inbox: ['insertInboxItem', 'getInboxItem', 'getInboxItemWithAccess', 'listInboxItems', 'decideInboxItem'],
  events: ['appendProjectEvent', 'getProjectEvent', 'listProjectEvents', 'lastProjectEventSequence', 'appendOperationLog', 'listOperationLogs'],
  sessions: [
    'insertSession', 'getSession', 'lockSession', 'listSessions', 'getSessionWithAccess', 'pageSessions', 'updateSession', 'deleteSession',
    'insertFloor', 'getFloor', 'listFloors', 'lastFloorNumber', 'insertPage', 'getPage', 'listPages', 'appendSessionEvents',
    'listSessionEvents', 'lastSessionEventSeq',
  ],
  runs: ['insertRun', 'getRunningRun', 'listRunningRuns', 'endRun', 'claimAttemptOwnership', 'renewAttemptOwnership', 'releaseAttemptOwnership', 'findAttemptOwner'],
  idempotency: ['findIdempotencyRecord', 'insertIdempotencyRecord'],
} as const satisfies Record<StorePortGroup, readonly (keyof StoreTx)[]>;

// Compile-time proof that the lists name every method of the port exactly (a new method fails `tsc` until it is listed).
type ListedMethods = (typeof STORE_PORT_METHODS)[StorePortGroup][number];
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const everyMethodListed: Same<ListedMethods, keyof StoreTx> = true;
void everyMethodListed;

/** One check of the kit. */
export interface StoreConformanceCheck {
  /** Human-readable name (the vitest test title). */
  name: string;
  /** The sub-port whose guarantee it checks, or `transactions` for the units of work of `Store`. */
  group: StorePortGroup | 'transactions';
  /** Every sub-port whose methods the check calls (to seed its world or to read back): it runs only on a store that has them all. */
  requires: readonly StorePortGroup[];
  run(subject: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void>;
}

/** Thrown by a check when the adapter breaks a guarantee of the port. */
export class ConformanceError extends Error {
  override readonly name = 'ConformanceError';
}

// — assertion helpers —

function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new ConformanceError(message);
}

/** JSON with object keys sorted: equality of records regardless of key order. */
function canonical(value: unknown): string {
  const sortKeys = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sortKeys);
    if (v !== null && typeof v === 'object') {
      return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]));
    }
    return v;
  };
  return JSON.stringify(sortKeys(value)) ?? 'undefined';
}

/** Asserts two records are equal field by field (key order ignored; extra or missing keys fail). */
function assertSame(actual: unknown, expected: unknown, what: string): void {
  const a = canonical(actual);
  const e = canonical(expected);
  assert(a === e, `${what}: expected ${truncate(e)}, got ${truncate(a)}`);
}

/** Asserts a JSON value came back exactly as written, key order included. */
function assertSameJson(actual: unknown, expected: JsonValue, what: string): void {
  const a = JSON.stringify(actual) ?? 'undefined';
  const e = JSON.stringify(expected);
  assert(a === e, `${what}: JSON not returned as stored: expected ${truncate(e)}, got ${truncate(a)}`);
}

const truncate = (s: string, n = 400): string => (s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s);

const range = (from: number, to: number): number[] => Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);

function assertGapFree(values: number[], n: number, what: string): void {
  const sorted = [...values].sort((a, b) => a - b);
  assert(
    canonical(sorted) === canonical(range(1, n)),
    `${what}: expected exactly 1..${n} with no gap or duplicate, got ${truncate(JSON.stringify(sorted))}`,
  );
}

/** Runs all tasks at once; fails the check with the first rejection other than the `expected` ones. */
async function concurrently<T>(tasks: Array<() => Promise<T>>, what: string): Promise<T[]> {
  const settled = await Promise.allSettled(tasks.map((t) => t()));
  const failures = settled.filter((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failures.length > 0) {
    const reason = failures[0]?.reason;
    throw new ConformanceError(
      `${what}: ${failures.length} of ${tasks.length} concurrent calls failed; first: ${reason instanceof Error ? reason.message : String(reason)}`,
    );
  }
  return settled.map((s) => (s as PromiseFulfilledResult<T>).value);
}

/** Like `concurrently`, for tasks that throw `expected` on purpose (rolled-back transactions). */
async function concurrentlyAllowing<T>(tasks: Array<() => Promise<T>>, expected: unknown, what: string): Promise<Array<T | undefined>> {
  const settled = await Promise.allSettled(tasks.map((t) => t()));
  const failures = settled.filter((s): s is PromiseRejectedResult => s.status === 'rejected' && s.reason !== expected);
  if (failures.length > 0) {
    const reason = failures[0]?.reason;
    throw new ConformanceError(
      `${what}: ${failures.length} concurrent calls failed unexpectedly; first: ${reason instanceof Error ? reason.message : String(reason)}`,
    );
  }
  return settled.map((s) => (s.status === 'fulfilled' ? s.value : undefined));
}

// — fixtures —

const T0 = 1_700_000_000_000;
const randomToken = (): string => Math.random().toString(36).slice(2, 10);

interface World {
  u: string;
  ws: Workspace;
  owner: Account;
  deriver: Account;
  project: Project;
  session: Session;
}

/** Workspace, owner + deriver accounts, one active project and a session in it. */
async function seedWorld(store: Store, label: string): Promise<World> {
  const u = `${label}${randomToken()}`;
  const ws: Workspace = { id: `ws_${u}`, name: `ws ${u}`, created_at: T0 };
  const owner: Account = { id: `acc_${u}_owner`, name: 'Owner', created_at: T0 };
  const deriver: Account = { id: `acc_${u}_deriver`, name: 'Deriver', created_at: T0 };
  await store.insertWorkspace(ws);
  await store.insertAccount(owner, [ws.id]);
  await store.insertAccount(deriver, [ws.id]);
  const project = newProject(u, ws, owner, 'main', T0);
  await store.insertProject(project);
  await store.upsertMembership({ project_id: project.id, account_id: deriver.id, role: 'deriver', created_at: T0 });
  const session: Session = {
    id: `sess_${u}`, workspace_id: ws.id, project_id: project.id, title: 'source', created_by_account_id: deriver.id, created_at: T0,
    agent: null, environment_id: null, metadata: {}, updated_at: T0, archived_at: null,
  };
  await store.insertSession(session);
  return { u, ws, owner, deriver, project, session };
}

function newProject(u: string, ws: Workspace, owner: Account, suffix: string, at: number): Project {
  return { id: `proj_${u}_${suffix}`, workspace_id: ws.id, account_id: owner.id, name: `Project ${suffix}`, status: 'active', created_at: at, updated_at: at };
}

function newItem(w: World, project: Project, id: string, over: Partial<ProjectInboxItem> = {}): ProjectInboxItem {
  return {
    id, workspace_id: w.ws.id, project_id: project.id, account_id: project.account_id, sender_account_id: w.deriver.id,
    type: 'derived_output.review', title: 'A title', payload: { n: 1 }, source_event_id: null, source_session_id: null,
    source_floor_id: null, source_page_id: null, status: 'pending', decided_by_account_id: null, decided_at: null,
    created_at: T0, updated_at: T0, ...over,
  };
}

function newLog(w: World, project: Project, id: string, over: Partial<OperationLog> = {}): OperationLog {
  return {
    id, workspace_id: w.ws.id, project_id: project.id, actor_account_id: w.owner.id, action: 'project_inbox_item.create',
    target_type: 'project_inbox_item', target_id: `pinbox_${id}`, request_id: `req_${id}`, metadata: { payload_byte_count: 7 },
    created_at: T0, ...over,
  };
}

function newEvent(w: World, project: Project, id: string, over: Partial<NewProjectEvent> = {}): NewProjectEvent {
  return {
    id, workspace_id: w.ws.id, project_id: project.id, type: 'project_inbox.item.created', actor_account_id: w.deriver.id,
    session_id: null, floor_id: null, page_id: null, operation_log_id: null, correlation_id: `req_${id}`,
    causation_event_id: null, payload: { inbox_item_id: id }, visibility: 'owner', source: 'api', created_at: T0, ...over,
  };
}

function newSessionEvent(session: Session, id: string, over: Partial<NewSessionEvent> = {}): NewSessionEvent {
  return {
    id, session_id: session.id, type: 'user.message', run_id: null, message_id: null, content: [{ type: 'text', text: id }],
    floor_id: null, page_id: null, processed_at: T0, ...over,
  };
}

// — the checks —

/**
 * `transaction(fn)` is atomic: an error thrown after the first, second or third of the three writes
 * of a create (item, Operation Log row, Project Event) leaves no row behind and is rethrown
 * unchanged; the sequence number a rolled-back append took is given back; a commit keeps all
 * three; writes are visible to reads inside the same transaction.
 */
export async function checkTransactionAtomicity({ store, raw }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const w = await seedWorld(store, 'tx');
  const p = w.project;
  for (const failAfter of [1, 2, 3]) {
    const boom = new Error(`rollback after write ${failAfter}`);
    let caught: unknown;
    try {
      await store.transaction(async (tx) => {
        const item = newItem(w, p, `pinbox_${w.u}_rb${failAfter}`);
        await tx.insertInboxItem(item);
        assertSame(await tx.getInboxItem(p.id, item.id), item, 'read-your-writes inside a transaction');
        if (failAfter === 1) throw boom;
        await tx.appendOperationLog(newLog(w, p, `oplog_${w.u}_rb${failAfter}`));
        if (failAfter === 2) throw boom;
        await tx.appendProjectEvent(newEvent(w, p, `evt_${w.u}_rb${failAfter}`));
        throw boom;
      });
    } catch (error) {
      caught = error;
    }
    assert(caught === boom, `transaction must rethrow the error thrown by fn unchanged (failing after write ${failAfter}); got ${String(caught)}`);
    for (const table of ['project_inbox_items', 'operation_logs', 'project_events'] as const) {
      const n = await raw.countRows(table, p.id);
      assert(n === 0, `rollback after write ${failAfter}: ${table} must hold 0 rows, raw count is ${n}`);
    }
    assert((await store.getInboxItem(p.id, `pinbox_${w.u}_rb${failAfter}`)) === undefined, 'a rolled-back item must not be readable');
  }

  const item = newItem(w, p, `pinbox_${w.u}_ok`);
  const result = await store.transaction(async (tx) => {
    await tx.insertInboxItem(item);
    await tx.appendOperationLog(newLog(w, p, `oplog_${w.u}_ok`));
    const event = await tx.appendProjectEvent(newEvent(w, p, `evt_${w.u}_ok`));
    return { event };
  });
  assert(result.event.sequence === 1, `the first committed event must get sequence 1 (rolled-back appends give their number back), got ${result.event.sequence}`);
  for (const table of ['project_inbox_items', 'operation_logs', 'project_events'] as const) {
    const n = await raw.countRows(table, p.id);
    assert(n === 1, `commit: ${table} must hold 1 row, raw count is ${n}`);
  }
  assertSame(await raw.eventSequences(p.id), [1], 'stored sequences after the commit');
  assertSame(await store.getInboxItem(p.id, item.id), item, 'committed item read back');
}

/**
 * `decideInboxItem` is a conditional update: of 20 concurrent decisions on one pending item, each
 * in its own transaction that also writes an Operation Log row and a Project Event when it wins,
 * exactly one wins; the stored row is the winner's; exactly one log row and one event exist.
 * The same holds for 20 concurrent autocommit calls on a second item.
 */
export async function checkDecideHasOneWinner({ store, raw }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const w = await seedWorld(store, 'decide');
  const p = w.project;
  const item = newItem(w, p, `pinbox_${w.u}_race`);
  await store.insertInboxItem(item);
  const statuses: InboxItemStatus[] = ['accepted', 'rejected', 'archived'];
  const contenders = 20;

  const outcomes = await concurrently(range(0, contenders - 1).map((i) => () => store.transaction(async (tx) => {
    // Every contender saw `pending` before the race (as a service does when it reads first).
    await tx.getInboxItem(p.id, item.id);
    const patch = { status: statuses[i % 3] ?? 'accepted', decided_by_account_id: w.owner.id, decided_at: T0 + 1000 + i, updated_at: T0 + 1000 + i };
    const updated = await tx.decideInboxItem(p.id, item.id, 'pending', patch);
    if (!updated) return undefined;
    await tx.appendOperationLog(newLog(w, p, `oplog_${w.u}_d${i}`, { action: 'project_inbox_item.decide', target_id: item.id, created_at: patch.updated_at }));
    await tx.appendProjectEvent(newEvent(w, p, `evt_${w.u}_d${i}`, { type: `project_inbox.item.${patch.status}`, created_at: patch.updated_at }));
    return { i, updated, patch };
  })), 'concurrent decisions');

  const winners = outcomes.filter((o): o is NonNullable<typeof o> => o !== undefined);
  assert(winners.length === 1, `exactly one of ${contenders} concurrent decisions must win, ${winners.length} did`);
  const winner = winners[0];
  assert(winner !== undefined, 'a winner exists');
  const expected = { ...item, ...winner.patch };
  assertSame(winner.updated, expected, 'the item returned to the winner');
  assert((await raw.itemStatus(item.id)) === winner.patch.status, `stored status must be the winner's (${winner.patch.status}), raw status is ${await raw.itemStatus(item.id)}`);
  assertSame(await store.getInboxItem(p.id, item.id), expected, 'the item read back after the race');
  const logs = await raw.countRows('operation_logs', p.id);
  const events = await raw.countRows('project_events', p.id);
  assert(logs === 1 && events === 1, `one decision → one Operation Log row and one Project Event; raw counts are ${logs} and ${events}`);
  assertSame(await raw.eventSequences(p.id), [1], 'stored sequences after the race');

  // A late decision with the stale status loses too.
  const late = await store.decideInboxItem(p.id, item.id, 'pending', { status: 'rejected', decided_by_account_id: w.owner.id, decided_at: T0 + 9, updated_at: T0 + 9 });
  assert(late === undefined, 'a decision with a stale seen_status must return undefined');
  // The wrong project never matches.
  const other = newProject(w.u, w.ws, w.owner, 'other', T0);
  await store.insertProject(other);
  assert(
    (await store.decideInboxItem(other.id, item.id, winner.patch.status, { status: 'archived', decided_by_account_id: w.owner.id, decided_at: T0, updated_at: T0 })) === undefined,
    'decideInboxItem must not update an item of another project',
  );

  const second = newItem(w, p, `pinbox_${w.u}_race2`);
  await store.insertInboxItem(second);
  const autocommit = await concurrently(range(0, contenders - 1).map((i) => () => store.decideInboxItem(p.id, second.id, 'pending', {
    status: statuses[i % 3] ?? 'accepted', decided_by_account_id: w.owner.id, decided_at: T0 + i, updated_at: T0 + i,
  })), 'concurrent autocommit decisions');
  const autoWinners = autocommit.filter((x) => x !== undefined);
  assert(autoWinners.length === 1, `exactly one of ${contenders} concurrent autocommit decisions must win, ${autoWinners.length} did`);
  assert((await raw.itemStatus(second.id)) === autoWinners[0]?.status, 'stored status must be the autocommit winner\'s');
}

/**
 * `appendProjectEvent` allocates gap-free per-project sequences under concurrent writers: 200
 * concurrent create-like transactions in project A, 50 in project B and 20 that roll back after
 * appending, then 10 concurrent autocommit appends → A holds exactly 1..210, B 1..50; each
 * writer got the number stored for its event; `listProjectEvents` pages and filters ascending.
 */
export async function checkGapFreeProjectSequences({ store, raw }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const w = await seedWorld(store, 'seq');
  const a = w.project;
  const b = newProject(w.u, w.ws, w.owner, 'b', T0 + 1);
  await store.insertProject(b);
  const boom = new Error('rolled back on purpose');

  const create = (project: Project, tag: string, rollback: boolean) => () => store.transaction(async (tx) => {
    const at = T0 + 10;
    await tx.insertInboxItem(newItem(w, project, `pinbox_${w.u}_${tag}`, { created_at: at, updated_at: at }));
    await tx.appendOperationLog(newLog(w, project, `oplog_${w.u}_${tag}`, { created_at: at }));
    const event = await tx.appendProjectEvent(newEvent(w, project, `evt_${w.u}_${tag}`, {
      created_at: at, session_id: tag.endsWith('0') ? w.session.id : null, type: tag.endsWith('5') ? 'test.five' : 'project_inbox.item.created',
    }));
    if (rollback) throw boom;
    return event;
  });
  const tasks = [
    ...range(1, 200).map((i) => create(a, `a${i}`, false)),
    ...range(1, 50).map((i) => create(b, `b${i}`, false)),
    ...range(1, 10).map((i) => create(a, `ra${i}`, true)),
    ...range(1, 10).map((i) => create(b, `rb${i}`, true)),
  ];
  // Interleave the projects and the rollbacks.
  tasks.sort(() => Math.random() - 0.5);
  const results = (await concurrentlyAllowing(tasks, boom, 'concurrent appends')).filter((e): e is ProjectEvent => e !== undefined);

  const ofA = results.filter((e) => e.project_id === a.id);
  const ofB = results.filter((e) => e.project_id === b.id);
  assert(ofA.length === 200 && ofB.length === 50, `expected 200 + 50 committed appends, got ${ofA.length} + ${ofB.length}`);
  assertGapFree(ofA.map((e) => e.sequence), 200, 'sequences returned to the writers of project A');
  assertGapFree(ofB.map((e) => e.sequence), 50, 'sequences returned to the writers of project B');
  assertSame(await raw.eventSequences(a.id), range(1, 200), 'stored sequences of project A');
  assertSame(await raw.eventSequences(b.id), range(1, 50), 'stored sequences of project B');
  const items = await raw.countRows('project_inbox_items', a.id);
  assert(items === 200, `project A must hold the 200 committed items (rolled-back ones removed), raw count is ${items}`);

  const autocommit = await concurrently(range(1, 10).map((i) => () => store.appendProjectEvent(newEvent(w, a, `evt_${w.u}_auto${i}`))), 'concurrent autocommit appends');
  assertGapFree(autocommit.map((e) => e.sequence - 200), 10, 'sequences of autocommit appends after 200');
  assertSame(await raw.eventSequences(a.id), range(1, 210), 'stored sequences of project A after autocommit appends');

  // The stored events are what the writers were given, ascending, paged by `after`.
  const listed = await store.listProjectEvents({ project_id: a.id, after: 0, limit: 1000 });
  assertSame(listed.map((e) => e.sequence), range(1, 210), 'listProjectEvents order');
  const bySequence = new Map([...ofA, ...autocommit].map((e) => [e.sequence, e]));
  for (const e of listed) assertSame(e, bySequence.get(e.sequence), `event ${e.sequence} as listed vs as returned by appendProjectEvent`);
  assertSame(
    (await store.listProjectEvents({ project_id: a.id, after: 100, limit: 10 })).map((e) => e.sequence), range(101, 110),
    'listProjectEvents after 100, limit 10',
  );
  const fives = await store.listProjectEvents({ project_id: a.id, after: 0, types: ['test.five'], limit: 1000 });
  assert(fives.length === 20 && fives.every((e) => e.type === 'test.five'), `types filter: expected the 20 test.five events, got ${fives.length}`);
  assert((await store.listProjectEvents({ project_id: a.id, after: 0, types: [], limit: 1000 })).length === 0, 'types: [] matches no event');
  const ofSession = await store.listProjectEvents({ project_id: a.id, after: 0, session_id: w.session.id, limit: 1000 });
  assert(ofSession.length === 20 && ofSession.every((e) => e.session_id === w.session.id), `session_id filter: expected 20 events, got ${ofSession.length}`);
  const first = listed[0];
  assert(first !== undefined, 'events listed');
  assertSame(await store.getProjectEvent(a.id, first.id), first, 'getProjectEvent');
}

/**
 * Keyset pages of `listInboxItems` (and `listOperationLogs`) in `created_at DESC, id DESC` order
 * neither skip nor repeat rows when many rows share a `created_at`, with and without filters, for
 * every page size, and from cursor positions that name no row. Ids mix upper and lower case, digits,
 * `-` and `_`: `id DESC` is code-unit (byte) order.
 */
export async function checkKeysetPaging({ store }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const w = await seedWorld(store, 'page');
  const p = w.project;
  const q = newProject(w.u, w.ws, w.owner, 'q', T0);
  await store.insertProject(q);
  const s2: Session = { ...w.session, id: `${w.session.id}_2` };
  await store.insertSession(s2);

  const alphabet = '-0123456789ABCZ_abcz';
  const suffixes = new Set<string>();
  while (suffixes.size < 64) {
    suffixes.add(range(1, 3).map(() => alphabet[Math.floor(Math.random() * alphabet.length)]).join(''));
  }
  const statuses: InboxItemStatus[] = ['pending', 'accepted', 'rejected', 'archived'];
  const items = [...suffixes].map((s, k) => newItem(w, p, `pinbox_${w.u}_${s}`, {
    created_at: T0 + (k % 4) * 1000,
    updated_at: T0 + (k % 4) * 1000,
    status: statuses[k % 4] ?? 'pending',
    sender_account_id: k % 2 === 0 ? w.deriver.id : w.owner.id,
    source_session_id: [w.session.id, s2.id, null][k % 3] ?? null,
    type: k % 5 === 0 ? 'other.type' : 'derived_output.review',
    payload: { k },
  }));
  for (const item of [...items].sort(() => Math.random() - 0.5)) await store.insertInboxItem(item);
  for (const k of range(1, 5)) await store.insertInboxItem(newItem(w, q, `pinbox_${w.u}_q${k}`, { created_at: T0 + 1000 }));

  type Key = { created_at: number; id: string };
  const desc = (x: Key, y: Key) => y.created_at - x.created_at || (x.id < y.id ? 1 : x.id > y.id ? -1 : 0);
  const isAfter = (row: Key, after?: Key) => !after || row.created_at < after.created_at || (row.created_at === after.created_at && row.id < after.id);

  const filters: Array<Omit<InboxItemQuery, 'project_id' | 'limit' | 'after'>> = [
    {}, { status: 'pending' }, { sender_account_id: w.deriver.id }, { source_session_id: w.session.id },
    { type: 'other.type' }, { status: 'accepted', sender_account_id: w.owner.id }, { status: 'archived', source_session_id: s2.id },
  ];
  for (const filter of filters) {
    const expected = items.filter((i) => (filter.status === undefined || i.status === filter.status)
      && (filter.type === undefined || i.type === filter.type)
      && (filter.sender_account_id === undefined || i.sender_account_id === filter.sender_account_id)
      && (filter.source_session_id === undefined || i.source_session_id === filter.source_session_id)).sort(desc);
    for (const limit of [1, 3, 7, 64, 100]) {
      const seen: ProjectInboxItem[] = [];
      let after: Key | undefined;
      for (let guard = 0; guard <= expected.length + 1; guard += 1) {
        const page = await store.listInboxItems({ project_id: p.id, ...filter, limit, ...(after ? { after } : {}) });
        assert(page.length <= limit, `a page must hold at most limit=${limit} rows, got ${page.length}`);
        seen.push(...page);
        const last = page[page.length - 1];
        if (page.length < limit || !last) break;
        after = { created_at: last.created_at, id: last.id };
      }
      assertSame(
        seen.map((i) => i.id), expected.map((i) => i.id),
        `paging ${JSON.stringify(filter)} with limit ${limit} (rows sharing created_at must be neither skipped nor repeated)`,
      );
    }
  }
  const anyItem = items[0];
  assert(anyItem !== undefined, 'items seeded');
  const listedOne = (await store.listInboxItems({ project_id: p.id, limit: 64 })).find((i) => i.id === anyItem.id);
  assertSame(listedOne, anyItem, 'a listed item equals the stored item');

  // Cursor positions that name no stored row.
  for (const after of [
    { created_at: T0 + 2000, id: `pinbox_${w.u}_M` }, { created_at: T0 + 1500, id: 'zzz' }, { created_at: T0 + 3000, id: '' },
    { created_at: T0 + 9999, id: 'a' }, { created_at: T0 - 1, id: 'z' },
  ]) {
    const expected = items.filter((i) => isAfter(i, after)).sort(desc).slice(0, 10);
    const page = await store.listInboxItems({ project_id: p.id, after, limit: 10 });
    assertSame(page.map((i) => i.id), expected.map((i) => i.id), `page after ${JSON.stringify(after)}`);
  }

  // Operation Log keyset pages.
  const logs = [...suffixes].slice(0, 30).map((s, k) => newLog(w, p, `oplog_${w.u}_${s}`, { created_at: T0 + (k % 3) }));
  for (const log of [...logs].sort(() => Math.random() - 0.5)) await store.appendOperationLog(log);
  await store.appendOperationLog(newLog(w, q, `oplog_${w.u}_q`, { created_at: T0 + 1 }));
  const expectedLogs = [...logs].sort(desc);
  const seenLogs: OperationLog[] = [];
  let afterLog: Key | undefined;
  for (let guard = 0; guard < 40; guard += 1) {
    const page = await store.listOperationLogs({ project_id: p.id, limit: 4, ...(afterLog ? { after: afterLog } : {}) });
    seenLogs.push(...page);
    const last = page[page.length - 1];
    if (page.length < 4 || !last) break;
    afterLog = { created_at: last.created_at, id: last.id };
  }
  assertSame(seenLogs.map((l) => l.id), expectedLogs.map((l) => l.id), 'Operation Log pages');
  assertSame(seenLogs[0], expectedLogs[0], 'a listed Operation Log row equals the stored row');
}

/**
 * Scoping: every lookup that takes a `workspace_id` returns `undefined` for a row of another
 * workspace (as for a missing row); items and events are found only through their own project;
 * project and session lists stay inside the workspace; `listProjectsForAccount` lists what the
 * account owns or is a member of, newest first.
 */
export async function checkWorkspaceScoping({ store }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const w = await seedWorld(store, 'scope');
  const p = w.project;
  const ws2: Workspace = { id: `ws_${w.u}_2`, name: 'other', created_at: T0 };
  await store.insertWorkspace(ws2);
  const stranger: Account = { id: `acc_${w.u}_stranger`, name: 'Stranger', created_at: T0 };
  await store.insertAccount(stranger, [ws2.id]);
  const floor: Floor = { id: `floor_${w.u}`, workspace_id: w.ws.id, session_id: w.session.id, number: 1, branch: 'main', state: 'committed', created_at: T0 };
  await store.insertFloor(floor);
  const page: Page = { id: `page_${w.u}`, workspace_id: w.ws.id, session_id: w.session.id, floor_id: floor.id, version: 1, content: { text: 'hi' }, created_at: T0 };
  await store.insertPage(page);
  const item = newItem(w, p, `pinbox_${w.u}`);
  await store.insertInboxItem(item);
  const event = await store.appendProjectEvent(newEvent(w, p, `evt_${w.u}`));
  const other = newProject(w.u, w.ws, w.owner, 'other', T0 + 5);
  await store.insertProject(other);
  const foreign = newProject(w.u, ws2, stranger, 'foreign', T0 + 9);
  await store.insertProject(foreign);

  assertSame(await store.getWorkspace(w.ws.id), w.ws, 'getWorkspace');
  assert((await store.getWorkspace(`ws_${w.u}_missing`)) === undefined, 'getWorkspace of a missing id');
  assertSame(await store.getProject(w.ws.id, p.id), p, 'getProject in its workspace');
  assert((await store.getProject(ws2.id, p.id)) === undefined, 'getProject with another workspace_id must be undefined');
  assertSame(await store.getSession(w.ws.id, w.session.id), w.session, 'getSession in its workspace');
  assert((await store.getSession(ws2.id, w.session.id)) === undefined, 'getSession with another workspace_id must be undefined');
  assertSame(await store.getFloor(w.ws.id, floor.id), floor, 'getFloor in its workspace');
  assert((await store.getFloor(ws2.id, floor.id)) === undefined, 'getFloor with another workspace_id must be undefined');
  assertSame(await store.getPage(w.ws.id, page.id), page, 'getPage in its workspace');
  assert((await store.getPage(ws2.id, page.id)) === undefined, 'getPage with another workspace_id must be undefined');
  assertSame(await store.getWorkspaceAccount(w.ws.id, w.owner.id), w.owner, 'getWorkspaceAccount of a member');
  assert((await store.getWorkspaceAccount(ws2.id, w.owner.id)) === undefined, 'getWorkspaceAccount of a non-member must be undefined');
  assert((await store.getWorkspaceAccount(w.ws.id, stranger.id)) === undefined, 'getWorkspaceAccount of another workspace\'s account must be undefined');

  assertSame(await store.getInboxItem(p.id, item.id), item, 'getInboxItem in its project');
  assert((await store.getInboxItem(other.id, item.id)) === undefined, 'getInboxItem through another project must be undefined');
  assertSame(await store.getProjectEvent(p.id, event.id), event, 'getProjectEvent in its project');
  assert((await store.getProjectEvent(other.id, event.id)) === undefined, 'getProjectEvent through another project must be undefined');
  assert((await store.listInboxItems({ project_id: other.id, limit: 10 })).length === 0, 'listInboxItems of another project must not list the item');

  assertSame((await store.listProjectsForAccount(w.ws.id, w.owner.id)).map((x) => x.id), [other.id, p.id], 'projects of the owner, newest first');
  assertSame((await store.listProjectsForAccount(w.ws.id, w.deriver.id)).map((x) => x.id), [p.id], 'projects of a member');
  assertSame((await store.listProjectsForAccount(ws2.id, w.owner.id)).map((x) => x.id), [], 'projects listed in another workspace');
  assertSame((await store.listProjectsForAccount(ws2.id, stranger.id)).map((x) => x.id), [foreign.id], 'projects of the other workspace');
  assertSame(await store.listProjectsForAccount(w.ws.id, w.owner.id), [other, p], 'listed project records');
  assert(!(await store.listSessions(ws2.id, {})).some((s) => s.id === w.session.id), 'listSessions of another workspace must not list the session');
}

/**
 * Idempotency keys: `insertIdempotencyRecord` is a conditional insert on `(workspace_id,
 * account_id, key)` — the first call stores the record and returns true, a later one returns false
 * and changes nothing; lookups match all three byte for byte; a rollback releases the key (also for
 * a competitor already waiting on it); of 20 concurrent claims of one key (half in transactions
 * that also write an item, a log row and an event when they win, as a create does) exactly one
 * wins, and every losing transaction then reads the winner's record.
 */
export async function checkIdempotencyRecords({ store, raw }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const w = await seedWorld(store, 'idem');
  const p = w.project;
  const ws2: Workspace = { id: `ws_${w.u}_2`, name: 'second', created_at: T0 };
  await store.insertWorkspace(ws2);
  const hash = (n: number | string) => String(n).padStart(64, '0').slice(-64);
  const record = (key: string, n: number | string, over: Partial<IdempotencyRecord> = {}): IdempotencyRecord => ({
    workspace_id: w.ws.id, account_id: w.deriver.id, key, request_hash: hash(n), resource_type: 'project_inbox_item',
    resource_id: `pinbox_${w.u}_${n}`, created_at: T0 + 1, ...over,
  });
  const scopeOf = (r: IdempotencyRecord): IdempotencyScope => ({ workspace_id: r.workspace_id, account_id: r.account_id, key: r.key });

  const first = record('Key-1 ~!"\\', 1);
  assert((await store.findIdempotencyRecord(scopeOf(first))) === undefined, 'findIdempotencyRecord of an unused key must be undefined');
  assert((await store.insertIdempotencyRecord(first)) === true, 'the first insertIdempotencyRecord of a key must return true');
  assertSame(await store.findIdempotencyRecord(scopeOf(first)), first, 'findIdempotencyRecord after the insert');
  assertSame(await raw.idempotencyRequestHashes(scopeOf(first)), [first.request_hash], 'stored record after the insert');
  const again = record(first.key, 2);
  assert((await store.insertIdempotencyRecord(again)) === false, 'a second insertIdempotencyRecord of the same key must return false');
  assertSame(await store.findIdempotencyRecord(scopeOf(first)), first, 'the record after a refused insert is unchanged');
  assertSame(await raw.idempotencyRequestHashes(scopeOf(first)), [first.request_hash], 'stored records after a refused insert');

  // Exact match on all three parts: each variant is another key, free to claim.
  const variants = [
    record(first.key, 3, { account_id: w.owner.id }),
    record(first.key, 4, { workspace_id: ws2.id }),
    record(first.key.toLowerCase(), 5),
    record(`${first.key} `, 6),
    record(first.key.slice(0, -1), 7),
  ];
  for (const v of variants) {
    assert((await store.findIdempotencyRecord(scopeOf(v))) === undefined, `findIdempotencyRecord(${JSON.stringify(scopeOf(v))}) must not match another scope`);
  }
  for (const v of variants) {
    assert((await store.insertIdempotencyRecord(v)) === true, `insertIdempotencyRecord(${JSON.stringify(scopeOf(v))}) is another key and must return true`);
  }
  for (const v of variants) assertSame(await store.findIdempotencyRecord(scopeOf(v)), v, `record of ${JSON.stringify(scopeOf(v))}`);
  assertSame(await store.findIdempotencyRecord(scopeOf(first)), first, 'the first record after the variants');

  // A rollback releases the key; inside the transaction its own insert is visible.
  const boom = new Error('rolled back on purpose');
  const rolled = record('rolled-back', 8);
  let caught: unknown;
  try {
    await store.transaction(async (tx) => {
      assert((await tx.insertIdempotencyRecord(rolled)) === true, 'insertIdempotencyRecord inside a transaction');
      assertSame(await tx.findIdempotencyRecord(scopeOf(rolled)), rolled, 'read-your-writes of an idempotency record inside a transaction');
      throw boom;
    });
  } catch (error) {
    caught = error;
  }
  assert(caught === boom, 'the transaction rethrows');
  assert((await store.findIdempotencyRecord(scopeOf(rolled))) === undefined, 'a rolled-back idempotency record must not be readable');
  assertSame(await raw.idempotencyRequestHashes(scopeOf(rolled)), [], 'stored records after the rollback');

  // A competitor waiting on a claim that then rolls back gets the key.
  const held = record('held', 9);
  const waiting = record('held', 10);
  let claimed!: () => void;
  const claimedPromise = new Promise<void>((resolve) => (claimed = resolve));
  const holder = store.transaction(async (tx) => {
    assert((await tx.insertIdempotencyRecord(held)) === true, 'the holder claims the key');
    claimed();
    await new Promise((resolve) => setTimeout(resolve, 25)); // let the competitor queue behind the claim
    throw boom;
  }).then(() => undefined, (error: unknown) => error);
  await claimedPromise;
  const competitor = store.insertIdempotencyRecord(waiting);
  assert((await holder) === boom, 'the holder rolls back');
  assert((await competitor) === true, 'a competitor waiting on a claim that rolls back must get the key (true)');
  assertSame(await store.findIdempotencyRecord(scopeOf(waiting)), waiting, 'the competitor\'s record');

  // 20 concurrent claims of one key: exactly one winner; losing transactions read the winner's record.
  const key = 'concurrent-key';
  const contenders = 20;
  const outcomes = await concurrently(range(0, contenders - 1).map((i) => async () => {
    const mine = record(key, 100 + i);
    if (i % 2 === 1) return { i, won: await store.insertIdempotencyRecord(mine), seen: undefined as IdempotencyRecord | undefined };
    return store.transaction(async (tx) => {
      const won = await tx.insertIdempotencyRecord(mine);
      if (!won) return { i, won, seen: await tx.findIdempotencyRecord(scopeOf(mine)) };
      await tx.insertInboxItem(newItem(w, p, mine.resource_id));
      await tx.appendOperationLog(newLog(w, p, `oplog_${w.u}_k${i}`, { target_id: mine.resource_id }));
      await tx.appendProjectEvent(newEvent(w, p, `evt_${w.u}_k${i}`, { payload: { inbox_item_id: mine.resource_id } }));
      return { i, won, seen: undefined };
    });
  }), 'concurrent insertIdempotencyRecord');
  const winners = outcomes.filter((o) => o.won);
  assert(winners.length === 1, `exactly one of ${contenders} concurrent claims of one key must win, ${winners.length} did`);
  const winner = record(key, 100 + (winners[0]?.i ?? -1));
  assertSame(await raw.idempotencyRequestHashes(scopeOf(winner)), [winner.request_hash], 'stored record after the race');
  assertSame(await store.findIdempotencyRecord(scopeOf(winner)), winner, 'the record after the race is the winner\'s');
  for (const o of outcomes) {
    if (o.won || o.i % 2 === 1) continue;
    assertSame(o.seen, winner, `losing transaction #${o.i} must read the winner's record after its refused insert`);
  }
  const items = await raw.countRows('project_inbox_items', p.id);
  const events = await raw.countRows('project_events', p.id);
  const expected = (winners[0]?.i ?? 1) % 2 === 0 ? 1 : 0;
  assert(items === expected && events === expected, `only the winning transaction writes: expected ${expected} item and event, raw counts are ${items} and ${events}`);
}

/** `value` wrapped in `depth` arrays. */
const nest = (depth: number, value: JsonValue): JsonValue => (depth === 0 ? value : [nest(depth - 1, value)]);

/** Payloads that must come back exactly as written (deep equality and key order). */
export const JSON_SAMPLES: readonly JsonValue[] = [
  { a: 1, b: [1, 2] },
  { z: 1, a: 2, m: { y: [], b: {}, a: null } },
  [], {}, 0, 1, -1, 0.1, 'x', '', true, false, null,
  'emoji 😀 👩‍👩‍👧 — ünïcødé 中文 🇫🇷',
  { text: 'nul \u0000 byte', seps: '\u2028\u2029', quotes: '"q" \\ \'s\'', ctrl: '\t\n\r\b\f' },
  { numbers: [-0.5, 1e21, 1.7976931348623157e308, 5e-324, 123456789012345, -9007199254740991] },
  { '': 'empty key', 'key with spaces': 1, 'ключ': 'значение', '😀': '😀' },
  nest(40, { deep: nest(40, 'bottom') }),
  [1, 'two', { three: 3 }, [4], null, true],
  { big: 'x'.repeat(200_000), list: range(1, 2000) },
];

/**
 * JSON round trip: item payloads, event payloads, Operation Log metadata, page content and session
 * ledger content are returned exactly as written — same value, same key order — by every read
 * (get, list, the row `decideInboxItem` returns), and the stored text parses to the same value.
 */
export async function checkJsonRoundTrip({ store, raw }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const w = await seedWorld(store, 'json');
  const p = w.project;
  const floor: Floor = { id: `floor_${w.u}`, workspace_id: w.ws.id, session_id: w.session.id, number: 1, branch: 'main', state: 'committed', created_at: T0 };
  await store.insertFloor(floor);
  for (const [k, sample] of JSON_SAMPLES.entries()) {
    const what = `sample #${k}`;
    const item = newItem(w, p, `pinbox_${w.u}_${k}`, { payload: sample, created_at: T0 + k });
    await store.insertInboxItem(item);
    assertSameJson((await store.getInboxItem(p.id, item.id))?.payload, sample, `${what}: getInboxItem`);
    const listed = await store.listInboxItems({ project_id: p.id, limit: 1 });
    assertSameJson(listed[0]?.payload, sample, `${what}: listInboxItems`);
    const text = await raw.itemPayloadText(item.id);
    assert(text !== undefined, `${what}: raw payload of ${item.id} missing`);
    assertSameJson(JSON.parse(text), sample, `${what}: stored payload text`);
    const decided = await store.decideInboxItem(p.id, item.id, 'pending', { status: 'accepted', decided_by_account_id: w.owner.id, decided_at: T0, updated_at: T0 });
    assertSameJson(decided?.payload, sample, `${what}: row returned by decideInboxItem`);

    const sampleObject = sample !== null && typeof sample === 'object' && !Array.isArray(sample) ? sample : { value: sample };
    const appended = await store.appendProjectEvent(newEvent(w, p, `evt_${w.u}_${k}`, { payload: sampleObject }));
    assertSameJson(appended.payload, sampleObject, `${what}: appendProjectEvent result`);
    assertSameJson((await store.getProjectEvent(p.id, appended.id))?.payload, sampleObject, `${what}: getProjectEvent`);
    await store.appendOperationLog(newLog(w, p, `oplog_${w.u}_${k}`, { metadata: sampleObject, created_at: T0 + 100 + k }));
    assertSameJson((await store.listOperationLogs({ project_id: p.id, limit: 1 }))[0]?.metadata, sampleObject, `${what}: Operation Log metadata`);

    const page: Page = { id: `page_${w.u}_${k}`, workspace_id: w.ws.id, session_id: w.session.id, floor_id: floor.id, version: k + 1, content: sample, created_at: T0 };
    await store.insertPage(page);
    assertSameJson((await store.getPage(w.ws.id, page.id))?.content, sample, `${what}: getPage`);
    const [ledger] = await store.appendSessionEvents([newSessionEvent(w.session, `sevt_${w.u}_${k}`, { content: sample })]);
    assertSameJson(ledger?.content, sample, `${what}: appendSessionEvents result`);
    const listedLedger = await store.listSessionEvents({ session_id: w.session.id, after: k, limit: 1 });
    assertSameJson(listedLedger[0]?.content, sample, `${what}: listSessionEvents`);
  }
  const pages = await store.listPages(floor.id);
  assert(pages.length === JSON_SAMPLES.length, 'listPages lists every page');
  for (const [k, sample] of JSON_SAMPLES.entries()) assertSameJson(pages[k]?.content, sample, `sample #${k}: listPages`);
}

/**
 * Memberships: `upsertMembership` inserts, then changes only the role (created_at kept);
 * `deleteMembership` reports whether a row was removed; lists are ascending by `created_at`.
 */
export async function checkMemberships({ store, raw }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const w = await seedWorld(store, 'member');
  const p = w.project;
  const observer: Account = { id: `acc_${w.u}_observer`, name: 'Observer', created_at: T0 };
  await store.insertAccount(observer, [w.ws.id]);

  const first: Membership = { project_id: p.id, account_id: observer.id, role: 'observer', created_at: T0 + 50 };
  assertSame(await store.upsertMembership(first), first, 'upsertMembership (insert) result');
  assert((await raw.memberRole(p.id, observer.id)) === 'observer', 'stored role after insert');
  const changed = await store.upsertMembership({ ...first, role: 'deriver', created_at: T0 + 99 });
  assertSame(changed, { ...first, role: 'deriver' }, 'upsertMembership (role change) result keeps created_at');
  assert((await raw.memberRole(p.id, observer.id)) === 'deriver', 'stored role after the change');
  assertSame(await store.getMembership(p.id, observer.id), changed, 'getMembership after the change');
  const deriverMembership: Membership = { project_id: p.id, account_id: w.deriver.id, role: 'deriver', created_at: T0 };
  assertSame(await store.listMemberships(p.id), [deriverMembership, changed], 'listMemberships ascending by created_at');

  assert((await store.deleteMembership(p.id, observer.id)) === true, 'deleteMembership of a member returns true');
  assert((await raw.memberRole(p.id, observer.id)) === undefined, 'the deleted membership row is gone');
  assert((await store.deleteMembership(p.id, observer.id)) === false, 'deleteMembership of a non-member returns false');
  assert((await store.getMembership(p.id, observer.id)) === undefined, 'getMembership after delete');
  assertSame(await store.listMemberships(p.id), [deriverMembership], 'listMemberships after delete');
}

/**
 * Runs: `getRunningRun` finds the running Run; `endRun` is conditional — of 10 concurrent calls
 * (half in transactions) exactly one ends it; later calls return false.
 */
export async function checkEndRunConditional({ store, raw }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const w = await seedWorld(store, 'run');
  const run: Run = { id: `run_${w.u}`, session_id: w.session.id, status: 'running', started_at: T0, ended_at: null, outcome: null };
  await store.insertRun(run);
  assertSame(await store.getRunningRun(w.session.id), run, 'getRunningRun');
  const outcomes = ['completed', 'cancelled', 'failed'];
  const results = await concurrently(range(0, 9).map((i) => () => (i % 2 === 0
    ? store.transaction((tx) => tx.endRun(run.id, outcomes[i % 3] ?? 'completed', T0 + 100 + i))
    : store.endRun(run.id, outcomes[i % 3] ?? 'completed', T0 + 100 + i))), 'concurrent endRun');
  const winners = results.map((r, i) => (r ? i : -1)).filter((i) => i >= 0);
  assert(winners.length === 1, `exactly one of 10 concurrent endRun calls must end the run, ${winners.length} did`);
  assert((await raw.runStatus(run.id)) === 'idle', 'stored run status after endRun');
  assert((await store.getRunningRun(w.session.id)) === undefined, 'no running run after endRun');
  assert((await store.endRun(run.id, 'completed', T0 + 999)) === false, 'endRun of an ended run returns false');
  assert((await store.endRun(`run_${w.u}_missing`, 'completed', T0)) === false, 'endRun of a missing run returns false');
  const next: Run = { ...run, id: `run_${w.u}_2`, started_at: T0 + 500 };
  await store.insertRun(next);
  assertSame(await store.getRunningRun(w.session.id), next, 'getRunningRun finds the new run');
}

/**
 * Running Runs: `listRunningRuns(limit)` returns every `running` Run of every Session (the subject's
 * store is isolated, so only this check's Runs), oldest first — `started_at` ascending, then `id`
 * in byte order (`B` before `a`, whatever the database collation) — at most `limit`; never an
 * ended Run (inserted ended, or ended by `endRun`); inside a transaction it sees the transaction's
 * own insert.
 */
export async function checkListRunningRuns({ store, raw }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const w = await seedWorld(store, 'running');
  const sessions: Session[] = [w.session];
  for (const n of [2, 3, 4]) {
    const s: Session = { ...w.session, id: `${w.session.id}_${n}`, created_at: T0 + n };
    await store.insertSession(s);
    sessions.push(s);
  }
  const [s1, s2, s3, s4] = sessions as [Session, Session, Session, Session];
  const run = (session: Session, suffix: string, started_at: number, over: Partial<Run> = {}): Run => ({
    id: `run_${w.u}_${suffix}`, session_id: session.id, status: 'running', started_at, ended_at: null, outcome: null, ...over,
  });
  assertSame(await store.listRunningRuns(10), [], 'listRunningRuns of a store without Runs');
  const ended = run(s1, 'ended', T0, { status: 'idle', ended_at: T0 + 1, outcome: 'completed' });
  const lower = run(s1, 'a', T0 + 10);
  const upper = run(s2, 'B', T0 + 10);
  const oldest = run(s3, 'z', T0 + 5);
  for (const r of [lower, ended, upper, oldest]) await store.insertRun(r);
  assertSame(await store.listRunningRuns(10), [oldest, upper, lower], 'listRunningRuns: running Runs only, oldest first, ties by id in byte order');
  assertSame(await store.listRunningRuns(2), [oldest, upper], 'listRunningRuns(2) returns the two oldest');
  assertSame(await store.listRunningRuns(0), [], 'listRunningRuns(0) returns none');
  assert(await store.endRun(upper.id, 'failed', T0 + 20), 'endRun of a running Run');
  assert((await raw.runStatus(upper.id)) === 'idle', 'stored status of the ended Run');
  assertSame(await store.listRunningRuns(10), [oldest, lower], 'listRunningRuns after endRun leaves the ended Run out');
  const newest = run(s4, 'new', T0 + 30);
  const seen = await store.transaction(async (tx) => {
    await tx.insertRun(newest);
    return tx.listRunningRuns(10);
  });
  assertSame(seen, [oldest, lower, newest], 'listRunningRuns inside a transaction sees its own insert');
  assertSame(await store.listRunningRuns(10), [oldest, lower, newest], 'listRunningRuns after the commit');
}

/**
 * Session ledger: `appendSessionEvents` hands out gap-free per-session `seq` values, consecutive
 * within one call, under 40 concurrent calls (half in transactions) plus 5 that roll back;
 * `listSessionEvents` pages ascending by `seq`.
 */
export async function checkGapFreeSessionSeq({ store, raw }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const w = await seedWorld(store, 'ledger');
  const other: Session = { ...w.session, id: `${w.session.id}_other` };
  await store.insertSession(other);
  assertSame(await store.appendSessionEvents([]), [], 'appendSessionEvents([])');
  const boom = new Error('rolled back on purpose');
  const batch = (tag: string, size: number, session: Session) => range(1, size).map((j) => newSessionEvent(session, `sevt_${w.u}_${tag}_${j}`, { processed_at: T0 + j }));
  const tasks = [
    ...range(1, 40).map((i) => () => {
      const events = batch(`c${i}`, 1 + (i % 3), w.session);
      return i % 2 === 0 ? store.transaction((tx) => tx.appendSessionEvents(events)) : store.appendSessionEvents(events);
    }),
    ...range(1, 5).map((i) => () => store.transaction(async (tx) => {
      await tx.appendSessionEvents(batch(`r${i}`, 2, w.session));
      throw boom;
    })),
    ...range(1, 10).map((i) => () => store.appendSessionEvents(batch(`o${i}`, 1, other))),
  ].sort(() => Math.random() - 0.5);
  const results = (await concurrentlyAllowing(tasks, boom, 'concurrent appendSessionEvents')).filter((r): r is SessionEvent[] => r !== undefined);
  const mine = results.filter((r) => r[0]?.session_id === w.session.id);
  const total = mine.reduce((n, r) => n + r.length, 0);
  assert(total === range(1, 40).reduce((n, i) => n + 1 + (i % 3), 0), `expected every committed ledger entry, got ${total}`);
  for (const r of mine) {
    const seqs = r.map((e) => e.seq);
    const start = seqs[0] ?? 0;
    assertSame(seqs, range(start, start + r.length - 1), 'seq values of one call must be consecutive and in order');
  }
  assertGapFree(mine.flat().map((e) => e.seq), total, 'seq values returned to the writers');
  assertSame(await raw.sessionEventSeqs(w.session.id), range(1, total), 'stored seq values');
  assertSame(await raw.sessionEventSeqs(other.id), range(1, 10), 'stored seq values of the other session');

  const listed = await store.listSessionEvents({ session_id: w.session.id, after: 0, limit: 1000 });
  const bySeq = new Map(mine.flat().map((e) => [e.seq, e]));
  assertSame(listed.map((e) => e.seq), range(1, total), 'listSessionEvents order');
  for (const e of listed) assertSame(e, bySeq.get(e.seq), `ledger entry ${e.seq} as listed vs as returned`);
  assertSame((await store.listSessionEvents({ session_id: w.session.id, after: 5, limit: 3 })).map((e) => e.seq), [6, 7, 8], 'listSessionEvents after 5, limit 3');
}

/**
 * Identity and projects: workspaces, accounts in several workspaces, API keys by hash, revocation
 * conditional on not being revoked, `setProjectStatus` conditional (of 10 concurrent archive calls
 * exactly one returns the row); records come back with exactly their fields.
 */
export async function checkIdentityAndProjects({ store }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const w = await seedWorld(store, 'ident');
  const ws2: Workspace = { id: `ws_${w.u}_2`, name: 'second', created_at: T0 + 1 };
  await store.insertWorkspace(ws2);
  const both: Account = { id: `acc_${w.u}_both`, name: 'In both', created_at: T0 };
  await store.insertAccount(both, [w.ws.id, ws2.id]);
  assertSame(await store.getWorkspaceAccount(w.ws.id, both.id), both, 'account in its first workspace');
  assertSame(await store.getWorkspaceAccount(ws2.id, both.id), both, 'account in its second workspace');

  const key: ApiKey = { id: `key_${w.u}`, workspace_id: w.ws.id, account_id: both.id, kind: 'service', key_hash: `hash_${w.u}`, created_at: T0, revoked_at: null };
  await store.insertApiKey(key);
  assertSame(await store.findApiKeyByHash(key.key_hash), key, 'findApiKeyByHash');
  assert((await store.findApiKeyByHash(`hash_${w.u}_missing`)) === undefined, 'findApiKeyByHash of an unknown hash');
  await store.revokeApiKey(key.id, T0 + 10);
  await store.revokeApiKey(key.id, T0 + 20);
  assertSame(await store.findApiKeyByHash(key.key_hash), { ...key, revoked_at: T0 + 10 }, 'a revoked key keeps its first revocation time');

  const p = w.project;
  const results = await concurrently(range(0, 9).map((i) => () => (i % 2 === 0
    ? store.transaction((tx) => tx.setProjectStatus(p.id, 'archived', T0 + 100 + i))
    : store.setProjectStatus(p.id, 'archived', T0 + 100 + i))), 'concurrent setProjectStatus');
  const winners = results.filter((r): r is Project => r !== undefined);
  assert(winners.length === 1, `exactly one of 10 concurrent setProjectStatus(archived) calls must return the project, ${winners.length} did`);
  const archived = winners[0];
  assert(archived !== undefined && archived.status === 'archived', 'the returned project is archived');
  assertSame(archived, { ...p, status: 'archived', updated_at: archived.updated_at }, 'the archived project record');
  assert(archived.updated_at >= T0 + 100 && archived.updated_at <= T0 + 109, 'updated_at is the winner\'s time');
  assertSame(await store.getProject(w.ws.id, p.id), archived, 'getProject after archiving');
  assert((await store.setProjectStatus(p.id, 'archived', T0 + 200)) === undefined, 'setProjectStatus to the current status returns undefined');
  assertSame(await store.setProjectStatus(p.id, 'active', T0 + 300), { ...p, status: 'active', updated_at: T0 + 300 }, 'reactivating');
  assert((await store.setProjectStatus(`proj_${w.u}_missing`, 'archived', T0)) === undefined, 'setProjectStatus of a missing project');
}

/**
 * Sessions, floors and pages: `listSessions` filters by project (`null` = outside any project),
 * newest first; floors ascending by number; `lastFloorNumber` per branch (0 when none); pages
 * ascending by version.
 */
export async function checkSessionsFloorsPages({ store }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const w = await seedWorld(store, 'floor');
  const loose: Session = {
    id: `sess_${w.u}_loose`, workspace_id: w.ws.id, project_id: null, title: null, created_by_account_id: w.owner.id, created_at: T0 + 10,
    agent: { id: 'assistant', type: 'agent', version: 1 }, environment_id: 'env_demo', metadata: { k: 'v' }, updated_at: T0 + 10, archived_at: null,
  };
  const later: Session = { ...w.session, id: `sess_${w.u}_later`, created_at: T0 + 20 };
  await store.insertSession(loose);
  await store.insertSession(later);
  assertSame(await store.listSessions(w.ws.id, {}), [later, loose, w.session], 'listSessions, newest first');
  assertSame(await store.listSessions(w.ws.id, { project_id: w.project.id }), [later, w.session], 'listSessions of a project');
  assertSame(await store.listSessions(w.ws.id, { project_id: null }), [loose], 'listSessions outside any project');

  const floors: Floor[] = [3, 1, 2].map((n) => ({ id: `floor_${w.u}_${n}`, workspace_id: w.ws.id, session_id: w.session.id, number: n, branch: 'main', state: 'committed', created_at: T0 + n }));
  for (const f of floors) await store.insertFloor(f);
  const alt: Floor = { id: `floor_${w.u}_alt`, workspace_id: w.ws.id, session_id: w.session.id, number: 7, branch: 'alt', state: 'committed', created_at: T0 };
  await store.insertFloor(alt);
  const listed = await store.listFloors(w.session.id);
  assertSame(listed.map((f) => f.number), [1, 2, 3, 7], 'listFloors ascending by number');
  assertSame(listed[0], floors[1], 'a listed floor equals the stored floor');
  assert((await store.lastFloorNumber(w.session.id, 'main')) === 3, 'lastFloorNumber on main');
  assert((await store.lastFloorNumber(w.session.id, 'alt')) === 7, 'lastFloorNumber on alt');
  assert((await store.lastFloorNumber(w.session.id, 'none')) === 0, 'lastFloorNumber of an empty branch is 0');
  assert((await store.lastFloorNumber(later.id, 'main')) === 0, 'lastFloorNumber of a session without floors is 0');

  const floor = floors[0];
  assert(floor !== undefined, 'floor seeded');
  const pages: Page[] = [2, 1, 3].map((v) => ({ id: `page_${w.u}_${v}`, workspace_id: w.ws.id, session_id: w.session.id, floor_id: floor.id, version: v, content: { v }, created_at: T0 + v }));
  for (const pg of pages) await store.insertPage(pg);
  assertSame(await store.listPages(floor.id), [pages[1], pages[0], pages[2]], 'listPages ascending by version');
  assertSame(await store.listPages(`floor_${w.u}_missing`), [], 'listPages of a floor without pages');
}

/**
 * Managed Agents Sessions (`/v1/sessions`): `pageSessions` keyset pages in both orders with every
 * filter; `updateSession` sets only the fields given and is conditional on a live Session;
 * `deleteSession` hides the Session from every read (once; `lockSession` too); `listSessionEvents` filters by type,
 * `processed_at` bounds and `before`, ascending or descending.
 */
export async function checkManagedSessions({ store }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const w = await seedWorld(store, 'msess');
  const hidden = newProject(w.u, w.ws, w.owner, 'hidden', T0);
  await store.insertProject(hidden);
  const mk = (n: number, over: Partial<Session> = {}): Session => ({
    id: `sess_${w.u}_m${n}`, workspace_id: w.ws.id, project_id: null, title: `t${n}`, created_by_account_id: w.owner.id,
    created_at: T0 + 100 + n, agent: { id: n % 2 === 0 ? 'assistant' : 'other', type: 'agent', version: 1 }, environment_id: `env_${n}`,
    metadata: { n: String(n) }, updated_at: T0 + 100 + n, archived_at: null, ...over,
  });
  const sessions = [mk(1), mk(2), mk(3, { archived_at: T0 + 200 }), mk(4, { project_id: hidden.id }), mk(5, { created_at: T0 + 102 })];
  for (const x of sessions) await store.insertSession(x);
  const [s1, s2, s3, s4, s5] = sessions as [Session, Session, Session, Session, Session];
  const ids = (rows: Session[]) => rows.map((r) => r.id);
  const ownOnly = (rows: Session[]) => rows.filter((r) => r.id.startsWith(`sess_${w.u}_m`));
  // s2 and s5 share created_at: the id breaks the tie (byte order).
  const asc = [s1, s2, s5, s3, s4].map((x) => x.id);
  assertSame(ids(ownOnly(await store.pageSessions(w.ws.id, { order: 'asc', limit: 100 }))), asc, 'pageSessions asc by (created_at, id)');
  assertSame(ids(ownOnly(await store.pageSessions(w.ws.id, { order: 'desc', limit: 100 }))), [...asc].reverse(), 'pageSessions desc');
  assertSame(await store.pageSessions(w.ws.id, { order: 'asc', limit: 1, created_at: { gte: T0 + 101, lte: T0 + 101 } }), [s1], 'a paged Session equals the stored one');
  assertSame(ids(await store.pageSessions(w.ws.id, { order: 'asc', limit: 2, after: { created_at: s2.created_at, id: s2.id }, created_at: { gt: T0 + 100 } })),
    [s5.id, s3.id], 'pageSessions after a keyset, limit 2');
  assertSame(ids(await store.pageSessions(w.ws.id, { order: 'desc', limit: 10, after: { created_at: s5.created_at, id: s5.id }, created_at: { gt: T0 + 100 } })),
    [s2.id, s1.id], 'pageSessions desc after a keyset');
  assertSame(ids(await store.pageSessions(w.ws.id, { order: 'asc', limit: 10, created_at: { gt: T0 + 101, lt: T0 + 104 } })), [s2.id, s5.id, s3.id], 'created_at gt/lt');
  assertSame(ids(ownOnly(await store.pageSessions(w.ws.id, { order: 'asc', limit: 10, include_archived: false }))), [s1.id, s2.id, s5.id, s4.id], 'include_archived false');
  assertSame(ids(ownOnly(await store.pageSessions(w.ws.id, { order: 'asc', limit: 10, visible_project_ids: [] }))), [s1.id, s2.id, s5.id, s3.id], 'visible_project_ids [] keeps Sessions outside projects');
  assert(ids(await store.pageSessions(w.ws.id, { order: 'asc', limit: 100, visible_project_ids: [hidden.id] })).includes(s4.id), 'visible_project_ids lists the project');
  assertSame(ids(ownOnly(await store.pageSessions(w.ws.id, { order: 'asc', limit: 10, agent_id: 'assistant' }))), [s2.id, s4.id], 'agent_id filter');

  const updated = await store.updateSession(w.ws.id, s1.id, { title: null, metadata: { a: 'b' }, updated_at: T0 + 300 });
  assertSame(updated, { ...s1, title: null, metadata: { a: 'b' }, updated_at: T0 + 300 }, 'updateSession sets the given fields');
  assertSame(await store.getSession(w.ws.id, s1.id), updated, 'updateSession persisted');
  assertSame(await store.updateSession(w.ws.id, s1.id, { archived_at: T0 + 301, updated_at: T0 + 301 }), { ...updated, archived_at: T0 + 301, updated_at: T0 + 301 }, 'updateSession archives, keeps the rest');
  assert((await store.updateSession('ws_nowhere', s1.id, { title: 'x', updated_at: T0 })) === undefined, 'updateSession in another workspace');
  assert(!(await store.deleteSession('ws_nowhere', s2.id, T0)), 'deleteSession in another workspace deletes nothing');
  assert(await store.deleteSession(w.ws.id, s2.id, T0 + 400), 'deleteSession of a live Session');
  assert(!(await store.deleteSession(w.ws.id, s2.id, T0 + 401)), 'a second deleteSession');
  assert((await store.getSession(w.ws.id, s2.id)) === undefined, 'a deleted Session is not read');
  assert(!ids(await store.listSessions(w.ws.id, {})).includes(s2.id), 'a deleted Session is not listed');
  assert(!ids(await store.pageSessions(w.ws.id, { order: 'asc', limit: 100 })).includes(s2.id), 'a deleted Session is not paged');
  assert((await store.updateSession(w.ws.id, s2.id, { title: 'x', updated_at: T0 })) === undefined, 'a deleted Session is not updated');
  assert((await store.transaction((tx) => tx.lockSession(w.ws.id, s2.id))) === undefined, 'a deleted Session is not locked');
  assertSame(await store.transaction((tx) => tx.lockSession(w.ws.id, s1.id)), await store.getSession(w.ws.id, s1.id), 'lockSession reads agent, metadata and archive as getSession does');

  const types = ['user.message', 'session.status_running', 'agent.message', 'session.status_idle'];
  await store.appendSessionEvents(range(1, 8).map((j) => newSessionEvent(s3, `sevt_${w.u}_m${j}`, { type: types[(j - 1) % 4] ?? 'user.message', processed_at: T0 + j })));
  const seqs = async (q: Partial<Parameters<typeof store.listSessionEvents>[0]>) =>
    (await store.listSessionEvents({ session_id: s3.id, after: 0, limit: 100, ...q })).map((e) => e.seq);
  assertSame(await seqs({ order: 'desc' }), [8, 7, 6, 5, 4, 3, 2, 1], 'listSessionEvents desc');
  assertSame(await seqs({ order: 'desc', before: 6, limit: 2 }), [5, 4], 'desc before 6, limit 2');
  assertSame(await seqs({ types: ['user.message', 'agent.message'] }), [1, 3, 5, 7], 'types filter');
  assertSame(await seqs({ types: [] }), [], 'an empty types list matches none');
  assertSame(await seqs({ processed_at: { gt: T0 + 2, lte: T0 + 5 } }), [3, 4, 5], 'processed_at gt/lte');
  assertSame(await seqs({ processed_at: { gte: T0 + 2, lt: T0 + 5 }, after: 2 }), [3, 4], 'processed_at gte/lt with after');
}

/**
 * Attempt ownership: a claim on a free Session wins and is read back exactly; a live lease of
 * another host refuses a competing claim (the row is unchanged) but not a re-claim by its own
 * host; an expired lease is invisible to `findAttemptOwner` and may be taken over; renew and
 * release act only on the exact `(session_id, run_id, host_id)`; of 20 concurrent claims by
 * different hosts (half in transactions) exactly one wins; a claim rolled back leaves nothing.
 */
export async function checkAttemptOwnership({ store, raw }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const w = await seedWorld(store, 'owner');
  const other: Session = { ...w.session, id: `${w.session.id}_other` };
  await store.insertSession(other);
  const sid = w.session.id;
  const a: AttemptOwnership = { session_id: sid, run_id: `run_${w.u}_1`, host_id: `host_${w.u}_a`, host_url: 'http://127.0.0.1:3001', lease_expires_at: T0 + 1000 };
  const b: AttemptOwnership = { session_id: sid, run_id: `run_${w.u}_2`, host_id: `host_${w.u}_b`, host_url: 'http://127.0.0.1:3002', lease_expires_at: T0 + 5000 };

  assert((await store.findAttemptOwner(sid, T0)) === undefined, 'findAttemptOwner of a Session without an owner');
  assert((await store.claimAttemptOwnership(a, T0)) === true, 'a claim on a Session without an owner must win');
  assertSame(await store.findAttemptOwner(sid, T0), a, 'findAttemptOwner returns the claim as written');
  assert((await store.findAttemptOwner(other.id, T0)) === undefined, 'ownership of one Session is not another\'s');
  assert((await store.claimAttemptOwnership(b, T0 + 999)) === false, 'a claim by another host while the lease is live must lose');
  assertSame(await store.findAttemptOwner(sid, T0 + 999), a, 'a losing claim leaves the row unchanged');
  assertSame(await raw.attemptOwnerHosts(sid), [a.host_id], 'stored owner after a losing claim');

  // Renew: only the exact (session, run, host).
  assert((await store.renewAttemptOwnership({ session_id: sid, run_id: a.run_id, host_id: b.host_id }, T0 + 9000)) === false, 'renew by another host');
  assert((await store.renewAttemptOwnership({ session_id: sid, run_id: b.run_id, host_id: a.host_id }, T0 + 9000)) === false, 'renew of another run');
  assertSame(await store.findAttemptOwner(sid, T0), a, 'a refused renew leaves the row unchanged');
  assert((await store.renewAttemptOwnership(a, T0 + 2000)) === true, 'renew by the owner');
  assertSame(await store.findAttemptOwner(sid, T0 + 1500), { ...a, lease_expires_at: T0 + 2000 }, 'the renewed lease');

  // Expiry: `lease_expires_at <= now` is no owner, and another host may take over.
  assert((await store.findAttemptOwner(sid, T0 + 2000)) === undefined, 'a lease is expired at lease_expires_at');
  assert((await store.claimAttemptOwnership(b, T0 + 2000)) === true, 'a claim over an expired lease must win');
  assertSame(await store.findAttemptOwner(sid, T0 + 2000), b, 'the new owner after a take-over');
  assertSame(await raw.attemptOwnerHosts(sid), [b.host_id], 'one stored row after a take-over');
  assert((await store.renewAttemptOwnership(a, T0 + 99_000)) === false, 'the previous owner cannot renew a lease it lost');
  assert((await store.releaseAttemptOwnership(a)) === false, 'the previous owner cannot release a lease it lost');
  assertSame(await store.findAttemptOwner(sid, T0 + 2000), b, 'the lost lease is untouched by its previous owner');

  // The same host re-claims for its next Run while its lease is live.
  const b2: AttemptOwnership = { ...b, run_id: `run_${w.u}_3`, lease_expires_at: T0 + 6000 };
  assert((await store.claimAttemptOwnership(b2, T0 + 2100)) === true, 'a re-claim by the same host must win');
  assertSame(await store.findAttemptOwner(sid, T0 + 2100), b2, 'the re-claimed row');

  // Release: only the exact key.
  assert((await store.releaseAttemptOwnership(b)) === false, 'release of an earlier run of the same host');
  assert((await store.releaseAttemptOwnership(b2)) === true, 'release by the owner');
  assert((await store.findAttemptOwner(sid, T0)) === undefined, 'no owner after release');
  assertSame(await raw.attemptOwnerHosts(sid), [], 'no stored row after release');
  assert((await store.releaseAttemptOwnership(b2)) === false, 'a second release');

  // A claim inside a rolled-back transaction leaves nothing.
  const boom = new Error('rolled back on purpose');
  await store.transaction(async (tx) => {
    assert((await tx.claimAttemptOwnership(a, T0)) === true, 'a claim inside a transaction');
    throw boom;
  }).catch((error: unknown) => {
    if (error !== boom) throw error;
  });
  assertSame(await raw.attemptOwnerHosts(sid), [], 'a rolled-back claim leaves no row');

  // One winner of 20 concurrent claims by different hosts.
  const claims = range(0, 19).map((i): AttemptOwnership => ({ ...a, run_id: `run_${w.u}_c${i}`, host_id: `host_${w.u}_c${i}`, lease_expires_at: T0 + 60_000 }));
  const results = await concurrently(claims.map((c, i) => () => (i % 2 === 0
    ? store.transaction((tx) => tx.claimAttemptOwnership(c, T0))
    : store.claimAttemptOwnership(c, T0))), 'concurrent claimAttemptOwnership');
  const winners = results.map((r, i) => (r ? i : -1)).filter((i) => i >= 0);
  assert(winners.length === 1, `exactly one of 20 concurrent claims must win, ${winners.length} did`);
  const winner = claims[winners[0] ?? 0];
  assertSame(await store.findAttemptOwner(sid, T0), winner, 'the stored owner is the winning claim');
  assertSame(await raw.attemptOwnerHosts(sid), [winner?.host_id], 'exactly one stored row after concurrent claims');
}

/**
 * `getInboxItemWithAccess` (optional: a store without it passes) returns exactly what
 * `getProject`, `getMembership` and `getInboxItem` return: for the owner (no membership row), a
 * member, an account with no role, a missing item, an item of another project, a project asked
 * through another workspace or missing (`undefined`); payload JSON as stored; inside a transaction
 * it sees the transaction's own writes.
 */
export async function checkInboxItemWithAccess({ store }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  if (store.getInboxItemWithAccess === undefined) return;
  const w = await seedWorld(store, 'access');
  const p = w.project;
  const ws2: Workspace = { id: `ws_${w.u}_2`, name: 'other', created_at: T0 };
  await store.insertWorkspace(ws2);
  const outsider: Account = { id: `acc_${w.u}_outsider`, name: 'Outsider', created_at: T0 };
  await store.insertAccount(outsider, [w.ws.id]);
  const other = newProject(w.u, w.ws, w.owner, 'other', T0 + 5);
  await store.insertProject(other);
  await store.upsertMembership({ project_id: other.id, account_id: outsider.id, role: 'observer', created_at: T0 + 6 });
  const payload: JsonValue = { text: '表 "quoted" \\ \u2028', nested: { list: [1, 2.5, null, true], empty: {} }, zebra: 1, apple: 2 };
  const item = newItem(w, p, `pinbox_${w.u}`, { payload, title: null });
  await store.insertInboxItem(item);
  const elsewhere = newItem(w, other, `pinbox_${w.u}_other`);
  await store.insertInboxItem(elsewhere);

  const read = (ws: string, pid: string, acc: string, id: string) => store.getInboxItemWithAccess!(ws, pid, acc, id);
  const expected = async (pid: string, acc: string, id: string) => ({
    project: await store.getProject(w.ws.id, pid),
    membership: await store.getMembership(pid, acc),
    item: await store.getInboxItem(pid, id),
  });
  const cases: Array<[string, string, string, string]> = [
    ['the owner (no membership row)', p.id, w.owner.id, item.id],
    ['a deriver member', p.id, w.deriver.id, item.id],
    ['an account with no role in the project', p.id, outsider.id, item.id],
    ['a missing item', p.id, w.owner.id, `pinbox_${w.u}_missing`],
    ['an item of another project', p.id, w.owner.id, elsewhere.id],
    ['another project, its member', other.id, outsider.id, elsewhere.id],
  ];
  for (const [what, pid, acc, id] of cases) {
    const got = await read(w.ws.id, pid, acc, id);
    assert(got !== undefined, `getInboxItemWithAccess, ${what}: the project exists, so the answer must not be undefined`);
    assertSame(got, await expected(pid, acc, id), `getInboxItemWithAccess, ${what}`);
  }
  const own = await read(w.ws.id, p.id, w.deriver.id, item.id);
  assert(own?.membership?.role === 'deriver', 'getInboxItemWithAccess: the member\'s role');
  assertSameJson(own?.item?.payload, payload, 'getInboxItemWithAccess: payload');
  assert((await read(ws2.id, p.id, w.owner.id, item.id)) === undefined, 'getInboxItemWithAccess through another workspace must be undefined');
  assert((await read(w.ws.id, `proj_${w.u}_missing`, w.owner.id, item.id)) === undefined, 'getInboxItemWithAccess of a missing project must be undefined');

  const fresh = newItem(w, p, `pinbox_${w.u}_tx`);
  await store.transaction(async (tx) => {
    await tx.insertInboxItem(fresh);
    await tx.upsertMembership({ project_id: p.id, account_id: outsider.id, role: 'observer', created_at: T0 + 7 });
    const got = await tx.getInboxItemWithAccess?.(w.ws.id, p.id, outsider.id, fresh.id);
    assertSame(got?.item, fresh, 'getInboxItemWithAccess inside a transaction sees its own item');
    assert(got?.membership?.role === 'observer', 'getInboxItemWithAccess inside a transaction sees its own membership');
  });
}

/**
 * `getSessionWithAccess` (optional: a store without it passes) returns exactly what `getSession`,
 * `getProject` and `getMembership` return: a session of a project for its owner, a member and an
 * account with no role; a session with no project (with agent, metadata and archive); a session
 * asked through another workspace, missing or deleted (`undefined`); inside a transaction it sees the transaction's own writes.
 */
export async function checkSessionWithAccess({ store }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  if (store.getSessionWithAccess === undefined) return;
  const w = await seedWorld(store, 'saccess');
  const ws2: Workspace = { id: `ws_${w.u}_2`, name: 'other', created_at: T0 };
  await store.insertWorkspace(ws2);
  const outsider: Account = { id: `acc_${w.u}_outsider`, name: 'Outsider', created_at: T0 };
  await store.insertAccount(outsider, [w.ws.id]);
  const loose: Session = {
    id: `sess_${w.u}_loose`, workspace_id: w.ws.id, project_id: null, title: null, created_by_account_id: w.owner.id, created_at: T0 + 1,
    agent: { id: 'assistant', type: 'agent', version: 1 }, environment_id: 'env_demo', metadata: { k: 'v', '表': '"q"' }, updated_at: T0 + 2, archived_at: T0 + 3,
  };
  await store.insertSession(loose);
  const gone: Session = { ...w.session, id: `sess_${w.u}_gone`, created_at: T0 + 4 };
  await store.insertSession(gone);
  assert(await store.deleteSession(w.ws.id, gone.id, T0 + 5), 'deleteSession of a live Session');

  const expected = async (sid: string, acc: string) => {
    const session = await store.getSession(w.ws.id, sid);
    const project = session?.project_id ? await store.getProject(w.ws.id, session.project_id) : undefined;
    return { session, project, membership: project ? await store.getMembership(project.id, acc) : undefined };
  };
  for (const [what, sid, acc] of [
    ['the owner (no membership row)', w.session.id, w.owner.id],
    ['a deriver member', w.session.id, w.deriver.id],
    ['an account with no role', w.session.id, outsider.id],
    ['a session with no project', loose.id, w.deriver.id],
  ] as const) {
    const got = await store.getSessionWithAccess(w.ws.id, sid, acc);
    assert(got !== undefined, `getSessionWithAccess, ${what}: the session exists, so the answer must not be undefined`);
    assertSame(got, await expected(sid, acc), `getSessionWithAccess, ${what}`);
  }
  assert((await store.getSessionWithAccess(ws2.id, w.session.id, w.owner.id)) === undefined, 'getSessionWithAccess through another workspace must be undefined');
  assert((await store.getSessionWithAccess(w.ws.id, `sess_${w.u}_missing`, w.owner.id)) === undefined, 'getSessionWithAccess of a missing session must be undefined');
  assert((await store.getSessionWithAccess(w.ws.id, gone.id, w.owner.id)) === undefined, 'getSessionWithAccess of a deleted session must be undefined');
  await store.transaction(async (tx) => {
    await tx.upsertMembership({ project_id: w.project.id, account_id: outsider.id, role: 'observer', created_at: T0 + 7 });
    const got = await tx.getSessionWithAccess?.(w.ws.id, w.session.id, outsider.id);
    assert(got?.membership?.role === 'observer', 'getSessionWithAccess inside a transaction sees its own membership');
  });
}

/**
 * Project Events keep the `visibility` and `source` they were written with (every value of both,
 * in and outside a transaction, as returned, listed and fetched), and `lastProjectEventSequence` /
 * `lastSessionEventSeq` name the newest committed position (0 when none; a rolled-back append
 * does not count), per project and per session.
 */
export async function checkEventVisibilitySourceAndLatest({ store, raw }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const w = await seedWorld(store, 'vissrc');
  const p = w.project;
  const other = newProject(w.u, w.ws, w.owner, 'other', T0 + 1);
  await store.insertProject(other);
  assert((await store.lastProjectEventSequence(p.id)) === 0, 'lastProjectEventSequence of a project without events must be 0');
  assert((await store.lastProjectEventSequence(`proj_${w.u}_missing`)) === 0, 'lastProjectEventSequence of a missing project must be 0');
  const combos = [
    { visibility: 'project', source: 'api' }, { visibility: 'owner', source: 'api' }, { visibility: 'project', source: 'runtime_job' },
    { visibility: 'owner', source: 'runtime_job' }, { visibility: 'project', source: 'system' }, { visibility: 'owner', source: 'system' },
  ] as const;
  const written: ProjectEvent[] = [];
  for (const [i, c] of combos.entries()) {
    const e = newEvent(w, p, `evt_${w.u}_vs${i}`, { ...c, type: c.visibility === 'owner' ? 'project_inbox.item.created' : 'project.member.added' });
    const stored = i % 2 === 0 ? await store.appendProjectEvent(e) : await store.transaction((tx) => tx.appendProjectEvent(e));
    assert(stored.visibility === c.visibility && stored.source === c.source, `appendProjectEvent returns visibility ${c.visibility} and source ${c.source}`);
    written.push(stored);
  }
  const boom = new Error('rolled back on purpose');
  await store.transaction(async (tx) => {
    await tx.appendProjectEvent(newEvent(w, p, `evt_${w.u}_vsrb`));
    throw boom;
  }).catch((error: unknown) => { if (error !== boom) throw error; });
  await store.appendProjectEvent(newEvent(w, other, `evt_${w.u}_vsother`, { visibility: 'project', source: 'system' }));
  const listed = await store.listProjectEvents({ project_id: p.id, after: 0, limit: 100 });
  assertSame(listed, written, 'listProjectEvents keeps visibility and source');
  for (const e of written) assertSame(await store.getProjectEvent(p.id, e.id), e, `getProjectEvent ${e.id} keeps visibility and source`);
  assert((await store.lastProjectEventSequence(p.id)) === combos.length, `lastProjectEventSequence must be ${combos.length} (a rolled-back append does not count)`);
  assertSame(await raw.eventSequences(p.id), range(1, combos.length), 'stored sequences');
  assert((await store.lastProjectEventSequence(other.id)) === 1, 'lastProjectEventSequence is per project');

  assert((await store.lastSessionEventSeq(w.session.id)) === 0, 'lastSessionEventSeq of a session without events must be 0');
  assert((await store.lastSessionEventSeq(`sess_${w.u}_missing`)) === 0, 'lastSessionEventSeq of a missing session must be 0');
  await store.appendSessionEvents(range(1, 3).map((j) => newSessionEvent(w.session, `sevt_${w.u}_last${j}`)));
  await store.transaction(async (tx) => {
    await tx.appendSessionEvents([newSessionEvent(w.session, `sevt_${w.u}_lastrb`)]);
    throw boom;
  }).catch((error: unknown) => { if (error !== boom) throw error; });
  assert((await store.lastSessionEventSeq(w.session.id)) === 3, 'lastSessionEventSeq must be 3 (a rolled-back append does not count)');
}

/**
 * Row locks (`lockProject`, `lockSession`): a check made under the lock still holds when the
 * transaction commits. 20 transactions each lock the project, read `status` and, only while it is
 * `active`, insert an item and append its event, racing one that locks it, archives it and appends
 * `project.archived`: no item event may have a larger sequence than the archive's, and exactly the
 * items whose events exist are stored. Then 10 transactions each lock the Session and start a Run
 * only when none is running: exactly one Run is running. Both locks answer `undefined` for a row
 * of another workspace, and inside a transaction see the row as committed.
 */
export async function checkRowLocks({ store, raw }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const w = await seedWorld(store, 'lock');
  const archived = new Error('project archived');
  const create = (i: number) => () => store.transaction(async (tx) => {
    const project = await tx.lockProject(w.ws.id, w.project.id);
    if (project?.status !== 'active') throw archived;
    await tx.insertInboxItem(newItem(w, w.project, `pinbox_${w.u}_${i}`));
    return tx.appendProjectEvent(newEvent(w, w.project, `evt_${w.u}_${i}`, { payload: { inbox_item_id: `pinbox_${w.u}_${i}` } }));
  });
  const archive = () => store.transaction(async (tx) => {
    const project = await tx.lockProject(w.ws.id, w.project.id);
    assert(project?.status === 'active', 'the project is active before the archive');
    assert((await tx.setProjectStatus(w.project.id, 'archived', T0 + 1)) !== undefined, 'the archive changes the status');
    return tx.appendProjectEvent(newEvent(w, w.project, `evt_${w.u}_archived`, { type: 'project.archived', payload: {} }));
  });
  const tasks: Array<() => Promise<ProjectEvent>> = range(1, 20).map(create);
  tasks.splice(10, 0, archive);
  const results = (await concurrentlyAllowing(tasks, archived, 'creates racing an archive')).filter((e): e is ProjectEvent => e !== undefined);
  const archivedAt = results.find((e) => e.type === 'project.archived')?.sequence;
  assert(archivedAt !== undefined, 'the archive committed');
  const late = results.filter((e) => e.type !== 'project.archived' && e.sequence > archivedAt);
  assert(late.length === 0, `${late.length} item(s) committed after the archive (sequence ${archivedAt}) although their transaction saw the project active under lockProject`);
  const items = await raw.countRows('project_inbox_items', w.project.id);
  assert(items === results.length - 1, `stored items (${items}) must be those whose events committed (${results.length - 1})`);

  const runs = await concurrentlyAllowing(range(1, 10).map((i) => () => store.transaction(async (tx) => {
    const session = await tx.lockSession(w.ws.id, w.session.id);
    assert(session !== undefined, 'lockSession finds the session');
    if ((await tx.getRunningRun(w.session.id)) !== undefined) return undefined;
    const run: Run = { id: `run_${w.u}_${i}`, session_id: w.session.id, status: 'running', started_at: T0 + i, ended_at: null, outcome: null };
    await tx.insertRun(run);
    return run;
  })), undefined, 'Run starts under lockSession');
  const started = runs.filter((r) => r !== undefined);
  assert(started.length === 1, `exactly one of 10 Run starts under lockSession may start a Run, ${started.length} did`);
  assert((await store.listRunningRuns(100)).filter((r) => r.session_id === w.session.id).length === 1, 'one running Run stored');

  const other = await seedWorld(store, 'lockother');
  assert((await store.transaction((tx) => tx.lockProject(other.ws.id, w.project.id))) === undefined, 'lockProject of another workspace → undefined');
  assert((await store.transaction((tx) => tx.lockSession(other.ws.id, w.session.id))) === undefined, 'lockSession of another workspace → undefined');
  assertSame(await store.transaction((tx) => tx.lockProject(w.ws.id, w.project.id)), { ...w.project, status: 'archived', updated_at: T0 + 1 }, 'lockProject reads the committed row');
  assertSame(await store.transaction((tx) => tx.lockSession(w.ws.id, w.session.id)), w.session, 'lockSession reads the committed row');
}

/** What every check needs to seed its world: a workspace, accounts, a project with a member, a Session. */
const WORLD: readonly StorePortGroup[] = ['identity', 'projects', 'sessions'];
const needs = (...more: StorePortGroup[]): readonly StorePortGroup[] => [...WORLD, ...more];

/** Every check of the kit, grouped by sub-port, in the order the suite runs them. */
export const storeConformanceChecks: readonly StoreConformanceCheck[] = [
  { group: 'transactions', requires: needs('inbox', 'events'), name: 'transactions are atomic (rollback after 1, 2 or 3 writes leaves nothing; commit keeps all)', run: checkTransactionAtomicity },
  { group: 'transactions', requires: needs('inbox', 'events', 'runs'), name: 'row locks: no write checked under lockProject / lockSession commits after a change it did not see', run: checkRowLocks },
  { group: 'identity', requires: needs('inbox', 'events'), name: 'workspace and project scoping of lookups and lists', run: checkWorkspaceScoping },
  { group: 'identity', requires: needs(), name: 'identity, API keys and conditional project status', run: checkIdentityAndProjects },
  { group: 'projects', requires: needs(), name: 'memberships: upsert and delete', run: checkMemberships },
  { group: 'inbox', requires: needs('inbox', 'events'), name: 'decideInboxItem: 20 concurrent decisions → exactly one winner, one log row, one event', run: checkDecideHasOneWinner },
  { group: 'inbox', requires: needs('inbox', 'events'), name: 'keyset pages neither skip nor repeat rows sharing created_at (with filters)', run: checkKeysetPaging },
  { group: 'inbox', requires: needs('inbox'), name: 'getInboxItemWithAccess (optional): project, membership and item in one read, as the three reads give them', run: checkInboxItemWithAccess },
  { group: 'inbox', requires: needs('inbox', 'events'), name: 'JSON round trip: what was written is what is read', run: checkJsonRoundTrip },
  { group: 'events', requires: needs('inbox', 'events'), name: 'appendProjectEvent: gap-free per-project sequences under 270 concurrent writers', run: checkGapFreeProjectSequences },
  { group: 'events', requires: needs('events'), name: 'Project Events keep visibility and source; lastProjectEventSequence and lastSessionEventSeq', run: checkEventVisibilitySourceAndLatest },
  { group: 'sessions', requires: needs(), name: 'getSessionWithAccess (optional): session, project and membership in one read, as the three reads give them', run: checkSessionWithAccess },
  { group: 'sessions', requires: needs(), name: 'session ledger: gap-free seq under concurrent appends', run: checkGapFreeSessionSeq },
  { group: 'sessions', requires: needs(), name: 'sessions, floors and pages', run: checkSessionsFloorsPages },
  { group: 'sessions', requires: needs(), name: 'managed sessions: pages, update, delete, ledger filters', run: checkManagedSessions },
  { group: 'runs', requires: needs('runs'), name: 'runs: endRun is conditional', run: checkEndRunConditional },
  { group: 'runs', requires: needs('runs'), name: 'runs: listRunningRuns lists running Runs oldest first, at most limit', run: checkListRunningRuns },
  { group: 'runs', requires: needs('runs'), name: 'attempt ownership: conditional claim, lease expiry, exact renew and release, one winner of 20', run: checkAttemptOwnership },
  { group: 'idempotency', requires: needs('idempotency', 'inbox', 'events'), name: 'idempotency records: conditional insert, exact scope, released by rollback, one winner of 20', run: checkIdempotencyRecords },
];

/**
 * Sub-ports a store declares it does not implement: a list (`['runs']`) or a reason per sub-port
 * (`{ runs: 'this store keeps no Runs' }`).
 */
export type UnsupportedStorePorts = readonly StorePortGroup[] | Partial<Record<StorePortGroup, string>>;

/** One check as a run of the kit treats it: `skip` is the reason it does not run, if it does not. */
export interface PlannedStoreCheck {
  check: StoreConformanceCheck;
  skip: string | undefined;
}

/**
 * Which checks run on a store that declares `unsupported` sub-ports: a check that requires one of
 * them is skipped, with the reason; every other check runs.
 *
 * @throws TypeError when `unsupported` names something that is not a sub-port (a typo must not
 *   silently skip nothing).
 */
export function planStoreConformance(checks: readonly StoreConformanceCheck[], unsupported: UnsupportedStorePorts = []): PlannedStoreCheck[] {
  const reasons = new Map<string, string | undefined>(Array.isArray(unsupported)
    ? (unsupported as readonly string[]).map((group) => [group, undefined])
    : Object.entries(unsupported));
  for (const group of reasons.keys()) {
    if (!(STORE_PORT_GROUPS as readonly string[]).includes(group)) {
      throw new TypeError(`@inbox-kit/core/testing: unknown sub-port "${group}" in unsupported (one of: ${STORE_PORT_GROUPS.join(', ')})`);
    }
  }
  return checks.map((check) => {
    const missing = check.requires.filter((group) => reasons.has(group));
    const skip = missing.length === 0 ? undefined : `the store declares ${missing.map((group) => {
      const reason = reasons.get(group);
      return reason === undefined ? `"${group}"` : `"${group}" (${reason})`;
    }).join(' and ')} unsupported`;
    return { check, skip };
  });
}
