/**
 * Every difference between SQLite and PostgreSQL the store makes, in one object per engine: how a
 * unit of work starts, how a row is held, how JSON is read back and queried, and which queries
 * become named prepared statements. The store's modules ask the dialect; none of them tests the
 * engine's name.
 */
import { sql, type Kysely, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import { busyTimeoutOf } from '../busy.js';
import { createGroupCommit } from '../group-commit.js';
import { prepareStatement } from '../prepared.js';
import type { Database, Dialect } from '../schema.js';

/** Runs `fn` in a new transaction of the store (group-committed on SQLite). */
export type Transact = <T>(fn: (trx: Kysely<Database>) => Promise<T>) => Promise<T>;

/** What the store needs to know about its engine. */
export interface SqlDialect {
  readonly name: Dialect;
  /**
   * The unit of work of `transaction(fn)`: on SQLite a group commit (`group-commit.ts`), on
   * PostgreSQL one `READ COMMITTED` transaction.
   */
  transact(db: Kysely<Database>): Transact;
  /**
   * Holds the rows a read returns against concurrent writers until the transaction ends:
   * PostgreSQL `FOR NO KEY UPDATE` (the lock an `UPDATE` of the row takes, not the one foreign-key
   * checks take); SQLite serialises write transactions (`BEGIN IMMEDIATE`), so the read is plain.
   */
  holdRows<Q extends SelectQueryBuilder<Database, keyof Database, object>>(query: Q): Q;
  /** A JSON column read back as the text that was stored (`::text` on PostgreSQL, whatever the pool's JSON parser). */
  jsonText(column: string): RawBuilder<string>;
  /** {@link jsonText} as SQL text, for a raw select list (`ref` is a trusted `alias.column`). */
  jsonTextSql(ref: string): string;
  /** The string at `key` of the JSON object in `column` (`->>` on PostgreSQL, `json_extract` on SQLite). */
  jsonField(column: string, key: string): RawBuilder<string>;
  /**
   * Whether a counter bump and the insert that uses it run as one statement (a data-modifying
   * `WITH` on PostgreSQL: the parent row stays locked one round trip less). SQLite has no such
   * statement and runs the two inside the unit of work.
   */
  readonly counterAndInsertInOneStatement: boolean;
  /**
   * Whether the access reads (`getInboxItemWithAccess`, `getSessionWithAccess`) are one `UNION
   * ALL` of point reads by key rather than a join. SQLite: once `ANALYZE` has filled
   * `sqlite_stat4` (a bulk load or `PRAGMA optimize` does), it plans a join again on every
   * execution, since the plan may depend on the bound values: ~20 µs a call instead of ~4, which
   * halved the get and Live Inbox routes (issue 18). PostgreSQL plans the join once.
   */
  readonly accessReadsWithoutJoins: boolean;
  /**
   * Whether the store reads a Project Inbox page as the JSON text the database builds
   * (`listInboxItemsJson`: SQLite's `json_group_array(json_object(…))`), so no row becomes an
   * object only to be stringified again. SQLite: the same process's CPU, and a list's server time
   * fell by about a third. PostgreSQL: left out — the JSON moved the work to the database (a page
   * of 50 cost it ~730–790 µs of CPU instead of ~210–460, against ~340–440 µs of Node's saved of
   * ~750–1,030), and the database is the part of a deployment that does not scale out. There the
   * store writes the page's text in Node from the page's rows instead, each JSON column as the
   * text it stored (`Codec.json`), so no payload is parsed only to be stringified again.
   */
  readonly pagesAsJson: boolean;
  /** Called with each query text compiled once (PostgreSQL: registers a named prepared statement). */
  readonly onCompile: ((sql: string) => void) | undefined;
  /**
   * The store's clock (`RunStore.now`), in integer ms: PostgreSQL's `clock_timestamp()` read on
   * `db` (the server's clock, the same for every process; the time of the call, also inside a
   * transaction); SQLite's is the machine's clock (`Date.now()`): every process using the file runs
   * on that machine and reads it, whatever `Clock` the services were given.
   */
  now(db: Kysely<Database>): Promise<number>;
}

const sqlite: SqlDialect = {
  name: 'sqlite',
  transact: (db) => createGroupCommit(db, { busyTimeoutMs: busyTimeoutOf(db) }),
  holdRows: (query) => query,
  jsonText: (column) => sql<string>`${sql.ref(column)}`,
  jsonTextSql: (ref) => ref,
  jsonField: (column, key) => sql<string>`json_extract(${sql.ref(column)}, ${sql.lit(`$.${key}`)})`,
  counterAndInsertInOneStatement: false,
  accessReadsWithoutJoins: true,
  pagesAsJson: true,
  onCompile: undefined,
  now: async () => Date.now(),
};

const postgres: SqlDialect = {
  name: 'postgres',
  transact: (db) => (fn) => db.transaction().setIsolationLevel('read committed').execute(fn),
  holdRows: (query) => query.forNoKeyUpdate() as typeof query,
  jsonText: (column) => sql<string>`${sql.ref(column)}::text`,
  jsonTextSql: (ref) => `${ref}::text`,
  jsonField: (column, key) => sql<string>`${sql.ref(column)}->>${sql.lit(key)}`,
  counterAndInsertInOneStatement: true,
  accessReadsWithoutJoins: false,
  pagesAsJson: false,
  onCompile: prepareStatement,
  now: async (db) => {
    const { rows } = await sql<{ now: string | number }>`select floor(extract(epoch from clock_timestamp()) * 1000)::int8 as now`.execute(db);
    return Number(rows[0]?.now);
  },
};

/** The dialect object of an engine. */
export const dialects: Readonly<Record<Dialect, SqlDialect>> = { sqlite, postgres };
