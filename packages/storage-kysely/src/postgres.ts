/**
 * The scale-out engine: PostgreSQL through a node-postgres (`pg`) pool, wrapped in Kysely.
 *
 * Type parsing is configured on this pool only (never on `pg.types`, which is global to the
 * process): `bigint` (int8) columns — times in ms, sequences, counts — arrive as JS numbers.
 * Every value the schema stores in `bigint` stays below 2^53, so the conversion is exact.
 * JSON columns are read as text by the adapter itself (see `store/dialect.ts`), so the pool's JSON parser
 * never matters.
 *
 * Prepared statements: the queries the store compiles once (a fixed set, see `store/context.ts`
 * `compiledQueries`) run as named prepared statements, parsed and planned once per connection
 * (get, create and decide about a quarter faster on the benchmark). Every other statement stays
 * unnamed. A connection pooler in transaction mode that does not track prepared statements
 * (PgBouncer before 1.21, or without `max_prepared_statements`) cannot serve named statements:
 * pass `preparedStatements: false` there. Left at the default behind such a pooler, the pool finds
 * out by itself: the first statement the server side did not keep (`prepared statement does not
 * exist`, or `already exists` on a server connection the pooler picked) fails once with
 * `storage_unavailable`, the pool tells `onError` and runs every statement unnamed from then on
 * (as after a `DISCARD ALL` or `DEALLOCATE` on a direct connection). When a prepared plan goes
 * stale because a migration changed a column type it returns (`cached plan must not change result
 * type`), that statement fails once and its connection is closed instead of going back to the
 * pool; the next connection prepares afresh.
 *
 * Unreachable server: a connection that cannot be made, or is lost mid-query (the server stopped,
 * restarted, refused, the network went away), fails the call with the core's
 * `storage_unavailable` (`unavailable.ts`: 503 with `Retry-After` at the HTTP edge), the driver's
 * error as its `cause`; the lost connection is closed rather than reused, and the pool connects
 * afresh once the server answers again.
 */
import pg from 'pg';
import { Kysely, PostgresDialect, type PostgresPool, type PostgresPoolClient } from 'kysely';
import { statementNames } from './prepared.js';
import { InboxKitError } from '@inbox-kit/core';
import { asStorageError, isConnectionError } from './unavailable.js';
import type { Database } from './schema.js';

/** PostgreSQL type OID of `int8` / `bigint`. */
const INT8_OID = 20;

/** Type parsers of our pools: int8 → number, everything else as node-postgres does by default. */
const poolTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID && format !== 'binary') return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format as 'text');
  },
} as unknown as pg.CustomTypesConfig;

/** Options of {@link openPostgres}. */
export interface PostgresOptions {
  /** Pool size: maximum concurrent connections (default 10). Concurrent transactions beyond it queue. */
  max?: number;
  /**
   * Called when an idle pooled connection fails (e.g. the server restarted). The pool drops the
   * connection either way; without a handler such errors are ignored rather than crashing the
   * process.
   */
  onError?: (error: Error) => void;
  /**
   * Run the store's compiled-once queries as named prepared statements (default `true`). Set
   * `false` behind a transaction-mode pooler that cannot keep them (see the module comment).
   */
  preparedStatements?: boolean;
}

/**
 * SQLSTATE of a named statement gone stale on its connection: `0A000` (cached plan must not change
 * result type, after a migration changed a column it returns). The connection is replaced and the
 * next one prepares afresh.
 */
const STALE_PLAN = '0A000';

/**
 * SQLSTATEs that say the server side does not keep what this connection prepared: `26000`
 * (prepared statement does not exist: deallocated behind node-postgres's back, or a pooler handed
 * the next statement to another server connection) and `42P05` (duplicate prepared statement: a
 * pooler handed the Parse to a server connection that already has the name, which a direct
 * connection never does). The pool stops naming statements for good (see {@link guardedPool}).
 */
const STATEMENTS_NOT_KEPT = new Set(['26000', '42P05']);

/** A pooled connection as Kysely is given it (the same object on every checkout), with its checkout state. */
interface PooledConnection {
  readonly connection: PostgresPoolClient;
  /** Starts a checkout: not broken, listening for the connection's errors until its release. */
  checkOut(): void;
}

/**
 * `client`'s wrapper for {@link guardedPool}: `query` runs registered texts as named statements
 * while `preparing()`, maps failures to `storage_unavailable`, and marks the connection broken (it
 * is then closed on release rather than reused) when it was lost, went stale or the server side
 * does not keep its statements.
 */
function pooledConnection(
  client: pg.PoolClient, preparing: () => boolean, stopPreparing: (cause: unknown) => void, onError: ((error: Error) => void) | undefined,
): PooledConnection {
  // node-postgres remembers what it prepared per connection and would keep sending the stale
  // name: such a connection, like a lost one, is closed on release rather than reused.
  let broken = false;
  // The pool listens for errors of idle connections only: a checked-out one whose server goes
  // away between two statements (a transaction waiting on the services) would emit an
  // unhandled 'error' and end the process. Its next statement fails (storage_unavailable).
  const lost = (error: Error) => {
    broken = true;
    onError?.(error);
  };
  /** The error a failed statement rejects with; marks the connection broken where it must not be reused. */
  const failure = (error: unknown): unknown => {
    const code = (error as { code?: string } | null)?.code ?? '';
    if (STATEMENTS_NOT_KEPT.has(code)) {
      broken = true;
      stopPreparing(error);
      return new InboxKitError('storage_unavailable', 'The database did not keep a prepared statement; retry', [], { cause: error });
    }
    if (code === STALE_PLAN || isConnectionError(error)) broken = true;
    return asStorageError(error);
  };
  const connection = {
    query(text: unknown, values?: ReadonlyArray<unknown>) {
      // A cursor (Kysely's `stream()`) is submitted and returned as it is.
      if (typeof text !== 'string') return (client.query as (...args: unknown[]) => unknown)(text, values);
      const name = preparing() ? statementNames.get(text) : undefined;
      const config: pg.QueryConfig = name === undefined ? { text, values: values as unknown[] } : { name, text, values: values as unknown[] };
      // node-postgres's callback form: under Kysely its promise form cost a list page about a
      // third more CPU, most of it in the garbage collector (`node bench/pg-query-forms.mjs`).
      return new Promise((resolve, reject) => {
        client.query(config, (error: Error | null, result: pg.QueryResult) => (error ? reject(failure(error)) : resolve(result)));
      });
    },
    release: (destroy?: boolean) => {
      client.off('error', lost);
      client.release(destroy === true || broken);
    },
  } as unknown as PostgresPoolClient;
  return {
    connection,
    checkOut() {
      broken = false;
      client.on('error', lost);
    },
  };
}

/**
 * `pool` as Kysely's pool: a connection that cannot be made, or a query that loses its
 * connection, throws `storage_unavailable` (and the connection is destroyed on release); with
 * `prepare`, registered texts run as named prepared statements until the server side shows it does
 * not keep them ({@link STATEMENTS_NOT_KEPT}: a transaction-mode pooler such as PgBouncer before
 * 1.21 that `preparedStatements: false` was not given for). Then that statement fails once
 * (`storage_unavailable`, so callers retry), `onError` is told once, and every later statement of
 * the pool runs unnamed: a pooler left at the default degrades to unnamed statements instead of
 * failing at random for as long as the process runs.
 */
function guardedPool(pool: pg.Pool, prepareAtStart: boolean, onError: ((error: Error) => void) | undefined): PostgresPool {
  let prepare = prepareAtStart;
  const stopPreparing = (cause: unknown) => {
    if (!prepare) return;
    prepare = false;
    onError?.(new Error(
      'PostgreSQL does not keep the named prepared statements of this pool (is it a connection pooler in transaction mode, ' +
      'such as PgBouncer before 1.21?): running every statement unnamed from now on. ' +
      'Pass preparedStatements: false (DATABASE_PREPARED_STATEMENTS=false in the demo) to start that way.',
      { cause },
    ));
  };
  /**
   * One wrapper per pooled connection, made on its first checkout and handed out again on every
   * later one: Kysely keeps its connection object per client it is given (a `WeakMap`), so a new
   * wrapper per checkout would make a new Kysely connection and map entry per statement. A
   * connection Kysely discards (a failed rollback) is released with `destroy`, so its pooled
   * client, and with it this wrapper, is never handed out again.
   */
  const wrappers = new WeakMap<pg.PoolClient, PooledConnection>();
  return {
    connect: async () => {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        throw asStorageError(error);
      }
      let wrapper = wrappers.get(client);
      if (wrapper === undefined) {
        wrapper = pooledConnection(client, () => prepare, stopPreparing, onError);
        wrappers.set(client, wrapper);
      }
      wrapper.checkOut();
      return wrapper.connection;
    },
    end: () => pool.end(),
  };
}

/**
 * Opens a pool on a PostgreSQL database.
 *
 * @param url a `postgres://` or `postgresql://` connection string.
 * @returns a Kysely instance over a fresh `pg.Pool` (lazy: no connection is made until the first
 *   query); not migrated yet (see `migrateToLatest`). `destroy()` ends the pool.
 */
export function openPostgres(url: string, opts: PostgresOptions = {}): Kysely<Database> {
  const pool = new pg.Pool({ connectionString: url, max: opts.max ?? 10, types: poolTypes });
  pool.on('error', (error) => opts.onError?.(error));
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool: guardedPool(pool, opts.preparedStatements !== false, opts.onError) }) });
}
