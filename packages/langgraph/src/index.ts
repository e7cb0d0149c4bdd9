/**
 * @inbox-kit/langgraph — steer a LangGraph.js agent through the inbox-kit Live Inbox: a middleware
 * for `createAgent` (langchain ≥ 1) that drains the Live Inbox in `beforeModel` (after the tools
 * of the last step ran, before the next model call), commits the step's output and the drained
 * messages to the Session ledger in one commit, and adds them as `HumanMessage`s whose ids are the
 * Run-scoped inbox ids (`{run_id}-inbox-{n}`: a replayed super-step does not duplicate them); at
 * the natural end (`afterModel`, a reply without tool calls) input that arrived meanwhile keeps
 * the agent going (`jumpTo: 'model'`). For a hand-built `StateGraph`, {@link liveInboxNode} is the
 * same boundary as a node. Spec: live-inbox.md "Framework adapters".
 */
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { createMiddleware } from 'langchain';
import type { ContentBlock, LiveInboxBridge, RunLedger, RunLedgerParkOutcome, ToolUseDisposition, TranscriptMessage } from '@inbox-kit/core';

/** The part of a Run (a `RunHandle` of `startRun`, or a `RunAttempt` of an executor) the adapter needs. */
export interface SteerableRun {
  bridge: LiveInboxBridge;
  transcript: readonly TranscriptMessage[];
  signal?: AbortSignal;
  /** The Run's ledger (a `RunAttempt`'s): needed by {@link LiveInboxMiddleware.park} only. */
  ledger?: RunLedger;
}

/** Options of {@link liveInboxMiddleware} and {@link liveInboxNode}. */
export interface LiveInboxOptions {
  /**
   * How a call of the tool `name` is recorded: `'ask'` for a tool that waits for the user's
   * decision (`humanInTheLoopMiddleware`'s `interruptOn`) — `agent.tool_use` with
   * `evaluated_permission: 'ask'`, answered by a `user.tool_confirmation` — else `'allow'` (the
   * default: a tool the agent runs).
   */
  permission?: (name: string) => 'allow' | 'ask';
}

type LcContent = Array<{ type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } }>;

function lcContent(blocks: readonly ContentBlock[]): LcContent {
  return blocks.map((b) => (b.type === 'text'
    ? { type: 'text' as const, text: b.text }
    : { type: 'image_url' as const, image_url: { url: b.source.type === 'url' ? b.source.url : `data:${b.source.media_type};base64,${b.source.data}` } }));
}

/** A drained Live Inbox message as a `HumanMessage` whose id is the Run-scoped inbox id. */
export function toHumanMessage(message: TranscriptMessage): HumanMessage {
  return new HumanMessage({ id: message.id, content: lcContent(message.content.filter((b): b is ContentBlock => b.type === 'text' || b.type === 'image')) });
}

/**
 * A Run's transcript as LangChain messages: `HumanMessage`s (ids kept), `AIMessage`s with their
 * tool calls (Run-scoped ids), and one `ToolMessage` per result right after its call.
 */
export function toLangChainMessages(transcript: readonly TranscriptMessage[]): BaseMessage[] {
  const out: BaseMessage[] = [];
  for (const m of transcript) {
    if (m.role === 'assistant') {
      const text = m.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
      const tool_calls = m.content.flatMap((b) => (b.type === 'tool_use' ? [{ id: b.id, name: b.name, args: b.input, type: 'tool_call' as const }] : []));
      out.push(new AIMessage({ id: m.id, content: text, tool_calls }));
      continue;
    }
    for (const b of m.content) {
      if (b.type === 'tool_result') {
        out.push(new ToolMessage({ tool_call_id: b.tool_use_id, content: b.content.map((c) => (c.type === 'text' ? c.text : '[image]')).join('\n'), status: b.is_error ? 'error' : 'success' }));
      }
    }
    const blocks = m.content.filter((b): b is ContentBlock => b.type === 'text' || b.type === 'image');
    if (blocks.length > 0) out.push(new HumanMessage({ id: m.id, content: lcContent(blocks) }));
  }
  return out;
}

const textOf = (content: unknown): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.map((c: { type?: string; text?: string }) => (c.type === 'text' ? (c.text ?? '') : '')).join('') : '';

/**
 * The boundary logic both the middleware and the node use: which messages of the agent's state
 * are output not yet committed, and the commit of them with what the Live Inbox holds.
 */
class Boundary {
  readonly #bridge: LiveInboxBridge;
  /** How many messages of the state were looked at (the input — the Run's transcript — counts as seen). */
  #seen: number;
  /** Steps (AI messages) seen, waiting for their tool results; `committed` once the step itself is in the ledger (before its tools ran). */
  #open: Array<{ step: TranscriptMessage; results: Array<{ id: string; output: unknown; is_error?: boolean }>; calls: number; committed?: boolean }> = [];

  readonly #permission: LiveInboxOptions['permission'];

  constructor(bridge: LiveInboxBridge, inputLength: number, permission?: LiveInboxOptions['permission']) {
    this.#bridge = bridge;
    this.#seen = inputLength;
    this.#permission = permission;
  }

  #commit(drained: readonly TranscriptMessage[], output: readonly TranscriptMessage[]): Promise<TranscriptMessage[]> {
    const tool_uses: Record<string, ToolUseDisposition> = {};
    for (const m of output) for (const b of m.content) if (b.type === 'tool_use') tool_uses[b.id] = { kind: 'host', permission: this.#permission?.(b.name) ?? 'allow' };
    return this.#bridge.commit(drained, { output, tool_uses });
  }

  /** The last step seen, when it has tool calls: its transcript message (committed or not). */
  lastToolStep(): { step: TranscriptMessage; committed: boolean } | undefined {
    const last = this.#open[this.#open.length - 1];
    return last !== undefined && last.calls > 0 ? { step: last.step, committed: last.committed === true } : undefined;
  }

  /** Records the state's new AI and tool messages (input and human messages are not output). */
  #read(messages: readonly BaseMessage[]): void {
    for (const m of messages.slice(this.#seen)) {
      const type = m.getType();
      if (type === 'ai') {
        const ai = m as AIMessage;
        const calls = ai.tool_calls ?? [];
        const step = this.#bridge.step({ text: textOf(ai.content), tool_calls: calls.map((c) => ({ id: c.id ?? '', name: c.name, input: c.args })) });
        this.#open.push({ step, results: [], calls: calls.length });
      } else if (type === 'tool') {
        const t = m as ToolMessage;
        const open = this.#open[this.#open.length - 1];
        open?.results.push({ id: t.tool_call_id, output: textOf(t.content) || '(no output)', is_error: t.status === 'error' });
      }
    }
    this.#seen = messages.length;
  }

  /** The output to commit now: every step seen whose tool calls all have results (or `all`). */
  #output(all: boolean): TranscriptMessage[] {
    const out: TranscriptMessage[] = [];
    while (this.#open.length > 0) {
      const first = this.#open[0]!;
      if (!all && first.results.length < first.calls && this.#open.length === 1) break;
      this.#open.shift();
      if (first.committed !== true) out.push(first.step);
      if (first.calls > 0) out.push(this.#bridge.results(first.step, first.results));
    }
    return out;
  }

  /**
   * After a model call whose reply has tool calls, before the tools run: commits that step alone
   * (its text and tool uses, nothing drained — a result must follow its tool use), as the native
   * loop does, so its `agent.tool_use` events are in the ledger while the tools run. Output still
   * uncommitted before it goes first.
   */
  async commitStep(messages: readonly BaseMessage[]): Promise<void> {
    this.#read(messages);
    const last = this.#open[this.#open.length - 1];
    if (last === undefined || last.calls === 0 || last.committed === true) return;
    const before: TranscriptMessage[] = [];
    while (this.#open.length > 1) {
      const first = this.#open.shift()!;
      if (first.committed !== true) before.push(first.step);
      if (first.calls > 0) before.push(this.#bridge.results(first.step, first.results));
    }
    await this.#commit([], [...before, last.step]);
    last.committed = true;
  }

  /**
   * A boundary: reads the state, drains the Live Inbox (unless `drain` is false), commits the
   * finished output then the drained messages in one ledger commit, and returns the drained as
   * `HumanMessage`s to add to the state. Counts the added messages as seen.
   */
  async take(messages: readonly BaseMessage[], options: { drain: boolean; all?: boolean }): Promise<HumanMessage[]> {
    this.#read(messages);
    const drained = options.drain ? this.#bridge.drain() : [];
    await this.#commit(drained, this.#output(options.all === true));
    this.#seen += drained.length;
    return drained.map(toHumanMessage);
  }
}

const interrupted = () => Object.assign(new Error('The Run was interrupted'), { name: 'AbortError' });

/**
 * A `createAgent` middleware that steers the agent through the Live Inbox of `run`:
 * - `beforeModel`: the boundary — commits the last step and its tool results with what was
 *   queued, and adds the queued messages (ids `{run_id}-inbox-{n}`) after the tool results;
 * - `afterModel`: a reply with tool calls is committed alone before the tools run (its
 *   `agent.tool_use` events are in the ledger while they run, as in the native loop); at the
 *   natural end (a reply without tool calls), input queued during that step keeps the agent going
 *   (`jumpTo: 'model'`);
 * - `afterAgent`: commits the final reply.
 * Invoke the agent with `{ messages: toLangChainMessages(run.transcript) }` (the Run's history: the
 * middleware counts it as input, not output) and `signal: run.signal`, so a `user.interrupt` stops it.
 */
export function liveInboxMiddleware(run: SteerableRun, options: LiveInboxOptions = {}) {
  const boundary = new Boundary(run.bridge, toLangChainMessages(run.transcript).length, options.permission);
  let first = true;
  const middleware = createMiddleware({
    name: 'InboxKitLiveInbox',
    beforeModel: async (state) => {
      if (run.bridge.superseded && !run.bridge.pending) throw interrupted();
      // Not before the first model call: the attempt's start is its own boundary (drained when the Runtime opened it).
      const added = await boundary.take(state.messages, { drain: first === false });
      first = false;
      return added.length > 0 ? { messages: added } : undefined;
    },
    afterModel: {
      canJumpTo: ['model'],
      hook: async (state) => {
        const last = state.messages[state.messages.length - 1];
        if (last === undefined || last.getType() !== 'ai') return undefined;
        if (((last as AIMessage).tool_calls ?? []).length > 0) {
          // Before the tools node: the assistant turn goes to the ledger first.
          await boundary.commitStep(state.messages);
          return undefined;
        }
        if (!run.bridge.pending) return undefined;
        const added = await boundary.take(state.messages, { drain: true, all: true });
        return added.length > 0 ? { messages: added, jumpTo: 'model' as const } : undefined;
      },
    },
    afterAgent: async (state) => {
      await boundary.take(state.messages, { drain: false, all: true });
      return undefined;
    },
  });
  const park: LiveInboxMiddleware['park'] = async (state) => {
    if (run.ledger?.park === undefined) throw new TypeError('park: this Run has no ledger that can park it (give the RunAttempt of an executor)');
    await boundary.commitStep(state.messages);
    const open = boundary.lastToolStep();
    if (open === undefined) throw new TypeError('park: the agent did not stop on a reply with tool calls');
    // Interrupted before any tool of the step ran: every call waits for the Run's resumption.
    const pending = open.step.content.flatMap((b) => (b.type === 'tool_use' && options.permission?.(b.name) === 'ask' ? [b.id] : []));
    const outcome = await run.ledger.park({ session_id: run.bridge.session_id, run_id: run.bridge.run_id, pending, results: { id: `${open.step.id}-results`, role: 'user', content: [] } });
    return { ...outcome, step: open.step };
  };
  return Object.assign(middleware, { park });
}

/** What {@link liveInboxMiddleware} returns besides the middleware itself. */
export interface LiveInboxMiddleware {
  /**
   * After the agent stopped on a human-in-the-loop interrupt (`humanInTheLoopMiddleware`, the
   * state's `__interrupt__`), before any tool of the reply ran: commits the reply (if not yet) and
   * parks the Run through its ledger — the Run awaits (`requires_action` with the Run-scoped ids of
   * the calls whose tool is `'ask'`) — instead of resuming the graph from its checkpoint; end the
   * attempt with outcome `awaiting`. The Runtime resumes the Run in a new attempt (its `resume`
   * round) once every call is confirmed or denied. `parked: false` when the user had answered them
   * all already: their `resolutions`, by tool-use id. Throws `TypeError` when the state does not
   * end on a reply with tool calls or the Run has no `ledger.park`.
   */
  park(state: { messages: BaseMessage[] }): Promise<RunLedgerParkOutcome & { step: TranscriptMessage }>;
}

/**
 * The same boundary as a node of a hand-built `StateGraph` whose state has a `messages` channel
 * (`MessagesAnnotation`): put it between the tools node and the model node, and before `END` (and,
 * to commit a reply's tool uses before its tools run as the native loop does, between the model and
 * the tools node too: after a reply with tool calls it commits that step and adds nothing); invoke
 * the graph with `{ messages: toLangChainMessages(run.transcript) }`.
 * It commits the output since the last boundary with what was queued, and returns the drained
 * messages as `{ messages }` (none: `{}`). {@link LiveInboxNode.more} tells a conditional edge
 * whether the last call added input (go to the model) or not.
 */
export interface LiveInboxNode {
  (state: { messages: BaseMessage[] }): Promise<{ messages?: HumanMessage[] }>;
  /** Whether the node's last call added drained messages (route back to the model). */
  more(): boolean;
}

/** A {@link LiveInboxNode} for `run`. */
export function liveInboxNode(run: SteerableRun, options: LiveInboxOptions = {}): LiveInboxNode {
  const boundary = new Boundary(run.bridge, toLangChainMessages(run.transcript).length, options.permission);
  let added = 0;
  const node = (async (state: { messages: BaseMessage[] }) => {
    if (run.bridge.superseded && !run.bridge.pending) throw interrupted();
    const last = state.messages[state.messages.length - 1];
    const isAi = last !== undefined && last.getType() === 'ai';
    if (isAi && ((last as AIMessage).tool_calls ?? []).length > 0) {
      // Between the model and the tools node: the assistant turn is committed before the tools run.
      await boundary.commitStep(state.messages);
      added = 0;
      return {};
    }
    const messages = await boundary.take(state.messages, { drain: true, all: isAi });
    added = messages.length;
    return messages.length > 0 ? { messages } : {};
  }) as LiveInboxNode;
  node.more = () => added > 0;
  return node;
}
