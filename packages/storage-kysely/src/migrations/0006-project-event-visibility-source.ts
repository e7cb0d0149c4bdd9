/**
 * Migration 0006: Project Events carry `visibility` (`project` | `owner`) and `source` (`api` |
 * `runtime_job` | `system`), fixed when an event is written (platform.md "Project Events").
 * Existing rows are backfilled by the rules that wrote them: Project Inbox events
 * (`project_inbox.*`) are `owner`, every other event `project`; events of the demo seed
 * (`correlation_id = 'req_seed'`) are `system`, every other event `api` (no earlier release wrote
 * Project Events from the runtime). Both columns are `NOT NULL` with a `CHECK` on their values.
 */
import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../schema.js';

/** Builds the migration for one engine (the same statements on both). */
export function projectEventVisibilitySourceMigration(_dialect: Dialect): Migration {
  return {
    // Untyped on purpose: a migration describes the schema at its own point in time.
    async up(db: Kysely<any>): Promise<void> {
      await db.schema.alterTable('project_events')
        .addColumn('visibility', 'text', (c) => c.notNull().defaultTo('project').check(sql`visibility in ('project', 'owner')`))
        .execute();
      await db.schema.alterTable('project_events')
        .addColumn('source', 'text', (c) => c.notNull().defaultTo('api').check(sql`source in ('api', 'runtime_job', 'system')`))
        .execute();
      await db.updateTable('project_events').set({ visibility: 'owner' })
        .where(sql`substr(type, 1, 14)`, '=', 'project_inbox.').execute();
      await db.updateTable('project_events').set({ source: 'system' }).where('correlation_id', '=', 'req_seed').execute();
    },

    async down(db: Kysely<any>): Promise<void> {
      await db.schema.alterTable('project_events').dropColumn('source').execute();
      await db.schema.alterTable('project_events').dropColumn('visibility').execute();
    },
  };
}
