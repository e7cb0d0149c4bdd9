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
   * OPTIONAL. Runs the statement `sql` (any statement: a read, a write, `RETURNING`) with
   * `parameters` now, on the connection, and returns what Kysely's driver would (`rows`, and for a
   * write `numAffectedRows`). Only for the holder of the connection inside its transaction (a
   * unit of work of the group commit): see {@link linkTransaction}. Throws the driver's error.
   */
  execute?(sql: string, parameters: readonly unknown[]): { rows: unknown[]; numAffectedRows?: bigint };
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

/**
 * The transactions' connections whose statements may run synchronously: the Kysely a unit of work
 * of the group commit gets (bound to the one connection, inside the group's `BEGIN IMMEDIATE`)
 * mapped to its root's reader. While the group runs, nothing else runs on the connection (Kysely's
 * mutex is held by the group), so a statement run directly sees and writes exactly what the queued
 * one would, without the queue's promise hops (issue 33: about a third of a create's server time
 * was Kysely's per-statement path).
 */
const transactions = new WeakMap<object, DirectReader & Required<Pick<DirectReader, 'execute'>>>();

/**
 * Links `connection` (a unit of work's Kysely inside a group commit of `root`) to `root`'s reader,
 * when that reader can execute; {@link transactionExecutorOf} then finds it.
 */
export function linkTransaction(connection: object, root: object): void {
  const reader = readers.get(root);
  if (reader?.execute !== undefined) transactions.set(connection, reader as DirectReader & Required<Pick<DirectReader, 'execute'>>);
}

/** Ends the link of {@link linkTransaction} (the group released the connection). */
export function unlinkTransaction(connection: object): void {
  transactions.delete(connection);
}

/** The synchronous executor of a linked transaction's connection (see {@link linkTransaction}), if any. */
export function transactionExecutorOf(connection: object): DirectReader['execute'] {
  return transactions.get(connection)?.execute;
}

/** True when `sql` is a plain `SELECT` (the only statements a {@link DirectReader} takes). */
export const isSelect = (sql: string): boolean => /^\s*select\b/i.test(sql);
