/** Conformance checks of `RunStore`: conditional `endRun`, `listRunningRuns`, attempt ownership leases. */
import type { AttemptOwnership } from '../../ports/store.js';
import type { Run, Session } from '../../records.js';
import { assert, assertSame, range, concurrently, T0, seedWorld, type StoreConformanceSubject } from './support.js';

/**
 * Runs: `getRunningRun` finds the running Run; `endRun` is conditional — of 10 concurrent calls
 * (half in transactions) exactly one ends it; later calls return false.
 */
export async function checkEndRunConditional({ store, raw }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const w = await seedWorld(store, 'run');
  const run: Run = { id: `run_${w.u}`, session_id: w.session.id, status: 'running', started_at: T0, ended_at: null, outcome: null };
  await store.insertRun(run);
  assertSame(await store.getRunningRun(w.session.id), run, 'getRunningRun');
  const outcomes = ['completed', 'cancelled', 'failed'];
  const results = await concurrently(range(0, 9).map((i) => () => (i % 2 === 0
    ? store.transaction((tx) => tx.endRun(run.id, outcomes[i % 3] ?? 'completed', T0 + 100 + i))
    : store.endRun(run.id, outcomes[i % 3] ?? 'completed', T0 + 100 + i))), 'concurrent endRun');
  const winners = results.map((r, i) => (r ? i : -1)).filter((i) => i >= 0);
  assert(winners.length === 1, `exactly one of 10 concurrent endRun calls must end the run, ${winners.length} did`);
  assert((await raw.runStatus(run.id)) === 'idle', 'stored run status after endRun');
  assert((await store.getRunningRun(w.session.id)) === undefined, 'no running run after endRun');
  assert((await store.endRun(run.id, 'completed', T0 + 999)) === false, 'endRun of an ended run returns false');
  assert((await store.endRun(`run_${w.u}_missing`, 'completed', T0)) === false, 'endRun of a missing run returns false');
  const next: Run = { ...run, id: `run_${w.u}_2`, started_at: T0 + 500 };
  await store.insertRun(next);
  assertSame(await store.getRunningRun(w.session.id), next, 'getRunningRun finds the new run');
}

/**
 * Running Runs: `listRunningRuns(limit)` returns every `running` Run of every Session (the subject's
 * store is isolated, so only this check's Runs), oldest first — `started_at` ascending, then `id`
 * in byte order (`B` before `a`, whatever the database collation) — at most `limit`; never an
 * ended Run (inserted ended, or ended by `endRun`); inside a transaction it sees the transaction's
 * own insert.
 */
export async function checkListRunningRuns({ store, raw }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const w = await seedWorld(store, 'running');
  const sessions: Session[] = [w.session];
  for (const n of [2, 3, 4]) {
    const s: Session = { ...w.session, id: `${w.session.id}_${n}`, created_at: T0 + n };
    await store.insertSession(s);
    sessions.push(s);
  }
  const [s1, s2, s3, s4] = sessions as [Session, Session, Session, Session];
  const run = (session: Session, suffix: string, started_at: number, over: Partial<Run> = {}): Run => ({
    id: `run_${w.u}_${suffix}`, session_id: session.id, status: 'running', started_at, ended_at: null, outcome: null, ...over,
  });
  assertSame(await store.listRunningRuns(10), [], 'listRunningRuns of a store without Runs');
  const ended = run(s1, 'ended', T0, { status: 'idle', ended_at: T0 + 1, outcome: 'completed' });
  const lower = run(s1, 'a', T0 + 10);
  const upper = run(s2, 'B', T0 + 10);
  const oldest = run(s3, 'z', T0 + 5);
  for (const r of [lower, ended, upper, oldest]) await store.insertRun(r);
  assertSame(await store.listRunningRuns(10), [oldest, upper, lower], 'listRunningRuns: running Runs only, oldest first, ties by id in byte order');
  assertSame(await store.listRunningRuns(2), [oldest, upper], 'listRunningRuns(2) returns the two oldest');
  assertSame(await store.listRunningRuns(0), [], 'listRunningRuns(0) returns none');
  assert(await store.endRun(upper.id, 'failed', T0 + 20), 'endRun of a running Run');
  assert((await raw.runStatus(upper.id)) === 'idle', 'stored status of the ended Run');
  assertSame(await store.listRunningRuns(10), [oldest, lower], 'listRunningRuns after endRun leaves the ended Run out');
  const newest = run(s4, 'new', T0 + 30);
  const seen = await store.transaction(async (tx) => {
    await tx.insertRun(newest);
    return tx.listRunningRuns(10);
  });
  assertSame(seen, [oldest, lower, newest], 'listRunningRuns inside a transaction sees its own insert');
  assertSame(await store.listRunningRuns(10), [oldest, lower, newest], 'listRunningRuns after the commit');
}

/**
 * Attempt ownership: a claim on a free Session wins and is read back exactly; a live lease of
 * another host refuses a competing claim (the row is unchanged) but not a re-claim by its own
 * host; an expired lease is invisible to `findAttemptOwner` and may be taken over; renew and
 * release act only on the exact `(session_id, run_id, host_id)`; of 20 concurrent claims by
 * different hosts (half in transactions) exactly one wins; a claim rolled back leaves nothing.
 */
export async function checkAttemptOwnership({ store, raw }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const w = await seedWorld(store, 'owner');
  const other: Session = { ...w.session, id: `${w.session.id}_other` };
  await store.insertSession(other);
  const sid = w.session.id;
  const a: AttemptOwnership = { session_id: sid, run_id: `run_${w.u}_1`, host_id: `host_${w.u}_a`, host_url: 'http://127.0.0.1:3001', lease_expires_at: T0 + 1000 };
  const b: AttemptOwnership = { session_id: sid, run_id: `run_${w.u}_2`, host_id: `host_${w.u}_b`, host_url: 'http://127.0.0.1:3002', lease_expires_at: T0 + 5000 };

  assert((await store.findAttemptOwner(sid, T0)) === undefined, 'findAttemptOwner of a Session without an owner');
  assert((await store.claimAttemptOwnership(a, T0)) === true, 'a claim on a Session without an owner must win');
  assertSame(await store.findAttemptOwner(sid, T0), a, 'findAttemptOwner returns the claim as written');
  assert((await store.findAttemptOwner(other.id, T0)) === undefined, 'ownership of one Session is not another\'s');
  assert((await store.claimAttemptOwnership(b, T0 + 999)) === false, 'a claim by another host while the lease is live must lose');
  assertSame(await store.findAttemptOwner(sid, T0 + 999), a, 'a losing claim leaves the row unchanged');
  assertSame(await raw.attemptOwnerHosts(sid), [a.host_id], 'stored owner after a losing claim');

  // Renew: only the exact (session, run, host).
  assert((await store.renewAttemptOwnership({ session_id: sid, run_id: a.run_id, host_id: b.host_id }, T0 + 9000)) === false, 'renew by another host');
  assert((await store.renewAttemptOwnership({ session_id: sid, run_id: b.run_id, host_id: a.host_id }, T0 + 9000)) === false, 'renew of another run');
  assertSame(await store.findAttemptOwner(sid, T0), a, 'a refused renew leaves the row unchanged');
  assert((await store.renewAttemptOwnership(a, T0 + 2000)) === true, 'renew by the owner');
  assertSame(await store.findAttemptOwner(sid, T0 + 1500), { ...a, lease_expires_at: T0 + 2000 }, 'the renewed lease');

  // Expiry: `lease_expires_at <= now` is no owner, and another host may take over.
  assert((await store.findAttemptOwner(sid, T0 + 2000)) === undefined, 'a lease is expired at lease_expires_at');
  assert((await store.claimAttemptOwnership(b, T0 + 2000)) === true, 'a claim over an expired lease must win');
  assertSame(await store.findAttemptOwner(sid, T0 + 2000), b, 'the new owner after a take-over');
  assertSame(await raw.attemptOwnerHosts(sid), [b.host_id], 'one stored row after a take-over');
  assert((await store.renewAttemptOwnership(a, T0 + 99_000)) === false, 'the previous owner cannot renew a lease it lost');
  assert((await store.releaseAttemptOwnership(a)) === false, 'the previous owner cannot release a lease it lost');
  assertSame(await store.findAttemptOwner(sid, T0 + 2000), b, 'the lost lease is untouched by its previous owner');

  // The same host re-claims for its next Run while its lease is live.
  const b2: AttemptOwnership = { ...b, run_id: `run_${w.u}_3`, lease_expires_at: T0 + 6000 };
  assert((await store.claimAttemptOwnership(b2, T0 + 2100)) === true, 'a re-claim by the same host must win');
  assertSame(await store.findAttemptOwner(sid, T0 + 2100), b2, 'the re-claimed row');

  // Release: only the exact key.
  assert((await store.releaseAttemptOwnership(b)) === false, 'release of an earlier run of the same host');
  assert((await store.releaseAttemptOwnership(b2)) === true, 'release by the owner');
  assert((await store.findAttemptOwner(sid, T0)) === undefined, 'no owner after release');
  assertSame(await raw.attemptOwnerHosts(sid), [], 'no stored row after release');
  assert((await store.releaseAttemptOwnership(b2)) === false, 'a second release');

  // A claim inside a rolled-back transaction leaves nothing.
  const boom = new Error('rolled back on purpose');
  await store.transaction(async (tx) => {
    assert((await tx.claimAttemptOwnership(a, T0)) === true, 'a claim inside a transaction');
    throw boom;
  }).catch((error: unknown) => {
    if (error !== boom) throw error;
  });
  assertSame(await raw.attemptOwnerHosts(sid), [], 'a rolled-back claim leaves no row');

  // One winner of 20 concurrent claims by different hosts.
  const claims = range(0, 19).map((i): AttemptOwnership => ({ ...a, run_id: `run_${w.u}_c${i}`, host_id: `host_${w.u}_c${i}`, lease_expires_at: T0 + 60_000 }));
  const results = await concurrently(claims.map((c, i) => () => (i % 2 === 0
    ? store.transaction((tx) => tx.claimAttemptOwnership(c, T0))
    : store.claimAttemptOwnership(c, T0))), 'concurrent claimAttemptOwnership');
  const winners = results.map((r, i) => (r ? i : -1)).filter((i) => i >= 0);
  assert(winners.length === 1, `exactly one of 20 concurrent claims must win, ${winners.length} did`);
  const winner = claims[winners[0] ?? 0];
  assertSame(await store.findAttemptOwner(sid, T0), winner, 'the stored owner is the winning claim');
  assertSame(await raw.attemptOwnerHosts(sid), [winner?.host_id], 'exactly one stored row after concurrent claims');
}

/**
 * Run status (optional `updateRunStatus` and `getAwaitingRun`: a store without them passes):
 * `running → awaiting` is conditional — of 10 concurrent calls (half in transactions) exactly
 * one moves the Run; an awaiting Run is neither `getRunningRun` nor listed by `listRunningRuns`,
 * `endRun` leaves it alone, `getAwaitingRun` finds it; `awaiting → running` and `→ idle` (with
 * outcome and end time) are conditional on the status seen.
 */
export async function checkRunStatusChanges({ store, raw }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  if (store.updateRunStatus === undefined || store.getAwaitingRun === undefined) return;
  const w = await seedWorld(store, 'park');
  const run: Run = { id: `run_${w.u}`, session_id: w.session.id, status: 'running', started_at: T0, ended_at: null, outcome: null };
  await store.insertRun(run);
  assert((await store.getAwaitingRun(w.session.id)) === undefined, 'getAwaitingRun of a Session whose Run runs');
  const results = await concurrently(range(0, 9).map((i) => () => (i % 2 === 0
    ? store.transaction((tx) => tx.updateRunStatus!(run.id, 'running', { status: 'awaiting' }))
    : store.updateRunStatus!(run.id, 'running', { status: 'awaiting' }))), 'concurrent updateRunStatus');
  assert(results.filter(Boolean).length === 1, `exactly one of 10 concurrent running → awaiting must succeed, ${results.filter(Boolean).length} did`);
  assert((await raw.runStatus(run.id)) === 'awaiting', 'stored status after running → awaiting');
  assertSame(await store.getAwaitingRun(w.session.id), { ...run, status: 'awaiting' }, 'getAwaitingRun');
  assert((await store.getRunningRun(w.session.id)) === undefined, 'an awaiting Run is not the running Run');
  assert(!(await store.listRunningRuns(100)).some((r) => r.id === run.id), 'listRunningRuns must not list an awaiting Run');
  assert((await store.endRun(run.id, 'failed', T0 + 1)) === false, 'endRun of an awaiting Run returns false (it ends only running Runs)');
  assert((await store.updateRunStatus(run.id, 'running', { status: 'awaiting' })) === false, 'running → awaiting of an awaiting Run returns false');
  assert(await store.updateRunStatus(run.id, 'awaiting', { status: 'running' }), 'awaiting → running');
  assertSame(await store.getRunningRun(w.session.id), run, 'the resumed Run is running again');
  assert(await store.updateRunStatus(run.id, 'running', { status: 'awaiting' }), 'running → awaiting again');
  assert(await store.updateRunStatus(run.id, 'awaiting', { status: 'idle', outcome: 'cancelled', ended_at: T0 + 5 }), 'awaiting → idle');
  assert((await raw.runStatus(run.id)) === 'idle', 'stored status after awaiting → idle');
  assert((await store.getAwaitingRun(w.session.id)) === undefined, 'no awaiting Run after it ended');
  assert((await store.updateRunStatus(run.id, 'awaiting', { status: 'running' })) === false, 'awaiting → running of an ended Run returns false');
  assert((await store.updateRunStatus(`run_${w.u}_missing`, 'running', { status: 'awaiting' })) === false, 'updateRunStatus of a missing Run returns false');
  const next: Run = { ...run, id: `run_${w.u}_2`, started_at: T0 + 10 };
  await store.insertRun(next);
  assert(await store.updateRunStatus(next.id, 'running', { status: 'idle', outcome: 'completed', ended_at: T0 + 20 }), 'running → idle');
  assert((await store.getRunningRun(w.session.id)) === undefined, 'no running Run after running → idle');
}

/**
 * The store's clock (`now`, optional: a store without it passes): integer ms; never backwards
 * between calls; the time of the call also inside a transaction (PostgreSQL's `now()` would be the
 * transaction's start: a transaction that waits 50 ms sees the clock move); with the raw reader's
 * `clockNow`, within 1 s of the database's clock read with a raw query (not the process's clock).
 */
export async function checkStoreClock({ store, raw }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const now = store.now?.bind(store);
  if (now === undefined) return;
  const first = await now();
  assert(Number.isSafeInteger(first) && first > 0, `now() must be integer ms since the epoch, got ${first}`);
  let last = first;
  for (let i = 0; i < 20; i++) {
    const t = await now();
    assert(Number.isSafeInteger(t) && t >= last, `now() went back from ${last} to ${t}`);
    last = t;
  }
  const [before, after] = await store.transaction(async (tx) => {
    const t0 = await tx.now!();
    await new Promise((r) => setTimeout(r, 50));
    return [t0, await tx.now!()] as const;
  });
  assert(after - before >= 40, `inside a transaction now() must be the time of the call (it moved ${after - before} ms in a 50 ms wait)`);
  if (raw.clockNow !== undefined) {
    const [a, db, b] = [await now(), await raw.clockNow(), await now()];
    assert(db >= a - 1000 && db <= b + 1000, `now() must read the database's clock: got ${a}..${b}, the database says ${db}`);
  }
}

/**
 * `findSession` (optional: a store without it passes): the Session by id alone, in whatever
 * workspace, exactly as `getSession` of its workspace returns it; `undefined` for a missing or a
 * deleted one.
 */
export async function checkFindSession({ store }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  if (store.findSession === undefined) return;
  const w = await seedWorld(store, 'find');
  assertSame(await store.findSession(w.session.id), await store.getSession(w.ws.id, w.session.id), 'findSession of a live Session');
  assert((await store.findSession(`${w.session.id}_missing`)) === undefined, 'findSession of a missing Session');
  assertSame(await store.transaction((tx) => tx.findSession!(w.session.id)), await store.getSession(w.ws.id, w.session.id), 'findSession inside a transaction');
  assert(await store.deleteSession(w.ws.id, w.session.id, T0 + 10), 'deleteSession');
  assert((await store.findSession(w.session.id)) === undefined, 'findSession of a deleted Session');
}
