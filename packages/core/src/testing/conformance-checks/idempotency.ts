/** Conformance checks of `IdempotencyStore`: the conditional insert and its exact scope. */
import type { IdempotencyRecord, IdempotencyScope } from '../../ports/store.js';
import type { Workspace } from '../../records.js';
import { assert, assertSame, range, concurrently, T0, seedWorld, newItem, newLog, newEvent, type StoreConformanceSubject } from './support.js';

/**
 * Idempotency keys: `insertIdempotencyRecord` is a conditional insert on `(workspace_id,
 * account_id, key)` — the first call stores the record and returns true, a later one returns false
 * and changes nothing; lookups match all three byte for byte; a rollback releases the key (also for
 * a competitor already waiting on it); of 20 concurrent claims of one key (half in transactions
 * that also write an item, a log row and an event when they win, as a create does) exactly one
 * wins, and every losing transaction then reads the winner's record.
 */
export async function checkIdempotencyRecords({ store, raw }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const w = await seedWorld(store, 'idem');
  const p = w.project;
  const ws2: Workspace = { id: `ws_${w.u}_2`, name: 'second', created_at: T0 };
  await store.insertWorkspace(ws2);
  const hash = (n: number | string) => String(n).padStart(64, '0').slice(-64);
  const record = (key: string, n: number | string, over: Partial<IdempotencyRecord> = {}): IdempotencyRecord => ({
    workspace_id: w.ws.id, account_id: w.deriver.id, key, request_hash: hash(n), resource_type: 'project_inbox_item',
    resource_id: `pinbox_${w.u}_${n}`, created_at: T0 + 1, ...over,
  });
  const scopeOf = (r: IdempotencyRecord): IdempotencyScope => ({ workspace_id: r.workspace_id, account_id: r.account_id, key: r.key });

  const first = record('Key-1 ~!"\\', 1);
  assert((await store.findIdempotencyRecord(scopeOf(first))) === undefined, 'findIdempotencyRecord of an unused key must be undefined');
  assert((await store.insertIdempotencyRecord(first)) === true, 'the first insertIdempotencyRecord of a key must return true');
  assertSame(await store.findIdempotencyRecord(scopeOf(first)), first, 'findIdempotencyRecord after the insert');
  assertSame(await raw.idempotencyRequestHashes(scopeOf(first)), [first.request_hash], 'stored record after the insert');
  const again = record(first.key, 2);
  assert((await store.insertIdempotencyRecord(again)) === false, 'a second insertIdempotencyRecord of the same key must return false');
  assertSame(await store.findIdempotencyRecord(scopeOf(first)), first, 'the record after a refused insert is unchanged');
  assertSame(await raw.idempotencyRequestHashes(scopeOf(first)), [first.request_hash], 'stored records after a refused insert');

  // Exact match on all three parts: each variant is another key, free to claim.
  const variants = [
    record(first.key, 3, { account_id: w.owner.id }),
    record(first.key, 4, { workspace_id: ws2.id }),
    record(first.key.toLowerCase(), 5),
    record(`${first.key} `, 6),
    record(first.key.slice(0, -1), 7),
  ];
  for (const v of variants) {
    assert((await store.findIdempotencyRecord(scopeOf(v))) === undefined, `findIdempotencyRecord(${JSON.stringify(scopeOf(v))}) must not match another scope`);
  }
  for (const v of variants) {
    assert((await store.insertIdempotencyRecord(v)) === true, `insertIdempotencyRecord(${JSON.stringify(scopeOf(v))}) is another key and must return true`);
  }
  for (const v of variants) assertSame(await store.findIdempotencyRecord(scopeOf(v)), v, `record of ${JSON.stringify(scopeOf(v))}`);
  assertSame(await store.findIdempotencyRecord(scopeOf(first)), first, 'the first record after the variants');

  // A rollback releases the key; inside the transaction its own insert is visible.
  const boom = new Error('rolled back on purpose');
  const rolled = record('rolled-back', 8);
  let caught: unknown;
  try {
    await store.transaction(async (tx) => {
      assert((await tx.insertIdempotencyRecord(rolled)) === true, 'insertIdempotencyRecord inside a transaction');
      assertSame(await tx.findIdempotencyRecord(scopeOf(rolled)), rolled, 'read-your-writes of an idempotency record inside a transaction');
      throw boom;
    });
  } catch (error) {
    caught = error;
  }
  assert(caught === boom, 'the transaction rethrows');
  assert((await store.findIdempotencyRecord(scopeOf(rolled))) === undefined, 'a rolled-back idempotency record must not be readable');
  assertSame(await raw.idempotencyRequestHashes(scopeOf(rolled)), [], 'stored records after the rollback');

  // A competitor waiting on a claim that then rolls back gets the key.
  const held = record('held', 9);
  const waiting = record('held', 10);
  let claimed!: () => void;
  const claimedPromise = new Promise<void>((resolve) => (claimed = resolve));
  const holder = store.transaction(async (tx) => {
    assert((await tx.insertIdempotencyRecord(held)) === true, 'the holder claims the key');
    claimed();
    await new Promise((resolve) => setTimeout(resolve, 25)); // let the competitor queue behind the claim
    throw boom;
  }).then(() => undefined, (error: unknown) => error);
  await claimedPromise;
  const competitor = store.insertIdempotencyRecord(waiting);
  assert((await holder) === boom, 'the holder rolls back');
  assert((await competitor) === true, 'a competitor waiting on a claim that rolls back must get the key (true)');
  assertSame(await store.findIdempotencyRecord(scopeOf(waiting)), waiting, 'the competitor\'s record');

  // 20 concurrent claims of one key: exactly one winner; losing transactions read the winner's record.
  const key = 'concurrent-key';
  const contenders = 20;
  const outcomes = await concurrently(range(0, contenders - 1).map((i) => async () => {
    const mine = record(key, 100 + i);
    if (i % 2 === 1) return { i, won: await store.insertIdempotencyRecord(mine), seen: undefined as IdempotencyRecord | undefined };
    return store.transaction(async (tx) => {
      const won = await tx.insertIdempotencyRecord(mine);
      if (!won) return { i, won, seen: await tx.findIdempotencyRecord(scopeOf(mine)) };
      await tx.insertInboxItem(newItem(w, p, mine.resource_id));
      await tx.appendOperationLog(newLog(w, p, `oplog_${w.u}_k${i}`, { target_id: mine.resource_id }));
      await tx.appendProjectEvent(newEvent(w, p, `evt_${w.u}_k${i}`, { payload: { inbox_item_id: mine.resource_id } }));
      return { i, won, seen: undefined };
    });
  }), 'concurrent insertIdempotencyRecord');
  const winners = outcomes.filter((o) => o.won);
  assert(winners.length === 1, `exactly one of ${contenders} concurrent claims of one key must win, ${winners.length} did`);
  const winner = record(key, 100 + (winners[0]?.i ?? -1));
  assertSame(await raw.idempotencyRequestHashes(scopeOf(winner)), [winner.request_hash], 'stored record after the race');
  assertSame(await store.findIdempotencyRecord(scopeOf(winner)), winner, 'the record after the race is the winner\'s');
  for (const o of outcomes) {
    if (o.won || o.i % 2 === 1) continue;
    assertSame(o.seen, winner, `losing transaction #${o.i} must read the winner's record after its refused insert`);
  }
  const items = await raw.countRows('project_inbox_items', p.id);
  const events = await raw.countRows('project_events', p.id);
  const expected = (winners[0]?.i ?? 1) % 2 === 0 ? 1 : 0;
  assert(items === expected && events === expected, `only the winning transaction writes: expected ${expected} item and event, raw counts are ${items} and ${events}`);
}

/**
 * `sweepIdempotencyRecords` (optional; without it keys never expire): deletes only records created
 * before `created_before`, oldest first, at most `limit` per call, only the given scope's with
 * `scope`; a deleted key is free again (`insertIdempotencyRecord` returns true); a rollback
 * restores what it deleted; two concurrent sweeps delete each record once.
 */
export async function checkIdempotencySweep({ store, raw }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  if (store.sweepIdempotencyRecords === undefined) return;
  const w = await seedWorld(store, 'sweep');
  const hash = (n: number) => String(n).padStart(64, '0');
  const record = (key: string, at: number, account_id = w.deriver.id): IdempotencyRecord => ({
    workspace_id: w.ws.id, account_id, key, request_hash: hash(at), resource_type: 'project_inbox_item', resource_id: `pinbox_${w.u}_${key}`, created_at: at,
  });
  const scopeOf = (r: IdempotencyRecord): IdempotencyScope => ({ workspace_id: r.workspace_id, account_id: r.account_id, key: r.key });
  const records = [record('a', T0 + 1), record('b', T0 + 2), record('c', T0 + 3), record('d', T0 + 10), record('e', T0 + 11), record('a', T0 + 4, w.owner.id)];
  for (const r of records) assert((await store.insertIdempotencyRecord(r)) === true, `insert ${r.key}`);
  const present = async () => {
    const out: string[] = [];
    for (const r of records) if ((await raw.idempotencyRequestHashes(scopeOf(r))).length > 0) out.push(`${r.account_id === w.owner.id ? 'owner:' : ''}${r.key}`);
    return out;
  };

  // Scoped: only that record, and only when it is old enough.
  assert((await store.sweepIdempotencyRecords({ created_before: T0 + 1, scope: scopeOf(records[0]!), limit: 10 })) === 0, 'a record created at created_before is kept');
  assert((await store.sweepIdempotencyRecords({ created_before: T0 + 100, scope: scopeOf(records[5]!), limit: 10 })) === 1, 'the scoped sweep deletes the scope\'s expired record');
  assertSame(await present(), ['a', 'b', 'c', 'd', 'e'], 'records after a scoped sweep (another account\'s key "a" only)');

  // Rolled back: nothing deleted.
  const boom = new Error('rolled back on purpose');
  await store.transaction(async (tx) => {
    assert((await tx.sweepIdempotencyRecords!({ created_before: T0 + 100, limit: 10 })) === 5, 'a sweep in a transaction deletes the five expired records');
    throw boom;
  }).catch((error: unknown) => assert(error === boom, 'the transaction rethrows'));
  assertSame(await present(), ['a', 'b', 'c', 'd', 'e'], 'records after a rolled-back sweep');

  // Bounded and oldest first; newer records kept.
  assert((await store.sweepIdempotencyRecords({ created_before: T0 + 10, limit: 2 })) === 2, 'a sweep deletes at most limit records');
  assertSame(await present(), ['c', 'd', 'e'], 'the two oldest went first');
  const [x, y] = await Promise.all([
    store.sweepIdempotencyRecords({ created_before: T0 + 11, limit: 10 }),
    store.sweepIdempotencyRecords({ created_before: T0 + 11, limit: 10 }),
  ]);
  assert(x + y === 2, `two concurrent sweeps delete each expired record once (deleted ${x} + ${y}, expected 2)`);
  assertSame(await present(), ['e'], 'the record created at created_before stays');

  // A swept key is free again.
  const again = record('a', T0 + 50);
  assert((await store.insertIdempotencyRecord(again)) === true, 'insertIdempotencyRecord of a swept key returns true');
  assertSame(await store.findIdempotencyRecord(scopeOf(again)), again, 'the new record of a swept key');
}
