/**
 * SQLite under another process's write lock (platform.md "Many processes"), in a module that loads
 * no driver. A backup tool, a second server process or an admin script may hold the database's
 * write lock for seconds. better-sqlite3 runs in the server's thread, so SQLite's own
 * `busy_timeout` would wait there and freeze every request (`/health` and reads included): the
 * connection is opened with `busy_timeout = 0`, and a write that finds the lock taken waits here,
 * asynchronously, retrying with a short backoff — the group commit with the connection released
 * meanwhile, so reads go on — until its deadline (the busy timeout, 5 s by default, counted from
 * when the write was asked for). Past it the write fails with the domain error `storage_busy`
 * (503 with `Retry-After`), and nothing of it is written.
 */
import { InboxKitError } from '@inbox-kit/core';

/** Whether `error` is SQLite saying another connection holds a lock it needs (`SQLITE_BUSY` and its extended codes). */
export function isSqliteBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/** The error of a write that waited for another process's lock past its deadline. */
export function storageBusyError(waitedMs: number, cause?: unknown): InboxKitError {
  return new InboxKitError(
    'storage_busy',
    `The database is locked by another process (a backup, an admin script or another server); the write waited ${waitedMs} ms and was not made. Retry shortly.`,
    [],
    { cause },
  );
}

/** Waits `ms` (a timer, never blocking the thread). */
export const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The delay before the `attempt`-th retry (0-based): 2, 4, 8 … ms, at most 50 ms. */
export const busyBackoff = (attempt: number): number => Math.min(50, 2 ** (attempt + 1));

const timeouts = new WeakMap<object, number>();

/** Records how long writes on the SQLite Kysely instance `db` wait for a lock (`openSqlite` does). */
export function registerBusyTimeout(db: object, ms: number): void {
  timeouts.set(db, ms);
}

/** How long writes on `db` wait for a lock, in ms (`undefined`: not opened by `openSqlite`). */
export function busyTimeoutOf(db: object): number | undefined {
  return timeouts.get(db);
}
