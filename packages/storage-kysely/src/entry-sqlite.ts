/**
 * @inbox-kit/storage-kysely/sqlite — the SQLite engine: `openSqlite(file)` over `better-sqlite3`
 * (an optional peer dependency: install it to use SQLite). The root entry's `openStore` loads this
 * entry only when it opens a SQLite database. `backupSqlite(file, destination)` takes an online
 * backup (a consistent copy while servers write).
 *
 * ```ts
 * import { openSqlite } from '@inbox-kit/storage-kysely/sqlite';
 * const db = openSqlite('data/inbox-kit.sqlite'); // then migrateToLatest(db, 'sqlite')
 * ```
 */
export { backupSqlite, openSqlite, SQLITE_BUSY_TIMEOUT_MS, SQLITE_CACHE_SIZE_KIB } from './sqlite.js';
