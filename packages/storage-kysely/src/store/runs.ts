/** `RunStore` on Kysely: Runs (conditional end) and attempt ownership leases (conditional claim, renew, release). */
import type { RunStore } from '@inbox-kit/core';
import { $, insertRecord, type StoreContext } from './context.js';
import { OWNER, RUN, limitOf } from './rows.js';

export function runOps(ctx: StoreContext): RunStore {
  const { db, dialect, first } = ctx;
  return {
    now: () => dialect.now(db),
    async insertRun(r) {
      await insertRecord(ctx, RUN, r);
    },
    async getRunningRun(session_id) {
      const r = await first<Record<string, unknown>>('getRunningRun', () => db.selectFrom('runs').select(RUN.select(dialect))
        .where('session_id', '=', $(0)).where('status', '=', 'running')
        .orderBy('started_at', 'desc').orderBy('id', 'desc').limit(1), session_id);
      return r && RUN.decode(r);
    },
    async listRunningRuns(limit) {
      // Served by the partial index `runs_running_idx` (migration 0004).
      const rows = await db.selectFrom('runs').select(RUN.select(dialect)).where('status', '=', 'running')
        .orderBy('started_at', 'asc').orderBy('id', 'asc').limit(limitOf(limit)).execute();
      return rows.map((r) => RUN.decode(r));
    },
    async endRun(run_id, outcome, at) {
      const r = await db.updateTable('runs').set({ status: 'idle', outcome, ended_at: at })
        .where('id', '=', run_id).where('status', '=', 'running').executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },
    async updateRunStatus(run_id, from, change) {
      const set = change.status === 'idle' ? { status: 'idle', outcome: change.outcome, ended_at: change.ended_at } : { status: change.status };
      const r = await db.updateTable('runs').set(set).where('id', '=', run_id).where('status', '=', from).executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },
    async getAwaitingRun(session_id) {
      // Served by `runs_session_status_idx (session_id, status)` (migration 0001).
      const r = await first<Record<string, unknown>>('getAwaitingRun', () => db.selectFrom('runs').select(RUN.select(dialect))
        .where('session_id', '=', $(0)).where('status', '=', 'awaiting')
        .orderBy('started_at', 'desc').orderBy('id', 'desc').limit(1), session_id);
      return r && RUN.decode(r);
    },

    // — attempt ownership —
    async claimAttemptOwnership(claim, now) {
      // The primary key decides: a competing claim waits for the first one's outcome, then finds
      // its row live (and held by another host) and updates nothing.
      const { session_id: _key, ...replacement } = OWNER.row(claim);
      const r = await db.insertInto('attempt_owners').values(OWNER.row(claim) as never)
        .onConflict((oc) => oc.column('session_id').doUpdateSet(replacement as never).where((eb) => eb.or([
          eb('attempt_owners.lease_expires_at', '<=', now),
          eb('attempt_owners.host_id', '=', claim.host_id),
        ]))).returning('session_id').executeTakeFirst();
      return r !== undefined;
    },
    async renewAttemptOwnership(key, lease_expires_at) {
      const r = await db.updateTable('attempt_owners').set({ lease_expires_at })
        .where('session_id', '=', key.session_id).where('run_id', '=', key.run_id).where('host_id', '=', key.host_id)
        .executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },
    async releaseAttemptOwnership(key) {
      const r = await db.deleteFrom('attempt_owners')
        .where('session_id', '=', key.session_id).where('run_id', '=', key.run_id).where('host_id', '=', key.host_id)
        .executeTakeFirst();
      return r.numDeletedRows > 0n;
    },
    async findAttemptOwner(session_id, now) {
      const r = await first<Record<string, unknown>>('findAttemptOwner', () => db.selectFrom('attempt_owners').select(OWNER.select(dialect))
        .where('session_id', '=', $(0)).where('lease_expires_at', '>', $(1)), session_id, now);
      return r && OWNER.decode(r);
    },
  };
}
