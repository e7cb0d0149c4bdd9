// The conformance kit catches broken adapters: the real store with one guarantee broken on purpose
// fails the matching check (called directly, so the failure is asserted rather than reported).
import { afterEach, describe, expect, it } from 'vitest';
import type { Store, StoreTx } from '@inbox-kit/core';
import {
  ConformanceError, checkAttemptOwnership, checkDecideHasOneWinner, checkIdempotencyRecords, checkKeysetPaging, checkTransactionAtomicity, type StoreConformanceSubject,
} from '@inbox-kit/core/testing';
import { PG_URL, postgresSubject, sqliteSubject } from './helpers.js';

/** The store with some operations replaced, both on the store and on every transaction's `tx`. */
function breakStore(store: Store, replace: (ops: StoreTx) => Partial<StoreTx>): Store {
  return {
    ...store,
    ...replace(store),
    transaction: (fn) => store.transaction((tx) => fn({ ...tx, ...replace(tx) })),
  };
}

/** Check-then-write: reads the item, yields, then writes whatever the status is now (no `seen_status` check). */
const nonConditionalDecide = (ops: StoreTx): Partial<StoreTx> => ({
  async decideInboxItem(project_id, item_id, _seen_status, patch) {
    const current = await ops.getInboxItem(project_id, item_id);
    if (!current) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 1));
    return ops.decideInboxItem(project_id, item_id, current.status, patch);
  },
});

/** Pages that drop the rows sharing the cursor's `created_at`. */
const tieSkippingPages = (ops: StoreTx): Partial<StoreTx> => ({
  listInboxItems: (q) => ops.listInboxItems(q.after ? { ...q, after: { created_at: q.after.created_at, id: '' } } : q),
});

/** Check-then-write: looks the key up, yields, then inserts and reports success whatever happened. */
const nonConditionalIdempotency = (ops: StoreTx): Partial<StoreTx> => ({
  async insertIdempotencyRecord(record) {
    if (await ops.findIdempotencyRecord(record)) return false;
    await new Promise((resolve) => setTimeout(resolve, 1));
    await ops.insertIdempotencyRecord(record);
    return true;
  },
});

/** A claim that ignores a live lease of another host (last writer wins). */
const unconditionalClaim = (ops: StoreTx): Partial<StoreTx> => ({
  async claimAttemptOwnership(claim) {
    await ops.releaseAttemptOwnership((await ops.findAttemptOwner(claim.session_id, 0)) ?? claim);
    return ops.claimAttemptOwnership(claim, Number.MAX_SAFE_INTEGER);
  },
});

/** An owner lookup that ignores lease expiry. */
const expiryBlindLookup = (ops: StoreTx): Partial<StoreTx> => ({
  findAttemptOwner: (session_id) => ops.findAttemptOwner(session_id, 0),
});

const engines: Array<[string, () => Promise<StoreConformanceSubject>]> = [['sqlite', sqliteSubject]];
const pgUrl = PG_URL;
if (pgUrl) engines.push(['postgres', () => postgresSubject(pgUrl)]);

describe.each(engines)('broken adapters fail the kit (%s)', (_engine, factory) => {
  let subject: StoreConformanceSubject | undefined;
  afterEach(async () => {
    await subject?.close();
    subject = undefined;
  });

  it('the real store passes the winner check', async () => {
    subject = await factory();
    await expect(checkDecideHasOneWinner(subject)).resolves.toBeUndefined();
  });

  it('a non-conditional decideInboxItem fails the winner check', async () => {
    subject = await factory();
    const broken = breakStore(subject.store, nonConditionalDecide);
    const failure = await checkDecideHasOneWinner({ store: broken, raw: subject.raw }).then(() => undefined, (error: unknown) => error);
    expect(failure).toBeInstanceOf(ConformanceError);
    expect((failure as Error).message).toMatch(/exactly one of 20 concurrent decisions must win, (?!1 did)\d+ did/);
  });

  it('a transaction that does not roll back fails the atomicity check', async () => {
    subject = await factory();
    const store = subject.store;
    const broken: Store = { ...store, transaction: (fn) => fn(store) };
    await expect(checkTransactionAtomicity({ store: broken, raw: subject.raw })).rejects.toThrow(ConformanceError);
  });

  it('pages that skip rows sharing created_at fail the keyset check', async () => {
    subject = await factory();
    const broken = breakStore(subject.store, tieSkippingPages);
    await expect(checkKeysetPaging({ store: broken, raw: subject.raw })).rejects.toThrow(/neither skipped nor repeated/);
  });

  it('the real store passes the attempt ownership check; a claim ignoring live leases or a lookup ignoring expiry fails it', async () => {
    subject = await factory();
    await expect(checkAttemptOwnership(subject)).resolves.toBeUndefined();
    await expect(checkAttemptOwnership({ store: breakStore(subject.store, unconditionalClaim), raw: subject.raw }))
      .rejects.toThrow(/a claim by another host while the lease is live must lose/);
    await expect(checkAttemptOwnership({ store: breakStore(subject.store, expiryBlindLookup), raw: subject.raw }))
      .rejects.toThrow(/a lease is expired at lease_expires_at/);
  });

});

// Only PostgreSQL runs claims really concurrently (SQLite serialises every call on its one
// connection, where a check-then-write happens to be safe).
describe.each(engines.filter(([name]) => name === 'postgres'))('a broken idempotency insert fails the kit (%s)', (_engine, factory) => {
  it('a check-then-write insertIdempotencyRecord fails the idempotency check', async () => {
    const subject = await factory();
    try {
      const broken = breakStore(subject.store, nonConditionalIdempotency);
      await expect(checkIdempotencyRecords({ store: broken, raw: subject.raw })).rejects.toThrow(/exactly one of 20 concurrent claims of one key must win, (?!1 did)\d+ did/);
    } finally {
      await subject.close();
    }
  });
});
