/**
 * Migration 0011: every Session has an agent snapshot and an `environment_id` (live-inbox.md
 * "Managed Agents compatibility": the official SDKs type both non-null). Sessions created through
 * `POST /sessions` were stored with `agent` and `environment_id` null; they run with the Runtime's
 * own model and tools, so they take the Runtime's agent snapshot (`id: "runtime"`) and the
 * `environment_id` `default`, as Sessions created from this release on do. The columns stay
 * nullable (an older process still writes null, and reads it as before).
 */
import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../schema.js';

/** The snapshot as this migration writes it (a migration keeps its own copy: the core's may change later). */
const RUNTIME_AGENT = JSON.stringify({
  type: 'agent', id: 'runtime', version: 1, name: 'Runtime',
  description: "No agent was named: the Runtime's own model and tools (a Session created through POST /sessions)",
  model: { id: 'runtime' }, system: null, tools: [], mcp_servers: [], skills: [], multiagent: null, execution_identity: { type: 'service_account' },
});

/** Builds the migration for one engine (only the JSON cast differs). */
export function sessionAgentSnapshotsMigration(dialect: Dialect): Migration {
  const agent = dialect === 'postgres' ? sql`cast(${RUNTIME_AGENT} as json)` : sql`${RUNTIME_AGENT}`;
  return {
    // Untyped on purpose: a migration describes the schema at its own point in time.
    async up(db: Kysely<any>): Promise<void> {
      await db.updateTable('sessions').set({ agent }).where('agent', 'is', null).execute();
      await db.updateTable('sessions').set({ environment_id: 'default' }).where('environment_id', 'is', null).execute();
    },

    async down(db: Kysely<any>): Promise<void> {
      // The snapshots cannot be told from ones written on purpose later; the Runtime reads both the same way.
      await db.updateTable('sessions').set({ agent: null }).where(sql<boolean>`environment_id = 'default' and ${dialect === 'postgres' ? sql`agent::jsonb ->> 'id'` : sql`json_extract(agent, '$.id')`} = 'runtime'`).execute();
    },
  };
}
