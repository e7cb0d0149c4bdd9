/**
 * Group commit for SQLite: transactions that are waiting at the same moment share one
 * `BEGIN IMMEDIATE … COMMIT`, and so one sync of the WAL.
 *
 * With `synchronous = FULL` every commit waits for the disk (about 0.2 ms on a fast SSD, far more
 * on a slow disk), and better-sqlite3 waits with the event loop blocked. One transaction per commit
 * caps a server at one write per disk sync. Here, a transaction asked for while the connection
 * is busy waits in a queue; when the connection frees, the whole queue (up to `maxGroupSize`) runs
 * in one database transaction, each unit of work inside its own savepoint:
 *
 * - a unit of work that throws is rolled back to its savepoint and rejected with its error; the
 *   others of the group are not affected;
 * - every unit of work's promise settles after the `COMMIT` (or its failure): a caller that got a
 *   value knows its writes are on disk, as with one commit each;
 * - when another process holds the write lock, `BEGIN IMMEDIATE` fails at once (the connection has
 *   `busy_timeout = 0`, `busy.ts`): the group gives the connection back (reads go on) and tries
 *   again after a short pause, never blocking the thread; a unit whose wait passes the busy timeout
 *   (counted from when it was asked for) is rejected with `storage_busy` and nothing of it is
 *   written;
 * - when the group as a whole fails otherwise (a refused `BEGIN`, a failed `COMMIT`),
 *   nothing of the group is written and every unit of work is rejected with that error (or its own);
 * - when a unit's error made SQLite roll back the whole transaction (disk full, I/O error,
 *   `RAISE(ROLLBACK)`, `ON CONFLICT ROLLBACK`), its savepoint cannot be restored: that unit is
 *   rejected with its own error, the units that had already run lose their writes and are rejected
 *   with a {@link GroupCommitAbortedError} naming the cause, and the units that had not run yet
 *   go back to the head of the queue (they never ran, so nothing of theirs is repeated);
 * - units of work run one after another, in the order they were asked for, each seeing the
 *   writes of those before it (the same serial order as one transaction each).
 *
 * A group starts on `setImmediate`, after the requests read in the same turn of the event loop
 * have queued their transactions. A lone transaction pays that hop and no savepoint.
 *
 * A unit of work must not wait for another transaction's promise (it settles after the commit of
 * its group, which may be the group that is waiting for this unit): that waits forever, as does
 * calling the store instead of the unit's own connection.
 */
import { CompiledQuery, type Kysely } from 'kysely';
import { busyBackoff, isSqliteBusy, pause, storageBusyError } from './busy.js';
import { SQLITE_BUSY_TIMEOUT_MS } from './constants.js';
import { linkTransaction, transactionExecutorOf, unlinkTransaction } from './direct-reads.js';

/** The most units of work one group commit holds (the rest wait for the next group). */
export const MAX_GROUP_SIZE = 64;

/**
 * The rejection of a unit of work whose writes were lost because another unit of its group made
 * SQLite roll back the whole transaction; `cause` is that unit's error. Nothing of the unit was
 * committed; running it again is safe if the caller's own logic allows it.
 */
export class GroupCommitAbortedError extends Error {
  override readonly name = 'GroupCommitAbortedError';

  constructor(cause: unknown) {
    super(`SQLite rolled back the group commit's transaction (${cause instanceof Error ? cause.message : String(cause)}); this unit of work was not committed`, { cause });
  }
}

/** Runs `fn` as a unit of work of a group commit; resolves with its value after the commit. */
export type GroupTransaction<DB> = <T>(fn: (connection: Kysely<DB>) => Promise<T>) => Promise<T>;

interface Waiting<DB> {
  fn: (connection: Kysely<DB>) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  /** When it was asked for (`Date.now()`): its wait for another process's lock counts from here. */
  since: number;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

const SAVEPOINT = 'inbox_kit_unit';
const statement = (text: string) => CompiledQuery.raw(text);
/** The group's `BEGIN IMMEDIATE` (exported so the driver leaves its lock wait to the group: `sqlite.ts`). */
export const GROUP_BEGIN = statement('begin immediate');
const BEGIN = GROUP_BEGIN;
const COMMIT = statement('commit');
const ROLLBACK = statement('rollback');
const SAVE = statement(`savepoint ${SAVEPOINT}`);
const RELEASE = statement(`release ${SAVEPOINT}`);
const UNDO = statement(`rollback to ${SAVEPOINT}`);

/**
 * A group-committing transaction runner on a Kysely SQLite database (one connection).
 *
 * @param db a Kysely instance on SQLite (better-sqlite3 or any SQLite dialect).
 * @param opts.maxGroupSize units of work per commit, at most (default {@link MAX_GROUP_SIZE}).
 * @returns `transaction(fn)`: `fn` gets a Kysely bound to the connection, inside the group's
 *   transaction; it must not start transactions of its own, nor wait on anything but the database
 *   for long (the whole group waits with it).
 * @throws (from the returned promise) `fn`'s own error, or the database error that failed the group.
 */
export function createGroupCommit<DB>(db: Kysely<DB>, opts: { maxGroupSize?: number; busyTimeoutMs?: number } = {}): GroupTransaction<DB> {
  const maxGroupSize = opts.maxGroupSize ?? MAX_GROUP_SIZE;
  const busyTimeoutMs = opts.busyTimeoutMs ?? SQLITE_BUSY_TIMEOUT_MS;
  if (!Number.isInteger(maxGroupSize) || maxGroupSize < 1) throw new TypeError(`maxGroupSize must be an integer ≥ 1, got ${maxGroupSize}`);
  const queue: Waiting<DB>[] = [];
  let busy = false;

  const schedule = () => {
    if (busy) return;
    busy = true;
    setImmediate(() => {
      const group = queue.splice(0, maxGroupSize);
      void runGroupWhenUnlocked(db, group, (unrun) => queue.unshift(...unrun), busyTimeoutMs).finally(() => {
        busy = false;
        if (queue.length > 0) schedule();
      });
    });
  };

  return <T>(fn: (connection: Kysely<DB>) => Promise<T>) =>
    new Promise<T>((resolve, reject) => {
      queue.push({ fn, resolve: resolve as (value: unknown) => void, reject, since: Date.now() });
      schedule();
    });
}

/**
 * Runs one group once the write lock is free: while another process holds it, waits (connection
 * released) and tries again, rejecting with `storage_busy` the units whose wait passed
 * `busyTimeoutMs`; never rejects.
 */
async function runGroupWhenUnlocked<DB>(db: Kysely<DB>, group: Waiting<DB>[], requeue: (unrun: Waiting<DB>[]) => void, busyTimeoutMs: number): Promise<void> {
  let waiting = group;
  for (let attempt = 0; ; attempt++) {
    const busy = await runGroup(db, waiting, requeue);
    if (busy === undefined) return;
    const now = Date.now();
    const late = waiting.filter((unit) => now - unit.since >= busyTimeoutMs);
    for (const unit of late) unit.reject(storageBusyError(now - unit.since, busy.error));
    waiting = waiting.filter((unit) => now - unit.since < busyTimeoutMs);
    if (waiting.length === 0) return;
    await pause(busyBackoff(attempt));
  }
}

/**
 * Runs one group and settles every promise of it (or hands the units that never ran to `requeue`,
 * see the module comment); never rejects. Returns `{ error }` without running or settling anything
 * when `BEGIN IMMEDIATE` found the write lock held by another connection (`SQLITE_BUSY`).
 */
async function runGroup<DB>(db: Kysely<DB>, group: Waiting<DB>[], requeue: (unrun: Waiting<DB>[]) => void): Promise<{ error: unknown } | undefined> {
  const outcomes: Outcome[] = [];
  let abortedBy: { error: unknown } | undefined;
  let busy: { error: unknown } | undefined;
  try {
    await db.connection().execute(async (connection) => {
      try {
        await connection.executeQuery(BEGIN);
      } catch (error) {
        if (!isSqliteBusy(error)) throw error;
        busy = { error };
        return;
      }
      // The compiled statements of the units (and the savepoints) run on the held connection at
      // once, without Kysely's queue (direct-reads.ts), until the group ends.
      linkTransaction(connection, db);
      const direct = transactionExecutorOf(connection);
      const run = direct === undefined
        ? (query: CompiledQuery) => connection.executeQuery(query)
        : (query: CompiledQuery) => {
          direct(query.sql, query.parameters);
        };
      try {
        const savepoints = group.length > 1;
        for (const unit of group) {
          if (savepoints) await run(SAVE);
          try {
            const value = await unit.fn(connection);
            if (savepoints) await run(RELEASE);
            outcomes.push({ ok: true, value });
          } catch (error) {
            outcomes.push({ ok: false, error });
            if (!savepoints) throw error;
            try {
              await run(UNDO);
              await run(RELEASE);
            } catch {
              // SQLite already rolled the whole transaction back (the savepoint is gone).
              abortedBy = { error };
              throw error;
            }
          }
        }
        await connection.executeQuery(COMMIT);
      } catch (error) {
        await connection.executeQuery(ROLLBACK).catch(() => undefined);
        throw error;
      } finally {
        unlinkTransaction(connection);
      }
    });
  } catch (error) {
    if (abortedBy !== undefined) requeue(group.slice(outcomes.length));
    const ran = abortedBy === undefined ? group : group.slice(0, outcomes.length);
    const lost = abortedBy === undefined ? error : new GroupCommitAbortedError(abortedBy.error);
    ran.forEach((unit, i) => {
      const outcome = outcomes[i];
      unit.reject(outcome !== undefined && !outcome.ok ? outcome.error : lost);
    });
    return undefined;
  }
  if (busy !== undefined) return busy;
  group.forEach((unit, i) => {
    const outcome = outcomes[i] as Outcome;
    if (outcome.ok) unit.resolve(outcome.value);
    else unit.reject(outcome.error);
  });
  return undefined;
}
