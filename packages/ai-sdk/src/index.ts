/**
 * @inbox-kit/ai-sdk — steer a Vercel AI SDK tool loop (`generateText`, `streamText`, the Agent
 * class) through the inbox-kit Live Inbox: spread one object into the call. At each step boundary
 * (after a step's tool results, before the next model call) the queued input is drained, committed
 * to the Session ledger as `user.message` events `{run_id}-inbox-{n}` together with the step's
 * output, and handed to the model after the tool results. On `ai` ≥ 7 it uses the SDK's steering
 * hook (`experimental_steering`: a message drained after the final step keeps the loop going) plus
 * `prepareStep`; on `ai` 5/6, `prepareStep` re-inserts the drained messages on every later step and
 * {@link AiSdkLiveInbox.run} re-invokes the call when input arrived during the final step.
 * Spec: live-inbox.md "Framework adapters".
 */
import * as ai from 'ai';
import type { ContentBlock, LiveInboxBridge, RunLedger, RunLedgerParkOutcome, ToolResultBlock, TranscriptMessage } from '@inbox-kit/core';
import { dispositionsOf, recordStep, responseStep, withInserted, type AwaitingApproval } from './steps.js';

/** A message of the AI SDK's prompt (`ModelMessage` of `ai` ≥ 5), as this adapter writes it. */
export type AiSdkMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: Array<{ type: 'text'; text: string } | { type: 'image'; image: string | URL; mediaType?: string }>; providerOptions?: { inboxKit: { id: string } } }
  | { role: 'assistant'; content: Array<{ type: 'text'; text: string } | { type: 'tool-call'; toolCallId: string; toolName: string; input: unknown }> }
  | { role: 'tool'; content: Array<{ type: 'tool-result'; toolCallId: string; toolName: string; output: { type: 'text' | 'error-text'; value: string } }> };

/** What this adapter reads of an AI SDK step (`StepResult` of `ai` 5, 6 and 7). */
export interface AiSdkStepLike {
  readonly text: string;
  readonly toolCalls: ReadonlyArray<{ readonly toolCallId: string; readonly toolName: string; readonly input?: unknown }>;
  readonly toolResults: ReadonlyArray<{ readonly toolCallId: string; readonly output?: unknown }>;
  readonly content: ReadonlyArray<{ readonly type: string; readonly toolCallId?: string; readonly error?: unknown }>;
}

/** What this adapter reads of a finished call (`GenerateTextResult`; for `streamText`, await its `steps` first). */
export interface AiSdkResultLike {
  readonly steps: ReadonlyArray<AiSdkStepLike> | PromiseLike<ReadonlyArray<AiSdkStepLike>>;
}

/** The part of a Run (a `RunHandle` of `startRun`, or a `RunAttempt` of an executor) the adapter needs. */
export interface SteerableRun {
  bridge: LiveInboxBridge;
  transcript: readonly TranscriptMessage[];
  signal?: AbortSignal;
  /** The Run's ledger (a `RunAttempt`'s): needed by {@link AiSdkLiveInboxControl.park} only. */
  ledger?: RunLedger;
}

/** Options of {@link aiSdkLiveInbox}. */
export interface AiSdkLiveInboxOptions {
  /**
   * Use the SDK's steering hook when the installed `ai` has it (`experimental_createSteering`,
   * `ai` ≥ 7). Default true; false forces the `prepareStep` re-insertion of `ai` 5/6.
   */
  steering?: boolean;
  /**
   * How a call of the tool `name` is recorded: `'ask'` for a tool that waits for the user's
   * approval (`needsApproval`, `ai` ≥ 6) — `agent.tool_use` with `evaluated_permission: 'ask'`,
   * answered by a `user.tool_confirmation` — else `'allow'` (the default: a tool the loop runs).
   */
  permission?: (name: string) => 'allow' | 'ask';
}

/** The transcript's text and image blocks as AI SDK user content. */
function userContent(blocks: readonly ContentBlock[]): Extract<AiSdkMessage, { role: 'user' }>['content'] {
  return blocks.map((b) => {
    if (b.type === 'text') return { type: 'text' as const, text: b.text };
    return b.source.type === 'url'
      ? { type: 'image' as const, image: new URL(b.source.url) }
      : { type: 'image' as const, image: b.source.data, mediaType: b.source.media_type };
  });
}

/** A drained Live Inbox message as an AI SDK user message. */
export function toAiSdkUserMessage(message: TranscriptMessage): Extract<AiSdkMessage, { role: 'user' }> {
  return { role: 'user', content: userContent(message.content.filter((b): b is ContentBlock => b.type === 'text' || b.type === 'image')), providerOptions: { inboxKit: { id: message.id } } };
}

/**
 * A Run's transcript as AI SDK messages (with `system`, a leading system message: `ai` 5/6 only,
 * `ai` 7 takes the system prompt as the call's `system` / `instructions`): user turns (text, images; each carries its transcript id
 * in `providerOptions.inboxKit.id`, which providers ignore), assistant turns (text, tool calls with
 * the Run-scoped ids) and tool turns (each round's results, right after its calls).
 */
export function toAiSdkMessages(transcript: readonly TranscriptMessage[], system?: string): AiSdkMessage[] {
  const out: AiSdkMessage[] = system !== undefined && system !== '' ? [{ role: 'system', content: system }] : [];
  const names = new Map<string, string>();
  for (const m of transcript) {
    if (m.role === 'assistant') {
      const content: Extract<AiSdkMessage, { role: 'assistant' }>['content'] = [];
      for (const b of m.content) {
        if (b.type === 'text' && b.text !== '') content.push({ type: 'text', text: b.text });
        else if (b.type === 'tool_use') {
          names.set(b.id, b.name);
          content.push({ type: 'tool-call', toolCallId: b.id, toolName: b.name, input: b.input });
        }
      }
      if (content.length > 0) out.push({ role: 'assistant', content });
      continue;
    }
    const results = m.content.filter((b) => b.type === 'tool_result');
    if (results.length > 0) {
      out.push({
        role: 'tool',
        content: results.map((r) => ({
          type: 'tool-result' as const, toolCallId: r.tool_use_id, toolName: names.get(r.tool_use_id) ?? 'tool',
          output: { type: r.is_error ? ('error-text' as const) : ('text' as const), value: r.content.map((c) => (c.type === 'text' ? c.text : '[image]')).join('\n') },
        })),
      });
    }
    const blocks = m.content.filter((b): b is ContentBlock => b.type === 'text' || b.type === 'image');
    if (blocks.length > 0) out.push({ role: 'user', content: userContent(blocks), providerOptions: { inboxKit: { id: m.id } } });
  }
  return out;
}

type SteeringLike = { steer(message: unknown, options?: { id?: string }): Promise<unknown> };
const createSteering = (ai as unknown as { experimental_createSteering?: () => SteeringLike }).experimental_createSteering;

/**
 * The Live Inbox of one Run, for one AI SDK call at a time: spread it into `generateText`,
 * `streamText` or an Agent's `generate`/`stream` (`messages`, `prepareStep`, `onStepFinish`,
 * `abortSignal`, and on `ai` ≥ 7 `experimental_steering`), then `await inbox.finish(result)`.
 * Or let {@link run} do both and re-invoke while input arrives at the end.
 */
export interface AiSdkLiveInbox {
  /** The Run's transcript as AI SDK messages (what the model sees first). */
  readonly messages: AiSdkMessage[];
  /**
   * Drains the Live Inbox at the boundary after each step (its tool results are in), then — before
   * the next model call — commits the step's output and the drained messages in one ledger commit.
   */
  readonly onStepFinish: (step: AiSdkStepLike) => Promise<void>;
  /** Commits what `onStepFinish` drained, before the model call; on `ai` 5/6 re-inserts every drained message after the tool results of its step. */
  readonly prepareStep: (options: { messages: unknown[]; stepNumber: number }) => Promise<{ messages?: any[] } | undefined>;
  /**
   * `ai` ≥ 7 (called after the model's response, before any tool runs): commits a step with tool
   * calls alone — its text and tool uses — so its `agent.tool_use` events are in the ledger while
   * the tools run, as in the native loop. On `ai` 5/6 (no such hook: `streamText` starts a tool as
   * soon as its call streams in) the step is committed with its tool results at the next boundary.
   */
  readonly onLanguageModelCallEnd: (event: { content: ReadonlyArray<{ type: string; text?: string; toolCallId?: string; toolName?: string; input?: unknown; providerExecuted?: boolean }> }) => Promise<void>;
  /** Aborted by a `user.interrupt` of the Run, and when a commit to the ledger failed. */
  readonly abortSignal: AbortSignal;
  /**
   * `ai` ≥ 7: the SDK's steering object (drained messages are steered: the loop continues for
   * them). Typed loosely (its type exists only in `ai` ≥ 7) so the spread fits every version.
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly experimental_steering?: any;
}

/** The methods of {@link AiSdkLiveInbox} (not copied by a spread). */
export interface AiSdkLiveInboxControl {
  /**
   * After the call: commits the output not committed yet (the final step), and tells whether input
   * is waiting (queued during the final step, or drained but never shown to a model): then call
   * again with {@link next} (or use {@link run}). Rethrows a commit error of a step boundary.
   */
  finish(result?: AiSdkResultLike): Promise<{ pending: boolean; awaiting?: readonly string[] }>;
  /**
   * After `finish` said `awaiting` (the call stopped on tool approvals, `needsApproval`): parks the
   * Run through its ledger — the results ready are committed, the Run awaits (`requires_action`
   * with the Run-scoped ids of the calls awaiting approval) — then end the attempt with outcome
   * `awaiting`; the Runtime resumes the Run in a new attempt (its `resume` round) once every call
   * is confirmed or denied. `parked: false` when the user had answered them all already: their
   * `resolutions`, by tool-use id, with the step and the results ready. Throws `TypeError` when
   * nothing awaits or the Run has no `ledger.park`.
   */
  park(): Promise<RunLedgerParkOutcome & { step: TranscriptMessage; ready: ToolResultBlock[] }>;
  /** The Run-scoped ids of the calls the last call stopped on for approval (see {@link park}); undefined when it did not. */
  readonly awaiting: readonly string[] | undefined;
  /** The messages for the next call after `finish` said `pending`: everything so far, the waiting input last (committed now). */
  next(): Promise<AiSdkMessage[]>;
  /**
   * Runs `call` with the spread options and re-invokes it (with the history and the new input)
   * while input arrives during its final step; resolves with the last call's result (also when
   * it stopped on tool approvals: then {@link park}).
   */
  run<R extends AiSdkResultLike>(call: (options: AiSdkLiveInbox) => R | PromiseLike<R>): Promise<R>;
}

/**
 * The Live Inbox of `run` for the AI SDK (see {@link AiSdkLiveInbox}). One call at a time.
 */
export function aiSdkLiveInbox(run: SteerableRun, options: AiSdkLiveInboxOptions = {}): AiSdkLiveInbox & AiSdkLiveInboxControl {
  const { bridge } = run;
  const steering = options.steering !== false && createSteering !== undefined ? createSteering() : undefined;
  // The system prompt is the call's own (`system` / `instructions`): ai 7 refuses system messages in `messages`.
  let history = toAiSdkMessages(run.transcript);
  /** Output of steps not committed yet. */
  let output: TranscriptMessage[] = [];
  /** Drained, waiting for the next model call. */
  let waiting: TranscriptMessage[] = [];
  /** ai 5/6: drained messages delivered in this call, with the number of the step after which they come. */
  const inserted: Array<{ after: number; message: AiSdkMessage }> = [];
  let steps = 0;
  let failure: unknown;
  let responses: AiSdkMessage[] = [];

  /** ai ≥ 7: the step whose assistant turn `onLanguageModelCallEnd` committed before its tools ran. */
  let early: TranscriptMessage | undefined;
  /** Aborts the call when a commit failed (no tool runs on an uncommitted step). */
  const stop = new AbortController();
  const abortSignal = run.signal === undefined ? stop.signal : AbortSignal.any([run.signal, stop.signal]);
  const fail = (error: unknown) => {
    failure ??= error;
    stop.abort(error);
  };

  const commit = (drained: readonly TranscriptMessage[], out: readonly TranscriptMessage[]) => bridge.commit(drained, { output: out, tool_uses: dispositionsOf(out, options.permission) });
  /** The final step's tool calls that wait for the user's approval, with the results ready. */
  let awaiting: AwaitingApproval | undefined;

  const commitWaiting = async () => {
    const drained = waiting;
    const out = output;
    if (drained.length === 0 && out.length === 0) return;
    await commit(drained, out);
    waiting = [];
    output = [];
    for (const m of drained) {
      const message = toAiSdkUserMessage(m);
      responses.push(message);
      if (steering === undefined) inserted.push({ after: steps, message });
    }
  };

  const inbox: AiSdkLiveInbox = {
    messages: history,
    onLanguageModelCallEnd: async (event) => {
      // ai ≥ 7, after the model's response, before any tool runs: a step with tool calls is
      // committed alone now (its text and tool uses; nothing drained: a result must follow its
      // tool use), as the native loop does — the tool use is in the ledger while the tool runs.
      try {
        const step = failure === undefined ? responseStep(bridge, event) : undefined;
        if (step === undefined) return;
        const out = output;
        output = [];
        await commit([], [...out, step]);
        early = step;
      } catch (error) {
        fail(error);
      }
    },
    onStepFinish: async (step) => {
      steps++;
      try {
        const recorded = recordStep(bridge, step, early);
        early = undefined;
        output.push(...recorded.output);
        responses.push(...toAiSdkMessages(recorded.responses));
        if (recorded.awaiting !== undefined) awaiting = recorded.awaiting;
        const drained = bridge.drain();
        waiting.push(...drained);
        // ai ≥ 7: steered, the loop continues for them even after a final answer.
        if (steering !== undefined) for (const m of drained) void steering.steer(toAiSdkUserMessage(m), { id: m.id });
      } catch (error) {
        fail(error);
      }
    },
    prepareStep: async ({ messages, stepNumber }) => {
      void stepNumber;
      if (failure !== undefined) throw failure;
      if (bridge.superseded) throw Object.assign(new Error('The Run was interrupted'), { name: 'AbortError' });
      // Anything queued since the last step's boundary goes too. Not before the first step: the
      // attempt's start is its own boundary (the Runtime drained it when it opened the attempt).
      const now = stepNumber === 0 ? [] : bridge.drain();
      waiting.push(...now);
      if (steering !== undefined) {
        // Queued right now (not steered): delivered in this step through `messages`, which carry forward on ai ≥ 7.
        await commitWaiting();
        return now.length > 0 ? { messages: [...messages, ...now.map(toAiSdkUserMessage)] } : undefined;
      }
      await commitWaiting();
      if (inserted.length === 0) return undefined;
      // ai 5/6: each drained message goes right after the response messages of the step it followed.
      return { messages: withInserted(messages, history.length, inserted) as any[] };
    },
    abortSignal,
    ...(steering !== undefined ? { experimental_steering: steering } : {}),
  };

  const control: AiSdkLiveInboxControl = {
    async finish() {
      if (failure !== undefined) {
        const error = failure;
        failure = undefined;
        throw error;
      }
      // Drained after the final step and never delivered (a stop condition ended the loop) stays undelivered (carried over on close) unless the caller goes on.
      const late = bridge.drain();
      waiting.push(...late);
      // The final step's output (and nothing drained: no model has seen that yet).
      if (output.length > 0) {
        await commit([], output);
        output = [];
      }
      if (awaiting !== undefined) return { pending: false, awaiting: [...awaiting.pending] };
      return { pending: waiting.length > 0 };
    },
    async next() {
      await commitWaiting();
      history = [...history, ...responses];
      responses = [];
      inserted.length = 0;
      steps = 0;
      (inbox as { messages: AiSdkMessage[] }).messages = history;
      return history;
    },
    get awaiting() {
      return awaiting?.pending;
    },
    async park() {
      if (awaiting === undefined) throw new TypeError('park: the last call did not stop for a tool approval');
      if (run.ledger?.park === undefined) throw new TypeError('park: this Run has no ledger that can park it (give the RunAttempt of an executor)');
      const { step, pending, ready } = awaiting;
      const outcome = await run.ledger.park({ session_id: bridge.session_id, run_id: bridge.run_id, pending, results: { id: `${step.id}-results`, role: 'user', content: ready } });
      return { ...outcome, step, ready };
    },
    async run(call) {
      for (;;) {
        const result = await call(inbox);
        const { pending } = await control.finish(result);
        if (awaiting !== undefined) return result;
        if (!pending || run.signal?.aborted === true || bridge.superseded) return result;
        await control.next();
      }
    },
  };
  return Object.assign(Object.create(control) as AiSdkLiveInboxControl, inbox);
}
