/** Conformance checks of `ProjectStore`: memberships. */
import type { Account, Membership } from '../../records.js';
import { assert, assertSame, T0, seedWorld, type StoreConformanceSubject } from './support.js';

/**
 * Memberships: `upsertMembership` inserts, then changes only the role (created_at kept);
 * `deleteMembership` reports whether a row was removed; lists are ascending by `created_at`.
 */
export async function checkMemberships({ store, raw }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const w = await seedWorld(store, 'member');
  const p = w.project;
  const observer: Account = { id: `acc_${w.u}_observer`, name: 'Observer', created_at: T0 };
  await store.insertAccount(observer, [w.ws.id]);

  const first: Membership = { project_id: p.id, account_id: observer.id, role: 'observer', created_at: T0 + 50 };
  assertSame(await store.upsertMembership(first), first, 'upsertMembership (insert) result');
  assert((await raw.memberRole(p.id, observer.id)) === 'observer', 'stored role after insert');
  const changed = await store.upsertMembership({ ...first, role: 'deriver', created_at: T0 + 99 });
  assertSame(changed, { ...first, role: 'deriver' }, 'upsertMembership (role change) result keeps created_at');
  assert((await raw.memberRole(p.id, observer.id)) === 'deriver', 'stored role after the change');
  assertSame(await store.getMembership(p.id, observer.id), changed, 'getMembership after the change');
  const deriverMembership: Membership = { project_id: p.id, account_id: w.deriver.id, role: 'deriver', created_at: T0 };
  assertSame(await store.listMemberships(p.id), [deriverMembership, changed], 'listMemberships ascending by created_at');

  assert((await store.deleteMembership(p.id, observer.id)) === true, 'deleteMembership of a member returns true');
  assert((await raw.memberRole(p.id, observer.id)) === undefined, 'the deleted membership row is gone');
  assert((await store.deleteMembership(p.id, observer.id)) === false, 'deleteMembership of a non-member returns false');
  assert((await store.getMembership(p.id, observer.id)) === undefined, 'getMembership after delete');
  assertSame(await store.listMemberships(p.id), [deriverMembership], 'listMemberships after delete');
}
