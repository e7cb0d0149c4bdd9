/**
 * Migration 0004: the partial index `runs_running_idx` on `runs (started_at, id) WHERE status =
 * 'running'`, which serves `listRunningRuns` (start-up recovery of Runs left running by a dead
 * process) without scanning ended Runs: it holds only the few running rows, already in the
 * order the port promises (oldest first). Both engines support partial indexes.
 */
import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../schema.js';

/** Builds the migration for one engine (the same statements on both). */
export function runningRunsIndexMigration(_dialect: Dialect): Migration {
  return {
    // Untyped on purpose: a migration describes the schema at its own point in time.
    async up(db: Kysely<any>): Promise<void> {
      await db.schema.createIndex('runs_running_idx').on('runs').columns(['started_at', 'id'])
        .where(sql.ref('status'), '=', 'running').execute();
    },

    async down(db: Kysely<any>): Promise<void> {
      await db.schema.dropIndex('runs_running_idx').execute();
    },
  };
}
