/**
 * Which store calls a failure armed on one store method hits or hides (the HTTP world's
 * `failure.method`, and any harness of an adapter that injects failures the same way): a write
 * made in one call stands for its halves. Part of `@inbox-kit/core/testing`.
 */
import type { StoreTx } from '../ports/store.js';

/**
 * Whether a failure armed on `method` hits the call `prop`: the method itself, `appendAudited`
 * (the audit in one call, when the store has it) for either of its halves, and
 * `insertInboxItemAudited` (the item with its audit) for the item or either half of the audit.
 */
export function failureHits(prop: string | symbol, method: keyof StoreTx | null): boolean {
  if (prop === method) return true;
  const audit = method === 'appendProjectEvent' || method === 'appendOperationLog';
  return (prop === 'appendAudited' && audit) || (prop === 'insertInboxItemAudited' && (audit || method === 'insertInboxItem'));
}

/**
 * Whether a failure armed on `method` hides the call `prop` (the service then makes the separate
 * calls the failure hits): a conditional write in one call, which a second call cannot make fail
 * (it just finds the row changed) — the decision with its audit, in a transaction or on its own —
 * and the create made on its own, outside a transaction (a second call would commit a second item).
 */
export function failureHides(prop: string | symbol, method: keyof StoreTx | null): boolean {
  const audit = method === 'appendProjectEvent' || method === 'appendOperationLog';
  if (prop === 'insertInboxItemIfUnchanged') return audit || method === 'insertInboxItem';
  return (audit || method === 'decideInboxItem') && (prop === 'decideInboxItemAudited' || prop === 'decideInboxItemIfUnchanged');
}
