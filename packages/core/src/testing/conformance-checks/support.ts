/**
 * What every conformance check shares: the subject a factory returns (store + raw reader), the
 * error a check throws, the assertion helpers and the fixtures (a fresh world per check).
 */
import type { IdempotencyScope, NewProjectEvent, NewSessionEvent, Store } from '../../ports/store.js';
import type { Account, JsonValue, OperationLog, Project, ProjectInboxItem, Session, Workspace } from '../../records.js';

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
  /**
   * OPTIONAL: the database's clock read with a raw query, in ms (PostgreSQL: `clock_timestamp()`),
   * for a store with `now()`: the check then asserts that `now()` reads that clock.
   */
  clockNow?(): Promise<number>;
}

/** What a conformance factory returns: a fresh store, its raw reader, and how to dispose of both. */
export interface StoreConformanceSubject {
  store: Store;
  raw: RawReader;
  close(): Promise<void>;
}

/** Thrown by a check when the adapter breaks a guarantee of the port. */
export class ConformanceError extends Error {
  override readonly name = 'ConformanceError';
}

// — assertion helpers —

export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new ConformanceError(message);
}

/** JSON with object keys sorted: equality of records regardless of key order. */
export function canonical(value: unknown): string {
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
export function assertSame(actual: unknown, expected: unknown, what: string): void {
  const a = canonical(actual);
  const e = canonical(expected);
  assert(a === e, `${what}: expected ${truncate(e)}, got ${truncate(a)}`);
}

/** Asserts a JSON value came back exactly as written, key order included. */
export function assertSameJson(actual: unknown, expected: JsonValue, what: string): void {
  const a = JSON.stringify(actual) ?? 'undefined';
  const e = JSON.stringify(expected);
  assert(a === e, `${what}: JSON not returned as stored: expected ${truncate(e)}, got ${truncate(a)}`);
}

export const truncate = (s: string, n = 400): string => (s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s);

export const range = (from: number, to: number): number[] => Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);

export function assertGapFree(values: number[], n: number, what: string): void {
  const sorted = [...values].sort((a, b) => a - b);
  assert(
    canonical(sorted) === canonical(range(1, n)),
    `${what}: expected exactly 1..${n} with no gap or duplicate, got ${truncate(JSON.stringify(sorted))}`,
  );
}

/** Runs all tasks at once; fails the check with the first rejection other than the `expected` ones. */
export async function concurrently<T>(tasks: Array<() => Promise<T>>, what: string): Promise<T[]> {
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
export async function concurrentlyAllowing<T>(tasks: Array<() => Promise<T>>, expected: unknown, what: string): Promise<Array<T | undefined>> {
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

export const T0 = 1_700_000_000_000;
export const randomToken = (): string => Math.random().toString(36).slice(2, 10);

export interface World {
  u: string;
  ws: Workspace;
  owner: Account;
  deriver: Account;
  project: Project;
  session: Session;
}

/** Workspace, owner + deriver accounts, one active project and a session in it. */
export async function seedWorld(store: Store, label: string): Promise<World> {
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

export function newProject(u: string, ws: Workspace, owner: Account, suffix: string, at: number): Project {
  return { id: `proj_${u}_${suffix}`, workspace_id: ws.id, account_id: owner.id, name: `Project ${suffix}`, status: 'active', created_at: at, updated_at: at };
}

/** An item's fields whose text a store may have to escape (a read as JSON, e.g.), with numbers beyond 32 bits: spread into {@link newItem}. */
export const ESCAPED_TEXT: Partial<ProjectInboxItem> = {
  title: 'quote " backslash \\ line\nbreak\ttab ✓ 𝄞 \u0001 \u2028 </script>',
  created_at: 2 ** 53 - 1,
  updated_at: 2 ** 53 - 1,
  payload: { big: 2 ** 53 - 1, tiny: 1e-7, float: 0.1, text: '"\\\u0000✓', empty: {}, list: [] },
};

export function newItem(w: World, project: Project, id: string, over: Partial<ProjectInboxItem> = {}): ProjectInboxItem {
  return {
    id, workspace_id: w.ws.id, project_id: project.id, account_id: project.account_id, sender_account_id: w.deriver.id,
    type: 'derived_output.review', title: 'A title', payload: { n: 1 }, source_event_id: null, source_session_id: null,
    source_floor_id: null, source_page_id: null, status: 'pending', decided_by_account_id: null, decided_at: null,
    created_at: T0, updated_at: T0, ...over,
  };
}

export function newLog(w: World, project: Project, id: string, over: Partial<OperationLog> = {}): OperationLog {
  return {
    id, workspace_id: w.ws.id, project_id: project.id, actor_account_id: w.owner.id, action: 'project_inbox_item.create',
    target_type: 'project_inbox_item', target_id: `pinbox_${id}`, request_id: `req_${id}`, metadata: { payload_byte_count: 7 },
    created_at: T0, ...over,
  };
}

export function newEvent(w: World, project: Project, id: string, over: Partial<NewProjectEvent> = {}): NewProjectEvent {
  return {
    id, workspace_id: w.ws.id, project_id: project.id, type: 'project_inbox.item.created', actor_account_id: w.deriver.id,
    session_id: null, floor_id: null, page_id: null, operation_log_id: null, correlation_id: `req_${id}`,
    causation_event_id: null, payload: { inbox_item_id: id }, visibility: 'owner', source: 'api', created_at: T0, ...over,
  };
}

export function newSessionEvent(session: Session, id: string, over: Partial<NewSessionEvent> = {}): NewSessionEvent {
  return {
    id, session_id: session.id, type: 'user.message', run_id: null, message_id: null, content: [{ type: 'text', text: id }],
    floor_id: null, page_id: null, processed_at: T0, ...over,
  };
}
