/**
 * The storage port of `@inbox-kit/core` (`Store`) on Kysely, for SQLite and PostgreSQL.
 *
 * The store holds no business rule (no permission, transition or validation logic): it runs the
 * queries the port promises, atomically. One module per sub-port of the port (`store/identity.ts`,
 * `projects.ts`, `inbox.ts`, `events.ts`, `sessions.ts` with `turns.ts` and `ledger.ts`, `runs.ts`,
 * `idempotency.ts`, `agents.ts`); every
 * difference between the engines in one dialect object (`store/dialect.ts`); the column lists and
 * row mappings derived from the record schemas of `@inbox-kit/core` (`store/rows.ts`). This file
 * composes them. How each guarantee of the port is kept:
 *
 * - **Units of work**: `transaction(fn)` is one Kysely transaction on PostgreSQL (`READ
 *   COMMITTED`). On SQLite it is a unit of work of a group commit (`group-commit.ts`): units asked
 *   for while the single connection is busy share one `BEGIN IMMEDIATE … COMMIT`, each in its own
 *   savepoint, and resolve after that commit. `fn` gets the same operations bound to the
 *   transaction. An error thrown by `fn` rolls back its own writes and is rethrown as is.
 * - **Hot queries are compiled once** per store (`store/context.ts`) and run with new values.
 * - **Conditional updates** (`decideInboxItem`, `setProjectStatus`, `endRun`, `updateRunStatus`, `revokeApiKey`,
 *   `renewAttemptOwnership`, `releaseAttemptOwnership`, `updateAgent`) are one `UPDATE`/`DELETE … WHERE <expected
 *   state> [RETURNING …]`: the database decides the winner, there is no read-then-write in the
 *   adapter. The conditional insert `insertIdempotencyRecord` is one `INSERT … ON CONFLICT DO
 *   NOTHING RETURNING …` on the primary key; `claimAttemptOwnership` is one `INSERT … ON CONFLICT
 *   (session_id) DO UPDATE … WHERE <expired or same host> RETURNING …`.
 * - **Row locks** (`lockProject`, `lockSession`): `SELECT … FOR NO KEY UPDATE` on PostgreSQL, a plain
 *   read on SQLite (write transactions are serialised there). The services take them first in every
 *   write whose validity depends on the row (README "Conditional writes").
 * - **Gap-free sequences**: the counter lives on the parent row (`projects.event_sequence`,
 *   `sessions.event_seq`). `UPDATE … SET n = n + 1 RETURNING n` row-locks the parent until commit,
 *   so concurrent writers of one project queue behind each other, and a rollback gives the number
 *   back. Outside a transaction the update and the insert are wrapped in one.
 * - **Keyset pages** compare the `(created_at, id)` row value, which is the same predicate as
 *   `created_at < ? OR (created_at = ? AND id < ?)` but lets both engines seek the composite index.
 * - **JSON** is written as `JSON.stringify` text and read back as text (`::text` on PostgreSQL,
 *   whatever the pool's JSON parser), then parsed here: a read returns what was written.
 */
import type { Kysely } from 'kysely';
import type { Store, StoreReadiness, StoreTx } from '@inbox-kit/core';
import { migrationStatus } from './migrate.js';
import type { Database, Dialect } from './schema.js';
import { directReaderOf } from './direct-reads.js';
import { compiledQueries, contextOn, type RunCompiled } from './store/context.js';
import { dialects, type SqlDialect, type Transact } from './store/dialect.js';
import { agentOps } from './store/agents.js';
import { projectEventOps } from './store/events.js';
import { idempotencyOps } from './store/idempotency.js';
import { identityOps } from './store/identity.js';
import { inboxOps } from './store/inbox.js';
import { inboxWriteOps } from './store/inbox-writes.js';
import { projectOps } from './store/projects.js';
import { runOps } from './store/runs.js';
import { ledgerOps } from './store/ledger.js';
import { sessionRowOps } from './store/sessions.js';
import { turnOps } from './store/turns.js';

/** Options of {@link createKyselyStore}. */
export interface KyselyStoreOptions {
  /** Which engine `db` talks to (selects the dialect object: transactions, row locks, JSON reads). */
  dialect: Dialect;
}

/** The operations of every sub-port bound to one executor: the root `db` (autocommit) or a transaction. */
function opsOn(db: Kysely<Database>, dialect: SqlDialect, inTransaction: boolean, transact: Transact, compiled: RunCompiled): StoreTx {
  const ctx = contextOn(db, dialect, inTransaction, transact, compiled);
  // Built for every transaction: `Object.assign`, not an object spread, which V8 runs ~40× slower
  // for objects of methods (35 µs per transaction here, a tenth of a create's server time; issue 18).
  return Object.assign({}, identityOps(ctx), projectOps(ctx), inboxOps(ctx), inboxWriteOps(ctx), projectEventOps(ctx), sessionRowOps(ctx), turnOps(ctx), ledgerOps(ctx), runOps(ctx), idempotencyOps(ctx), agentOps(ctx));
}

/**
 * Creates the store of `@inbox-kit/core`'s storage port over a migrated Kysely database.
 *
 * @param db a Kysely instance on a database migrated with `migrateToLatest` (from `openSqlite`,
 *   `openPostgres` or your own dialect setup of the same engine).
 * @param opts.dialect `'sqlite'` or `'postgres'`, the engine behind `db`.
 * @returns a `Store`; its `close()` destroys `db` (closes the SQLite file / ends the pool).
 *
 * Errors: driver errors pass through unchanged (e.g. a unique violation when inserting an id that
 * exists; the services check existence first). `appendProjectEvent` / `appendSessionEvents`
 * throw when the project / session row does not exist.
 *
 * Do not call the store (rather than the `tx` argument) inside `transaction(fn)`: on SQLite the
 * single connection is held by the transaction and the call would wait forever.
 */
export function createKyselyStore(db: Kysely<Database>, opts: KyselyStoreOptions): Store {
  const dialect = dialects[opts.dialect];
  // On PostgreSQL the compiled texts become named prepared statements (pools of `openPostgres`).
  // On SQLite from `openSqlite`, reads outside transactions skip Kysely's connection queue (direct-reads.ts).
  const reader = directReaderOf(db);
  const compiled = compiledQueries(dialect.onCompile, reader && { root: db, reader });
  const transact = dialect.transact(db);
  // The operations of a transaction's connection, built once per connection: on SQLite the units
  // of one group commit share the group's connection, so they share its operations too.
  const ofConnection = new WeakMap<Kysely<Database>, StoreTx>();
  const opsOf = (trx: Kysely<Database>): StoreTx => {
    let ops = ofConnection.get(trx);
    if (ops === undefined) {
      ops = opsOn(trx, dialect, true, transact, compiled);
      ofConnection.set(trx, ops);
    }
    return ops;
  };
  return {
    ...opsOn(db, dialect, false, transact, compiled),
    transaction: (fn) => transact((trx) => fn(opsOf(trx))),
    readiness: () => readinessOf(db, opts.dialect),
    close: () => db.destroy(),
  };
}

/**
 * The store's `readiness()`: one read of the applied migrations. Not ready when it fails
 * (`unreachable`) or this release's migrations are pending (`not_migrated`, naming them); a
 * database migrated further by a newer release is ready.
 */
async function readinessOf(db: Kysely<Database>, dialect: Dialect): Promise<StoreReadiness> {
  try {
    const { pending } = await migrationStatus(db, dialect);
    if (pending.length === 0) return { ready: true };
    return { ready: false, reason: 'not_migrated', message: `The database lacks ${pending.length} migration${pending.length === 1 ? '' : 's'} of this release (${pending.join(', ')}): run the migrations` };
  } catch {
    return { ready: false, reason: 'unreachable', message: 'The database cannot be reached' };
  }
}
