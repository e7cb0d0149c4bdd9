/**
 * The native agent loop: model steps, tool rounds (host tools run between model calls; client
 * tools and confirmations park the Run), the boundary drain of the Live Inbox and the commits to
 * the Session ledger, all through one {@link LiveInboxBridge}. Spec: live-inbox.md "Drain, commit,
 * carry-over", "Tools and boundaries".
 */
import { isInboxKitError } from '../errors.js';
import { countersOf, LiveInboxBridge, stepMessageId, type RunLedger, type TranscriptMessage } from './bridge.js';
import type { LiveInboxHost } from './registry.js';
import {
  cloneBlocks, compileTools, errorResult, executeHostTool, mapBounded, toolResultsMessageId, toolSpecs, toolUseId,
  type CompiledTool, type OpenRound, type Tool, type ToolResultBlock, type ToolSpec, type ToolUseBlock, type ToolUseDisposition,
  type ToolUseResolution, type TranscriptBlock,
} from './tools.js';

export { inboxMessageId, stepMessageId, type RunLedger, type TranscriptMessage } from './bridge.js';

/**
 * Why a model step ended (the Messages API's words): `end_turn` (the model is done), `tool_use`
 * (it called tools: a tool round follows), `max_tokens` (cut at the output limit: the turn ends),
 * `pause_turn` (call it again), `refusal` (it refused: the turn ends, the Session's idle
 * `stop_reason` says `refusal`).
 */
export type ModelStopReason = 'end_turn' | 'tool_use' | 'max_tokens' | 'pause_turn' | 'refusal';

/**
 * What one model step produced: the assistant `content` (text, and `tool_use` blocks for the tools
 * it calls) and why it stopped. Spec: live-inbox.md "Drain, commit, carry-over", "Tools and
 * boundaries".
 *
 * A step with `tool_use` blocks starts a tool round whatever it says. Otherwise the loop calls the
 * model again when `stop_reason` is `pause_turn` or — for models that give no `stop_reason` (the
 * text-only port of earlier releases, still supported) — when `continue` is true; any other step
 * ends the model's turn.
 */
export interface ModelStepResult {
  content: TranscriptBlock[];
  stop_reason?: ModelStopReason;
  /** For models without `stop_reason`: true when the model wants another step. */
  continue?: boolean;
}

/** What a step is told besides the transcript. */
export interface ModelStepContext {
  /** The tools the model may call in this step (none: do not offer tools). */
  tools: readonly ToolSpec[];
  session_id: string;
  run_id: string;
  /** The system prompt of the Session's agent, when it has one (a model may prefer it to its own). */
  system?: string;
}

/**
 * The model port. `step` decides the next assistant message from the whole transcript (oldest
 * first; it MUST NOT mutate it). It SHOULD reject promptly once `signal` is aborted. A model that
 * takes no third argument (text only) keeps working: it is simply never offered tools it could call.
 */
export interface Model {
  step(transcript: readonly TranscriptMessage[], signal: AbortSignal, context?: ModelStepContext): Promise<ModelStepResult>;
}

/**
 * A model provider failure whose `type` and `message` are safe to show to every reader of the
 * Session (no secret, no stack). A {@link Model} throws it when a step cannot be completed (after
 * whatever retries it does itself); the Runtime records it on the failed Run's
 * `session.status_idle` event as `content.error: { type, message }`. Spec: live-inbox.md
 * "Drain, commit, carry-over" (a failed Run).
 *
 * `type` is a short snake_case kind, e.g. `rate_limit_error`, `overloaded_error`, `api_error`,
 * `timeout_error`, `connection_error`, `authentication_error`, `invalid_request_error`;
 * `status` is the provider's HTTP status when there was one; `attempts` how many requests the
 * step made (≥ 1) when known.
 */
export class ModelError extends Error {
  override readonly name = 'ModelError';
  readonly type: string;
  readonly status: number | undefined;
  readonly attempts: number | undefined;

  constructor(type: string, message: string, options: { status?: number; attempts?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.type = type;
    this.status = options.status;
    this.attempts = options.attempts;
  }
}

/** Whether `error` is a {@link ModelError} (also across copies of the core package). */
export function isModelError(error: unknown): error is ModelError {
  return error instanceof ModelError || (error instanceof Error && error.name === 'ModelError' && typeof (error as { type?: unknown }).type === 'string');
}

/**
 * A Run ended because it reached its limit of tool rounds (`maxToolRounds`): the Session records
 * `session.error` with `type: 'tool_use_limit_reached_error'` and the Run fails
 * (`stop_reason: retries_exhausted`). Spec: live-inbox.md "Tools and boundaries".
 */
export class ToolUseLimitError extends Error {
  override readonly name = 'ToolUseLimitError';
  readonly type = 'tool_use_limit_reached_error';
  readonly rounds: number;

  constructor(rounds: number) {
    super(`The Run reached its limit of ${rounds} tool rounds; send a new message to go on.`);
    this.rounds = rounds;
  }
}

/** Whether `error` is a {@link ToolUseLimitError} (also across copies of the core package). */
export function isToolUseLimitError(error: unknown): error is ToolUseLimitError {
  return error instanceof ToolUseLimitError || (error instanceof Error && error.name === 'ToolUseLimitError');
}

/**
 * Where a Run drains its Live Inbox: `every_boundary` (default) — at every boundary before a model
 * call: after a step without tool uses, and after each tool round's results (the drained messages
 * follow the results in the same user turn); `natural_end` — only after a step without tool uses
 * (the reference runtime's behaviour: steering waits out the tool rounds).
 */
export type DrainPolicy = 'every_boundary' | 'natural_end';

/** Defaults of the Run options of {@link runNativeAttempt}. */
export const RUN_DEFAULTS = Object.freeze({
  maxToolRounds: 50,
  toolConcurrency: 4,
  toolTimeoutMs: 60_000,
  drain: 'every_boundary' as DrainPolicy,
});

/** Input of {@link runNativeAttempt}. */
export interface RunNativeAttemptOptions {
  /** The host that registers the attempt and owns its Live Inbox (unused with `bridge`). */
  host?: LiveInboxHost;
  /**
   * The attempt's bridge, already opened (the Run supervisor opens one for every executor); else
   * the loop opens one on `host`. Either way it is closed when the attempt ends.
   */
  bridge?: LiveInboxBridge;
  model: Model;
  ledger: RunLedger;
  session_id: string;
  run_id: string;
  /**
   * Committed history: everything before the Run and what the Run committed in earlier attempts
   * (copied; the array is not mutated).
   */
  transcript: TranscriptMessage[];
  /** Aborting it cancels the attempt (the model and running tools get it too). */
  signal?: AbortSignal;
  /** How many inbox messages this Run committed in earlier attempts (first `n`); default: counted in `transcript`. */
  inboxCounterStart?: number;
  /** How many assistant steps this Run committed in earlier attempts (first `k`); default: counted in `transcript`. */
  stepCounterStart?: number;
  /** The Run's tools (host and client); default none. Checked first: a bad definition fails the attempt. */
  tools?: readonly Tool[];
  /** Where the Live Inbox is drained; default `every_boundary`. */
  drain?: DrainPolicy;
  /** The system prompt of the Session's agent, passed to every step (`ModelStepContext.system`). */
  system?: string;
  /** Most tool rounds of the Run (over all its attempts), integer ≥ 1; default 50. */
  maxToolRounds?: number;
  /** Most host tools of one round running at once, integer ≥ 1; default 4. */
  toolConcurrency?: number;
  /** A host tool's timeout (ms) unless it sets its own; default 60 000. */
  toolTimeoutMs?: number;
  /**
   * The Run's last step and its tool uses when they are not all answered in `transcript` (the Run
   * parked and is resumed): the round is finished first — confirmed tools run, denials and client
   * results are taken — and its results are committed before the next model call.
   */
  resume?: OpenRound;
}

/**
 * Outcome of {@link runNativeAttempt}: `committed` lists, in order, every message this attempt
 * committed to the ledger; `error` is the cause for `failed` (and the abort reason for
 * `cancelled`); `awaiting` means the Run parked on client tool results or confirmations (the
 * ledger recorded `requires_action`); `stop_reason` is the final step's, for `completed`.
 */
export interface NativeAttemptResult {
  status: 'completed' | 'cancelled' | 'failed' | 'awaiting';
  error?: unknown;
  committed: TranscriptMessage[];
  stop_reason?: ModelStopReason;
}

/** One tool use of the round in progress. */
interface RoundUse {
  block: ToolUseBlock;
  disposition: ToolUseDisposition;
  result?: ToolResultBlock;
  /** The result is in the ledger already. */
  recorded: boolean;
  resolution?: ToolUseResolution;
}

interface Round {
  step_id: string;
  uses: RoundUse[];
}

const intOption = (name: string, value: number | undefined, fallback: number): number => {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < 1 || v > 2 ** 31 - 1) throw new TypeError(`${name} must be an integer from 1 to 2147483647, got ${String(value)}`);
  return v;
};

/** How the loop records and handles one tool use of a step: refused (unknown tool, invalid input), the client's, or a host tool's. */
function classifyToolUse(tools: ReadonlyMap<string, CompiledTool>, use: ToolUseBlock): ToolUseDisposition {
  const compiled = tools.get(use.name);
  if (compiled === undefined) {
    const known = [...tools.keys()];
    return { kind: 'refused', reason: `There is no tool named ${JSON.stringify(use.name)}${known.length === 0 ? '.' : `; the tools are: ${known.join(', ')}.`}` };
  }
  const problem = compiled.check(use.input);
  if (problem !== undefined) return { kind: 'refused', reason: `The input of ${use.name} is not valid: ${problem}` };
  if (compiled.tool.execute === undefined) return { kind: 'custom' };
  return { kind: 'host', permission: compiled.tool.permission === 'always_ask' ? 'ask' : 'allow' };
}

/** The model's step content as a transcript message: text and tool uses only, tool-use ids made Run-scoped. */
function stepMessage(result: ModelStepResult, id: string, nextToolId: () => string): TranscriptMessage {
  const content: TranscriptBlock[] = [];
  for (const block of Array.isArray(result?.content) ? result.content : []) {
    if (block === null || typeof block !== 'object') continue;
    if (block.type === 'text' && typeof block.text === 'string') content.push({ type: 'text', text: block.text });
    else if (block.type === 'tool_use') {
      const input = block.input !== null && typeof block.input === 'object' && !Array.isArray(block.input) ? structuredClone(block.input) : {};
      content.push({ type: 'tool_use', id: nextToolId(), name: String(block.name), input });
    }
  }
  return { id, role: 'assistant', content };
}

/**
 * Runs one native attempt of a Run. Spec: live-inbox.md "Drain, commit, carry-over", "Tools and
 * boundaries".
 *
 * Opens a `native` attempt through a {@link LiveInboxBridge} (or runs on the one given) (its inbox starts with the Session's
 * carry-over), then loops:
 * 1. the attempt's start is a boundary (carried-over input reaches the first decision), unless it
 *    resumes a parked round;
 * 2. `model.step(transcript, signal, { tools })`;
 * 3. a step without tool uses: its message `{run_id}-step-{k}` and the messages drained right
 *    after it are committed together, in one ledger commit (the step first); the loop goes on
 *    while the model wants another step OR anything was drained. At every boundary that drains,
 *    what was queued while its commit was in flight is drained once more and committed before
 *    the next model call (it does not wait out another step);
 * 4. a step with tool uses: the step (text + `tool_use` blocks, ids `{run_id}-tool-{j}`) is
 *    committed alone — tool results must directly follow it. Each tool use is refused (unknown
 *    tool, input not valid against its schema: an error result), run (host tool, `always_allow`:
 *    at most `toolConcurrency` at once, each within its timeout and aborted with the Run), or left
 *    pending (client tool; `always_ask` host tool until confirmed). Pending ones park the Run
 *    through `ledger.park` (status `awaiting`): the attempt ends and the Run is resumed in a new
 *    attempt once the client answered them all. When every tool use has its result, ONE user turn
 *    `{step}-results` holding every result in tool-use order is committed, followed in the same
 *    commit by the drained Live Inbox messages (policy `every_boundary`), and the model is called
 *    again — unless the Run used its `maxToolRounds`: it then fails with a {@link ToolUseLimitError}.
 *
 * After the final drain finds nothing the attempt is closed synchronously (no await in between);
 * anything queued later is refused with 410 by the HTTP layer, and anything still queued is
 * carried over by the host, never lost. The attempt is always closed in `finally`; on abort or
 * model/ledger error the leftovers (and drained-but-uncommitted input) go to the Session's next
 * native attempt on this host.
 *
 * Never throws: `cancelled` when `signal` aborted or the attempt was superseded by a newer one
 * (its inbox closed under it), `failed` with `error` when the model or ledger rejected, a tool
 * definition is bad or the round limit was reached, `awaiting` when the Run parked.
 */
export async function runNativeAttempt(opts: RunNativeAttemptOptions): Promise<NativeAttemptResult> {
  const { host, model, ledger, session_id, run_id } = opts;
  const signal = opts.signal ?? new AbortController().signal;
  const transcript: TranscriptMessage[] = opts.transcript.map((m) => ({ ...m, content: cloneBlocks(m.content) }));
  const committed: TranscriptMessage[] = [];
  const counted = countersOf(transcript, run_id);
  let k = opts.stepCounterStart ?? counted.steps;
  let j = counted.toolUses;
  let rounds = counted.rounds;
  if (opts.bridge === undefined && host === undefined) throw new TypeError('runNativeAttempt: give `host` or an open `bridge`');
  const bridge = opts.bridge ?? LiveInboxBridge.open({ host: host!, ledger, session_id, run_id, inboxCounterStart: opts.inboxCounterStart ?? counted.inbox });
  const interrupted = (): boolean => signal.aborted || bridge.superseded;
  const append = (messages: TranscriptMessage[]): void => {
    transcript.push(...messages);
    committed.push(...messages);
  };

  try {
    const tools = compileTools(opts.tools ?? []);
    const specs = toolSpecs(opts.tools ?? []);
    const drainAfterTools = (opts.drain ?? RUN_DEFAULTS.drain) === 'every_boundary';
    const maxToolRounds = intOption('maxToolRounds', opts.maxToolRounds, RUN_DEFAULTS.maxToolRounds);
    const concurrency = intOption('toolConcurrency', opts.toolConcurrency, RUN_DEFAULTS.toolConcurrency);
    const toolTimeoutMs = intOption('toolTimeoutMs', opts.toolTimeoutMs, RUN_DEFAULTS.toolTimeoutMs);

    /** Answers what can be answered now, runs what may run; `parked` when the Run now awaits the client. */
    const settle = async (round: Round): Promise<'settled' | 'parked'> => {
      for (;;) {
        const runnable: RoundUse[] = [];
        for (const use of round.uses) {
          if (use.result !== undefined) continue;
          const d = use.disposition;
          const r = use.resolution;
          if (d.kind === 'refused') use.result = errorResult(use.block.id, d.reason);
          else if (d.kind === 'custom') {
            if (r?.type === 'custom_result') use.result = { type: 'tool_result', tool_use_id: use.block.id, content: r.content, is_error: r.is_error };
          } else if (d.permission === 'allow' || (r?.type === 'confirmation' && r.result === 'allow')) runnable.push(use);
          else if (r?.type === 'confirmation') {
            use.result = errorResult(use.block.id, r.deny_message !== null && r.deny_message !== '' ? r.deny_message : `The user denied this call of ${use.block.name}.`);
          }
        }
        if (runnable.length > 0) {
          const results = await mapBounded(runnable, concurrency, (use) => executeHostTool(tools.get(use.block.name)!.tool, use.block, {
            session_id, run_id, signal, timeoutMs: toolTimeoutMs,
          }));
          runnable.forEach((use, i) => (use.result = results[i]));
        }
        if (interrupted()) return 'settled';
        const pending = round.uses.filter((u) => u.result === undefined);
        if (pending.length === 0) return 'settled';
        if (ledger.park === undefined) {
          for (const use of pending) use.result = errorResult(use.block.id, 'This runtime cannot wait for a client (its ledger cannot park a Run); the call was not made.');
          return 'settled';
        }
        const ready = round.uses.filter((u) => u.result !== undefined && !u.recorded);
        const outcome = await ledger.park({
          session_id, run_id, pending: pending.map((u) => u.block.id),
          results: { id: toolResultsMessageId(round.step_id), role: 'user', content: ready.map((u) => u.result!) },
        });
        if (outcome.parked) return 'parked';
        for (const use of pending) {
          const resolution = outcome.resolutions[use.block.id];
          if (resolution === undefined) throw new Error(`park answered without a resolution for ${use.block.id}`);
          use.resolution = resolution;
          // A client's result is in the ledger (its own event); a confirmation is not a result.
          if (resolution.type === 'custom_result') use.recorded = true;
        }
      }
    };

    let round: Round | undefined;
    if (opts.resume !== undefined) {
      round = {
        step_id: opts.resume.step_id,
        uses: opts.resume.tool_uses.map((u): RoundUse => ({
          block: u.block, disposition: u.disposition, ...(u.result ? { result: u.result } : {}), recorded: u.result !== undefined,
          ...(u.resolution ? { resolution: u.resolution } : {}),
        })),
      };
    }

    // Input queued while a boundary's commit was in flight: drained at that boundary, one more
    // commit before the next model call (once per boundary: steering never holds the model back).
    const catchUp = async (): Promise<number> => {
      if (interrupted() || !bridge.pending) return 0;
      const late = bridge.boundary([], { drain: true });
      append(await late.committing);
      return late.drained.length;
    };

    if (interrupted()) return cancelled(signal, committed);
    if (round === undefined) {
      append(await bridge.boundary([], { drain: true }).committing);
      await catchUp();
    }
    for (;;) {
      if (round !== undefined) {
        if ((await settle(round)) === 'parked') return { status: 'awaiting', committed };
        if (interrupted()) return cancelled(signal, committed);
        // ONE user turn: every result in tool-use order, then (every_boundary) the drained Live Inbox input.
        const results: TranscriptMessage = { id: toolResultsMessageId(round.step_id), role: 'user', content: round.uses.map((u) => u.result!) };
        const recorded = round.uses.filter((u) => u.recorded).map((u) => u.block.id);
        append(await bridge.boundary([results], { drain: drainAfterTools, extras: { recorded_results: recorded } }).committing);
        if (drainAfterTools) await catchUp();
        round = undefined;
        if (interrupted()) return cancelled(signal, committed);
        if (rounds >= maxToolRounds) return { status: 'failed', error: new ToolUseLimitError(maxToolRounds), committed };
      }
      const result = await model.step(transcript.slice(), signal, { tools: specs, session_id, run_id, ...(opts.system !== undefined ? { system: opts.system } : {}) });
      if (interrupted()) return cancelled(signal, committed);
      const step = stepMessage(result, stepMessageId(run_id, k), () => toolUseId(run_id, j++));
      const uses = step.content.filter((b): b is ToolUseBlock => b.type === 'tool_use');
      if (uses.length > 0) {
        rounds++;
        const dispositions: Record<string, ToolUseDisposition> = {};
        for (const use of uses) dispositions[use.id] = classifyToolUse(tools, use);
        append(await bridge.boundary([step], { drain: false, extras: { tool_uses: dispositions } }).committing);
        k++;
        round = { step_id: step.id, uses: uses.map((block) => ({ block, disposition: dispositions[block.id]!, recorded: false })) };
        continue;
      }
      // The boundary after a step: its output and what the inbox holds now commit together, in one
      // ledger commit (output first), so steering waits for one commit after the step, not two.
      const boundary = bridge.boundary([step], { drain: true });
      append(await boundary.committing);
      k++;
      if (interrupted()) return cancelled(signal, committed);
      const more = result.stop_reason !== undefined ? result.stop_reason === 'pause_turn' : result.continue === true;
      // Input queued while the step committed is drained at this boundary too (one more commit
      // before the next model call); after the final step it keeps the Run going. Nothing there
      // after the final step: return now, with no await between this drain and the close in `finally`.
      const late = bridge.boundary([], { drain: true });
      if (!more && boundary.drained.length === 0 && late.drained.length === 0) {
        return { status: 'completed', committed, stop_reason: result.stop_reason ?? 'end_turn' };
      }
      if (late.drained.length > 0) {
        append(await late.committing);
        if (interrupted()) return cancelled(signal, committed);
      }
    }
  } catch (error) {
    if (signal.aborted || (isInboxKitError(error) && error.code === 'live_inbox_inactive')) return cancelled(signal, committed);
    return { status: 'failed', error, committed };
  } finally {
    bridge.close();
  }
}

function cancelled(signal: AbortSignal, committed: TranscriptMessage[]): NativeAttemptResult {
  return signal.aborted ? { status: 'cancelled', error: signal.reason, committed } : { status: 'cancelled', committed };
}
