/**
 * The Run supervisor: durable Session input and the lifecycle of the Runs it starts — start in the
 * input's transaction, execution by the agent loop in the background, the end (`completed` |
 * `cancelled` | `failed`, with `session.status_idle`), the follow-up Run for input committed
 * meanwhile, interrupts, recovery of Runs a previous process left `running`, and shutdown. What is
 * committed goes through the {@link SessionLedger}; attempt ownership through {@link AttemptLeases}.
 * The carry-over of a cancelled attempt's queued Live Inbox input is the host's (`LiveInboxHost`).
 * The parts it composes live beside it: one request's input (`session-input.ts`), opening an
 * attempt (`run-attempts.ts`), recovery of leftovers (`run-recovery.ts`), how an end is recorded
 * (`run-outcomes.ts`), the per-Session lock (`session-locks.ts`).
 * Spec: live-inbox.md ("Model", "Drain, commit, carry-over"); the rules are documented on
 * `SessionRuntimeService`.
 */
import type { Principal, RequestContext } from '../context.js';
import { RunBudget } from '../caller-budgets.js';
import { InboxKitError } from '../errors.js';
import { isToolUseLimitError } from '../live-inbox/agent-loop.js';
import type { LiveInboxBridge } from '../live-inbox/bridge.js';
import { contentSchema, type ContentBlock } from '../live-inbox/content.js';
import type { NewSessionEvent, StoreTx } from '../ports/store.js';
import type { Run, Session, SessionEvent } from '../records.js';
import { assertWrite, runWriteRefusal, sessionState } from '../policy/write-gate.js';
import { loadSessionAccess } from './access.js';
import type { AttemptLeases } from './attempt-leases.js';
import { nativeExecutor, type RunAttempt, type RunExecutor, type RunFinish, type RunHandle, type RunOutcome, type StartRunOptions } from './executor.js';
import type { SessionLedger } from './ledger.js';
import { RunAttempts } from './run-attempts.js';
import { RunRecovery } from './run-recovery.js';
import { KeyedLock } from './session-locks.js';
import { runFailureOf, UNANSWERED } from './run-outcomes.js';
import { parseSendSessionEvents, type SendSessionEventsInput } from './schemas.js';
import { applySessionDelete, applySessionInput, SENT_TYPES, type InputEffects, type InputRuns, type QueuedAtInterrupt, type RunStart } from './session-input.js';
import { parseOrThrow } from '../validation.js';
import { z } from 'zod';
import type { SessionRuntimeDeps } from './runtime-deps.js';

/** What the Run supervisor needs (the Runtime's dependencies without `routing`). */
export type RunSupervisorDeps = Omit<SessionRuntimeDeps, 'routing'>;

interface ActiveRun {
  run: Run;
  session: Session;
  /** `seq` of the Run's first `session.status_running` event: its transcript is the history up to it (plus its own commits). */
  startSeq: number;
  /** True when this attempt resumes a Run that parked on client tool results or confirmations. */
  resume: boolean;
  controller: AbortController;
  done: Promise<void>;
  /** Who executes the Run; its follow-up Run gets the same one (undefined: an application's Run without a background executor). */
  executor: RunExecutor | undefined;
  /** Set for a Run an application executes itself ({@link RunSupervisor.startRun}). */
  external?: { finish: (outcome: RunOutcome) => Promise<RunFinish> };
  /** Gives back the caller's Run budget slot (held by the Run and the follow-ups it hands it to). */
  release: () => void;
}

const startRunBody = z.object({ content: contentSchema.optional() }).strict();

/** Runs of this process: started by durable input, executed in the background, ended in storage. */
export class RunSupervisor {
  readonly #deps: RunSupervisorDeps;
  readonly #ledger: SessionLedger;
  readonly #leases: AttemptLeases;
  /** Runs this instance executes, by session id. */
  readonly #active = new Map<string, ActiveRun>();

  /** How many Runs this instance executes now. */
  get runningCount(): number {
    return this.#active.size;
  }
  /** Per-session serialisation of the start/end decisions (so no durable input is missed). */
  readonly #locks = new KeyedLock();
  #closed = false;
  /** When this instance was built (ms): Runs started at or before it by nobody here are leftovers. */
  readonly #bootedAt: number;
  /** The executor of Runs started by durable input (undefined: durable input starts no Run). */
  readonly #executor: RunExecutor | undefined;
  /** Runs running at once per account and per API key (`deps.budgets`). */
  readonly #budget: RunBudget;
  /** Opens the attempts of the Runs started here. */
  readonly #attempts: RunAttempts;
  /** What one request's durable input needs of this supervisor (see `applySessionInput`). */
  readonly #inputRuns: InputRuns;
  /** Ends the Runs nobody executes any more. */
  readonly #recovery: RunRecovery;

  constructor(deps: RunSupervisorDeps, ledger: SessionLedger, leases: AttemptLeases) {
    this.#deps = deps;
    this.#ledger = ledger;
    this.#leases = leases;
    this.#bootedAt = deps.clock.now();
    this.#executor = deps.executor ?? (deps.model !== undefined ? nativeExecutor(deps.model) : undefined);
    this.#budget = new RunBudget(deps.budgets);
    this.#attempts = new RunAttempts(deps, ledger, leases);
    this.#recovery = new RunRecovery(deps, ledger, leases, {
      bootedAt: this.#bootedAt, locks: this.#locks,
      isOurs: (run) => this.#active.get(run.session_id)?.run.id === run.id,
      startsFollowUps: () => !this.#closed && this.#executor !== undefined,
      open: () => !this.#closed,
      newRun: (session_id, now) => this.#newRun(session_id, now),
      insertRun: (tx, run) => this.#insertRun(tx, run),
      launch: (start) => this.#launch(start),
    });
    this.#inputRuns = {
      ledger, leases, host: deps.host, startsRuns: this.#executor !== undefined,
      claimBudget: (principal) => this.#budget.claim(principal),
      endLeftover: (tx, run, now) => this.#endLeftover(tx, run, now),
      takeQueued: (target, taken) => this.#takeQueued(target, taken),
      newRun: (session_id, now) => this.#newRun(session_id, now),
      insertRun: (tx, run) => this.#insertRun(tx, run),
    };
  }

  /** The executor of Runs started by durable input, if any. */
  get executor(): RunExecutor | undefined {
    return this.#executor;
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
    return this.#locks.run(session_id, async () => {
      const effects: InputEffects = { closedInboxes: [], carried: new Set(), takenCarryOver: false };
      const { events, start, interruptRunId } = await this.#deps.store.transaction(
        (tx) => applySessionInput(tx, this.#inputRuns, ctx.principal, session_id, body, () => this.#deps.clock.now(), effects),
      ).catch((error: unknown) => {
        effects.slot?.();
        // Not committed: what the interrupt took from a queue is carried over, never lost.
        for (const { handle, contents } of effects.closedInboxes) this.#deps.host.closeAttempt(handle, { undelivered: contents });
        throw error;
      });
      if (effects.takenCarryOver) this.#deps.host.takeCarryOver(session_id);
      this.#ledger.publish(events);
      if (start !== undefined) this.#launch(start);
      if (interruptRunId !== undefined) {
        const active = this.#active.get(session_id);
        if (active !== undefined && active.run.id === interruptRunId) {
          active.controller.abort(new Error('The Run was interrupted by a user.interrupt event'));
        }
      }
      return { data: events.filter((e) => SENT_TYPES.has(e.type) && !effects.carried.has(e.id)) };
    });
  }

  /** See `SessionRuntimeService.deleteSession`. */
  async deleteSession(ctx: RequestContext, session_id: string): Promise<void> {
    await this.#locks.run(session_id, async () => {
      const { events, sid } = await this.#deps.store.transaction((tx) => applySessionDelete(tx, this.#ledger, ctx.principal, session_id, () => this.#deps.clock.now()));
      this.#deps.host.takeCarryOver(sid);
      this.#ledger.publish(events);
    });
  }

  /**
   * Start-up recovery and the periodic takeover check; see `SessionRuntimeService.recoverStaleRuns`.
   * @returns how many Runs it ended.
   * @throws the store's error when a read or a transaction fails (Runs already ended stay ended).
   */
  recoverStaleRuns(): Promise<number> {
    return this.#recovery.recoverStaleRuns();
  }

  /** The lazy end of a leftover Run (see {@link RunRecovery.endLeftover}). */
  #endLeftover(tx: StoreTx, run: Run, now: number): Promise<false | NewSessionEvent[]> {
    return this.#recovery.endLeftover(tx, run, now);
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
      // An application's Run is ended here (cancelled) rather than waited for: its loop may never call finish.
      for (const r of runs) if (r.external !== undefined) void r.external.finish({ status: 'cancelled' });
      await Promise.all(runs.map((r) => r.done));
    }
  }

  /** Inserts a Run inside the transaction that starts it, with its lease (so it is never taken for a leftover). */
  async #insertRun(tx: StoreTx, run: Run): Promise<void> {
    await tx.insertRun(run);
    await this.#leases.claimForRun(tx, run);
  }

  /**
   * At a `user.interrupt` of `target`: when this instance executes it, closes its attempt's Live
   * Inbox now (the attempt then ends `cancelled`) and returns what it still queued, in queue order,
   * to commit ahead of the interrupt; `taken` records it, to carry over if the commit fails.
   */
  #takeQueued(target: Run | undefined, taken: QueuedAtInterrupt[]): ContentBlock[][] {
    if (target === undefined || this.#active.get(target.session_id)?.run.id !== target.id) return [];
    const handle = this.#deps.host.active(target.session_id);
    const inbox = handle?.run_id === target.id ? this.#deps.host.liveInbox(target.session_id) : undefined;
    if (handle === undefined || inbox === undefined) return [];
    const contents = inbox.close().map((m) => m.content);
    if (contents.length > 0) taken.push({ handle, contents });
    return contents;
  }

  #newRun(session_id: string, now: number): Run {
    return { id: this.#deps.ids.next('run'), session_id, status: 'running', started_at: now, ended_at: null, outcome: null };
  }

  /**
   * Registers and starts a Run committed (or resumed) by a transaction. Call under the session
   * lock, after commit. A resumed Run's new attempt starts once this instance's previous attempt
   * of the Session has finished its own bookkeeping (its lease released).
   */
  #launch(start: RunStart): void {
    const controller = new AbortController();
    const previous = this.#active.get(start.session.id);
    const active: ActiveRun = { ...start, resume: start.resume === true, controller, done: Promise.resolve(), executor: start.executor ?? this.#executor };
    this.#active.set(start.session.id, active);
    const after = previous === undefined ? Promise.resolve() : previous.done;
    active.done = after.then(() => this.#execute(active)).catch((error: unknown) => {
      active.release();
      this.#runError(error, active);
    });
  }

  /** Executes a Run's attempt with its executor, then ends the Run (and maybe starts the follow-up) under the session lock, unless it parked. */
  async #execute(active: ActiveRun): Promise<void> {
    const { run, session } = active;
    let result: RunOutcome;
    let bridge: LiveInboxBridge | undefined;
    const release = await this.#leases.hold(session.id, run.id);
    try {
      const executor = active.executor;
      if (executor === undefined) throw new Error('No executor for this Run');
      const attempt = await this.#attempts.open(active, executor, active.controller.signal);
      bridge = attempt.bridge;
      result = await executor.execute(attempt);
      if (result === null || typeof result !== 'object' || !['completed', 'cancelled', 'failed', 'awaiting'].includes(result.status)) {
        result = { status: 'failed', error: new TypeError(`executor ${executor.kind} answered no outcome`) };
      }
    } catch (error) {
      result = { status: active.controller.signal.aborted ? 'cancelled' : 'failed', error };
    } finally {
      bridge?.close();
    }
    await this.#end(active, result, release, bridge?.carried ?? 0);
  }

  /**
   * Ends `active`'s Run with `result` (or, `awaiting`, leaves it parked) under the session lock, and
   * starts the follow-up Run — durable input committed since the Run started, or input queued
   * after a completed Run's last drain (`carried`) — with the Run's executor. Releases the lease
   * once the end is committed. Returns whether it ended the Run and the follow-up's id.
   */
  async #end(active: ActiveRun, result: RunOutcome, release: (options?: { keep?: boolean }) => Promise<void>, carried: number): Promise<RunFinish> {
    const finish = await this.#endRun(active, result, release, carried);
    if (result.status === 'awaiting' || finish.ended) {
      try {
        this.#deps.onRunEnded?.({ session_id: active.session.id, run_id: active.run.id, outcome: result.status });
      } catch {
        // an observer's failure is its own
      }
    }
    return finish;
  }

  /** {@link #end} without telling `onRunEnded`. */
  async #endRun(active: ActiveRun, result: RunOutcome, release: (options?: { keep?: boolean }) => Promise<void>, carried: number): Promise<RunFinish> {
    const { run, session } = active;
    if (result.status === 'failed') this.#runError(result.error, active);
    const status = result.status;
    if (status === 'awaiting') {
      // Parked (the ledger recorded it): nobody executes the Run until the client answers. The
      // lease goes unless the Run was resumed here meanwhile (its next attempt keeps it).
      let resumedHere = false;
      await this.#locks.run(session.id, async () => {
        const current = this.#active.get(session.id);
        resumedHere = current !== undefined && current !== active && current.run.id === run.id;
        if (current === active) this.#active.delete(session.id);
      });
      await release(resumedHere ? { keep: true } : undefined);
      // A parked Run holds no Run budget slot: its resume takes one again.
      active.release();
      return { ended: false, follow_up_run_id: null };
    }
    let outcome: RunFinish = { ended: false, follow_up_run_id: null };
    // The lease is released once the end is committed: until then no other process may take the Run for a leftover.
    await this.#locks.run(session.id, async () => {
      try {
        const executor = active.executor ?? this.#executor;
        const { events, next, ended } = await this.#deps.store.transaction(async (tx) => {
          // Durable input committed by another process for this Session waits for this end (or
          // this end waits for it), so the follow-up check below sees it or it sees no running Run.
          // The write gate (\`run.end\`, under the Session's lock): a Run ends in any project or
          // Session state (archived included), never in a deleted Session.
          const refusal = await runWriteRefusal(tx, session, 'run.end', run.id);
          const now = this.#deps.clock.now();
          const pending: NewSessionEvent[] = [];
          const ended = refusal === null && (await tx.endRun(run.id, status, now));
          if (ended) {
            // Every tool use of an ended Run has its result (interrupted or failed mid-round: an error).
            pending.push(...(await this.#ledger.closeRound(tx, session.id, run.id, UNANSWERED[status], now)));
            if (status === 'failed' && isToolUseLimitError(result.error)) {
              pending.push(this.#ledger.error(session.id, run.id, { type: result.error.type, message: result.error.message }, now));
            }
            pending.push(this.#ledger.idle(session.id, run.id, status, now, status === 'failed' ? runFailureOf(result.error) : undefined,
              status === 'completed' && result.stop_reason === 'refusal' ? { type: 'refusal' } : undefined));
          }
          let next: RunStart | undefined;
          const more = (ended && status === 'completed' && carried > 0) || (await this.#ledger.hasDurableInputAfter(tx, session.id, active.startSeq));
          // The write gate (\`run.start\`: no Run running, project and Session not archived): no follow-up Run starts in an archived project or Session.
          if (!this.#closed && executor !== undefined && more && (await runWriteRefusal(tx, session, 'run.start')) === null) {
            const nextRun = this.#newRun(session.id, now);
            await this.#insertRun(tx, nextRun);
            pending.push(this.#ledger.running(session.id, nextRun.id, now));
            next = { run: nextRun, session, startSeq: 0, executor, release: active.release };
          }
          const events = await tx.appendSessionEvents(pending);
          if (next !== undefined) next.startSeq = events[events.length - 1]?.seq ?? 0;
          return { events, next, ended };
        });
        this.#ledger.publish(events);
        if (this.#active.get(session.id) === active) this.#active.delete(session.id);
        if (next !== undefined) this.#launch(next);
        else active.release();
        outcome = { ended, follow_up_run_id: next?.run.id ?? null };
      } catch (error) {
        // The Run stays `running` in storage; the next durable input ends it as a leftover.
        if (this.#active.get(session.id) === active) this.#active.delete(session.id);
        active.release();
        this.#runError(error, active);
      }
    });
    await release();
    return outcome;
  }

  /**
   * Starts a Run of a Session that the application executes itself — in its own request handler,
   * on its own loop (see `SessionRuntimeService.startRun`). Spec: live-inbox.md "Run executors".
   * @throws InboxKitError `validation_error` (400: bad content, or nothing to run),
   *   `session_not_found` (404), `permission_denied` (403), `project_archived` / `session_archived`
   *   (409), `session_running` (409: a Run is running or awaits tool results), `overloaded` (503:
   *   shutting down).
   */
  async startRun(ctx: RequestContext, session_id: string, options: StartRunOptions = {}): Promise<RunHandle> {
    const body = parseOrThrow(startRunBody, { ...(options.content !== undefined ? { content: options.content } : {}) }, 'run');
    if (this.#closed) throw new InboxKitError('overloaded', 'The runtime is shutting down; retry later');
    return this.#locks.run(session_id, async () => {
      // The caller's Run budget slot, taken inside the transaction (over it: 429, nothing written).
      let slot: (() => void) | undefined;
      const { events, start } = await this.#deps.store.transaction(async (tx) => {
        // Locked (project, then Session). A leftover Run (its process is gone) is ended first, so
        // the write gate (\`session.run.start\`) decides on the Run state as it is now.
        const access = await loadSessionAccess(tx, ctx.principal, session_id, { lock: true });
        const session = access.session;
        const now = this.#deps.clock.now();
        const pending: NewSessionEvent[] = [];
        let running = await tx.getRunningRun(session.id);
        if (running !== undefined) {
          const recovered = await this.#endLeftover(tx, running, now);
          if (recovered !== false) {
            pending.push(...recovered);
            running = undefined;
          }
        }
        const awaiting = running === undefined ? await tx.getAwaitingRun?.(session.id) : undefined;
        // The write gate: the owner's (or, outside projects, the workspace's); not in an archived
        // project or Session; not while a Run runs or is parked (409 session_running).
        assertWrite('session.run.start', access.role, sessionState(session, access.project, running ? 'running' : awaiting ? 'awaiting' : 'idle'));
        if (body.content === undefined && !(await this.#ledger.hasDurableInputAfter(tx, session.id, await this.#ledger.lastRunStartSeq(tx, session.id)))) {
          throw new InboxKitError('validation_error', 'Nothing to run: give content, or send a user.message first', [{ path: 'content', message: 'required: the Session holds no input a Run has not run' }]);
        }
        // The same Run budget as Runs started by durable input (per account and API key).
        slot ??= this.#budget.claim(ctx.principal);
        const run = this.#newRun(session.id, now);
        if (body.content !== undefined) pending.push(await this.#ledger.message(tx, session, { role: 'user', run_id: run.id, message_id: null, content: body.content }, now));
        await this.#insertRun(tx, run);
        pending.push(this.#ledger.running(session.id, run.id, now));
        const events = await tx.appendSessionEvents(pending);
        return { events, start: { run, session, startSeq: events[events.length - 1]?.seq ?? 0, release: slot } };
      }).catch((error: unknown) => {
        slot?.();
        throw error;
      });
      this.#ledger.publish(events);
      const controller = new AbortController();
      let resolveDone!: () => void;
      const done = new Promise<void>((resolve) => (resolveDone = resolve));
      const active: ActiveRun = { ...start, resume: false, controller, done, executor: options.executor ?? this.#executor };
      this.#active.set(start.session.id, active);
      const release = await this.#leases.hold(start.session.id, start.run.id);
      let attempt: RunAttempt;
      try {
        attempt = await this.#attempts.open(active, undefined, controller.signal);
      } catch (error) {
        await this.#end(active, { status: 'failed', error }, release, 0);
        resolveDone();
        throw error;
      }
      let finishing: Promise<RunFinish> | undefined;
      const finish = (outcome: RunOutcome): Promise<RunFinish> => {
        finishing ??= (async () => {
          attempt.bridge.close();
          const valid = outcome !== null && typeof outcome === 'object' && ['completed', 'cancelled', 'failed'].includes(outcome.status);
          const result: RunOutcome = valid ? outcome : { status: 'failed', error: new TypeError(`finish: an outcome is completed, cancelled or failed, got ${JSON.stringify(outcome?.status)}`) };
          try {
            return await this.#end(active, result, release, attempt.bridge.carried);
          } finally {
            resolveDone();
          }
        })();
        return finishing;
      };
      active.external = { finish };
      return { ...attempt, finish };
    });
  }

  #runError(error: unknown, active: ActiveRun): void {
    try {
      this.#deps.onRunError?.(error, { session_id: active.session.id, run_id: active.run.id });
    } catch {
      // A failing reporter must not break the Runtime.
    }
  }

}
