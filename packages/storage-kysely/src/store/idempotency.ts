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
  };
}
