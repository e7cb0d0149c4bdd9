/**
 * One request's durable Session input inside its transaction (`POST /v1/sessions/{id}/events`,
 * see `SessionRuntimeService.sendEvents`): the write gate, the lazy end of a leftover Run, then
 * each event in order — a `user.interrupt` (what the interrupted attempt still queued committed
 * first; a parked Run ended here), a `user.custom_tool_result` / `user.tool_confirmation` (the
 * answer recorded; a parked Run resumed once every pending tool use is answered), a `user.message`
 * (committed, starting a Run when none runs); and the delete of a Session, which ends a Run parked
 * on tool answers with it. The Run supervisor holds the Session's lock around both, publishes
 * after commit and launches what was started. Spec: live-inbox.md ("Model", "Tools
 * and boundaries", "Drain, commit, carry-over").
 */
import type { Principal } from '../context.js';
import { InboxKitError } from '../errors.js';
import type { ContentBlock } from '../live-inbox/content.js';
import type { AttemptHandle, LiveInboxHost } from '../live-inbox/registry.js';
import type { ToolUseResolution } from '../live-inbox/tools.js';
import { gateSessionWrite } from '../policy/write-gate.js';
import type { NewSessionEvent, StoreTx } from '../ports/store.js';
import type { JsonValue, Run, Session, SessionEvent } from '../records.js';
import type { AttemptLeases } from './attempt-leases.js';
import type { RunExecutor } from './executor.js';
import { SESSION_EVENT_TYPES, type SessionLedger } from './ledger.js';
import { UNANSWERED } from './run-outcomes.js';
import type { parseSendSessionEvents } from './schemas.js';
import { isPending, type LedgerRound } from './tool-rounds.js';

/** A Run the start transaction created (or resumed), launched after commit. */
export interface RunStart {
  run: Run;
  session: Session;
  startSeq: number;
  resume?: boolean;
  /** Default the Runtime's executor. */
  executor?: RunExecutor | undefined;
  /** The Run budget slot of the caller whose input started (or resumed) the chain. */
  release: () => void;
}

/** What an interrupt took from a queue (see {@link InputRuns.takeQueued}). */
export interface QueuedAtInterrupt {
  handle: AttemptHandle;
  contents: ContentBlock[][];
}

/** The input event types `sendEvents` answers with. */
export const SENT_TYPES = new Set<string>([
  SESSION_EVENT_TYPES.userMessage, SESSION_EVENT_TYPES.userInterrupt, SESSION_EVENT_TYPES.userCustomToolResult, SESSION_EVENT_TYPES.userToolConfirmation,
]);

/** What the input needs of the Run supervisor. */
export interface InputRuns {
  readonly ledger: SessionLedger;
  readonly leases: AttemptLeases;
  readonly host: LiveInboxHost;
  /** Whether durable input starts Runs here (the Runtime has an executor). */
  readonly startsRuns: boolean;
  /** Takes a Run budget slot of `principal`. @throws InboxKitError `too_many_runs` (429). */
  claimBudget(principal: Principal): () => void;
  /** The lazy end of a leftover Run (see `RunSupervisor`): false when `run` is not one. */
  endLeftover(tx: StoreTx, run: Run, now: number): Promise<false | NewSessionEvent[]>;
  /** Closes the Live Inbox of `target`'s attempt when this instance executes it, returning what it still queued. */
  takeQueued(target: Run | undefined, taken: QueuedAtInterrupt[]): ContentBlock[][];
  newRun(session_id: string, now: number): Run;
  /** Inserts a Run with its lease. */
  insertRun(tx: StoreTx, run: Run): Promise<void>;
}

/**
 * What the input did besides its events, kept up to date while the transaction runs so the caller
 * can undo it when the transaction fails: the budget slot taken, the queues an interrupt closed.
 */
export interface InputEffects {
  /** The caller's Run budget slot, taken only when this input starts or resumes a Run. */
  slot?: (() => void) | undefined;
  closedInboxes: QueuedAtInterrupt[];
  /** Ids of the events of queued input an interrupt committed (not receipts of this request). */
  carried: Set<string>;
  /** An interrupt of a parked Run committed the Session's carry-over: drop it from the host after commit. */
  takenCarryOver: boolean;
}

type Body = ReturnType<typeof parseSendSessionEvents>;
type InputEvent = Body['events'][number];
type AnswerEvent = Extract<InputEvent, { type: 'user.custom_tool_result' | 'user.tool_confirmation' }>;
type InterruptEvent = Extract<InputEvent, { type: 'user.interrupt' }>;
type MessageEvent = Exclude<InputEvent, AnswerEvent | InterruptEvent>;

/** What the transaction returns: the stored events, the Run to launch, the Run to abort after commit. */
export interface InputOutcome {
  events: SessionEvent[];
  start: RunStart | undefined;
  interruptRunId: string | undefined;
}

/** Applies `body` to `session_id` inside `tx` (the Run supervisor holds the Session's lock). */
export async function applySessionInput(
  tx: StoreTx, runs: InputRuns, principal: Principal, session_id: string, body: Body, now: () => number, effects: InputEffects,
): Promise<InputOutcome> {
  // The write gate: an archived project or Session takes no new input (messages, tool
  // results, confirmations); an interrupt may still stop a Run.
  const input = body.events.some((e) => e.type !== 'user.interrupt');
  const access = await gateSessionWrite(tx, principal, session_id, input ? 'session.message' : 'session.interrupt');
  const state = new SessionInputTx(tx, runs, principal, access.session, now(), effects);
  await state.open();
  for (const [index, event] of body.events.entries()) {
    if (event.type === 'user.interrupt') await state.interrupt();
    else if (event.type === 'user.custom_tool_result' || event.type === 'user.tool_confirmation') await state.answer(event, index);
    else await state.message(event as MessageEvent, index);
  }
  await state.flush();
  return { events: state.stored, start: state.start, interruptRunId: state.interruptRunId };
}

/** The Run state one request's input sees and changes, event after event. */
class SessionInputTx {
  readonly pending: NewSessionEvent[] = [];
  readonly stored: SessionEvent[] = [];
  running: Run | undefined;
  awaiting: Run | undefined;
  /** The last tool round of the running or awaiting Run, read once, then kept up to date here. */
  #round: LedgerRound | undefined | null = null;
  start: RunStart | undefined;
  interruptRunId: string | undefined;

  constructor(
    readonly tx: StoreTx, readonly runs: InputRuns, readonly principal: Principal, readonly session: Session, readonly now: number,
    readonly effects: InputEffects,
  ) {}

  /** Reads the Session's Runs, ending a leftover first. */
  async open(): Promise<void> {
    const { tx, session } = this;
    this.running = await tx.getRunningRun(session.id);
    if (this.running !== undefined) {
      const recovered = await this.runs.endLeftover(tx, this.running, this.now);
      if (recovered !== false) {
        this.pending.push(...recovered);
        this.running = undefined;
      }
    }
    this.awaiting = this.running === undefined ? await tx.getAwaitingRun?.(session.id) : undefined;
  }

  async flush(): Promise<void> {
    if (this.pending.length > 0) this.stored.push(...(await this.tx.appendSessionEvents(this.pending.splice(0))));
  }

  async #roundOf(run: Run): Promise<LedgerRound | undefined> {
    if (this.#round === null) this.#round = await this.runs.ledger.lastRound(this.tx, this.session.id, run.id);
    return this.#round;
  }

  /** A `user.interrupt`: commits what the interrupted attempt still queues, then the interrupt; a parked Run ends here. */
  async interrupt(): Promise<void> {
    const { tx, session, now, runs, effects } = this;
    const target = this.start?.run ?? this.running ?? this.awaiting;
    const parked = target !== undefined && target === this.awaiting;
    // What the interrupted attempt still queues here is committed first (acknowledgement order);
    // for a parked Run, what its closed attempt left to carry over.
    const queuedContents = parked ? runs.host.pendingCarryOver(session.id) : runs.takeQueued(target, effects.closedInboxes);
    if (parked && queuedContents.length > 0) effects.takenCarryOver = true;
    for (const content of queuedContents) {
      const queued = await runs.ledger.message(tx, session, { role: 'user', run_id: null, message_id: null, content }, now);
      effects.carried.add(queued.id);
      this.pending.push(queued);
    }
    this.pending.push(runs.ledger.interrupt(session.id, target?.id ?? null, now));
    if (parked) {
      // A parked Run has no attempt to abort: it ends here, its round closed with error results.
      await this.flush();
      this.pending.push(...(await cancelParkedRun(tx, runs.ledger, session.id, target.id, now)));
      this.awaiting = undefined;
      this.#round = null;
    } else if (target !== undefined) this.interruptRunId = target.id;
  }

  /** A `user.custom_tool_result` or `user.tool_confirmation`: records the answer; a parked Run with every tool use answered resumes. */
  async answer(event: AnswerEvent, index: number): Promise<void> {
    const { tx, session, now, runs } = this;
    const run = this.start?.run ?? this.running ?? this.awaiting;
    const custom = event.type === 'user.custom_tool_result';
    const id = custom ? event.custom_tool_use_id : event.tool_use_id;
    const path = `events.${index}.${custom ? 'custom_tool_use_id' : 'tool_use_id'}`;
    const current = run === undefined ? undefined : await this.#roundOf(run);
    const use = current?.tool_uses.find((u) => u.block.id === id);
    if (run === undefined || current === undefined || use === undefined) throw toolUseNotFound(id, path);
    const isCustom = use.disposition.kind === 'custom';
    const asks = use.disposition.kind === 'host' && use.disposition.permission === 'ask';
    if (custom ? !isCustom : !asks) {
      throw new InboxKitError('validation_error', custom
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
    this.pending.push(runs.ledger.answer(session.id, run.id, event.type, content, now));
    use.resolution = resolution;
    if (resolution.type === 'custom_result') use.result = { type: 'tool_result', tool_use_id: id, content: resolution.content, is_error: resolution.is_error };
    current.pending = current.tool_uses.filter(isPending).map((u) => u.block.id);
    if (run !== this.awaiting) return;
    if (current.pending.length > 0) {
      // Partly answered: the Session stays idle, waiting for the rest.
      this.pending.push(runs.ledger.idle(session.id, run.id, null, now, undefined, { type: 'requires_action', event_ids: [...current.pending] }));
    } else if (await tx.updateRunStatus!(run.id, 'awaiting', { status: 'running' })) {
      // All answered: the same Run goes on, in a new attempt, after commit — leased from
      // this transaction on, like a Run that starts (no process takes it for a leftover).
      await runs.leases.claimForRun(tx, run);
      this.pending.push(runs.ledger.running(session.id, run.id, now));
      this.running = { ...run, status: 'running' };
      this.awaiting = undefined;
      // Executed again: the caller's Run budget (over it, 429 `too_many_runs` and nothing is written).
      const slot = (this.effects.slot ??= runs.claimBudget(this.principal));
      this.start = { run: this.running, session, startSeq: await runs.ledger.runStartSeq(tx, session.id, run.id), resume: true, release: slot };
    }
  }

  /** A `user.message`: refused while tool uses wait for answers; committed, starting a Run when none runs or waits. */
  async message(event: MessageEvent, index: number): Promise<void> {
    const { tx, session, now, runs } = this;
    const active = this.running ?? this.awaiting;
    if (active !== undefined && this.start?.resume !== true) {
      const waiting = (await this.#roundOf(active))?.pending ?? [];
      if (waiting.length > 0) {
        throw new InboxKitError('actions_pending', `The Run waits for tool results or confirmations (${waiting.join(', ')}): send user.custom_tool_result / user.tool_confirmation events for them first (in this request or an earlier one), or a user.interrupt`,
          waiting.map((id) => ({ path: `events.${index}`, message: `tool use ${id} is pending`, code: id })));
      }
    }
    const startsRun = this.start === undefined && this.running === undefined && this.awaiting === undefined && runs.startsRuns;
    // Over the caller's Run budget: 429 `too_many_runs`, and the transaction writes nothing.
    if (startsRun) this.effects.slot ??= runs.claimBudget(this.principal);
    const run: Run | undefined = startsRun ? runs.newRun(session.id, now) : undefined;
    this.pending.push(await runs.ledger.message(tx, session, { role: 'user', run_id: run?.id ?? null, message_id: null, content: event.content }, now));
    if (run !== undefined) {
      await runs.insertRun(tx, run);
      this.pending.push(runs.ledger.running(session.id, run.id, now));
      await this.flush();
      const startSeq = this.stored[this.stored.length - 1]?.seq ?? 0;
      this.start = { run, session, startSeq, release: this.effects.slot! };
    }
  }
}

/**
 * Ends a Run parked on client tool answers (`awaiting`) `cancelled`: its open round closed with
 * error results, then `session.status_idle`; nothing when another writer moved it first. Returns
 * the events to append (after any already pending: call after flushing earlier ones).
 */
async function cancelParkedRun(tx: StoreTx, ledger: SessionLedger, session_id: string, run_id: string, now: number): Promise<NewSessionEvent[]> {
  const closing = await ledger.closeRound(tx, session_id, run_id, UNANSWERED.cancelled, now);
  if (!(await tx.updateRunStatus!(run_id, 'awaiting', { status: 'idle', outcome: 'cancelled', ended_at: now }))) return [];
  return [...closing, ledger.idle(session_id, run_id, 'cancelled', now)];
}

/**
 * Deletes `session_id` inside `tx` (see `SessionRuntimeService.deleteSession`); a Run parked on
 * tool answers ends `cancelled` with it. Returns the events to publish and the Session's id.
 * @throws InboxKitError `session_not_found`, `permission_denied`, `session_running` (the write gate).
 */
export async function applySessionDelete(
  tx: StoreTx, ledger: SessionLedger, principal: Principal, session_id: string, now: () => number,
): Promise<{ events: SessionEvent[]; sid: string }> {
  // Locked (project, then Session): a Run starting concurrently (sendEvents holds the same
  // locks) either commits first, and this sees it running, or waits and then finds no Session.
  // The write gate (\`session.delete\`): the owner's, refused while a Run runs (409 session_running).
  const access = await gateSessionWrite(tx, principal, session_id, 'session.delete');
  const session = access.session;
  const at = now();
  const awaiting = await tx.getAwaitingRun?.(session.id);
  // Executed by nobody, waiting for answers that can no longer come: it ends with the Session.
  const pending = awaiting === undefined ? [] : await cancelParkedRun(tx, ledger, session.id, awaiting.id, at);
  const events = pending.length > 0 ? await tx.appendSessionEvents(pending) : [];
  if (!(await tx.deleteSession(session.workspace_id, session.id, at))) throw new InboxKitError('session_not_found', 'Session not found');
  return { events, sid: session.id };
}

const toolUseNotFound = (id: string, path: string) =>
  new InboxKitError('tool_use_not_found', `No tool use ${JSON.stringify(id)} of this Session's Run waits for an answer`, [{ path, message: 'unknown tool use id' }]);
