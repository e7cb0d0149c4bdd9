/**
 * Recovery of Runs nobody executes any more (live-inbox.md "Model"; platform.md "Many processes"):
 * a Run left `running` by a process that is gone — with attempt leases, no live lease names it
 * (judged by the store's clock); without, it started before this instance was built — is ended
 * `failed` with a recorded reason, its open tool round closed with error results, and the durable
 * input its process committed but never ran gets its follow-up Run here. Lazily, inside the
 * transaction of the next input or start; eagerly, at start-up and in the periodic takeover check.
 */
import { runWriteRefusal } from '../policy/write-gate.js';
import type { NewSessionEvent, StoreTx } from '../ports/store.js';
import type { Run } from '../records.js';
import type { AttemptLeases } from './attempt-leases.js';
import { SESSION_EVENT_TYPES, type SessionLedger } from './ledger.js';
import { leftoverFailure, UNANSWERED } from './run-outcomes.js';
import type { RunSupervisorDeps } from './run-supervisor.js';
import type { KeyedLock } from './session-locks.js';
import type { RunStart } from './session-input.js';

/** Rows per page when recovery lists running Runs. */
const PAGE = 1000;

/** What recovery needs of the Run supervisor. */
export interface RecoveryRuns {
  /** When the supervisor was built (ms): without leases, Runs started at or before it by nobody here are leftovers. */
  readonly bootedAt: number;
  /** The supervisor's per-Session locks. */
  readonly locks: KeyedLock;
  /** Whether the supervisor executes `run` now. */
  isOurs(run: Run): boolean;
  /** Whether a follow-up Run may start here (not shutting down, an executor configured). */
  startsFollowUps(): boolean;
  /** Whether the supervisor still takes work (not shutting down). */
  open(): boolean;
  newRun(session_id: string, now: number): Run;
  insertRun(tx: StoreTx, run: Run): Promise<void>;
  /** Registers and starts a committed Run (after commit, under the Session's lock). */
  launch(start: RunStart): void;
}

/** Ends leftover Runs, and starts their follow-ups. */
export class RunRecovery {
  constructor(
    readonly deps: RunSupervisorDeps, readonly ledger: SessionLedger, readonly leases: AttemptLeases, readonly runs: RecoveryRuns,
  ) {}

  /**
   * Start-up recovery and the periodic takeover check; see `SessionRuntimeService.recoverStaleRuns`.
   * @returns how many Runs it ended.
   * @throws the store's error when a read or a transaction fails (Runs already ended stay ended).
   */
  async recoverStaleRuns(): Promise<number> {
    if (!(this.deps.recoverStaleRuns ?? true) || !this.runs.open()) return 0;
    const leased = this.leases.enabled;
    const seen = new Set<string>();
    let ended = 0;
    for (let limit = PAGE; ; limit += PAGE) {
      // Runs this call keeps (ours, leased elsewhere) stay listed; a growing limit pages past them.
      const rows = await this.deps.store.listRunningRuns(limit);
      // One read of the store's clock per page: a lease that expires meanwhile waits for the next pass.
      const now = leased ? await this.leases.now() : 0;
      for (const run of rows) {
        // Without leases, oldest first: from here on every Run started after this instance was built.
        if (!leased && run.started_at > this.runs.bootedAt) return ended;
        if (seen.has(run.id) || !this.#isLeftover(run)) continue;
        seen.add(run.id);
        // A live lease names it (read outside a transaction first: most Runs are healthy).
        if (leased && (await this.deps.store.findAttemptOwner(run.session_id, now))?.run_id === run.id) continue;
        if (await this.#recover(run)) ended++;
      }
      if (rows.length < limit) return ended;
    }
  }

  /**
   * The one rule of Run recovery (lazy in the supervisor's `sendEvents` and `startRun`, eager in {@link recoverStaleRuns}):
   * inside `tx` (holding the Session's lock), ends `run` `failed` when it is a leftover
   * ({@link #isLeftover}): with leases, no live lease names it (judged by the store's clock: its
   * process died, or lost the database, for longer than a lease); without, it started before this
   * instance was built. Returns `false` when the Run is not a leftover (it is left alone), else the
   * events to append: the `session.status_idle` `{ outcome: 'failed', error: LEFTOVER_FAILURE }`,
   * or none when another writer ended it first. Call under the Run's session lock.
   */
  async endLeftover(tx: StoreTx, run: Run, now: number): Promise<false | NewSessionEvent[]> {
    if (!this.#isLeftover(run) || (await this.leases.leased(tx, run))) return false;
    // A leftover of a process that is gone: nobody executes it any more. A tool round it left open
    // is closed with error results first, so the next Run's transcript is valid.
    if (!(await tx.endRun(run.id, 'failed', now))) return [];
    return [
      ...(await this.ledger.closeRound(tx, run.session_id, run.id, UNANSWERED.leftover, now)),
      this.ledger.idle(run.session_id, run.id, 'failed', now, leftoverFailure(this.leases.enabled)),
    ];
  }

  /** A running Run this instance may end if nobody executes it: not ours; with leases any other, else started before this instance existed. */
  #isLeftover(run: Run): boolean {
    if (this.runs.isOurs(run)) return false;
    return (this.deps.recoverStaleRuns ?? true) && (this.leases.enabled || run.started_at <= this.runs.bootedAt);
  }

  /**
   * Ends `run` if it is still running and a leftover ({@link endLeftover}), under the Session's
   * locks (this process's, then the row's), and starts the follow-up Run here for durable input its
   * dead process committed but never ran (the rule of a Run's end: input after its start and after
   * the last interrupt). Returns whether it ended the Run.
   */
  async #recover(run: Run): Promise<boolean> {
    return this.runs.locks.run(run.session_id, async () => {
      const session = await this.deps.store.findSession?.(run.session_id);
      const { events, next } = await this.deps.store.transaction(async (tx) => {
        // Input of another process for this Session waits for this end (or this end for it), so
        // the follow-up check below sees it or that input sees no running Run.
        if (session !== undefined) await tx.lockSession(session.workspace_id, session.id);
        const now = this.deps.clock.now();
        const running = await tx.getRunningRun(run.session_id);
        const pending = running?.id === run.id ? await this.endLeftover(tx, running, now) : false;
        if (pending === false || pending.length === 0) return { events: [], next: undefined };
        let next: RunStart | undefined;
        // The write gate: no follow-up Run in an archived project or Session. It runs on nobody's budget (the Runtime starts it).
        if (session !== undefined && this.runs.startsFollowUps() && (await runWriteRefusal(tx, session, 'run.start')) === null
          && (await this.ledger.hasDurableInputAfter(tx, session.id, await startSeqOf(tx, run)))) {
          const nextRun = this.runs.newRun(session.id, now);
          await this.runs.insertRun(tx, nextRun);
          pending.push(this.ledger.running(session.id, nextRun.id, now));
          next = { run: nextRun, session, startSeq: 0, release: () => {} };
        }
        const events = await tx.appendSessionEvents(pending);
        if (next !== undefined) next.startSeq = events[events.length - 1]?.seq ?? 0;
        return { events, next };
      });
      this.ledger.publish(events);
      if (next !== undefined) this.runs.launch(next);
      return events.length > 0;
    });
  }
}

/** The `seq` of `run`'s `session.status_running` event (0 when not found). */
async function startSeqOf(tx: StoreTx, run: Run): Promise<number> {
  const [opened] = await tx.listSessionEvents({ session_id: run.session_id, after: 0, order: 'desc', types: [SESSION_EVENT_TYPES.running], limit: 1 });
  return opened?.run_id === run.id ? opened.seq : 0;
}
