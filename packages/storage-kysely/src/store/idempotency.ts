/** `IdempotencyStore` on Kysely: the conditional insert is decided by the primary key. */
import type { IdempotencyStore } from '@inbox-kit/core';
import { $, type StoreContext } from './context.js';
import { IDEMPOTENCY } from './rows.js';

export function idempotencyOps(ctx: StoreContext): IdempotencyStore {
  const { db, dialect, first } = ctx;
  return {
    async findIdempotencyRecord(scope) {
      const r = await first<Record<string, unknown>>('findIdempotencyRecord', () => db.selectFrom('idempotency_records').select(IDEMPOTENCY.select(dialect))
        .where('workspace_id', '=', $(0)).where('account_id', '=', $(1)).where('key', '=', $(2)),
      scope.workspace_id, scope.account_id, scope.key);
      return r && IDEMPOTENCY.decode(r);
    },
    async insertIdempotencyRecord(record) {
      // The primary key decides: a competitor's uncommitted row makes this wait for its outcome.
      const r = await first('insertIdempotencyRecord', () => db.insertInto('idempotency_records')
        .values(Object.fromEntries(IDEMPOTENCY.columns.map((column, i) => [column, $(i)])) as never)
        .onConflict((oc) => oc.columns(['workspace_id', 'account_id', 'key']).doNothing()).returning('key'),
      ...IDEMPOTENCY.encode(record));
      return r !== undefined;
    },
    async sweepIdempotencyRecords(query) {
      // The oldest expired keys first, at most `limit` per call (one bounded statement; the
      // created_at index of migration 0007 finds them). A row inserted meanwhile is never older.
      let expired = db.selectFrom('idempotency_records').select(['workspace_id', 'account_id', 'key'])
        .where('created_at', '<', query.created_before);
      const scope = query.scope;
      if (scope !== undefined) expired = expired.where('workspace_id', '=', scope.workspace_id).where('account_id', '=', scope.account_id).where('key', '=', scope.key);
      const victims = expired.orderBy('created_at', 'asc').limit(Math.max(0, Math.floor(query.limit)));
      const r = await db.deleteFrom('idempotency_records')
        .where((eb) => eb(eb.refTuple('workspace_id', 'account_id', 'key'), 'in', victims as never))
        .where('created_at', '<', query.created_before)
        .executeTakeFirst();
      return Number(r.numDeletedRows);
    },
  };
}
