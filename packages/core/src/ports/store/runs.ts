/**
 * The Run sub-port of the storage port (`../store.ts`): Runs and their states, the store's clock,
 * and the attempt ownership leases that route Live Inbox requests between processes (live-inbox.md
 * "Scale (we go further)", platform.md "Many processes"). Conformance group `runs`.
 */
import type { Run, RunStatus } from '../../records.js';

/**
 * The change of {@link RunStore.updateRunStatus}: the new `status`, and for `idle` the `outcome`
 * and `ended_at` of the end.
 */
export type RunStatusChange =
  | { status: Exclude<RunStatus, 'idle'> }
  | { status: 'idle'; outcome: string; ended_at: number };

/**
 * Which server process hosts the active native attempt of a Session, as recorded in storage so
 * that other processes sharing the database can route Live Inbox requests to it (live-inbox.md
 * "Scale (we go further)", platform.md "Many processes"). At most one row per Session. A row whose `lease_expires_at` is not after "now" is
 * expired: it names nobody, and any host may claim the Session. "Now" is the store's clock
 * ({@link RunStore.now}) for every process, so the processes agree on which leases are live.
 */
export interface AttemptOwnership {
  session_id: string;
  /** The Run whose attempt the host executes. */
  run_id: string;
  /** The owning process (unique per process instance). */
  host_id: string;
  /** Base URL at which the owning process is reachable by its peers, e.g. `http://10.0.0.5:3000`. */
  host_url: string;
  /** ms since the epoch; the lease is live while `now < lease_expires_at`. */
  lease_expires_at: number;
}

/** Identifies one lease: the Session, the Run and the host that claimed it. */
export type AttemptOwnershipKey = Pick<AttemptOwnership, 'session_id' | 'run_id' | 'host_id'>;

/**
 * Runs of a Session and which process owns the active attempt (cross-process routing of the Live
 * Inbox, live-inbox.md "Scale"). Conformance group `runs`.
 */
export interface RunStore {
  /**
   * OPTIONAL (without it, the Runtime reads lease times from its own `Clock`, which is right only
   * when every process sharing the store reads one clock). The store's clock: the current time in
   * integer ms since the epoch, as the database reads it — PostgreSQL `clock_timestamp()` on the
   * server, the machine's clock for an embedded engine (every process on that machine reads it).
   * Every process sharing the store MUST get the same clock from it, whatever its own clock says:
   * leases are written and judged with it (platform.md "Many processes"), so a process whose clock
   * is skewed never ends a healthy Run nor lets two Runs of one Session run at once. Inside a
   * transaction it is the time of the call (not of the transaction's start). MUST NOT go back
   * between two calls by more than the database's own clock does.
   */
  now?(): Promise<number>;
  insertRun(run: Run): Promise<void>;
  /** The session's running Run, if any. */
  getRunningRun(session_id: string): Promise<Run | undefined>;
  /**
   * Every Run with status `running`, of every Session, oldest first (`started_at` ascending, then
   * `id` ascending in byte order), at most `limit` (a non-negative integer; 0 returns none). MUST
   * NOT return an ended Run. Used at start-up to end Runs left running by a dead process.
   */
  listRunningRuns(limit: number): Promise<Run[]>;
  /** Conditional: ends the Run only while it is `running`; returns whether it did. */
  endRun(run_id: string, outcome: string, at: number): Promise<boolean>;
  /**
   * OPTIONAL (without it the Runtime cannot park a Run on client tool results or confirmations:
   * such tool uses get an error result instead; live-inbox.md "Tools and boundaries").
   * Conditional status change: applies `change` to the Run only while its status is `from`
   * (`… WHERE id = ? AND status = ?`), and returns whether it did. MUST NOT be check-then-write:
   * of N concurrent calls with the same `from`, exactly one returns `true`. A Run moved to `idle`
   * gets `outcome` and `ended_at`; `running` ↔ `awaiting` changes only `status`.
   */
  updateRunStatus?(run_id: string, from: Exclude<RunStatus, 'idle'>, change: RunStatusChange): Promise<boolean>;
  /**
   * OPTIONAL (with {@link updateRunStatus}). The Session's Run with status `awaiting` (parked on
   * client tool results or confirmations), if any; at most one Run of a Session is `running` or
   * `awaiting` at a time.
   */
  getAwaitingRun?(session_id: string): Promise<Run | undefined>;
  /**
   * Conditional claim (`now` and `claim.lease_expires_at` read from {@link now} when the store has
   * it): records `claim` as the owner of `claim.session_id` only if the Session has
   * no ownership row, its row is expired (`lease_expires_at <= now`), or its row is held by the
   * same `host_id` (a host re-claiming for its next Run); the written row replaces the previous
   * one entirely. Returns `true` when `claim` was written, `false` when another host holds a live
   * lease (the stored row is left unchanged). MUST NOT be check-then-write: of N concurrent claims
   * by different hosts for a Session with no live owner, exactly one returns `true`.
   */
  claimAttemptOwnership(claim: AttemptOwnership, now: number): Promise<boolean>;
  /**
   * Conditional renewal: sets `lease_expires_at` only while the Session's row still names exactly
   * `key` (same `run_id` and `host_id`), whether or not the lease has expired meanwhile. Returns
   * whether it did; `false` means the lease was lost (released, or claimed by another host).
   */
  renewAttemptOwnership(key: AttemptOwnershipKey, lease_expires_at: number): Promise<boolean>;
  /**
   * Conditional release: removes the Session's row only while it names exactly `key`. Returns
   * whether it did; a lease already lost to another host is never removed.
   */
  releaseAttemptOwnership(key: AttemptOwnershipKey): Promise<boolean>;
  /**
   * The live owner of `session_id`: its row only if `lease_expires_at > now`, else `undefined`
   * (also for an expired row, which MUST be treated exactly as a missing one).
   */
  findAttemptOwner(session_id: string, now: number): Promise<AttemptOwnership | undefined>;
}
