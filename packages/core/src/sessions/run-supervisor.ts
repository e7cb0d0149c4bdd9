/**
 * The Run supervisor: durable Session input and the lifecycle of the Runs it starts — start in the
 * input's transaction, execution by the agent loop in the background, the end (`completed` |
 * `cancelled` | `failed`, with `session.status_idle`), the follow-up Run for input committed
 * meanwhile, interrupts, recovery of Runs a previous process left `running`, and shutdown. What is
 * committed goes through the {@link SessionLedger}; attempt ownership through {@link AttemptLeases}.
 * The carry-over of a cancelled attempt's queued Live Inbox input is the host's (`LiveInboxHost`).
 * Spec: live-inbox.md ("Model", "Drain, commit, carry-over"); the rules are documented on
 * `SessionRuntimeService`.
 */
import type { Principal, RequestContext } from '../context.js';
import { RunBudget } from '../caller-budgets.js';
import { InboxKitError, isInboxKitError } from '../errors.js';
import { isModelError, runNativeAttempt, type NativeAttemptResult } from '../live-inbox/agent-loop.js';
import type { NewSessionEvent, StoreTx } from '../ports/store.js';
import type { Run, Session, SessionEvent } from '../records.js';
import { gateSessionWrite, runWriteRefusal } from '../policy/write-gate.js';
import type { AttemptLeases } from './attempt-leases.js';
import { SESSION_EVENT_TYPES, type SessionLedger } from './ledger.js';
import { parseSendSessionEvents, type SendSessionEventsInput } from './schemas.js';
import type { SessionRuntimeDeps } from './service.js';

/** What the Run supervisor needs (the Runtime's dependencies without `routing`). */
export type RunSupervisorDeps = Omit<SessionRuntimeDeps, 'routing'>;

/**
 * What a failed Run records on its `session.status_idle` event (`content.error`): a
 * {@link ModelError}'s own `type` and `message` (the model's words, meant for Session readers);
 * any other cause (a ledger or store failure, a model bug) as `api_error` with a fixed message, so
 * no internal detail reaches a reader. The cause itself goes to `onRunError`.
 */
export interface RunFailure {
  type: string;
  message: string;
}

interface ActiveRun {
  run: Run;
  session: Session;
  /** `seq` of the Run's `session.status_running` event: its transcript is the history up to it. */
  startSeq: number;
  controller: AbortController;
  done: Promise<void>;
  /** Gives back the caller's Run budget slot (held by the Run and the follow-ups it hands it to). */
  release: () => void;
}

/** A Run the start transaction created, launched after commit. */
interface RunStart {
  run: Run;
  session: Session;
  startSeq: number;
  /** The Run budget slot of the caller whose input started the chain. */
  release: () => void;
}

/** Rows per page when recovery lists running Runs. */
const PAGE = 1000;

/** Runs of this process: started by durable input, executed in the background, ended in storage. */
export class RunSupervisor {
  readonly #deps: RunSupervisorDeps;
  readonly #ledger: SessionLedger;
  readonly #leases: AttemptLeases;
  /** Runs this instance executes, by session id. */
  readonly #active = new Map<string, ActiveRun>();
  /** Per-session serialisation of the start/end decisions (so no durable input is missed). */
  readonly #locks = new Map<string, Promise<void>>();
  #closed = false;
  /** When this instance was built (ms): Runs started at or before it by nobody here are leftovers. */
  readonly #bootedAt: number;
  /** Runs running at once per account and per API key (`deps.budgets`). */
  readonly #budget: RunBudget;

  constructor(deps: RunSupervisorDeps, ledger: SessionLedger, leases: AttemptLeases) {
    this.#deps = deps;
    this.#ledger = ledger;
    this.#leases = leases;
    this.#bootedAt = deps.clock.now();
    this.#budget = new RunBudget(deps.budgets);
  }

  /**
   * Refuses a caller at its Run budget without taking a slot (a create with initial input checks
   * it before writing the Session). @throws InboxKitError `too_many_runs` (429).
   */
  assertRunBudget(principal: Principal): void {
    if (!this.#budget.allows(principal)) this.#budget.claim(principal);
  }

  /**
   * Durable input (`POST /v1/sessions/{id}/events`); see `SessionRuntimeService.sendEvents`.
   * @throws InboxKitError `validation_error`, `unsupported_capability`, `session_not_found`,
   *   `permission_denied`, `project_archived`, `session_archived`, `too_many_runs`, `overloaded`.
   */
  async sendEvents(ctx: RequestContext, session_id: string, input: SendSessionEventsInput): Promise<{ data: SessionEvent[] }> {
    const body = parseSendSessionEvents(input);
    if (this.#closed) throw new InboxKitError('overloaded', 'The runtime is shutting down; retry later');
    return this.#withSessionLock(session_id, async () => {
      // The caller's Run budget slot, taken (inside the transaction) only when this input starts a Run.
      let slot: (() => void) | undefined;
      const { events, start, interruptRunId } = await this.#deps.store.transaction(async (tx) => {
        // The write gate: an archived project or Session takes no message; an interrupt may still stop a Run.
        const access = await gateSessionWrite(tx, ctx.principal, session_id, body.events.some((e) => e.type === 'user.message') ? 'session.message' : 'session.interrupt');
        const session = access.session;
        const now = this.#deps.clock.now();
        const pending: NewSessionEvent[] = [];
        const stored: SessionEvent[] = [];
        const flush = async () => {
          if (pending.length > 0) stored.push(...(await tx.appendSessionEvents(pending.splice(0))));
        };

        let running = await tx.getRunningRun(session.id);
        if (running !== undefined) {
          const recovered = await this.#endLeftover(tx, running, now);
          if (recovered !== false) {
            pending.push(...recovered);
            running = undefined;
          }
        }
        let start: RunStart | undefined;
        let interruptRunId: string | undefined;
        for (const event of body.events) {
          if (event.type === 'user.interrupt') {
            const target = start?.run ?? running;
            pending.push(this.#ledger.interrupt(session.id, target?.id ?? null, now));
            if (target !== undefined) interruptRunId = target.id;
            continue;
          }
          const startsRun = start === undefined && running === undefined;
          // Over the caller's Run budget: 429 `too_many_runs`, and the transaction writes nothing.
          if (startsRun) slot ??= this.#budget.claim(ctx.principal);
          const run: Run | undefined = startsRun ? this.#newRun(session.id, now) : undefined;
          pending.push(await this.#ledger.message(tx, session, { role: 'user', run_id: run?.id ?? null, message_id: null, content: event.content }, now));
          if (run !== undefined) {
            await tx.insertRun(run);
            pending.push(this.#ledger.running(session.id, run.id, now));
            await flush();
            const startSeq = stored[stored.length - 1]?.seq ?? 0;
            start = { run, session, startSeq, release: slot! };
          }
        }
        await flush();
        return { events: stored, start, interruptRunId };
      }).catch((error: unknown) => {
        slot?.();
        throw error;
      });
      this.#ledger.publish(events);
      if (start !== undefined) this.#launch(start);
      if (interruptRunId !== undefined) {
        const active = this.#active.get(session_id);
        if (active !== undefined && active.run.id === interruptRunId) {
          active.controller.abort(new Error('The Run was interrupted by a user.interrupt event'));
        }
      }
      return { data: events.filter((e) => e.type === SESSION_EVENT_TYPES.userMessage || e.type === SESSION_EVENT_TYPES.userInterrupt) };
    });
  }

  /**
   * Start-up recovery; see `SessionRuntimeService.recoverStaleRuns`.
   * @returns how many Runs it ended.
   * @throws the store's error when a read or a transaction fails (Runs already ended stay ended).
   */
  async recoverStaleRuns(): Promise<number> {
    if (!(this.#deps.recoverStaleRuns ?? true)) return 0;
    const seen = new Set<string>();
    let ended = 0;
    for (let limit = PAGE; ; limit += PAGE) {
      // Runs this call keeps (ours, leased elsewhere) stay listed; a growing limit pages past them.
      const rows = await this.#deps.store.listRunningRuns(limit);
      for (const run of rows) {
        // Oldest first: from here on every Run started after this instance was built.
        if (run.started_at > this.#bootedAt) return ended;
        if (seen.has(run.id)) continue;
        seen.add(run.id);
        const events = await this.#withSessionLock(run.session_id, () =>
          this.#deps.store.transaction(async (tx) => {
            const recovered = await this.#endLeftover(tx, run, this.#deps.clock.now());
            return recovered === false || recovered.length === 0 ? [] : tx.appendSessionEvents(recovered);
          }));
        if (events.length > 0) ended++;
        this.#ledger.publish(events);
      }
      if (rows.length < limit) return ended;
    }
  }

  /** Whether this instance is executing a Run of `session_id` right now. */
  isRunning(session_id: string): boolean {
    return this.#active.has(session_id);
  }

  /** Resolves once this instance executes no Run of `session_id` (follow-up Runs included); never rejects. */
  async whenIdle(session_id: string): Promise<void> {
    for (let active = this.#active.get(session_id); active !== undefined; active = this.#active.get(session_id)) {
      await active.done;
    }
  }

  /** Graceful shutdown; see `SessionRuntimeService.close`. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    for (;;) {
      const runs = [...this.#active.values()];
      if (runs.length === 0) return;
      for (const r of runs) r.controller.abort(new Error('The runtime is shutting down'));
      await Promise.all(runs.map((r) => r.done));
    }
  }

  /**
   * The one rule of Run recovery (lazy in {@link sendEvents}, eager in {@link recoverStaleRuns}):
   * inside `tx`, ends `run` `failed` when it is a leftover of a previous process
   * ({@link #isLeftover}) whose attempt no other host holds a live lease on. Returns `false` when
   * the Run is not a leftover (it is left alone), else the events to append: the
   * `session.status_idle` `{ outcome: 'failed' }`, or none when another writer ended it first.
   * Call under the Run's session lock.
   */
  async #endLeftover(tx: StoreTx, run: Run, now: number): Promise<false | NewSessionEvent[]> {
    if (!this.#isLeftover(run) || (await this.#leases.heldElsewhere(tx, run, now))) return false;
    // A leftover of a previous process: nobody executes it any more.
    if (!(await tx.endRun(run.id, 'failed', now))) return [];
    return [this.#ledger.idle(run.session_id, run.id, 'failed', now)];
  }

  /** A running Run nobody executes any more: not ours, and started before this instance existed. */
  #isLeftover(run: Run): boolean {
    if (this.#active.get(run.session_id)?.run.id === run.id) return false;
    return (this.#deps.recoverStaleRuns ?? true) && run.started_at <= this.#bootedAt;
  }

  #newRun(session_id: string, now: number): Run {
    return { id: this.#deps.ids.next('run'), session_id, status: 'running', started_at: now, ended_at: null, outcome: null };
  }

  /** Registers and starts a Run committed by a transaction. Call under the session lock, after commit. */
  #launch(start: RunStart): void {
    const controller = new AbortController();
    const active: ActiveRun = { ...start, controller, done: Promise.resolve() };
    this.#active.set(start.session.id, active);
    active.done = this.#execute(active).catch((error: unknown) => {
      active.release();
      this.#runError(error, active);
    });
  }

  /** Executes a Run, then ends it (and maybe starts the follow-up) under the session lock. */
  async #execute(active: ActiveRun): Promise<void> {
    const { run, session } = active;
    let result: NativeAttemptResult;
    const release = await this.#leases.hold(session.id, run.id);
    try {
      const transcript = await this.#ledger.transcript(session.id, active.startSeq);
      result = await runNativeAttempt({
        host: this.#deps.host, model: this.#deps.model, ledger: this.#ledger.runLedger(session), session_id: session.id, run_id: run.id,
        transcript, signal: active.controller.signal,
      });
    } catch (error) {
      result = { status: 'failed', error, committed: [] };
    }
    await release();
    if (result.status === 'failed') this.#runError(result.error, active);
    await this.#withSessionLock(session.id, async () => {
      try {
        const { events, next } = await this.#deps.store.transaction(async (tx) => {
          // Durable input committed by another process for this Session waits for this end (or
          // this end waits for it), so the follow-up check below sees it or it sees no running Run.
          await tx.lockSession(session.workspace_id, session.id);
          const now = this.#deps.clock.now();
          const pending: NewSessionEvent[] = [];
          if (await tx.endRun(run.id, result.status, now)) {
            pending.push(this.#ledger.idle(session.id, run.id, result.status, now, result.status === 'failed' ? runFailureOf(result.error) : undefined));
          }
          let next: RunStart | undefined;
          // The write gate: no follow-up Run starts in an archived project or Session.
          if (!this.#closed && (await runWriteRefusal(tx, session, 'run.start')) === null && (await this.#ledger.hasDurableInputAfter(tx, session.id, active.startSeq))) {
            const nextRun = this.#newRun(session.id, now);
            await tx.insertRun(nextRun);
            pending.push(this.#ledger.running(session.id, nextRun.id, now));
            next = { run: nextRun, session, startSeq: 0, release: active.release };
          }
          const events = await tx.appendSessionEvents(pending);
          if (next !== undefined) next.startSeq = events[events.length - 1]?.seq ?? 0;
          return { events, next };
        });
        this.#ledger.publish(events);
        if (this.#active.get(session.id) === active) this.#active.delete(session.id);
        if (next !== undefined) this.#launch(next);
        else active.release();
      } catch (error) {
        // The Run stays `running` in storage; the next durable input ends it as a leftover.
        if (this.#active.get(session.id) === active) this.#active.delete(session.id);
        active.release();
        this.#runError(error, active);
      }
    });
  }

  #runError(error: unknown, active: ActiveRun): void {
    try {
      this.#deps.onRunError?.(error, { session_id: active.session.id, run_id: active.run.id });
    } catch {
      // A failing reporter must not break the Runtime.
    }
  }

  /** Runs `fn` after every earlier holder of `session_id`'s lock has finished (FIFO). */
  async #withSessionLock<T>(session_id: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.#locks.get(session_id) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => mine);
    this.#locks.set(session_id, tail);
    await previous;
    try {
      return await fn();
    } finally {
      release();
      if (this.#locks.get(session_id) === tail) this.#locks.delete(session_id);
    }
  }
}

function runFailureOf(error: unknown): RunFailure {
  if (isModelError(error)) return { type: error.type, message: error.message };
  // The write gate stopped the Run's commit: its project or Session was archived meanwhile.
  if (isInboxKitError(error) && (error.code === 'project_archived' || error.code === 'session_archived')) return { type: 'invalid_request_error', message: error.message };
  return { type: 'api_error', message: 'The Run failed on an internal error.' };
}
