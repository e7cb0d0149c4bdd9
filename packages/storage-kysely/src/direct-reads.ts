/**
 * Reads that skip Kysely's connection queue on an embedded, synchronous connection (SQLite through
 * better-sqlite3), in a module that loads no driver: `openSqlite` registers a reader for the
 * Kysely instance it returns, the store's compiled-once queries use it (`store/context.ts`).
 *
 * Kysely drives the one SQLite connection through a mutex and several promise hops per query;
 * for a point read that costs more than the read (issue 18: ~6 µs of a 14 µs access read). A
 * read made synchronously while no transaction is open on the connection sees exactly what the
 * queued read would see — the committed state — and nothing can run on the connection meanwhile
 * (better-sqlite3 blocks the thread). While a transaction is open (a group commit in progress),
 * the reader declines and the read waits in Kysely's queue as before, so it never sees
 * uncommitted writes.
 */
/** A synchronous reader of one connection. */
export interface DirectReader {
  /**
   * The rows of the `SELECT` `sql` with `parameters`, read now; `undefined` when it cannot be read
   * now (a transaction is open on the connection, or the connection is closed): the caller then
   * runs it through Kysely. Callers pass only texts {@link isSelect} accepts (decided once per
   * compiled query, not per read).
   */
  read(sql: string, parameters: readonly unknown[]): unknown[] | undefined;
}

const readers = new WeakMap<object, DirectReader>();

/** Registers `reader` for the Kysely instance `db` (the one whose connection it reads). */
export function registerDirectReader(db: object, reader: DirectReader): void {
  readers.set(db, reader);
}

/** The reader registered for `db`, if any (none for PostgreSQL, or for a Kysely instance derived with `withPlugin` & co.). */
export function directReaderOf(db: object): DirectReader | undefined {
  return readers.get(db);
}

/** True when `sql` is a plain `SELECT` (the only statements a {@link DirectReader} takes). */
export const isSelect = (sql: string): boolean => /^\s*select\b/i.test(sql);
