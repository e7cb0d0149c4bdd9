/**
 * What every module of the store runs on: the executor (the root `db`, autocommit, or a
 * transaction), the dialect, and the queries compiled once per store.
 *
 * Kysely builds an operation tree and compiles it to SQL on every call, about 4 µs, as long as a
 * small SQLite read; the queries of the hot paths are compiled once per store
 * ({@link compiledQueries}) and run with new values in their {@link Slot}s. On PostgreSQL their
 * texts become named prepared statements (the dialect's `onCompile`).
 */
import { createQueryId, type Compilable, type CompiledQuery, type Kysely, type QueryResult, type RawBuilder } from 'kysely';
import type { Database } from '../schema.js';
import { isSelect, transactionExecutorOf, type DirectReader } from '../direct-reads.js';
import type { SqlDialect, Transact } from './dialect.js';
import type { Codec } from './rows.js';

/** Where the i-th argument goes in a query compiled once (a value Kysely passes through as a parameter). */
class Slot {
  constructor(readonly index: number) {}
}

const SLOTS = Array.from({ length: 24 }, (_, i) => new Slot(i));

/** The placeholder of a query compiled once for its i-th argument (typed `never`: fits any value position). */
export const $ = (i: number): never => (SLOTS[i] ?? new Slot(i)) as never;

/**
 * Runs the query compiled under `name` (compiling `build()` the first time) on `executor`, with
 * `args` in its {@link Slot}s. `name` must identify the query's shape (which filters it has), never
 * its values.
 */
export type RunCompiled = <R>(executor: Kysely<Database>, name: string, build: () => Compilable<R> | RawBuilder<R>, args: readonly unknown[]) => Promise<QueryResult<R>>;

/**
 * A cache of compiled queries for one store. With `direct` (SQLite from `openSqlite`), the reads
 * run on the store's root `db` go to its synchronous reader first (`direct-reads.ts`).
 */
export function compiledQueries(onCompile?: (sql: string) => void, direct?: { root: Kysely<Database>; reader: DirectReader }): RunCompiled {
  /** Compiled queries by name, with whether the direct reader may take them (a `SELECT`), decided once. */
  const cache = new Map<string, { query: CompiledQuery; select: boolean }>();
  return <R>(executor: Kysely<Database>, name: string, build: () => Compilable<R> | RawBuilder<R>, args: readonly unknown[]) => {
    let entry = cache.get(name);
    if (entry === undefined) {
      const built = build();
      const compiled = 'isRawBuilder' in built ? built.compile(executor) : built.compile();
      onCompile?.(compiled.sql);
      entry = { query: compiled, select: isSelect(compiled.sql) };
      cache.set(name, entry);
    }
    const query = entry.query;
    const parameters = query.parameters.map((p) => (p instanceof Slot ? args[p.index] : p));
    if (direct !== undefined) {
      if (executor === direct.root) {
        if (entry.select) {
          const rows = direct.reader.read(query.sql, parameters);
          if (rows !== undefined) return Promise.resolve({ rows: rows as R[] });
        }
      } else {
        // A unit of work of the group commit: run on the connection the group holds, now.
        const execute = transactionExecutorOf(executor);
        if (execute !== undefined) {
          try {
            return Promise.resolve(execute(query.sql, parameters) as QueryResult<R>);
          } catch (error) {
            return Promise.reject(error);
          }
        }
      }
    }
    return executor.executeQuery<R>({ sql: query.sql, query: query.query, parameters, queryId: createQueryId() } as CompiledQuery<R>);
  };
}

/** The executor and helpers one sub-port's operations run on. */
export interface StoreContext {
  /** The root `db` (autocommit) or the transaction. */
  db: Kysely<Database>;
  dialect: SqlDialect;
  /** Runs `fn` atomically: on this transaction, or in a new one when running autocommit. */
  atomically<T>(fn: (trx: Kysely<Database>) => Promise<T>): Promise<T>;
  /** Runs a query compiled once on `executor` (see {@link compiledQueries}). */
  compiled: RunCompiled;
  /** The first row of the query compiled once under `name`, on {@link db}. */
  first<R>(name: string, build: () => Compilable<R>, ...args: unknown[]): Promise<R | undefined>;
  /** Every row of the query compiled once under `name`, on {@link db}. */
  all<R>(name: string, build: () => Compilable<R>, ...args: unknown[]): Promise<R[]>;
}

/** The context of one executor; `inTransaction` tells multi-statement writes whether they must open their own transaction. */
export function contextOn(db: Kysely<Database>, dialect: SqlDialect, inTransaction: boolean, transact: Transact, compiled: RunCompiled): StoreContext {
  return {
    db,
    dialect,
    atomically: (fn) => (inTransaction ? fn(db) : transact(fn)),
    compiled,
    first: async (name, build, ...args) => (await compiled(db, name, build, args)).rows[0],
    all: async (name, build, ...args) => (await compiled(db, name, build, args)).rows,
  };
}

/** Inserts `record` as one row of its codec's table, with a query compiled once. */
export async function insertRecord<R>(ctx: StoreContext, codec: Codec<R>, record: R, executor: Kysely<Database> = ctx.db): Promise<void> {
  await ctx.compiled(executor, `insert:${codec.table}`, () => executor.insertInto(codec.table)
    .values(Object.fromEntries(codec.columns.map((column, i) => [column, $(i)])) as never), codec.encode(record));
}
