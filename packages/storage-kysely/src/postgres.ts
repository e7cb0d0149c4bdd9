/**
 * The scale-out engine: PostgreSQL through a node-postgres (`pg`) pool, wrapped in Kysely.
 *
 * Type parsing is configured on this pool only (never on `pg.types`, which is global to the
 * process): `bigint` (int8) columns — times in ms, sequences, counts — arrive as JS numbers.
 * Every value the schema stores in `bigint` stays below 2^53, so the conversion is exact.
 * JSON columns are read as text by the adapter itself (see `store.ts`), so the pool's JSON parser
 * never matters.
 */
import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
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
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}
