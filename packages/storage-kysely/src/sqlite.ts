/**
 * The embedded default engine: a SQLite file through better-sqlite3, wrapped in Kysely.
 *
 * Pragmas set on open, and why:
 * - `journal_mode = WAL` — readers never block the writer nor the writer the readers, and other
 *   processes can read the file while this one writes.
 * - `foreign_keys = ON` — SQLite ignores foreign keys unless asked, per connection.
 * - `busy_timeout = 0` — SQLite never waits for another process's lock itself: better-sqlite3
 *   runs in the server's thread, and a wait there would freeze every request. A write that finds
 *   the lock held waits asynchronously instead (`busy.ts`), up to `busyTimeoutMs` (5 s by
 *   default), then fails with `storage_busy` (503 with `Retry-After`); reads go on meanwhile. The
 *   pragmas set on open do wait (up to the same timeout): nothing is served yet.
 * - `synchronous = FULL` — in WAL mode `NORMAL` may lose the last commits on power loss; `FULL`
 *   syncs the WAL at every commit, so a write that was answered 201 and whose event was
 *   published is on disk (the spec publishes events only after commit).
 * - `cache_size = -4096` (option `cacheSizeKiB`, default 4 MiB) — the page cache of the
 *   connection. better-sqlite3's build defaults to 16 MiB; pages beyond the cache are read from
 *   the operating system's file cache, which measured no slower on the benchmark and keeps the
 *   server's resident memory down.
 *
 * Prepared statements are kept and reused by SQL text (the {@link STATEMENT_CACHE_SIZE} most
 * recently used): Kysely's SQLite driver prepares every query anew, and preparing costs as much as
 * running a small query.
 *
 * Concurrency: Kysely drives the single connection through a mutex, so transactions of this
 * process run one after another and never see `SQLITE_BUSY` from each other. Transactions start
 * with `BEGIN IMMEDIATE` (not SQLite's default deferred `BEGIN`): they take the write lock up front,
 * so a transaction that reads then writes cannot be refused half-way by a writer in another
 * process; it waits (asynchronously) for the lock at its start instead.
 */
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import {
  CompiledQuery, Kysely, SqliteDialect, SqliteDriver, type DatabaseConnection, type Driver, type SqliteDatabase as SqliteConnection,
  type SqliteDialectConfig, type SqliteStatement,
} from 'kysely';
import { busyBackoff, isSqliteBusy, pause, registerBusyTimeout, storageBusyError } from './busy.js';
import { SQLITE_BUSY_TIMEOUT_MS, SQLITE_CACHE_SIZE_KIB } from './constants.js';
import type { Database } from './schema.js';
import { registerDirectReader } from './direct-reads.js';
import { GROUP_BEGIN } from './group-commit.js';

/** What the driver needs to wait for another process's lock: the deadline, and whether a transaction is open. */
interface LockWait {
  busyTimeoutMs: number;
  inTransaction(): boolean;
}

/**
 * SQLite's driver with `BEGIN IMMEDIATE` transactions (see the module comment), whose statements
 * outside a transaction (autocommit writes, a `BEGIN`) wait for another process's lock
 * asynchronously, up to the busy timeout, then fail with `storage_busy`. The group commit's own
 * `BEGIN` is left to the group, which waits with the connection released (`group-commit.ts`).
 */
class ImmediateSqliteDriver extends SqliteDriver {
  readonly #wait: LockWait;
  readonly #wrapped = new WeakMap<DatabaseConnection, DatabaseConnection>();

  constructor(config: SqliteDialectConfig, wait: LockWait) {
    super(config);
    this.#wait = wait;
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await super.acquireConnection();
    let wrapped = this.#wrapped.get(connection);
    if (wrapped === undefined) {
      const wait = this.#wait;
      wrapped = {
        executeQuery: async (query) => {
          if (query === GROUP_BEGIN || wait.inTransaction()) return connection.executeQuery(query);
          const started = Date.now();
          for (let attempt = 0; ; attempt++) {
            try {
              return await connection.executeQuery(query);
            } catch (error) {
              if (!isSqliteBusy(error)) throw error;
              const waited = Date.now() - started;
              if (waited >= wait.busyTimeoutMs) throw storageBusyError(waited, error);
              await pause(busyBackoff(attempt));
            }
          }
        },
        streamQuery: (query, chunkSize) => connection.streamQuery(query, chunkSize),
      };
      this.#wrapped.set(connection, wrapped);
    }
    return wrapped;
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

/** Kysely's SQLite dialect with {@link ImmediateSqliteDriver}. */
class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;
  readonly #wait: LockWait;

  constructor(config: SqliteDialectConfig, wait: LockWait) {
    super(config);
    this.#config = config;
    this.#wait = wait;
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#config, this.#wait);
  }
}

export { SQLITE_BUSY_TIMEOUT_MS, SQLITE_CACHE_SIZE_KIB };

/** Prepared statements kept per connection (least recently used evicted first). */
export const STATEMENT_CACHE_SIZE = 256;

/**
 * `database` whose `prepare` returns the statement it prepared before for the same SQL text (an
 * LRU of `max` statements). Safe with Kysely's driver: it runs one query at a time per
 * connection, and a better-sqlite3 statement binds its parameters on each call; SQLite
 * re-prepares a statement by itself when the schema changes.
 *
 * Reads whose SQL names its columns (no `*`) run in better-sqlite3's raw mode and the rows are
 * built here from the column names read once: better-sqlite3 builds row objects property by
 * property, which costs more than the query for wide rows (a page of 50 inbox items: about 160 µs
 * as objects, 95 µs raw). A `*` may expand to other columns after a schema change, so those reads
 * keep the object rows.
 */
export function cachingStatements(database: SqliteConnection, max = STATEMENT_CACHE_SIZE): SqliteConnection {
  const statements = new Map<string, SqliteStatement>();
  return {
    close: () => {
      statements.clear();
      database.close();
    },
    prepare(sql: string): SqliteStatement {
      const cached = statements.get(sql);
      if (cached !== undefined) {
        statements.delete(sql); // re-inserted below: Map order is the recency order
        statements.set(sql, cached);
        return cached;
      }
      const statement = withRowBuilder(database.prepare(sql), sql);
      if (statements.size >= max) statements.delete(statements.keys().next().value as string);
      statements.set(sql, statement);
      return statement;
    },
  };
}

/** The parts of a better-sqlite3 statement raw mode needs (absent from Kysely's interface). */
interface RawCapable {
  raw(toggle?: boolean): unknown;
  columns(): { name: string }[];
}

/** `statement`, reading raw arrays and building the rows itself when that is safe (see above). */
function withRowBuilder(statement: SqliteStatement, sql: string): SqliteStatement {
  const candidate = statement as SqliteStatement & Partial<RawCapable>;
  if (!statement.reader || sql.includes('*') || typeof candidate.raw !== 'function' || typeof candidate.columns !== 'function') {
    return statement;
  }
  candidate.raw(true);
  const row = rowBuilder(candidate.columns().map((column) => column.name));
  return {
    reader: true,
    all: (parameters) => (statement.all(parameters) as unknown[][]).map(row),
    run: (parameters) => statement.run(parameters),
    iterate: function* (parameters) {
      for (const values of statement.iterate(parameters) as IterableIterator<unknown[]>) yield row(values);
    },
  };
}

/**
 * The function that turns a raw row (its values in column order) into an object keyed by `names`.
 * For the usual select list (distinct names, none `__proto__`) it is an object literal compiled
 * once per statement: every row then has one shape, built at once, instead of a property added
 * per column through a lookup by name (about half the cost for a page of inbox items). Where the
 * process forbids code generation from strings, rows are built property by property.
 */
export function rowBuilder(names: readonly string[]): (values: unknown[]) => Record<string, unknown> {
  if (new Set(names).size === names.length && !names.includes('__proto__')) {
    // Keys are JSON string literals of the column names: valid JS literals, nothing evaluated.
    const literal = names.map((name, i) => `${JSON.stringify(name)}: v[${i}]`).join(', ');
    try {
      return new Function('v', `return { ${literal} };`) as (values: unknown[]) => Record<string, unknown>;
    } catch {
      // Code generation from strings is disallowed (`--disallow-code-generation-from-strings`):
      // build the rows property by property instead.
    }
  }
  return (values) => {
    const record: Record<string, unknown> = {};
    for (let i = 0; i < names.length; i++) {
      const name = names[i] as string;
      // An assignment to `__proto__` would set the prototype: define it as an own property.
      if (name === '__proto__') Object.defineProperty(record, name, { value: values[i], enumerable: true, writable: true, configurable: true });
      else record[name] = values[i];
    }
    return record;
  };
}

/**
 * Creates `file` empty with mode 0600 (owner read/write only) when it does not exist, so the
 * database never exists world-readable; SQLite gives its `-wal` and `-shm` files the database
 * file's mode. An existing file keeps its mode.
 */
function createPrivateFile(file: string): void {
  try {
    closeSync(openSync(file, 'wx', 0o600));
  } catch (error) {
    if ((error as { code?: string }).code !== 'EEXIST') throw error;
  }
}

/**
 * Opens (creating it and its directory when missing) a SQLite database file. A file it creates is
 * 0600 (owner only), and so are its `-wal` and `-shm` files.
 *
 * @param file a file path, or `:memory:` for a private in-memory database (tests; WAL does not
 *   apply there).
 * @param opts.cacheSizeKiB the connection's page cache in KiB (default {@link SQLITE_CACHE_SIZE_KIB}).
 * @param opts.busyTimeoutMs how long a write waits for another process's write lock before it
 *   fails with `storage_busy`, in ms (default {@link SQLITE_BUSY_TIMEOUT_MS}); the wait never blocks
 *   the thread.
 * @returns a Kysely instance over one better-sqlite3 connection; not migrated yet (see
 *   `migrateToLatest`). `destroy()` closes the file.
 * @throws the driver's error when the file cannot be opened or is not a SQLite database.
 */
export function openSqlite(file: string, opts: { cacheSizeKiB?: number; busyTimeoutMs?: number } = {}): Kysely<Database> {
  const cacheSizeKiB = opts.cacheSizeKiB ?? SQLITE_CACHE_SIZE_KIB;
  if (!Number.isInteger(cacheSizeKiB) || cacheSizeKiB < 0) throw new TypeError(`cacheSizeKiB must be an integer ≥ 0, got ${cacheSizeKiB}`);
  const busyTimeoutMs = opts.busyTimeoutMs ?? SQLITE_BUSY_TIMEOUT_MS;
  if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0) throw new TypeError(`busyTimeoutMs must be an integer ≥ 0, got ${busyTimeoutMs}`);
  const inMemory = file === ':memory:' || file === '';
  if (!inMemory) {
    mkdirSync(dirname(resolve(file)), { recursive: true });
    createPrivateFile(file);
  }
  // The pragmas wait for a lock (nothing is served yet); from then on SQLite never waits itself.
  const sqlite = new SqliteDatabase(file, { timeout: busyTimeoutMs });
  try {
    if (!inMemory) sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma('synchronous = FULL');
    sqlite.pragma(`cache_size = -${cacheSizeKiB}`);
    sqlite.pragma('busy_timeout = 0');
  } catch (error) {
    sqlite.close();
    throw error;
  }
  const statements = cachingStatements(sqlite);
  const db = new Kysely<Database>({ dialect: new ImmediateSqliteDialect({ database: statements }, { busyTimeoutMs, inTransaction: () => sqlite.inTransaction }) });
  registerBusyTimeout(db, busyTimeoutMs);
  // Point reads skip Kysely's connection queue while no transaction is open (direct-reads.ts).
  registerDirectReader(db, {
    read(sql, parameters) {
      if (!sqlite.open || sqlite.inTransaction) return undefined;
      const statement = statements.prepare(sql);
      if (!statement.reader) return undefined;
      try {
        return statement.all(parameters);
      } catch (error) {
        // A lock held elsewhere (rare for a WAL read): the queued path waits for it without blocking.
        if (isSqliteBusy(error)) return undefined;
        throw error;
      }
    },
    // Inside a group commit's transaction (the group holds the connection): what Kysely's driver does.
    execute(sql, parameters) {
      const statement = statements.prepare(sql);
      if (statement.reader) return { rows: statement.all(parameters) as unknown[] };
      const { changes } = statement.run(parameters);
      return { rows: [], numAffectedRows: BigInt(changes) };
    },
  });
  return db;
}

/**
 * A consistent copy of the SQLite database `file` at `destination`, taken with SQLite's online
 * backup API (better-sqlite3's `backup()`, all pages in one step) over a connection of its own,
 * while other connections and processes keep reading and writing (storage README "Backups"). The copy is a complete
 * database: open it (or put it in place of `file` while no server runs) and it holds every
 * transaction committed before the backup finished. `destination` is created 0600 with its
 * directory; an existing file there is replaced. Restore by stopping the server and copying the
 * backup over `file` (removing `file`'s `-wal` and `-shm`).
 *
 * @returns the number of database pages copied.
 * @throws the driver's error when `file` is not a SQLite database or `destination` cannot be written.
 */
export async function backupSqlite(file: string, destination: string): Promise<{ pages: number }> {
  if (resolve(file) === resolve(destination)) throw new Error('backupSqlite: the destination is the database itself');
  mkdirSync(dirname(resolve(destination)), { recursive: true });
  const source = new SqliteDatabase(file, { fileMustExist: true, timeout: SQLITE_BUSY_TIMEOUT_MS });
  try {
    createPrivateFile(destination);
    // Every page in one step: SQLite restarts a backup whose source another connection wrote
    // between two steps, which a busy server could do forever; in WAL mode one step only holds a
    // read snapshot, so the server's writes go on meanwhile.
    const { totalPages } = await source.backup(destination, { progress: () => 0x7fffffff });
    return { pages: totalPages };
  } finally {
    source.close();
  }
}
