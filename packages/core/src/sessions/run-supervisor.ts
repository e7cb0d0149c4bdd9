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
import { isModelError, isToolUseLimitError } from '../live-inbox/agent-loop.js';
import { LiveInboxBridge, type RunLedger, type RunLedgerPark, type RunLedgerParkOutcome, type TranscriptMessage } from '../live-inbox/bridge.js';
import { contentSchema, type ContentBlock } from '../live-inbox/content.js';
import type { AttemptHandle } from '../live-inbox/registry.js';
import type { OpenRound, Tool, ToolUseResolution } from '../live-inbox/tools.js';
import type { NewSessionEvent, StoreTx } from '../ports/store.js';
import type { JsonValue, Run, Session, SessionEvent } from '../records.js';
import { assertWrite, gateRunWrite, gateSessionWrite, runWriteRefusal, sessionState } from '../policy/write-gate.js';
import { loadSessionAccess } from './access.js';
import type { AttemptLeases } from './attempt-leases.js';
import { nativeExecutor, type RunAttempt, type RunExecutor, type RunOutcome } from './executor.js';
import { SESSION_EVENT_TYPES, type SessionLedger } from './ledger.js';
import { clientToolsOf, systemOf, type RunOptions } from './managed-agents.js';
import { parseSendSessionEvents, type SendSessionEventsInput } from './schemas.js';
import { parseOrThrow } from '../validation.js';
import { z } from 'zod';
import type { SessionRuntimeDeps } from './service.js';
import { isPending, type LedgerRound } from './tool-rounds.js';

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

/**
 * A Run an application executes in its own request handler ({@link RunSupervisor.startRun}): the
 * {@link RunAttempt} (transcript, open bridge, signal, the Run's tools and options) plus
 * {@link RunHandle.finish}. Spec: live-inbox.md "Run executors".
 */
export interface RunHandle extends RunAttempt {
  /**
   * Ends the Run with `outcome` (once; later calls answer the first result): closes the bridge
   * (carry-over), commits the Run's end (`session.status_idle`), releases its lease, and starts the
   * follow-up Run for durable input sent meanwhile (or input queued after the last drain) with the
   * Run's executor — when there is one (`startRun`'s `executor`, else the Runtime's).
   * @returns `ended` (false when the Run had already been ended, e.g. taken for a leftover) and the
   *   follow-up Run's id, or null.
   */
  finish(outcome: RunOutcome): Promise<RunFinish>;
}

/** What {@link RunHandle.finish} did. */
export interface RunFinish {
  ended: boolean;
  follow_up_run_id: string | null;
}

/** Options of {@link RunSupervisor.startRun}. */
export interface StartRunOptions {
  /** The Run's input, committed as a durable `user.message` of the Run in the start's transaction. Optional when the Session holds durable input no Run has run yet. */
  content?: ContentBlock[];
  /** Who executes the Run's follow-up Runs (durable input sent during this one); default the Runtime's executor. */
  executor?: RunExecutor;
}

const startRunBody = z.object({ content: contentSchema.optional() }).strict();

/** A Run the start transaction created (or resumed), launched after commit. */
interface RunStart {
  run: Run;
  session: Session;
  startSeq: number;
  resume?: boolean;
  /** Default the Runtime's executor. */
  executor?: RunExecutor | undefined;
  /** The Run budget slot of the caller whose input started (or resumed) the chain. */
  release: () => void;
}

/** The error result given to every tool use of a Run that ends without one, by outcome. */
const UNANSWERED: Record<'cancelled' | 'failed' | 'completed' | 'leftover', string> = {
  cancelled: 'The Run was interrupted before this call got a result.',
  failed: 'The Run failed before this call got a result.',
  completed: 'The Run ended before this call got a result.',
  leftover: 'The Run ended before this call got a result: the process running it stopped.',
};

const toolUseNotFound = (id: string, path: string) =>
  new InboxKitError('tool_use_not_found', `No tool use ${JSON.stringify(id)} of this Session's Run waits for an answer`, [{ path, message: 'unknown tool use id' }]);

/** What an interrupt took from a queue (see `#takeQueued`). */
interface QueuedAtInterrupt {
  handle: AttemptHandle;
  contents: ContentBlock[][];
}

/** Rows per page when recovery lists running Runs. */
const PAGE = 1000;

/** The input event types `sendEvents` answers with. */
const SENT_TYPES = new Set<string>([
  SESSION_EVENT_TYPES.userMessage, SESSION_EVENT_TYPES.userInterrupt, SESSION_EVENT_TYPES.userCustomToolResult, SESSION_EVENT_TYPES.userToolConfirmation,
]);

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
  readonly #locks = new Map<string, Promise<void>>();
  #closed = false;
  /** When this instance was built (ms): Runs started at or before it by nobody here are leftovers. */
  readonly #bootedAt: number;
  /** The executor of Runs started by durable input (undefined: durable input starts no Run). */
  readonly #executor: RunExecutor | undefined;
  /** Runs running at once per account and per API key (`deps.budgets`). */
  readonly #budget: RunBudget;

  constructor(deps: RunSupervisorDeps, ledger: SessionLedger, leases: AttemptLeases) {
    this.#deps = deps;
    this.#ledger = ledger;
    this.#leases = leases;
    this.#bootedAt = deps.clock.now();
    this.#executor = deps.executor ?? (deps.model !== undefined ? nativeExecutor(deps.model) : undefined);
    this.#budget = new RunBudget(deps.budgets);
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
    return this.#withSessionLock(session_id, async () => {
      // The caller's Run budget slot, taken (inside the transaction) only when this input starts or resumes a Run.
      let slot: (() => void) | undefined;
      const closedInboxes: QueuedAtInterrupt[] = [];
      /** Ids of the events of queued input an interrupt committed (not receipts of this request). */
      const carried = new Set<string>();
      /** An interrupt of a parked Run committed the Session's carry-over: drop it from the host after commit. */
      let takenCarryOver = false;
      const { events, start, interruptRunId } = await this.#deps.store.transaction(async (tx) => {
        // The write gate: an archived project or Session takes no new input (messages, tool
        // results, confirmations); an interrupt may still stop a Run.
        const input = body.events.some((e) => e.type !== 'user.interrupt');
        const access = await gateSessionWrite(tx, ctx.principal, session_id, input ? 'session.message' : 'session.interrupt');
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
        let awaiting = running === undefined ? await tx.getAwaitingRun?.(session.id) : undefined;
        /** The last tool round of the running or awaiting Run, read once, then kept up to date here. */
        let round: LedgerRound | undefined | null = null;
        const roundOf = async (run: Run): Promise<LedgerRound | undefined> => {
          if (round === null) round = await this.#ledger.lastRound(tx, session.id, run.id);
          return round;
        };
        let start: RunStart | undefined;
        let interruptRunId: string | undefined;
        for (const [index, event] of body.events.entries()) {
          if (event.type === 'user.interrupt') {
            const target = start?.run ?? running ?? awaiting;
            // What the interrupted attempt still queues here is committed first (acknowledgement order);
            // for a parked Run, what its closed attempt left to carry over.
            const queuedContents = target !== undefined && target === awaiting ? this.#deps.host.pendingCarryOver(session.id) : this.#takeQueued(target, closedInboxes);
            if (target !== undefined && target === awaiting && queuedContents.length > 0) takenCarryOver = true;
            for (const content of queuedContents) {
              const queued = await this.#ledger.message(tx, session, { role: 'user', run_id: null, message_id: null, content }, now);
              carried.add(queued.id);
              pending.push(queued);
            }
            pending.push(this.#ledger.interrupt(session.id, target?.id ?? null, now));
            if (target !== undefined && target === awaiting) {
              // A parked Run has no attempt to abort: it ends here, its round closed with error results.
              await flush();
              const closing = await this.#ledger.closeRound(tx, session.id, target.id, UNANSWERED.cancelled, now);
              if (await tx.updateRunStatus!(target.id, 'awaiting', { status: 'idle', outcome: 'cancelled', ended_at: now })) {
                pending.push(...closing, this.#ledger.idle(session.id, target.id, 'cancelled', now));
              }
              awaiting = undefined;
              round = null;
            } else if (target !== undefined) interruptRunId = target.id;
            continue;
          }
          if (event.type === 'user.custom_tool_result' || event.type === 'user.tool_confirmation') {
            const run = start?.run ?? running ?? awaiting;
            const id = event.type === 'user.custom_tool_result' ? event.custom_tool_use_id : event.tool_use_id;
            const path = `events.${index}.${event.type === 'user.custom_tool_result' ? 'custom_tool_use_id' : 'tool_use_id'}`;
            const current = run === undefined ? undefined : await roundOf(run);
            const use = current?.tool_uses.find((u) => u.block.id === id);
            if (run === undefined || current === undefined || use === undefined) throw toolUseNotFound(id, path);
            const custom = use.disposition.kind === 'custom';
            const asks = use.disposition.kind === 'host' && use.disposition.permission === 'ask';
            if (event.type === 'user.custom_tool_result' ? !custom : !asks) {
              throw new InboxKitError('validation_error', event.type === 'user.custom_tool_result'
                ? `${id} is not a custom tool use (agent.custom_tool_use): answer it with the event its type asks for`
                : `${id} is not a tool use that asks for confirmation (agent.tool_use with evaluated_permission "ask")`, [{ path, message: 'wrong kind of tool use for this event' }]);
            }
            if (!isPending(use)) {
              throw new InboxKitError('tool_use_already_resolved', `Tool use ${id} was answered already`, [{ path, message: 'already answered' }]);
            }
            const resolution: ToolUseResolution = event.type === 'user.custom_tool_result'
              ? { type: 'custom_result', content: event.content ?? [], is_error: event.is_error === true }
              : { type: 'confirmation', result: event.result, deny_message: event.deny_message ?? null };
            const content: JsonValue = event.type === 'user.custom_tool_result'
              ? { custom_tool_use_id: id, content: (event.content ?? []) as unknown as JsonValue, is_error: event.is_error === true }
              : { tool_use_id: id, result: event.result, deny_message: event.deny_message ?? null };
            pending.push(this.#ledger.answer(session.id, run.id, event.type, content, now));
            use.resolution = resolution;
            if (resolution.type === 'custom_result') use.result = { type: 'tool_result', tool_use_id: id, content: resolution.content, is_error: resolution.is_error };
            current.pending = current.tool_uses.filter(isPending).map((u) => u.block.id);
            if (run === awaiting) {
              if (current.pending.length > 0) {
                // Partly answered: the Session stays idle, waiting for the rest.
                pending.push(this.#ledger.idle(session.id, run.id, null, now, undefined, { type: 'requires_action', event_ids: [...current.pending] }));
              } else if (await tx.updateRunStatus!(run.id, 'awaiting', { status: 'running' })) {
                // All answered: the same Run goes on, in a new attempt, after commit — leased from
                // this transaction on, like a Run that starts (no process takes it for a leftover).
                await this.#leases.claimForRun(tx, run);
                pending.push(this.#ledger.running(session.id, run.id, now));
                running = { ...run, status: 'running' };
                awaiting = undefined;
                // Executed again: the caller's Run budget (over it, 429 `too_many_runs` and nothing is written).
                slot ??= this.#budget.claim(ctx.principal);
                start = { run: running, session, startSeq: await this.#ledger.runStartSeq(tx, session.id, run.id), resume: true, release: slot };
              }
            }
            continue;
          }
          const active = running ?? awaiting;
          if (active !== undefined && start?.resume !== true) {
            const waiting = (await roundOf(active))?.pending ?? [];
            if (waiting.length > 0) {
              throw new InboxKitError('actions_pending', `The Run waits for tool results or confirmations (${waiting.join(', ')}): send user.custom_tool_result / user.tool_confirmation events for them first (in this request or an earlier one), or a user.interrupt`,
                waiting.map((id) => ({ path: `events.${index}`, message: `tool use ${id} is pending`, code: id })));
            }
          }
          const startsRun = start === undefined && running === undefined && awaiting === undefined && this.#executor !== undefined;
          // Over the caller's Run budget: 429 `too_many_runs`, and the transaction writes nothing.
          if (startsRun) slot ??= this.#budget.claim(ctx.principal);
          const run: Run | undefined = startsRun ? this.#newRun(session.id, now) : undefined;
          pending.push(await this.#ledger.message(tx, session, { role: 'user', run_id: run?.id ?? null, message_id: null, content: event.content }, now));
          if (run !== undefined) {
            await this.#insertRun(tx, run);
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
        // Not committed: what the interrupt took from a queue is carried over, never lost.
        for (const { handle, contents } of closedInboxes) this.#deps.host.closeAttempt(handle, { undelivered: contents });
        throw error;
      });
      if (takenCarryOver) this.#deps.host.takeCarryOver(session_id);
      this.#ledger.publish(events);
      if (start !== undefined) this.#launch(start);
      if (interruptRunId !== undefined) {
        const active = this.#active.get(session_id);
        if (active !== undefined && active.run.id === interruptRunId) {
          active.controller.abort(new Error('The Run was interrupted by a user.interrupt event'));
        }
      }
      return { data: events.filter((e) => SENT_TYPES.has(e.type) && !carried.has(e.id)) };
    });
  }

  /** See `SessionRuntimeService.deleteSession`. */
  async deleteSession(ctx: RequestContext, session_id: string): Promise<void> {
    await this.#withSessionLock(session_id, async () => {
      const { events, sid } = await this.#deps.store.transaction(async (tx) => {
        // Locked (project, then Session): a Run starting concurrently (sendEvents holds the same
        // locks) either commits first, and this sees it running, or waits and then finds no Session.
        // The write gate (\`session.delete\`): the owner's, refused while a Run runs (409 session_running).
        const access = await gateSessionWrite(tx, ctx.principal, session_id, 'session.delete');
        const session = access.session;
        const now = this.#deps.clock.now();
        const pending: NewSessionEvent[] = [];
        const awaiting = await tx.getAwaitingRun?.(session.id);
        if (awaiting !== undefined) {
          // Executed by nobody, waiting for answers that can no longer come: it ends with the Session.
          const closing = await this.#ledger.closeRound(tx, session.id, awaiting.id, UNANSWERED.cancelled, now);
          if (await tx.updateRunStatus!(awaiting.id, 'awaiting', { status: 'idle', outcome: 'cancelled', ended_at: now })) {
            pending.push(...closing, this.#ledger.idle(session.id, awaiting.id, 'cancelled', now));
          }
        }
        const events = pending.length > 0 ? await tx.appendSessionEvents(pending) : [];
        if (!(await tx.deleteSession(session.workspace_id, session.id, now))) throw new InboxKitError('session_not_found', 'Session not found');
        return { events, sid: session.id };
      });
      this.#deps.host.takeCarryOver(sid);
      this.#ledger.publish(events);
    });
  }

  /**
   * Start-up recovery and the periodic takeover check; see `SessionRuntimeService.recoverStaleRuns`.
   * @returns how many Runs it ended.
   * @throws the store's error when a read or a transaction fails (Runs already ended stay ended).
   */
  async recoverStaleRuns(): Promise<number> {
    if (!(this.#deps.recoverStaleRuns ?? true) || this.#closed) return 0;
    const leased = this.#leases.enabled;
    const seen = new Set<string>();
    let ended = 0;
    for (let limit = PAGE; ; limit += PAGE) {
      // Runs this call keeps (ours, leased elsewhere) stay listed; a growing limit pages past them.
      const rows = await this.#deps.store.listRunningRuns(limit);
      // One read of the store's clock per page: a lease that expires meanwhile waits for the next pass.
      const now = leased ? await this.#leases.now() : 0;
      for (const run of rows) {
        // Without leases, oldest first: from here on every Run started after this instance was built.
        if (!leased && run.started_at > this.#bootedAt) return ended;
        if (seen.has(run.id) || !this.#isLeftover(run)) continue;
        seen.add(run.id);
        // A live lease names it (read outside a transaction first: most Runs are healthy).
        if (leased && (await this.#deps.store.findAttemptOwner(run.session_id, now))?.run_id === run.id) continue;
        if (await this.#recover(run)) ended++;
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
      // An application's Run is ended here (cancelled) rather than waited for: its loop may never call finish.
      for (const r of runs) if (r.external !== undefined) void r.external.finish({ status: 'cancelled' });
      await Promise.all(runs.map((r) => r.done));
    }
  }

  /**
   * The one rule of Run recovery (lazy in {@link sendEvents}, eager in {@link recoverStaleRuns}):
   * inside `tx` (holding the Session's lock), ends `run` `failed` when it is a leftover
   * ({@link #isLeftover}): with leases, no live lease names it (judged by the store's clock: its
   * process died, or lost the database, for longer than a lease); without, it started before this
   * instance was built. Returns `false` when the Run is not a leftover (it is left alone), else the
   * events to append: the `session.status_idle` `{ outcome: 'failed', error: LEFTOVER_FAILURE }`,
   * or none when another writer ended it first. Call under the Run's session lock.
   */
  async #endLeftover(tx: StoreTx, run: Run, now: number): Promise<false | NewSessionEvent[]> {
    if (!this.#isLeftover(run) || (await this.#leases.leased(tx, run))) return false;
    // A leftover of a process that is gone: nobody executes it any more. A tool round it left open
    // is closed with error results first, so the next Run's transcript is valid.
    if (!(await tx.endRun(run.id, 'failed', now))) return [];
    return [
      ...(await this.#ledger.closeRound(tx, run.session_id, run.id, UNANSWERED.leftover, now)),
      this.#ledger.idle(run.session_id, run.id, 'failed', now, leftoverFailure(this.#leases.enabled)),
    ];
  }

  /** A running Run this instance may end if nobody executes it: not ours; with leases any other, else started before this instance existed. */
  #isLeftover(run: Run): boolean {
    if (this.#active.get(run.session_id)?.run.id === run.id) return false;
    return (this.#deps.recoverStaleRuns ?? true) && (this.#leases.enabled || run.started_at <= this.#bootedAt);
  }

  /**
   * Ends `run` if it is still running and a leftover ({@link #endLeftover}), under the Session's
   * locks (this process's, then the row's), and starts the follow-up Run here for durable input its
   * dead process committed but never ran (the rule of a Run's end: input after its start and after
   * the last interrupt). Returns whether it ended the Run.
   */
  async #recover(run: Run): Promise<boolean> {
    return this.#withSessionLock(run.session_id, async () => {
      const session = await this.#deps.store.findSession?.(run.session_id);
      const { events, next } = await this.#deps.store.transaction(async (tx) => {
        // Input of another process for this Session waits for this end (or this end for it), so
        // the follow-up check below sees it or that input sees no running Run.
        if (session !== undefined) await tx.lockSession(session.workspace_id, session.id);
        const now = this.#deps.clock.now();
        const running = await tx.getRunningRun(run.session_id);
        const pending = running?.id === run.id ? await this.#endLeftover(tx, running, now) : false;
        if (pending === false || pending.length === 0) return { events: [], next: undefined };
        let next: RunStart | undefined;
        // The write gate: no follow-up Run in an archived project or Session. It runs on nobody's budget (the Runtime starts it).
        if (session !== undefined && !this.#closed && this.#executor !== undefined && (await runWriteRefusal(tx, session, 'run.start')) === null
          && (await this.#ledger.hasDurableInputAfter(tx, session.id, await startSeqOf(tx, run)))) {
          const nextRun = this.#newRun(session.id, now);
          await this.#insertRun(tx, nextRun);
          pending.push(this.#ledger.running(session.id, nextRun.id, now));
          next = { run: nextRun, session, startSeq: 0, release: () => {} };
        }
        const events = await tx.appendSessionEvents(pending);
        if (next !== undefined) next.startSeq = events[events.length - 1]?.seq ?? 0;
        return { events, next };
      });
      this.#ledger.publish(events);
      if (next !== undefined) this.#launch(next);
      return events.length > 0;
    });
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

  /** The tools and options of a Run of `session`: its agent's (see `SessionRuntimeDeps.agents`), else the Runtime's. */
  #runConfig(session: Session): { tools: Tool[] } & RunOptions {
    const defaults = this.#deps.runDefaults ?? {};
    const snapshot = session.agent;
    if (snapshot === null || typeof snapshot !== 'object' || Array.isArray(snapshot)) return { ...defaults, tools: [...(this.#deps.tools ?? [])] };
    const configured = this.#deps.agents?.find((a) => a.id === snapshot.id);
    const host = (configured?.tools ?? []).filter((t) => t.execute !== undefined);
    return { ...defaults, ...(configured?.run ?? {}), tools: [...host, ...clientToolsOf(snapshot)] };
  }

  /** The ledger the loop commits to for `session`, with `park` when the store can keep a Run awaiting. */
  #runLedger(session: Session): RunLedger {
    const base = this.#ledger.runLedger(session);
    if (this.#deps.store.updateRunStatus === undefined || this.#deps.store.getAwaitingRun === undefined) return base;
    return { commit: base.commit, park: (input) => this.#park(session, input) };
  }

  /**
   * `RunLedger.park` for a Run of `session` (live-inbox.md "Tools and boundaries"): in one
   * transaction under the Session's lock, conditional on the Run still running — when the client
   * already answered every pending tool use, nothing is written and the answers are returned; else
   * the ready results are committed, the Run goes `awaiting` and `session.status_idle` with
   * `stop_reason: { type: 'requires_action', event_ids }` (the ids still pending) is appended.
   */
  async #park(session: Session, input: RunLedgerPark): Promise<RunLedgerParkOutcome> {
    const { events, outcome } = await this.#deps.store.transaction(async (tx) => {
      // The write gate (\`run.commit\`, under the Session's lock): only a Run still running parks,
      // and not in an archived project or Session (the attempt then fails, like any refused commit).
      await gateRunWrite(tx, session, 'run.commit', input.run_id);
      const round = await this.#ledger.lastRound(tx, session.id, input.run_id);
      const resolutions: Record<string, ToolUseResolution> = {};
      for (const id of input.pending) {
        const resolution = round?.tool_uses.find((u) => u.block.id === id)?.resolution;
        if (resolution !== undefined) resolutions[id] = resolution;
      }
      const waiting = input.pending.filter((id) => resolutions[id] === undefined);
      if (waiting.length === 0) return { events: [] as SessionEvent[], outcome: { parked: false as const, resolutions } };
      const now = this.#deps.clock.now();
      const rows: NewSessionEvent[] = input.results.content.length === 0 ? [] : await this.#ledger.turn(tx, session, input.run_id, input.results, {}, now);
      if (!(await tx.updateRunStatus!(input.run_id, 'running', { status: 'awaiting' }))) {
        throw new InboxKitError('conflict', `Run ${input.run_id} is no longer running`);
      }
      rows.push(this.#ledger.idle(session.id, input.run_id, null, now, undefined, { type: 'requires_action', event_ids: waiting }));
      // Executed by nobody now: the process that resumes it claims the lease anew.
      await this.#leases.releaseForRun(tx, session.id, input.run_id);
      return { events: await tx.appendSessionEvents(rows), outcome: { parked: true as const } };
    });
    this.#ledger.publish(events);
    return outcome;
  }

  /**
   * The transcript a Run's attempt starts from (resumed: up to its start plus its own commits, its
   * open round left open), and that round.
   */
  async #attemptInput(active: ActiveRun): Promise<{ transcript: TranscriptMessage[]; resume: OpenRound | undefined }> {
    const { run, session } = active;
    let resume: OpenRound | undefined;
    if (active.resume) {
      const round = await this.#ledger.lastRound(this.#deps.store, session.id, run.id);
      if (round !== undefined && !round.complete) resume = { step_id: round.step_id, tool_uses: round.tool_uses };
    }
    const transcript = active.resume
      ? await this.#ledger.transcript(session.id, active.startSeq, { run_id: run.id, ...(resume ? { open: resume.step_id } : {}) })
      : await this.#ledger.transcript(session.id, active.startSeq);
    return { transcript, resume };
  }

  /**
   * Opens the attempt's bridge and — unless it resumes a parked round — takes its first boundary
   * (live-inbox.md "Tools and boundaries" 1): the Session's carry-over is drained and committed, so
   * the transcript handed to the executor ends with the Run's new input whoever executes it.
   */
  async #openAttempt(active: ActiveRun, executor: RunExecutor | undefined, signal: AbortSignal): Promise<RunAttempt> {
    const { run, session } = active;
    const { transcript, resume } = await this.#attemptInput(active);
    const ledger = this.#runLedger(session);
    const bridge = LiveInboxBridge.open({
      host: this.#deps.host, ledger, session_id: session.id, run_id: run.id, transcript, executor: executor?.kind === 'native' ? 'native' : 'framework',
    });
    const { tools, ...options } = this.#runConfig(session);
    const attempt: RunAttempt = {
      session, session_id: session.id, run_id: run.id, transcript, bridge, signal, tools, options, ledger,
      ...(resume ? { resume } : {}), ...(systemOf(session.agent) !== undefined ? { system: systemOf(session.agent)! } : {}),
    };
    if (resume === undefined) {
      try {
        attempt.transcript.push(...(await bridge.commit(bridge.drain())));
      } catch (error) {
        bridge.close();
        throw error;
      }
    }
    return attempt;
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
      const attempt = await this.#openAttempt(active, executor, active.controller.signal);
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
      await this.#withSessionLock(session.id, async () => {
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
    await this.#withSessionLock(session.id, async () => {
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
    return this.#withSessionLock(session_id, async () => {
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
        attempt = await this.#openAttempt(active, undefined, controller.signal);
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

/**
 * What a Run ended as a leftover records (`content.error` of its `session.status_idle`): with
 * leases, its process stopped renewing its lease (died, froze or lost the database) and another
 * process ended it; without, a later start of the service found it running.
 */
export function leftoverFailure(leased: boolean): RunFailure {
  return leased
    ? { type: 'api_error', message: 'The process executing this Run stopped before the Run ended (its lease expired); another process ended the Run.' }
    : { type: 'api_error', message: 'The process executing this Run stopped before the Run ended; the Run was ended when the service started again.' };
}

/** The `seq` of `run`'s `session.status_running` event (0 when not found). */
async function startSeqOf(tx: StoreTx, run: Run): Promise<number> {
  const [opened] = await tx.listSessionEvents({ session_id: run.session_id, after: 0, order: 'desc', types: [SESSION_EVENT_TYPES.running], limit: 1 });
  return opened?.run_id === run.id ? opened.seq : 0;
}

function runFailureOf(error: unknown): RunFailure {
  if (isModelError(error)) return { type: error.type, message: error.message };
  if (isToolUseLimitError(error)) return { type: error.type, message: error.message };
  // The write gate stopped the Run's commit: its project or Session was archived meanwhile.
  if (isInboxKitError(error) && (error.code === 'project_archived' || error.code === 'session_archived')) return { type: 'invalid_request_error', message: error.message };
  return { type: 'api_error', message: 'The Run failed on an internal error.' };
}
