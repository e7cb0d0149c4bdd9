/** `RunStore` in memory: Runs and attempt ownership leases. */
import type { Clock } from '../../ports/clock.js';
import type { RunStore } from '../../ports/store.js';
import { type GetState, copy, unique } from './state.js';

export function runOps(get: GetState, clock: Clock): RunStore {
  return {
    async now() { return clock.now(); },
    async insertRun(r) { const s = get(); unique(s.runs, r.id, 'run'); s.runs.set(r.id, copy(r)); },
    async getRunningRun(sid) { return copy([...get().runs.values()].find((r) => r.session_id === sid && r.status === 'running')); },
    async listRunningRuns(limit) {
      return [...get().runs.values()].filter((r) => r.status === 'running')
        .sort((a, b) => a.started_at - b.started_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        .slice(0, Math.max(0, Math.floor(limit))).map(copy);
    },
    async endRun(id, outcome, at) {
      const r = get().runs.get(id);
      if (!r || r.status !== 'running') return false;
      r.status = 'idle'; r.outcome = outcome; r.ended_at = at; return true;
    },
    async updateRunStatus(id, from, change) {
      const r = get().runs.get(id);
      if (!r || r.status !== from) return false;
      r.status = change.status;
      if (change.status === 'idle') { r.outcome = change.outcome; r.ended_at = change.ended_at; }
      return true;
    },
    async getAwaitingRun(sid) { return copy([...get().runs.values()].find((r) => r.session_id === sid && r.status === 'awaiting')); },

    async claimAttemptOwnership(claim, now) {
      const s = get(); const held = s.attemptOwners.get(claim.session_id);
      if (held && held.lease_expires_at > now && held.host_id !== claim.host_id) return false;
      s.attemptOwners.set(claim.session_id, copy(claim)); return true;
    },
    async renewAttemptOwnership(key, lease_expires_at) {
      const held = get().attemptOwners.get(key.session_id);
      if (!held || held.run_id !== key.run_id || held.host_id !== key.host_id) return false;
      held.lease_expires_at = lease_expires_at; return true;
    },
    async releaseAttemptOwnership(key) {
      const s = get(); const held = s.attemptOwners.get(key.session_id);
      if (!held || held.run_id !== key.run_id || held.host_id !== key.host_id) return false;
      return s.attemptOwners.delete(key.session_id);
    },
    async findAttemptOwner(session_id, now) {
      const held = get().attemptOwners.get(session_id);
      return held && held.lease_expires_at > now ? copy(held) : undefined;
    },
  };
}
