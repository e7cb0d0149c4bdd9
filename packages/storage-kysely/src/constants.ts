/**
 * Constants of both engines, in a module that loads no driver (so the root entry can export them).
 */

/**
 * How long a write waits for another process's SQLite write lock by default, in ms, before it fails
 * with `storage_busy` (the wait is asynchronous: it never blocks the thread; `busy.ts`).
 */
export const SQLITE_BUSY_TIMEOUT_MS = 5000;

/** The default page cache of a SQLite connection, in KiB (see `openSqlite`). */
export const SQLITE_CACHE_SIZE_KIB = 4096;

/** The NOTIFY channel every inbox-kit process of one database listens on. */
export const EVENT_BUS_CHANNEL = 'inbox_kit_events';

/** `application_name` prefix of the listening connection (`<prefix> <origin>`), e.g. to find it in `pg_stat_activity`. */
export const EVENT_BUS_APPLICATION_NAME = 'inbox-kit-bus';
