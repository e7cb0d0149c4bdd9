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
  };
}
