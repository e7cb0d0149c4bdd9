/**
 * The Run executor port: the Run supervisor owns a Run's state, lease and end; an executor runs its
 * loop. The native loop (`runNativeAttempt` on the `Model` port) is one executor
 * ({@link nativeExecutor}); an application's framework loop is another (the AI SDK, LangGraph.js,
 * the OpenAI Agents SDK through `@inbox-kit/ai-sdk`, `@inbox-kit/langgraph`,
 * `@inbox-kit/openai-agents`). Both meet the Live Inbox through one {@link LiveInboxBridge}.
 * Spec: live-inbox.md "Run executors".
 */
import { runNativeAttempt, type Model, type ModelStopReason } from '../live-inbox/agent-loop.js';
import type { LiveInboxBridge, RunLedger, TranscriptMessage } from '../live-inbox/bridge.js';
import type { OpenRound, Tool } from '../live-inbox/tools.js';
import type { ContentBlock } from '../live-inbox/content.js';
import type { Session } from '../records.js';
import type { RunOptions } from './managed-agents.js';

/**
 * One attempt of a Run, as the supervisor hands it to an executor.
 *
 * - `transcript`: the committed history the attempt starts from, oldest first — a valid
 *   alternation for a model: every tool use answered right after its step, durable input sent
 *   during an earlier Run placed after that Run's own messages, and the Run's input last.
 * - `bridge`: the attempt's Live Inbox bridge, opened (`GET …/live-inbox` answers `active: true`);
 *   drain it at every boundary and commit before the next model call. The supervisor closes it
 *   after {@link RunExecutor.execute} settles (closing it earlier is fine).
 * - `signal`: aborted by a `user.interrupt` of the Run and by shutdown: stop promptly and answer
 *   `cancelled`.
 * - `tools`, `options`, `system`: the Run's tools and options as its agent configures them (an
 *   executor of a framework may use its own instead).
 * - `resume`: the Run's open tool round when it resumes after parking (native executor only).
 * - `ledger`: the Run's ledger (commit, park) — what the bridge commits through.
 */
export interface RunAttempt {
  session: Session;
  session_id: string;
  run_id: string;
  transcript: TranscriptMessage[];
  bridge: LiveInboxBridge;
  signal: AbortSignal;
  tools: Tool[];
  options: RunOptions;
  system?: string;
  resume?: OpenRound;
  ledger: RunLedger;
}

/**
 * How an attempt ended: `completed` (its loop finished; `stop_reason` the final step's, default
 * `end_turn`), `cancelled` (interrupted, or its bridge was superseded), `failed` (`error` is the
 * cause; a `ModelError`'s type and message are shown to Session readers, anything else as
 * `api_error`), or `awaiting` (the Run parked through `ledger.park`: native executor only).
 */
export interface RunOutcome {
  status: 'completed' | 'cancelled' | 'failed' | 'awaiting';
  error?: unknown;
  stop_reason?: ModelStopReason;
}

/**
 * The Run executor port. `kind` names it in logs. `execute` runs one attempt of a Run and settles
 * with its outcome; it SHOULD NOT throw (a rejection is a `failed` outcome). It runs in the
 * background of the durable input that started the Run (or of a follow-up Run); durable input sent
 * while it runs is committed and gets a follow-up Run executed by the same executor when this Run
 * ends — never a native attempt behind its back.
 */
export interface RunExecutor {
  readonly kind: string;
  execute(attempt: RunAttempt): Promise<RunOutcome>;
}

/**
 * The native executor: the agent loop of `runNativeAttempt` on `model` (steps, tool rounds with the
 * Run's tools, parking on client tools) on the attempt's bridge. The Runtime's default executor
 * when `SessionRuntimeDeps.model` is given.
 */
export function nativeExecutor(model: Model): RunExecutor {
  return {
    kind: 'native',
    async execute(attempt) {
      const result = await runNativeAttempt({
        bridge: attempt.bridge, model, ledger: attempt.ledger, session_id: attempt.session_id, run_id: attempt.run_id,
        transcript: attempt.transcript, signal: attempt.signal, tools: attempt.tools, ...attempt.options,
        ...(attempt.resume ? { resume: attempt.resume } : {}), ...(attempt.system !== undefined ? { system: attempt.system } : {}),
      });
      return { status: result.status, ...(result.error !== undefined ? { error: result.error } : {}), ...(result.stop_reason ? { stop_reason: result.stop_reason } : {}) };
    },
  };
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
