/**
 * The ordered list of migrations, served to Kysely's `Migrator` from memory (a static provider:
 * no file-system scan, so bundling and `dist/` layouts cannot lose a migration). Names sort in
 * application order; never rename or edit a released migration, add a new one.
 */
import type { Migration } from 'kysely';
import type { Dialect } from '../schema.js';
import { initialMigration } from './0001-initial.js';
import { idempotencyMigration } from './0002-idempotency.js';
import { attemptOwnersMigration } from './0003-attempt-owners.js';
import { runningRunsIndexMigration } from './0004-running-runs-index.js';
import { managedSessionsMigration } from './0005-managed-sessions.js';
import { projectEventVisibilitySourceMigration } from './0006-project-event-visibility-source.js';
import { pagingAndRetentionMigration } from './0007-paging-and-retention.js';
import { agentsMigration } from './0008-agents.js';
// No 0009, on purpose: 0007–0011 were numbered by changes built in parallel (0010 on a branch that
// held only 0001–0006) and no 0009 was ever written, so a database without one misses nothing.
import { administrationMigration } from './0010-administration.js';
import { sessionAgentSnapshotsMigration } from './0011-session-agent-snapshots.js';

/** All migrations for one engine, keyed by name (`0001_initial`, …). */
export function migrationsFor(dialect: Dialect): Record<string, Migration> {
  return {
    '0001_initial': initialMigration(dialect),
    '0002_idempotency': idempotencyMigration(dialect),
    '0003_attempt_owners': attemptOwnersMigration(dialect),
    '0004_running_runs_index': runningRunsIndexMigration(dialect),
    '0005_managed_sessions': managedSessionsMigration(dialect),
    '0006_project_event_visibility_source': projectEventVisibilitySourceMigration(dialect),
    '0007_paging_and_retention': pagingAndRetentionMigration(dialect),
    '0008_agents': agentsMigration(dialect),
    '0010_administration': administrationMigration(dialect),
    '0011_session_agent_snapshots': sessionAgentSnapshotsMigration(dialect),
  };
}
