/** `IdempotencyStore` in memory. */
import type { IdempotencyStore } from '../../ports/store.js';
import { type GetState, copy } from './state.js';

export function idempotencyOps(get: GetState): IdempotencyStore {
  return {
    async findIdempotencyRecord(q) { return copy(get().idempotency.get(JSON.stringify([q.workspace_id, q.account_id, q.key]))); },
    async insertIdempotencyRecord(r) {
      const s = get(); const key = JSON.stringify([r.workspace_id, r.account_id, r.key]);
      if (s.idempotency.has(key)) return false;
      s.idempotency.set(key, copy(r)); return true;
    },
    async sweepIdempotencyRecords(q) {
      const s = get();
      const expired = [...s.idempotency.entries()]
        .filter(([, r]) => r.created_at < q.created_before
          && (q.scope === undefined || (r.workspace_id === q.scope.workspace_id && r.account_id === q.scope.account_id && r.key === q.scope.key)))
        .sort(([, a], [, b]) => a.created_at - b.created_at)
        .slice(0, Math.max(0, q.limit));
      for (const [key] of expired) s.idempotency.delete(key);
      return expired.length;
    },
  };
}
