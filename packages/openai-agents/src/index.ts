/**
 * @inbox-kit/openai-agents — steer an OpenAI Agents SDK run (`run()`, `Runner.run`) through the
 * inbox-kit Live Inbox with the SDK's `callModelInputFilter`: right before each model call the
 * Live Inbox is drained, the output of the turns since the last call (messages, function calls and
 * their results) and the drained messages are committed to the Session ledger in one commit
 * (`{run_id}-inbox-{n}`), and the drained messages are added to the model input after the tool
 * results — re-inserted on every later turn (the SDK's run history does not hold them), also when
 * the run resumes after a tool approval. {@link OpenAIAgentsLiveInbox.run} re-invokes the run when
 * input arrived during its final turn. Spec: live-inbox.md "Framework adapters".
 */
import type { ContentBlock, LiveInboxBridge, RunLedger, RunLedgerParkOutcome, ToolResultBlock, TranscriptMessage } from '@inbox-kit/core';
import { dispositionsOf, parseArguments, StepReader, withInserted } from './steps.js';

/** An item of the Agents SDK's input (`AgentInputItem`), as far as this adapter reads and writes it. */
export type AgentsInputItem = { type?: string; role?: string; [field: string]: unknown };

/** The part of a Run (a `RunHandle` of `startRun`, or a `RunAttempt` of an executor) the adapter needs. */
export interface SteerableRun {
  bridge: LiveInboxBridge;
  transcript: readonly TranscriptMessage[];
  signal?: AbortSignal;
  /** The Run's ledger (a `RunAttempt`'s): needed by {@link OpenAIAgentsLiveInbox.park} only. */
  ledger?: RunLedger;
}

/** Options of {@link openAIAgentsLiveInbox}. */
export interface OpenAIAgentsLiveInboxOptions {
  /**
   * How a call of the tool `name` is recorded: `'ask'` for a tool that waits for the user's
   * approval (`needsApproval`) — `agent.tool_use` with `evaluated_permission: 'ask'`, answered by a
   * `user.tool_confirmation` — else `'allow'` (the default: a tool the SDK runs).
   */
  permission?: (name: string) => 'allow' | 'ask';
}

/** What {@link OpenAIAgentsLiveInbox.model} wraps: an Agents SDK `Model` (`getResponse`, `getStreamedResponse`). */
export interface AgentsModelLike {
  getResponse(request: any): Promise<{ output: any[] }>;
  getStreamedResponse(request: any): AsyncIterable<any>;
}

/** What this adapter reads of a finished run (`RunResult`). */
export interface AgentsResultLike {
  readonly history: readonly AgentsInputItem[];
  readonly interruptions?: readonly unknown[];
}

function userContent(blocks: readonly ContentBlock[]): Array<Record<string, unknown>> {
  return blocks.map((b) => (b.type === 'text'
    ? { type: 'input_text', text: b.text }
    : { type: 'input_image', image: b.source.type === 'url' ? b.source.url : `data:${b.source.media_type};base64,${b.source.data}` }));
}

/** A drained Live Inbox message as an Agents SDK user message item. */
export function toAgentsUserItem(message: TranscriptMessage): AgentsInputItem {
  return {
    type: 'message', role: 'user', content: userContent(message.content.filter((b): b is ContentBlock => b.type === 'text' || b.type === 'image')),
    providerData: { inbox_kit_id: message.id },
  };
}

/**
 * A Run's transcript as Agents SDK input items: user messages (their transcript id in
 * `providerData.inbox_kit_id`), assistant messages, function calls (Run-scoped call ids) and their
 * results right after them.
 */
export function toAgentsInput(transcript: readonly TranscriptMessage[]): AgentsInputItem[] {
  const out: AgentsInputItem[] = [];
  const names = new Map<string, string>();
  for (const m of transcript) {
    if (m.role === 'assistant') {
      const text = m.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
      if (text !== '') out.push({ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text }] });
      for (const b of m.content) {
        if (b.type !== 'tool_use') continue;
        names.set(b.id, b.name);
        out.push({ type: 'function_call', callId: b.id, name: b.name, arguments: JSON.stringify(b.input), status: 'completed' });
      }
      continue;
    }
    for (const b of m.content) {
      if (b.type !== 'tool_result') continue;
      out.push({
        type: 'function_call_result', callId: b.tool_use_id, name: names.get(b.tool_use_id) ?? 'tool', status: 'completed',
        output: { type: 'text', text: b.content.map((c) => (c.type === 'text' ? c.text : '[image]')).join('\n') },
        // The SDK's results carry no error flag: kept for a model that reads it (text is what others see).
        ...(b.is_error ? { providerData: { inbox_kit_is_error: true } } : {}),
      });
    }
    const blocks = m.content.filter((b): b is ContentBlock => b.type === 'text' || b.type === 'image');
    if (blocks.length > 0) out.push({ type: 'message', role: 'user', content: userContent(blocks), providerData: { inbox_kit_id: m.id } });
  }
  return out;
}


/**
 * The Live Inbox of one Run for the Agents SDK: pass `callModelInputFilter` (and `signal`) in the
 * run options and `input` as the run's input, then `await inbox.finish(result)`; or let {@link run}
 * do it and re-invoke while input arrives at the end.
 */
export interface OpenAIAgentsLiveInbox {
  /** The Run's transcript as input items. */
  readonly input: AgentsInputItem[];
  /** The boundary: commits the turns since the last model call with the drained messages, and puts every drained message after its tool results. */
  readonly callModelInputFilter: (args: { modelData: { input: AgentsInputItem[]; instructions?: string } }) => Promise<{ input: any[]; instructions?: string }>;
  /** Aborted by a `user.interrupt` of the Run. */
  readonly signal?: AbortSignal;
  /**
   * `model` (the agent's `Model`) wrapped so that a response with function calls is committed —
   * its text and tool uses, nothing drained — as soon as the model returns it, before the SDK runs
   * the tools, as the native loop does (its `agent.tool_use` events are in the ledger while the
   * tools run). Without it the step is committed with its results at the next model call: the
   * SDK's own hooks (`agent_tool_start`, …) are events it does not wait for. A streamed response is
   * committed before its `response_done` event is passed on. A failed commit rejects the model call.
   */
  model<M extends AgentsModelLike>(model: M): M;
  /**
   * After a run: commits the output not committed yet (the final answer) and tells whether input
   * is waiting (queued during the final turn): then {@link next} and run again (or use {@link run}).
   * A run that stopped for a tool approval is not final: resume it with the same options (the
   * drained messages are re-inserted, what was queued meanwhile is staged for its first call).
   */
  finish(result: AgentsResultLike): Promise<{ pending: boolean }>;
  /** The input of the next run after `finish` said `pending`: the history with every drained message in place, the waiting input last (committed now). */
  next(): Promise<AgentsInputItem[]>;
  /**
   * `call(input, options)` — e.g. `(input, o) => run(agent, input, o)` — re-invoked with the history
   * and the new input while input arrives during the final turn; resolves with the last result.
   */
  /**
   * After `finish` of a run that stopped for tool approvals (`result.interruptions`): parks the Run
   * through its ledger instead of resuming the SDK's own state — the step and the results ready are
   * committed, the Run awaits (`requires_action` with the Run-scoped ids of the calls waiting) —
   * then end the attempt with outcome `awaiting`; the Runtime resumes the Run in a new attempt
   * (its `resume` round) once every call is confirmed or denied. `parked: false` when the user had
   * answered them all already: their `resolutions`, by tool-use id, with the step and the results
   * ready. Throws `TypeError` when nothing awaits or the Run has no `ledger.park`.
   */
  park(): Promise<RunLedgerParkOutcome & { step: TranscriptMessage; ready: ToolResultBlock[] }>;
  run<R extends AgentsResultLike>(call: (input: AgentsInputItem[], options: { callModelInputFilter: OpenAIAgentsLiveInbox['callModelInputFilter']; signal?: AbortSignal }) => R | PromiseLike<R>): Promise<R>;
}

/** The Live Inbox of `run` for the OpenAI Agents SDK (see {@link OpenAIAgentsLiveInbox}). One run at a time. */
export function openAIAgentsLiveInbox(run: SteerableRun, options: OpenAIAgentsLiveInboxOptions = {}): OpenAIAgentsLiveInbox {
  const { bridge } = run;
  const commit = (drained: readonly TranscriptMessage[], output: readonly TranscriptMessage[] = []) =>
    bridge.commit(drained, { output, tool_uses: dispositionsOf(output, options.permission) });
  /** The calls a run stopped on for approval (the SDK's raw function calls), see `park`. */
  let approvals: Array<{ callId: string; name: string; arguments?: unknown }> = [];
  let base = toAgentsInput(run.transcript);
  /** Reads the SDK's items into steps. */
  const reader = new StepReader(bridge, base.length);
  /** Drained messages shown to the model, by the position in the SDK's items they follow. */
  let inserted: Array<{ at: number; item: AgentsInputItem }> = [];
  let waiting: TranscriptMessage[] = [];
  let calls = 0;
  /** A run stopped for a tool approval: its resumption's first call drains. */
  let resumed = false;

  /** A model response with function calls: its step committed now, before the SDK runs the tools. */
  const commitResponse = async (output: readonly AgentsInputItem[]) => {
    const response = reader.responseStep(output);
    if (response === undefined) return;
    await commit([], [...reader.finished.splice(0), response.step]);
    for (const id of response.call_ids) reader.early.set(id, response.step);
  };

  const inbox: OpenAIAgentsLiveInbox = {
    input: base,
    callModelInputFilter: async ({ modelData }) => {
      if (bridge.superseded && !bridge.pending) throw Object.assign(new Error('The Run was interrupted'), { name: 'AbortError' });
      reader.read(modelData.input);
      reader.close();
      // Not before a run's first model call: the attempt's start is its own boundary (drained
      // when the Runtime opened it); a resumed run's first call takes what was queued meanwhile.
      const drained = [...waiting, ...(calls++ === 0 && !resumed ? [] : bridge.drain())];
      waiting = [];
      await commit(drained, reader.finished.splice(0));
      for (const m of drained) inserted.push({ at: modelData.input.length, item: toAgentsUserItem(m) });
      return { ...modelData, input: withInserted(modelData.input, inserted) };
    },
    ...(run.signal ? { signal: run.signal } : {}),
    model(model) {
      const wrapped = Object.create(model) as typeof model;
      wrapped.getResponse = async (request: unknown) => {
        const response = await model.getResponse(request);
        await commitResponse(response.output ?? []);
        return response;
      };
      wrapped.getStreamedResponse = async function* (request: unknown) {
        for await (const event of model.getStreamedResponse(request)) {
          if (event?.type === 'response_done') await commitResponse(event.response?.output ?? []);
          yield event;
        }
      };
      return wrapped;
    },
    async finish(result) {
      reader.read(result.history);
      if ((result.interruptions ?? []).length > 0) {
        resumed = true;
        approvals = (result.interruptions ?? []).map((i) => {
          const raw = (i as { rawItem?: { callId?: unknown; name?: unknown; arguments?: unknown } }).rawItem ?? {};
          return { callId: String(raw.callId ?? ''), name: String(raw.name ?? ''), arguments: raw.arguments };
        });
        return { pending: false };
      }
      reader.close();
      if (reader.finished.length > 0) await commit([], reader.finished.splice(0));
      waiting.push(...bridge.drain());
      return { pending: waiting.length > 0 };
    },
    async park() {
      if (approvals.length === 0) throw new TypeError('park: the last run did not stop for a tool approval');
      if (run.ledger?.park === undefined) throw new TypeError('park: this Run has no ledger that can park it (give the RunAttempt of an executor)');
      // The step (committed as its model returned it, or now: the run's history may lack the calls
      // awaiting approval), and the results of the calls that ran.
      let step = reader.open?.committed ?? reader.early.get(approvals[0]!.callId);
      if (step === undefined) {
        const calls = [...(reader.open?.calls ?? [])];
        for (const a of approvals) if (!calls.some((c) => c.id === a.callId)) calls.push({ id: a.callId, name: a.name, input: parseArguments(a.arguments) });
        step = bridge.step({ text: reader.open?.text ?? '', tool_calls: calls });
        await commit([], [...reader.finished.splice(0), step]);
      }
      const pending = approvals.map((a) => bridge.toolUseIdOf(a.callId) ?? a.callId);
      const ready = bridge.results(step, reader.open?.results ?? []).content.filter((b): b is ToolResultBlock => b.type === 'tool_result' && !pending.includes(b.tool_use_id));
      reader.open = undefined;
      approvals = [];
      const outcome = await run.ledger.park({ session_id: bridge.session_id, run_id: bridge.run_id, pending, results: { id: `${step.id}-results`, role: 'user', content: ready } });
      return { ...outcome, step, ready };
    },
    async next() {
      const drained = waiting;
      waiting = [];
      await commit(drained);
      // The next run starts from what the model saw: the history with the drained messages in place, the new input last.
      base = [...withInserted(lastHistory, inserted), ...drained.map(toAgentsUserItem)];
      inserted = [];
      reader.seen = base.length;
      (inbox as { input: AgentsInputItem[] }).input = base;
      return base;
    },
    async run(call) {
      let input = base;
      for (;;) {
        const result = await call(input, { callModelInputFilter: inbox.callModelInputFilter, ...(run.signal ? { signal: run.signal } : {}) });
        lastHistory = [...result.history];
        const { pending } = await inbox.finish(result);
        if (!pending || run.signal?.aborted === true || bridge.superseded) return result;
        input = await inbox.next();
      }
    },
  };
  let lastHistory: AgentsInputItem[] = base;
  const finish = inbox.finish;
  inbox.finish = async (result) => {
    lastHistory = [...result.history];
    return finish(result);
  };
  return inbox;
}
