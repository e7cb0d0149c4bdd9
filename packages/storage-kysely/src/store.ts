/**
 * The storage port of `@inbox-kit/core` (`Store`) on Kysely, for SQLite and PostgreSQL.
 *
 * This file only runs the queries the port promises, atomically; it holds no business rule (no
 * permission, transition or validation logic). How each guarantee of the port is kept:
 *
 * - **Units of work**: `transaction(fn)` is one Kysely transaction on PostgreSQL (`READ
 *   COMMITTED`). On SQLite it is a unit of work of a group commit (`group-commit.ts`): units asked
 *   for while the single connection is busy share one `BEGIN IMMEDIATE … COMMIT`, each in its own
 *   savepoint, and resolve after that commit. `fn` gets the same operations bound to the
 *   transaction. An error thrown by `fn` rolls back its own writes and is rethrown as is.
 * - **Hot queries are compiled once** per store (`compiledQueries`) and run with new values.
 * - **Conditional updates** (`decideInboxItem`, `setProjectStatus`, `endRun`, `revokeApiKey`,
 *   `renewAttemptOwnership`, `releaseAttemptOwnership`) are one `UPDATE`/`DELETE … WHERE <expected
 *   state> [RETURNING …]`: the database decides the winner, there is no read-then-write in the
 *   adapter. The conditional insert `insertIdempotencyRecord` is one `INSERT … ON CONFLICT DO
 *   NOTHING RETURNING …` on the primary key; `claimAttemptOwnership` is one `INSERT … ON CONFLICT
 *   (session_id) DO UPDATE … WHERE <expired or same host> RETURNING …`.
 * - **Row locks** (`lockProject`, `lockSession`): `SELECT … FOR NO KEY UPDATE` on PostgreSQL, a plain
 *   read on SQLite (write transactions are serialised there). The services take them first in every
 *   write whose validity depends on the row (README "Conditional writes").
 * - **Gap-free sequences**: the counter lives on the parent row (`projects.event_sequence`,
 *   `sessions.event_seq`). `UPDATE … SET n = n + 1 RETURNING n` row-locks the parent until commit,
 *   so concurrent writers of one project queue behind each other, and a rollback gives the number
 *   back. Outside a transaction the update and the insert are wrapped in one.
 * - **Keyset pages** compare the `(created_at, id)` row value, which is the same predicate as
 *   `created_at < ? OR (created_at = ? AND id < ?)` but lets both engines seek the composite index.
 * - **JSON** is written as `JSON.stringify` text and read back as text (`::text` on PostgreSQL,
 *   whatever the pool's JSON parser), then parsed here: a read returns what was written.
 */
import { createQueryId, sql, type Compilable, type CompiledQuery, type Kysely, type QueryResult, type RawBuilder, type Selection } from 'kysely';
import type {
  Account, ApiKey, AttemptOwnership, Floor, IdempotencyRecord, InboxItemQuery, JsonValue, Membership, MemberRole, NewProjectEvent, NewSessionEvent,
  OperationLog, Page, Project, ProjectEvent, ProjectInboxItem, ProjectStatus, Run, Session, SessionEvent, Store, StoreTx,
  Workspace,
} from '@inbox-kit/core';
import type { ApiKeyKind, InboxItemStatus, ProjectEventSource, ProjectEventVisibility, RunStatus } from '@inbox-kit/core';
import { createGroupCommit } from './group-commit.js';
import { prepareStatement } from './prepared.js';
import type { Database, Dialect } from './schema.js';

/** Options of {@link createKyselyStore}. */
export interface KyselyStoreOptions {
  /** Which engine `db` talks to (selects the transaction start and the JSON read cast). */
  dialect: Dialect;
}

// — value conversion —

/** A driver number (PostgreSQL `bigint` may arrive as a string from a foreign pool) as a JS number. */
const num = (value: unknown): number => (typeof value === 'number' ? value : Number(value));
const numOrNull = (value: unknown): number | null => (value === null || value === undefined ? null : num(value));
const toJson = (value: unknown): string => {
  const text = JSON.stringify(value);
  if (text === undefined) throw new TypeError('@inbox-kit/storage-kysely: value is not JSON-serialisable');
  return text;
};
const fromJson = <T = JsonValue>(text: unknown): T => {
  if (typeof text !== 'string') throw new TypeError('@inbox-kit/storage-kysely: a JSON column was not read as text');
  return JSON.parse(text) as T;
};
const limitOf = (limit: number): number => Math.max(0, Math.floor(limit));

/** The equality filters of `listInboxItems`, in the order their values follow the project id. */
const INBOX_FILTERS = ['status', 'type', 'sender_account_id', 'source_session_id'] as const;

// — column lists (records never include the counters `event_sequence` / `event_seq`) —

const WORKSPACE = ['id', 'name', 'created_at'] as const;
const ACCOUNT = ['accounts.id', 'accounts.name', 'accounts.created_at'] as const;
const API_KEY = ['id', 'workspace_id', 'account_id', 'kind', 'key_hash', 'created_at', 'revoked_at'] as const;
const PROJECT = ['id', 'workspace_id', 'account_id', 'name', 'status', 'created_at', 'updated_at'] as const;
const MEMBER = ['project_id', 'account_id', 'role', 'created_at'] as const;
const SESSION = ['id', 'workspace_id', 'project_id', 'title', 'created_by_account_id', 'created_at', 'environment_id', 'updated_at', 'archived_at'] as const;
const FLOOR = ['id', 'workspace_id', 'session_id', 'number', 'branch', 'state', 'created_at'] as const;
const PAGE = ['id', 'workspace_id', 'session_id', 'floor_id', 'version', 'created_at'] as const;
const ITEM = [
  'id', 'workspace_id', 'project_id', 'account_id', 'sender_account_id', 'type', 'title', 'source_event_id',
  'source_session_id', 'source_floor_id', 'source_page_id', 'status', 'decided_by_account_id', 'decided_at', 'created_at',
  'updated_at',
] as const;
const EVENT = [
  'id', 'workspace_id', 'project_id', 'sequence', 'type', 'actor_account_id', 'session_id', 'floor_id', 'page_id',
  'operation_log_id', 'correlation_id', 'causation_event_id', 'visibility', 'source', 'created_at',
] as const;
const LOG = [
  'id', 'workspace_id', 'project_id', 'actor_account_id', 'action', 'target_type', 'target_id', 'request_id', 'created_at',
] as const;
const RUN = ['id', 'session_id', 'status', 'started_at', 'ended_at', 'outcome'] as const;
const SESSION_EVENT = ['id', 'session_id', 'seq', 'type', 'run_id', 'message_id', 'floor_id', 'page_id', 'processed_at'] as const;
const IDEMPOTENCY = ['workspace_id', 'account_id', 'key', 'request_hash', 'resource_type', 'resource_id', 'created_at'] as const;
const OWNER = ['session_id', 'run_id', 'host_id', 'host_url', 'lease_expires_at'] as const;

/** The columns of `getInboxItemWithAccess`: project (`p_`), membership (`m_`) and item (`i_`, payload apart). */
const ACCESS_COLUMNS = [
  ...PROJECT.map((c) => `p.${c} AS p_${c}`), ...MEMBER.map((c) => `m.${c} AS m_${c}`), ...ITEM.map((c) => `i.${c} AS i_${c}`),
].join(', ');

/** The columns of `getSessionWithAccess`: session (`s_`), project (`p_`) and membership (`m_`). */
const SESSION_ACCESS_COLUMNS = [
  ...SESSION.map((c) => `s.${c} AS s_${c}`), ...PROJECT.map((c) => `p.${c} AS p_${c}`), ...MEMBER.map((c) => `m.${c} AS m_${c}`),
].join(', ');

/**
 * SQLite's `…WithAccess` reads: one `UNION ALL` of point reads by key (one statement, so one
 * snapshot; the row kind in `k`, the values in `c0`, `c1` …), never a join. Once `ANALYZE` has
 * filled `sqlite_stat4` (a bulk load or `PRAGMA optimize` does), SQLite plans a join again on every
 * execution, since the plan may depend on the bound values: ~20 µs a call, five times the reads
 * themselves (issue 18). Point reads by primary key are planned once.
 */
const SQLITE_ITEM_COLUMNS = [...ITEM, 'payload'] as const;
const SQLITE_SESSION_COLUMNS = [...SESSION, 'agent', 'metadata'] as const;
/** `expressions` as `e0 AS c0, e1 AS c1, …`, padded with NULLs to `width` columns. */
const unionColumns = (expressions: readonly string[], width: number): string =>
  [...expressions, ...Array<string>(width - expressions.length).fill('NULL')].map((e, i) => `${e} AS c${i}`).join(', ');
/** The values `c0…` of a union row under `columns`' names, from `c<offset>` on. */
const unionValues = (row: Record<string, unknown>, columns: readonly string[], offset = 0): Record<string, unknown> =>
  Object.fromEntries(columns.map((c, i) => [c, row[`c${i + offset}`]]));

type Row<T extends keyof Database, C extends readonly (keyof Database[T] & string)[]> = Selection<Database, T, C[number]>;

// — row → record —

const toIdempotencyRecord = (r: Row<'idempotency_records', typeof IDEMPOTENCY>): IdempotencyRecord => ({
  workspace_id: r.workspace_id, account_id: r.account_id, key: r.key, request_hash: r.request_hash,
  resource_type: r.resource_type, resource_id: r.resource_id, created_at: num(r.created_at),
});
const toOwner = (r: Row<'attempt_owners', typeof OWNER>): AttemptOwnership => ({
  session_id: r.session_id, run_id: r.run_id, host_id: r.host_id, host_url: r.host_url, lease_expires_at: num(r.lease_expires_at),
});
const toWorkspace = (r: Row<'workspaces', typeof WORKSPACE>): Workspace => ({ id: r.id, name: r.name, created_at: num(r.created_at) });
const toAccount = (r: { id: string; name: string; created_at: number }): Account => ({ id: r.id, name: r.name, created_at: num(r.created_at) });
const toApiKey = (r: Row<'api_keys', typeof API_KEY>): ApiKey => ({
  id: r.id, workspace_id: r.workspace_id, account_id: r.account_id, kind: r.kind as ApiKeyKind, key_hash: r.key_hash,
  created_at: num(r.created_at), revoked_at: numOrNull(r.revoked_at),
});
const toProject = (r: Row<'projects', typeof PROJECT>): Project => ({
  id: r.id, workspace_id: r.workspace_id, account_id: r.account_id, name: r.name, status: r.status as ProjectStatus,
  created_at: num(r.created_at), updated_at: num(r.updated_at),
});
const toMembership = (r: Row<'project_members', typeof MEMBER>): Membership => ({
  project_id: r.project_id, account_id: r.account_id, role: r.role as MemberRole, created_at: num(r.created_at),
});
const toSession = (r: Row<'sessions', typeof SESSION> & { agent: string | null; metadata: string }): Session => ({
  id: r.id, workspace_id: r.workspace_id, project_id: r.project_id, title: r.title,
  created_by_account_id: r.created_by_account_id, created_at: num(r.created_at),
  agent: r.agent === null ? null : fromJson(r.agent), environment_id: r.environment_id,
  metadata: fromJson<Record<string, string>>(r.metadata), updated_at: num(r.updated_at), archived_at: numOrNull(r.archived_at),
});
const toFloor = (r: Row<'floors', typeof FLOOR>): Floor => ({
  id: r.id, workspace_id: r.workspace_id, session_id: r.session_id, number: num(r.number), branch: r.branch,
  state: r.state as Floor['state'], created_at: num(r.created_at),
});
const toPage = (r: Row<'pages', typeof PAGE> & { content: string }): Page => ({
  id: r.id, workspace_id: r.workspace_id, session_id: r.session_id, floor_id: r.floor_id, version: num(r.version),
  content: fromJson(r.content), created_at: num(r.created_at),
});
const toItem = (r: Row<'project_inbox_items', typeof ITEM> & { payload: string }): ProjectInboxItem => ({
  id: r.id, workspace_id: r.workspace_id, project_id: r.project_id, account_id: r.account_id,
  sender_account_id: r.sender_account_id, type: r.type, title: r.title, payload: fromJson(r.payload),
  source_event_id: r.source_event_id, source_session_id: r.source_session_id, source_floor_id: r.source_floor_id,
  source_page_id: r.source_page_id, status: r.status as InboxItemStatus, decided_by_account_id: r.decided_by_account_id,
  decided_at: numOrNull(r.decided_at), created_at: num(r.created_at), updated_at: num(r.updated_at),
});
const toEvent = (r: Row<'project_events', typeof EVENT> & { payload: string }): ProjectEvent => ({
  id: r.id, workspace_id: r.workspace_id, project_id: r.project_id, sequence: num(r.sequence), type: r.type,
  actor_account_id: r.actor_account_id, session_id: r.session_id, floor_id: r.floor_id, page_id: r.page_id,
  operation_log_id: r.operation_log_id, correlation_id: r.correlation_id, causation_event_id: r.causation_event_id,
  payload: fromJson(r.payload), visibility: r.visibility as ProjectEventVisibility, source: r.source as ProjectEventSource,
  created_at: num(r.created_at),
});
const toLog = (r: Row<'operation_logs', typeof LOG> & { metadata: string }): OperationLog => ({
  id: r.id, workspace_id: r.workspace_id, project_id: r.project_id, actor_account_id: r.actor_account_id, action: r.action,
  target_type: r.target_type, target_id: r.target_id, request_id: r.request_id, metadata: fromJson(r.metadata),
  created_at: num(r.created_at),
});
const toRun = (r: Row<'runs', typeof RUN>): Run => ({
  id: r.id, session_id: r.session_id, status: r.status as RunStatus, started_at: num(r.started_at),
  ended_at: numOrNull(r.ended_at), outcome: r.outcome,
});
const toSessionEvent = (r: Row<'session_events', typeof SESSION_EVENT> & { content: string }): SessionEvent => ({
  id: r.id, session_id: r.session_id, seq: num(r.seq), type: r.type, run_id: r.run_id, message_id: r.message_id,
  content: fromJson(r.content), floor_id: r.floor_id, page_id: r.page_id, processed_at: num(r.processed_at),
});

// — queries compiled once —

/** Where the i-th argument goes in a query compiled once (a value Kysely passes through as a parameter). */
class Slot {
  constructor(readonly index: number) {}
}

const SLOTS = Array.from({ length: 24 }, (_, i) => new Slot(i));

/** The placeholder of a query compiled once for its i-th argument (typed `never`: fits any value position). */
const $ = (i: number): never => (SLOTS[i] ?? new Slot(i)) as never;

/**
 * Runs the query compiled under `name` (compiling `build()` the first time) on `executor`, with
 * `args` in its {@link Slot}s. Kysely builds an operation tree and compiles it to SQL on every call,
 * about 4 µs, as long as a small SQLite read; the queries of the hot paths are compiled once per
 * store. `name` must identify the query's shape (which filters it has), never its values.
 */
type RunCompiled = <R>(executor: Kysely<Database>, name: string, build: () => Compilable<R> | RawBuilder<R>, args: readonly unknown[]) => Promise<QueryResult<R>>;

function compiledQueries(onCompile?: (sql: string) => void): RunCompiled {
  const cache = new Map<string, CompiledQuery>();
  return <R>(executor: Kysely<Database>, name: string, build: () => Compilable<R> | RawBuilder<R>, args: readonly unknown[]) => {
    let query = cache.get(name);
    if (query === undefined) {
      const built = build();
      query = 'isRawBuilder' in built ? built.compile(executor) : built.compile();
      onCompile?.(query.sql);
      cache.set(name, query);
    }
    const parameters = query.parameters.map((p) => (p instanceof Slot ? args[p.index] : p));
    return executor.executeQuery<R>({ ...query, parameters, queryId: createQueryId() } as CompiledQuery<R>);
  };
}

/** Runs `fn` in a new transaction of the store (group-committed on SQLite). */
type Transact = <T>(fn: (trx: Kysely<Database>) => Promise<T>) => Promise<T>;

/**
 * The operations of the port bound to one executor: the root `db` (autocommit) or a transaction.
 * `inTransaction` tells multi-statement writes whether they must open their own transaction.
 */
function opsOn(db: Kysely<Database>, dialect: Dialect, inTransaction: boolean, transact: Transact, compiled: RunCompiled): StoreTx {
  /** A JSON column read back as its stored text. */
  const jsonText = <C extends 'payload' | 'content' | 'metadata' | 'agent'>(column: C) =>
    (dialect === 'postgres' ? sql<string>`${sql.ref(column)}::text` : sql<string>`${sql.ref(column)}`).as(column);

  /** Runs `fn` atomically: on this transaction, or in a new one when running autocommit. */
  const atomically = <T>(fn: (trx: Kysely<Database>) => Promise<T>): Promise<T> => (inTransaction ? fn(db) : transact(fn));
  /** The first row of the query compiled once under `name` (see {@link compiledQueries}). */
  const first = async <R>(name: string, build: () => Compilable<R>, ...args: unknown[]): Promise<R | undefined> =>
    (await compiled(db, name, build, args)).rows[0];
  const all = async <R>(name: string, build: () => Compilable<R>, ...args: unknown[]): Promise<R[]> =>
    (await compiled(db, name, build, args)).rows;

  return {
    // — identity —
    async insertWorkspace(w) {
      await db.insertInto('workspaces').values({ id: w.id, name: w.name, created_at: w.created_at }).execute();
    },
    async getWorkspace(id) {
      const r = await db.selectFrom('workspaces').select(WORKSPACE).where('id', '=', id).executeTakeFirst();
      return r && toWorkspace(r);
    },
    async insertAccount(a, workspace_ids) {
      await atomically(async (trx) => {
        await trx.insertInto('accounts').values({ id: a.id, name: a.name, created_at: a.created_at }).execute();
        const ids = [...new Set(workspace_ids)];
        if (ids.length > 0) {
          await trx.insertInto('workspace_members').values(ids.map((workspace_id) => ({ workspace_id, account_id: a.id }))).execute();
        }
      });
    },
    async getWorkspaceAccount(workspace_id, account_id) {
      const r = await db.selectFrom('accounts')
        .innerJoin('workspace_members', 'workspace_members.account_id', 'accounts.id')
        .select(ACCOUNT)
        .where('workspace_members.workspace_id', '=', workspace_id)
        .where('accounts.id', '=', account_id)
        .executeTakeFirst();
      return r && toAccount(r);
    },
    async insertApiKey(k) {
      await db.insertInto('api_keys').values({
        id: k.id, workspace_id: k.workspace_id, account_id: k.account_id, kind: k.kind, key_hash: k.key_hash,
        created_at: k.created_at, revoked_at: k.revoked_at,
      }).execute();
    },
    async findApiKeyByHash(key_hash) {
      const r = await first('findApiKeyByHash', () => db.selectFrom('api_keys').select(API_KEY).where('key_hash', '=', $(0)), key_hash);
      return r && toApiKey(r);
    },
    async revokeApiKey(id, at) {
      await db.updateTable('api_keys').set({ revoked_at: at }).where('id', '=', id).where('revoked_at', 'is', null).execute();
    },

    // — projects and members —
    async insertProject(p) {
      await db.insertInto('projects').values({
        id: p.id, workspace_id: p.workspace_id, account_id: p.account_id, name: p.name, status: p.status,
        created_at: p.created_at, updated_at: p.updated_at,
      }).execute();
    },
    async getProject(workspace_id, project_id) {
      const r = await first('getProject', () => db.selectFrom('projects').select(PROJECT)
        .where('id', '=', $(0)).where('workspace_id', '=', $(1)), project_id, workspace_id);
      return r && toProject(r);
    },
    async lockProject(workspace_id, project_id) {
      // PostgreSQL: the row lock an UPDATE of the project (archive, sequence bump) takes, so those
      // wait for this transaction and it waits for them. It does not block foreign-key checks
      // (inserts of items, events and members take FOR KEY SHARE). SQLite serialises write
      // transactions (BEGIN IMMEDIATE), so a plain read is already decided atomically.
      const r = await first('lockProject', () => {
        const q = db.selectFrom('projects').select(PROJECT).where('id', '=', $(0)).where('workspace_id', '=', $(1));
        return dialect === 'postgres' ? q.forNoKeyUpdate() : q;
      }, project_id, workspace_id);
      return r && toProject(r);
    },
    async listProjectsForAccount(workspace_id, account_id) {
      const rows = await db.selectFrom('projects').select(PROJECT)
        .where('workspace_id', '=', workspace_id)
        .where((eb) => eb.or([
          eb('account_id', '=', account_id),
          eb.exists(eb.selectFrom('project_members').select(sql`1`.as('one'))
            .whereRef('project_members.project_id', '=', 'projects.id')
            .where('project_members.account_id', '=', account_id)),
        ]))
        .orderBy('created_at', 'desc').orderBy('id', 'desc')
        .execute();
      return rows.map(toProject);
    },
    async setProjectStatus(project_id, status, at) {
      const r = await db.updateTable('projects').set({ status, updated_at: at })
        .where('id', '=', project_id).where('status', '<>', status)
        .returning(PROJECT).executeTakeFirst();
      return r && toProject(r);
    },
    async getMembership(project_id, account_id) {
      const r = await first('getMembership', () => db.selectFrom('project_members').select(MEMBER)
        .where('project_id', '=', $(0)).where('account_id', '=', $(1)), project_id, account_id);
      return r && toMembership(r);
    },
    async upsertMembership(m) {
      const r = await db.insertInto('project_members')
        .values({ project_id: m.project_id, account_id: m.account_id, role: m.role, created_at: m.created_at })
        .onConflict((oc) => oc.columns(['project_id', 'account_id']).doUpdateSet((eb) => ({ role: eb.ref('excluded.role') })))
        .returning(MEMBER).executeTakeFirstOrThrow();
      return toMembership(r);
    },
    async deleteMembership(project_id, account_id) {
      const r = await db.deleteFrom('project_members')
        .where('project_id', '=', project_id).where('account_id', '=', account_id).executeTakeFirst();
      return r.numDeletedRows > 0n;
    },
    async listMemberships(project_id) {
      const rows = await db.selectFrom('project_members').select(MEMBER).where('project_id', '=', project_id)
        .orderBy('created_at', 'asc').orderBy('account_id', 'asc').execute();
      return rows.map(toMembership);
    },

    // — sessions, floors, pages —
    async insertSession(s) {
      await db.insertInto('sessions').values({
        id: s.id, workspace_id: s.workspace_id, project_id: s.project_id, title: s.title,
        created_by_account_id: s.created_by_account_id, created_at: s.created_at,
        agent: s.agent === null ? null : toJson(s.agent), environment_id: s.environment_id, metadata: toJson(s.metadata),
        updated_at: s.updated_at, archived_at: s.archived_at,
      }).execute();
    },
    async getSession(workspace_id, session_id) {
      const r = await first('getSession', () => db.selectFrom('sessions').select([...SESSION, jsonText('agent'), jsonText('metadata')])
        .where('id', '=', $(0)).where('workspace_id', '=', $(1)).where('deleted_at', 'is', null), session_id, workspace_id);
      return r && toSession(r);
    },
    async lockSession(workspace_id, session_id) {
      // As lockProject: the lock the `event_seq` bump takes, held until this transaction ends.
      const r = await first('lockSession', () => {
        const q = db.selectFrom('sessions').select([...SESSION, jsonText('agent'), jsonText('metadata')])
          .where('id', '=', $(0)).where('workspace_id', '=', $(1)).where('deleted_at', 'is', null);
        return dialect === 'postgres' ? q.forNoKeyUpdate() : q;
      }, session_id, workspace_id);
      return r && toSession(r);
    },
    async listSessions(workspace_id, filter) {
      let q = db.selectFrom('sessions').select([...SESSION, jsonText('agent'), jsonText('metadata')])
        .where('workspace_id', '=', workspace_id).where('deleted_at', 'is', null);
      if (filter.project_id === null) q = q.where('project_id', 'is', null);
      else if (filter.project_id !== undefined) q = q.where('project_id', '=', filter.project_id);
      const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
      return rows.map(toSession);
    },
    async pageSessions(workspace_id, query) {
      const dir = query.order === 'asc' ? 'asc' : 'desc';
      const cmp = dir === 'asc' ? '>' : '<';
      let q = db.selectFrom('sessions').select([...SESSION, jsonText('agent'), jsonText('metadata')])
        .where('workspace_id', '=', workspace_id).where('deleted_at', 'is', null);
      const visible = query.visible_project_ids;
      if (visible !== undefined) {
        q = visible.length === 0 ? q.where('project_id', 'is', null)
          : q.where((eb) => eb.or([eb('project_id', 'is', null), eb('project_id', 'in', visible)]));
      }
      if (query.include_archived === false) q = q.where('archived_at', 'is', null);
      if (query.agent_id !== undefined) {
        const agentId = dialect === 'postgres' ? sql<string>`${sql.ref('agent')}->>'id'` : sql<string>`json_extract(${sql.ref('agent')}, '$.id')`;
        q = q.where(agentId, '=', query.agent_id);
      }
      const b = query.created_at;
      if (b?.gt !== undefined) q = q.where('created_at', '>', b.gt);
      if (b?.gte !== undefined) q = q.where('created_at', '>=', b.gte);
      if (b?.lt !== undefined) q = q.where('created_at', '<', b.lt);
      if (b?.lte !== undefined) q = q.where('created_at', '<=', b.lte);
      const after = query.after;
      if (after !== undefined) {
        q = q.where((eb) => eb.or([eb('created_at', cmp, after.created_at), eb.and([eb('created_at', '=', after.created_at), eb('id', cmp, after.id)])]));
      }
      const rows = await q.orderBy('created_at', dir).orderBy('id', dir).limit(limitOf(query.limit)).execute();
      return rows.map(toSession);
    },
    async updateSession(workspace_id, session_id, patch) {
      const set: Record<string, unknown> = { updated_at: patch.updated_at };
      if (patch.title !== undefined) set.title = patch.title;
      if (patch.metadata !== undefined) set.metadata = toJson(patch.metadata);
      if (patch.archived_at !== undefined) set.archived_at = patch.archived_at;
      const r = await db.updateTable('sessions').set(set)
        .where('id', '=', session_id).where('workspace_id', '=', workspace_id).where('deleted_at', 'is', null)
        .returning([...SESSION, jsonText('agent'), jsonText('metadata')]).executeTakeFirst();
      return r && toSession(r);
    },
    async deleteSession(workspace_id, session_id, at) {
      const r = await db.updateTable('sessions').set({ deleted_at: at })
        .where('id', '=', session_id).where('workspace_id', '=', workspace_id).where('deleted_at', 'is', null).executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },
    async insertFloor(f) {
      await db.insertInto('floors').values({
        id: f.id, workspace_id: f.workspace_id, session_id: f.session_id, number: f.number, branch: f.branch,
        state: f.state, created_at: f.created_at,
      }).execute();
    },
    async getFloor(workspace_id, floor_id) {
      const r = await db.selectFrom('floors').select(FLOOR)
        .where('id', '=', floor_id).where('workspace_id', '=', workspace_id).executeTakeFirst();
      return r && toFloor(r);
    },
    async listFloors(session_id) {
      const rows = await db.selectFrom('floors').select(FLOOR).where('session_id', '=', session_id)
        .orderBy('number', 'asc').orderBy('branch', 'asc').orderBy('id', 'asc').execute();
      return rows.map(toFloor);
    },
    async lastFloorNumber(session_id, branch) {
      const r = await db.selectFrom('floors')
        .select((eb) => eb.fn.max('number').as('last'))
        .where('session_id', '=', session_id).where('branch', '=', branch).executeTakeFirst();
      return r?.last === null || r?.last === undefined ? 0 : num(r.last);
    },
    async insertPage(p) {
      await db.insertInto('pages').values({
        id: p.id, workspace_id: p.workspace_id, session_id: p.session_id, floor_id: p.floor_id, version: p.version,
        content: toJson(p.content), created_at: p.created_at,
      }).execute();
    },
    async getPage(workspace_id, page_id) {
      const r = await db.selectFrom('pages').select([...PAGE, jsonText('content')])
        .where('id', '=', page_id).where('workspace_id', '=', workspace_id).executeTakeFirst();
      return r && toPage(r);
    },
    async listPages(floor_id) {
      const rows = await db.selectFrom('pages').select([...PAGE, jsonText('content')]).where('floor_id', '=', floor_id)
        .orderBy('version', 'asc').orderBy('id', 'asc').execute();
      return rows.map(toPage);
    },

    // — Project Inbox —
    async insertInboxItem(i) {
      await compiled(db, 'insertInboxItem', () => db.insertInto('project_inbox_items').values({
        id: $(0), workspace_id: $(1), project_id: $(2), account_id: $(3), sender_account_id: $(4), type: $(5), title: $(6),
        payload: $(7), source_event_id: $(8), source_session_id: $(9), source_floor_id: $(10), source_page_id: $(11),
        status: $(12), decided_by_account_id: $(13), decided_at: $(14), created_at: $(15), updated_at: $(16),
      }), [
        i.id, i.workspace_id, i.project_id, i.account_id, i.sender_account_id, i.type, i.title, toJson(i.payload),
        i.source_event_id, i.source_session_id, i.source_floor_id, i.source_page_id, i.status, i.decided_by_account_id,
        i.decided_at, i.created_at, i.updated_at,
      ]);
    },
    async getInboxItem(project_id, item_id) {
      const r = await first('getInboxItem', () => db.selectFrom('project_inbox_items').select([...ITEM, jsonText('payload')])
        .where('id', '=', $(0)).where('project_id', '=', $(1)), item_id, project_id);
      return r && toItem(r);
    },
    async getSessionWithAccess(workspace_id, session_id, account_id) {
      if (dialect === 'sqlite') {
        // The session, then its project (same workspace) with the caller's membership as two scalar reads.
        const width = SQLITE_SESSION_COLUMNS.length;
        const rows = await all<Record<string, unknown>>('getSessionWithAccess', () => sql`SELECT 's' AS k, ${sql.raw(unionColumns(SQLITE_SESSION_COLUMNS, width))}
          FROM sessions WHERE id = ${$(1)} AND workspace_id = ${$(2)} AND deleted_at IS NULL
          UNION ALL SELECT 'p', ${sql.raw(PROJECT.map((c) => `p.${c}`).join(', '))},
          (SELECT m.role FROM project_members m WHERE m.project_id = p.id AND m.account_id = ${$(0)}),
          (SELECT m.created_at FROM project_members m WHERE m.project_id = p.id AND m.account_id = ${$(0)})${sql.raw(', NULL'.repeat(width - PROJECT.length - 2))}
          FROM projects p WHERE p.id = (SELECT project_id FROM sessions WHERE id = ${$(1)} AND workspace_id = ${$(2)} AND deleted_at IS NULL)
          AND p.workspace_id = ${$(2)}` as never, account_id, session_id, workspace_id);
        const s = rows.find((r) => r.k === 's');
        if (!s) return undefined;
        const p = rows.find((r) => r.k === 'p');
        return {
          session: toSession(unionValues(s, SQLITE_SESSION_COLUMNS) as Row<'sessions', typeof SESSION> & { agent: string | null; metadata: string }),
          project: p && toProject(unionValues(p, PROJECT) as Row<'projects', typeof PROJECT>),
          membership: p && p[`c${PROJECT.length}`] != null
            ? toMembership({ project_id: p.c0, account_id, role: p[`c${PROJECT.length}`], created_at: p[`c${PROJECT.length + 1}`] } as Row<'project_members', typeof MEMBER>)
            : undefined,
        };
      }
      // One statement: the session, its project (same workspace) and the caller's membership.
      const r = await first<Record<string, unknown>>('getSessionWithAccess', () => sql`SELECT ${sql.raw(SESSION_ACCESS_COLUMNS)},
        ${dialect === 'postgres' ? sql.raw('s.agent::text AS s_agent, s.metadata::text AS s_metadata') : sql.raw('s.agent AS s_agent, s.metadata AS s_metadata')}
        FROM sessions s
        LEFT JOIN projects p ON p.id = s.project_id AND p.workspace_id = s.workspace_id
        LEFT JOIN project_members m ON m.project_id = p.id AND m.account_id = ${$(0)}
        WHERE s.id = ${$(1)} AND s.workspace_id = ${$(2)} AND s.deleted_at IS NULL` as never, account_id, session_id, workspace_id);
      if (!r) return undefined;
      const pick = (prefix: string, columns: readonly string[]) => Object.fromEntries(columns.map((c) => [c, r[`${prefix}_${c}`]]));
      return {
        session: toSession(pick('s', [...SESSION, 'agent', 'metadata']) as Row<'sessions', typeof SESSION> & { agent: string | null; metadata: string }),
        project: r.p_id == null ? undefined : toProject(pick('p', PROJECT) as Row<'projects', typeof PROJECT>),
        membership: r.m_role == null ? undefined : toMembership(pick('m', MEMBER) as Row<'project_members', typeof MEMBER>),
      };
    },
    async getInboxItemWithAccess(workspace_id, project_id, account_id, item_id) {
      if (dialect === 'sqlite') {
        // The project with the caller's membership as two scalar reads, then the item of that project.
        const width = SQLITE_ITEM_COLUMNS.length;
        const rows = await all<Record<string, unknown>>('getInboxItemWithAccess', () => sql`SELECT 'p' AS k, ${sql.raw(unionColumns(PROJECT.map((c) => `p.${c}`), PROJECT.length))},
          (SELECT m.role FROM project_members m WHERE m.project_id = p.id AND m.account_id = ${$(0)}) AS c${sql.raw(String(PROJECT.length))},
          (SELECT m.created_at FROM project_members m WHERE m.project_id = p.id AND m.account_id = ${$(0)}) AS c${sql.raw(String(PROJECT.length + 1))}${sql.raw(Array.from({ length: width - PROJECT.length - 2 }, (_, k) => `, NULL AS c${PROJECT.length + 2 + k}`).join(''))}
          FROM projects p WHERE p.id = ${$(2)} AND p.workspace_id = ${$(3)}
          UNION ALL SELECT 'i', ${sql.raw(SQLITE_ITEM_COLUMNS.join(', '))} FROM project_inbox_items WHERE id = ${$(1)} AND project_id = ${$(2)}` as never,
        account_id, item_id, project_id, workspace_id);
        const p = rows.find((r) => r.k === 'p');
        if (!p) return undefined;
        const i = rows.find((r) => r.k === 'i');
        return {
          project: toProject(unionValues(p, PROJECT) as Row<'projects', typeof PROJECT>),
          membership: p[`c${PROJECT.length}`] != null
            ? toMembership({ project_id: p.c0, account_id, role: p[`c${PROJECT.length}`], created_at: p[`c${PROJECT.length + 1}`] } as Row<'project_members', typeof MEMBER>)
            : undefined,
          item: i && toItem(unionValues(i, SQLITE_ITEM_COLUMNS) as Row<'project_inbox_items', typeof ITEM> & { payload: string }),
        };
      }
      // One statement: the project, the caller's membership and the item (one round trip on PostgreSQL).
      const r = await first<Record<string, unknown>>('getInboxItemWithAccess', () => sql`SELECT ${sql.raw(ACCESS_COLUMNS)},
        ${dialect === 'postgres' ? sql.raw('i.payload::text') : sql.raw('i.payload')} AS i_payload
        FROM projects p
        LEFT JOIN project_members m ON m.project_id = p.id AND m.account_id = ${$(0)}
        LEFT JOIN project_inbox_items i ON i.project_id = p.id AND i.id = ${$(1)}
        WHERE p.id = ${$(2)} AND p.workspace_id = ${$(3)}` as never, account_id, item_id, project_id, workspace_id);
      if (!r) return undefined;
      const pick = (prefix: string, columns: readonly string[]) => Object.fromEntries(columns.map((c) => [c, r[`${prefix}_${c}`]]));
      return {
        project: toProject(pick('p', PROJECT) as Row<'projects', typeof PROJECT>),
        membership: r.m_role == null ? undefined : toMembership(pick('m', MEMBER) as Row<'project_members', typeof MEMBER>),
        item: r.i_id == null ? undefined : toItem(pick('i', [...ITEM, 'payload']) as Row<'project_inbox_items', typeof ITEM> & { payload: string }),
      };
    },
    async listInboxItems(q: InboxItemQuery) {
      const filters = INBOX_FILTERS.filter((column) => q[column] !== undefined);
      const after = q.after;
      const args: unknown[] = [q.project_id, ...filters.map((column) => q[column])];
      if (after) args.push(after.created_at, after.id);
      args.push(limitOf(q.limit));
      const rows = await all(`listInboxItems(${filters.join(',')}${after ? ';after' : ''})`, () => {
        let query = db.selectFrom('project_inbox_items').select([...ITEM, jsonText('payload')]).where('project_id', '=', $(0));
        filters.forEach((column, i) => {
          query = query.where(column, '=', $(i + 1));
        });
        let next = filters.length + 1;
        if (after) {
          const [created_at, id] = [$(next), $(next + 1)];
          next += 2;
          query = query.where(({ eb, refTuple, tuple }) => eb(refTuple('created_at', 'id'), '<', tuple(created_at, id)));
        }
        return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit($(next));
      }, ...args);
      return rows.map(toItem);
    },
    async decideInboxItem(project_id, item_id, seen_status, patch) {
      const r = await first('decideInboxItem', () => db.updateTable('project_inbox_items')
        .set({ status: $(0), decided_by_account_id: $(1), decided_at: $(2), updated_at: $(3) })
        .where('project_id', '=', $(4)).where('id', '=', $(5)).where('status', '=', $(6))
        .returning([...ITEM, jsonText('payload')]),
      patch.status, patch.decided_by_account_id, patch.decided_at, patch.updated_at, project_id, item_id, seen_status);
      return r && toItem(r);
    },

    // — idempotency keys —
    async findIdempotencyRecord(scope) {
      const r = await first('findIdempotencyRecord', () => db.selectFrom('idempotency_records').select(IDEMPOTENCY)
        .where('workspace_id', '=', $(0)).where('account_id', '=', $(1)).where('key', '=', $(2)),
      scope.workspace_id, scope.account_id, scope.key);
      return r && toIdempotencyRecord(r);
    },
    async insertIdempotencyRecord(record) {
      // The primary key decides: a competitor's uncommitted row makes this wait for its outcome.
      const r = await first('insertIdempotencyRecord', () => db.insertInto('idempotency_records').values({
        workspace_id: $(0), account_id: $(1), key: $(2), request_hash: $(3), resource_type: $(4), resource_id: $(5), created_at: $(6),
      }).onConflict((oc) => oc.columns(['workspace_id', 'account_id', 'key']).doNothing()).returning('key'),
      record.workspace_id, record.account_id, record.key, record.request_hash, record.resource_type, record.resource_id, record.created_at);
      return r !== undefined;
    },

    // — Project Events and Operation Log —
    async appendProjectEvent(e: NewProjectEvent) {
      const values = (sequence: number): ProjectEvent => ({
        id: e.id, workspace_id: e.workspace_id, project_id: e.project_id, sequence,
        type: e.type, actor_account_id: e.actor_account_id, session_id: e.session_id, floor_id: e.floor_id,
        page_id: e.page_id, operation_log_id: e.operation_log_id, correlation_id: e.correlation_id,
        causation_event_id: e.causation_event_id, payload: fromJson(toJson(e.payload)), visibility: e.visibility, source: e.source,
        created_at: e.created_at,
      });
      const missing = () => new Error(`@inbox-kit/storage-kysely: appendProjectEvent: project ${e.project_id} does not exist`);
      if (dialect === 'postgres') {
        // One statement: the project row stays locked (from the counter bump to the commit) one
        // round trip less, which is what bounds concurrent writers of one project.
        const row = (await compiled(db, 'appendProjectEvent', () => sql<{ sequence: number }>`
          with counter as (
            update projects set event_sequence = event_sequence + 1 where id = ${$(2)} returning event_sequence
          )
          insert into project_events (id, workspace_id, project_id, sequence, type, actor_account_id, session_id, floor_id,
            page_id, operation_log_id, correlation_id, causation_event_id, payload, visibility, source, created_at)
          select ${$(0)}, ${$(1)}, ${$(2)}, counter.event_sequence, ${$(3)}, ${$(4)}, ${$(5)}, ${$(6)}, ${$(7)}, ${$(8)}, ${$(9)},
            ${$(10)}, cast(${$(11)} as json), ${$(12)}, ${$(13)}, cast(${$(14)} as bigint)
          from counter
          returning sequence`, [
          e.id, e.workspace_id, e.project_id, e.type, e.actor_account_id, e.session_id, e.floor_id, e.page_id,
          e.operation_log_id, e.correlation_id, e.causation_event_id, toJson(e.payload), e.visibility, e.source, e.created_at,
        ])).rows[0];
        if (!row) throw missing();
        return values(num(row.sequence));
      }
      return atomically(async (trx) => {
        const counter = (await compiled(trx, 'nextProjectEventSequence', () => trx.updateTable('projects')
          .set((eb) => ({ event_sequence: eb('event_sequence', '+', 1) }))
          .where('id', '=', $(0))
          .returning('event_sequence'), [e.project_id])).rows[0];
        if (!counter) throw missing();
        const stored = values(num(counter.event_sequence));
        await compiled(trx, 'insertProjectEvent', () => trx.insertInto('project_events').values({
          id: $(0), workspace_id: $(1), project_id: $(2), sequence: $(3), type: $(4), actor_account_id: $(5), session_id: $(6),
          floor_id: $(7), page_id: $(8), operation_log_id: $(9), correlation_id: $(10), causation_event_id: $(11), payload: $(12),
          visibility: $(13), source: $(14), created_at: $(15),
        }), [
          stored.id, stored.workspace_id, stored.project_id, stored.sequence, stored.type, stored.actor_account_id, stored.session_id,
          stored.floor_id, stored.page_id, stored.operation_log_id, stored.correlation_id, stored.causation_event_id,
          toJson(stored.payload), stored.visibility, stored.source, stored.created_at,
        ]);
        return stored;
      });
    },
    async getProjectEvent(project_id, event_id) {
      const r = await db.selectFrom('project_events').select([...EVENT, jsonText('payload')])
        .where('id', '=', event_id).where('project_id', '=', project_id).executeTakeFirst();
      return r && toEvent(r);
    },
    async listProjectEvents(q) {
      if (q.types !== undefined && q.types.length === 0) return [];
      let query = db.selectFrom('project_events').select([...EVENT, jsonText('payload')])
        .where('project_id', '=', q.project_id).where('sequence', '>', q.after);
      if (q.types !== undefined) query = query.where('type', 'in', q.types);
      if (q.session_id !== undefined) query = query.where('session_id', '=', q.session_id);
      const rows = await query.orderBy('sequence', 'asc').limit(limitOf(q.limit)).execute();
      return rows.map(toEvent);
    },
    async lastProjectEventSequence(project_id) {
      const r = await db.selectFrom('project_events').select((eb) => eb.fn.max('sequence').as('last'))
        .where('project_id', '=', project_id).executeTakeFirst();
      return r?.last == null ? 0 : num(r.last);
    },
    async appendOperationLog(l) {
      await compiled(db, 'appendOperationLog', () => db.insertInto('operation_logs').values({
        id: $(0), workspace_id: $(1), project_id: $(2), actor_account_id: $(3), action: $(4), target_type: $(5), target_id: $(6),
        request_id: $(7), metadata: $(8), created_at: $(9),
      }), [l.id, l.workspace_id, l.project_id, l.actor_account_id, l.action, l.target_type, l.target_id, l.request_id, toJson(l.metadata), l.created_at]);
    },
    async listOperationLogs(q) {
      let query = db.selectFrom('operation_logs').select([...LOG, jsonText('metadata')]).where('project_id', '=', q.project_id);
      const after = q.after;
      if (after) {
        query = query.where(({ eb, refTuple, tuple }) => eb(refTuple('created_at', 'id'), '<', tuple(after.created_at, after.id)));
      }
      const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limitOf(q.limit)).execute();
      return rows.map(toLog);
    },

    // — Runs and the Session ledger —
    async insertRun(r) {
      await db.insertInto('runs').values({
        id: r.id, session_id: r.session_id, status: r.status, started_at: r.started_at, ended_at: r.ended_at, outcome: r.outcome,
      }).execute();
    },
    async getRunningRun(session_id) {
      const r = await first('getRunningRun', () => db.selectFrom('runs').select(RUN).where('session_id', '=', $(0)).where('status', '=', 'running')
        .orderBy('started_at', 'desc').orderBy('id', 'desc').limit(1), session_id);
      return r && toRun(r);
    },
    async listRunningRuns(limit) {
      // Served by the partial index `runs_running_idx` (migration 0004).
      const rows = await db.selectFrom('runs').select(RUN).where('status', '=', 'running')
        .orderBy('started_at', 'asc').orderBy('id', 'asc').limit(limitOf(limit)).execute();
      return rows.map(toRun);
    },
    async endRun(run_id, outcome, at) {
      const r = await db.updateTable('runs').set({ status: 'idle', outcome, ended_at: at })
        .where('id', '=', run_id).where('status', '=', 'running').executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },
    async appendSessionEvents(events: NewSessionEvent[]) {
      if (events.length === 0) return [];
      return atomically(async (trx) => {
        // Reserve a block of `seq` values per session. Sessions are locked in id order, so two calls
        // touching the same sessions cannot deadlock.
        const counts = new Map<string, number>();
        for (const e of events) counts.set(e.session_id, (counts.get(e.session_id) ?? 0) + 1);
        const next = new Map<string, number>();
        for (const session_id of [...counts.keys()].sort()) {
          const n = counts.get(session_id) ?? 0;
          const counter = await trx.updateTable('sessions')
            .set((eb) => ({ event_seq: eb('event_seq', '+', n) }))
            .where('id', '=', session_id)
            .returning('event_seq')
            .executeTakeFirst();
          if (!counter) throw new Error(`@inbox-kit/storage-kysely: appendSessionEvents: session ${session_id} does not exist`);
          next.set(session_id, num(counter.event_seq) - n + 1);
        }
        const stored: SessionEvent[] = events.map((e) => {
          const seq = next.get(e.session_id) ?? 0;
          next.set(e.session_id, seq + 1);
          return {
            id: e.id, session_id: e.session_id, seq, type: e.type, run_id: e.run_id, message_id: e.message_id,
            content: fromJson(toJson(e.content)), floor_id: e.floor_id, page_id: e.page_id, processed_at: e.processed_at,
          };
        });
        await trx.insertInto('session_events').values(stored.map((s) => ({ ...s, content: toJson(s.content) }))).execute();
        return stored;
      });
    },
    async listSessionEvents(q) {
      let query = db.selectFrom('session_events').select([...SESSION_EVENT, jsonText('content')])
        .where('session_id', '=', q.session_id).where('seq', '>', q.after);
      if (q.before !== undefined) query = query.where('seq', '<', q.before);
      if (q.types !== undefined) query = q.types.length === 0 ? query.where(sql<boolean>`1 = 0`) : query.where('type', 'in', q.types);
      const b = q.processed_at;
      if (b?.gt !== undefined) query = query.where('processed_at', '>', b.gt);
      if (b?.gte !== undefined) query = query.where('processed_at', '>=', b.gte);
      if (b?.lt !== undefined) query = query.where('processed_at', '<', b.lt);
      if (b?.lte !== undefined) query = query.where('processed_at', '<=', b.lte);
      const rows = await query.orderBy('seq', q.order === 'desc' ? 'desc' : 'asc').limit(limitOf(q.limit)).execute();
      return rows.map(toSessionEvent);
    },
    async lastSessionEventSeq(session_id) {
      const r = await db.selectFrom('session_events').select((eb) => eb.fn.max('seq').as('last'))
        .where('session_id', '=', session_id).executeTakeFirst();
      return r?.last == null ? 0 : num(r.last);
    },

    // — attempt ownership —
    async claimAttemptOwnership(claim, now) {
      // The primary key decides: a competing claim waits for the first one's outcome, then finds
      // its row live (and held by another host) and updates nothing.
      const r = await db.insertInto('attempt_owners').values({
        session_id: claim.session_id, run_id: claim.run_id, host_id: claim.host_id, host_url: claim.host_url,
        lease_expires_at: claim.lease_expires_at,
      }).onConflict((oc) => oc.column('session_id').doUpdateSet({
        run_id: claim.run_id, host_id: claim.host_id, host_url: claim.host_url, lease_expires_at: claim.lease_expires_at,
      }).where((eb) => eb.or([
        eb('attempt_owners.lease_expires_at', '<=', now),
        eb('attempt_owners.host_id', '=', claim.host_id),
      ]))).returning('session_id').executeTakeFirst();
      return r !== undefined;
    },
    async renewAttemptOwnership(key, lease_expires_at) {
      const r = await db.updateTable('attempt_owners').set({ lease_expires_at })
        .where('session_id', '=', key.session_id).where('run_id', '=', key.run_id).where('host_id', '=', key.host_id)
        .executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },
    async releaseAttemptOwnership(key) {
      const r = await db.deleteFrom('attempt_owners')
        .where('session_id', '=', key.session_id).where('run_id', '=', key.run_id).where('host_id', '=', key.host_id)
        .executeTakeFirst();
      return r.numDeletedRows > 0n;
    },
    async findAttemptOwner(session_id, now) {
      const r = await first('findAttemptOwner', () => db.selectFrom('attempt_owners').select(OWNER)
        .where('session_id', '=', $(0)).where('lease_expires_at', '>', $(1)), session_id, now);
      return r && toOwner(r);
    },
  };
}

/** A transaction builder with the isolation the port asks for (`READ COMMITTED` on PostgreSQL). */
function beginTransaction(db: Kysely<Database>, dialect: Dialect) {
  return dialect === 'postgres' ? db.transaction().setIsolationLevel('read committed') : db.transaction();
}

/**
 * Creates the store of `@inbox-kit/core`'s storage port over a migrated Kysely database.
 *
 * @param db a Kysely instance on a database migrated with `migrateToLatest` (from `openSqlite`,
 *   `openPostgres` or your own dialect setup of the same engine).
 * @param opts.dialect `'sqlite'` or `'postgres'`, the engine behind `db`.
 * @returns a `Store`; its `close()` destroys `db` (closes the SQLite file / ends the pool).
 *
 * Errors: driver errors pass through unchanged (e.g. a unique violation when inserting an id that
 * exists; the services check existence first). `appendProjectEvent` / `appendSessionEvents`
 * throw when the project / session row does not exist.
 *
 * Do not call the store (rather than the `tx` argument) inside `transaction(fn)`: on SQLite the
 * single connection is held by the transaction and the call would wait forever.
 */
export function createKyselyStore(db: Kysely<Database>, opts: KyselyStoreOptions): Store {
  const { dialect } = opts;
  // On PostgreSQL the compiled texts become named prepared statements (pools of `openPostgres`).
  const compiled = compiledQueries(dialect === 'postgres' ? prepareStatement : undefined);
  const transact: Transact = dialect === 'sqlite' ? createGroupCommit(db) : (fn) => beginTransaction(db, dialect).execute(fn);
  return {
    ...opsOn(db, dialect, false, transact, compiled),
    transaction: (fn) => transact((trx) => fn(opsOn(trx, dialect, true, transact, compiled))),
    close: () => db.destroy(),
  };
}
