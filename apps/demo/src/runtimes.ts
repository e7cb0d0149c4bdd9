/**
 * The demo's Run executors (DEMO_RUNTIME): `native` (the inbox-kit agent loop), or the `assistant`
 * agent on a framework's own loop — `ai-sdk` (the Vercel AI SDK's `streamText`), `langgraph`
 * (langchain's `createAgent`, LangGraph.js underneath) or `openai-agents` (the OpenAI Agents SDK's
 * `run`) — each steered through its `@inbox-kit/*` adapter, with the same host tool `wait`.
 * Models: with DEMO_MODEL=anthropic the AI SDK runtime uses `@ai-sdk/anthropic` and the LangGraph
 * runtime `@langchain/anthropic` (both honour ANTHROPIC_BASE_URL), the Agents SDK runtime the
 * demo's Messages API model; with the scripted model, each framework calls it through a small
 * bridge to its model interface (one step per model call: a framework loop ends at a reply
 * without tool calls, so the scripted model's extra steps are not taken there).
 */
import {
  toolResultsMessageId,
  type ContentBlock, type Model, type OpenRound, type RunAttempt, type RunExecutor, type RunLedgerParkOutcome, type RunOutcome, type Tool,
  type ToolResultBlock, type ToolSpec, type TranscriptBlock, type TranscriptMessage,
} from '@inbox-kit/core';
import type { DemoConfig } from './config.js';
import { DEMO_SYSTEM_PROMPT } from './model.js';

/** The runtimes DEMO_RUNTIME names. */
export const DEMO_RUNTIMES = ['native', 'ai-sdk', 'langgraph', 'openai-agents'] as const;
export type DemoRuntime = (typeof DEMO_RUNTIMES)[number];

const textOfOutput = (output: unknown): string =>
  typeof output === 'string' ? output
    : Array.isArray(output) ? output.map((b: { type?: string; text?: string }) => (b.type === 'text' ? (b.text ?? '') : '[image]')).join('')
      : typeof output === 'object' && output !== null && 'content' in output ? textOfOutput((output as { content: unknown }).content) : JSON.stringify(output);

/** Runs a host tool of the Run (the native Tool port) for a framework; throws its error result. */
async function runTool(tool: Tool, attempt: RunAttempt, input: unknown, id: string, signal?: AbortSignal): Promise<string> {
  const output = await tool.execute!((input ?? {}) as Record<string, unknown>, { signal: signal ?? attempt.signal, session_id: attempt.session_id, run_id: attempt.run_id, tool_use_id: id });
  if (typeof output === 'object' && output !== null && !Array.isArray(output) && output.is_error === true) throw new Error(textOfOutput(output));
  return textOfOutput(output);
}

const outcomeOf = (attempt: RunAttempt, error?: unknown): RunOutcome =>
  error === undefined ? { status: attempt.signal.aborted || attempt.bridge.superseded ? 'cancelled' : 'completed' }
    : attempt.signal.aborted || attempt.bridge.superseded ? { status: 'cancelled', error } : { status: 'failed', error };

const hostTools = (attempt: RunAttempt) => attempt.tools.filter((t) => t.execute !== undefined);
/** DEMO_TOOL_POLICY=always_ask: the tool waits for a `user.tool_confirmation` (the framework's approval stops the loop). */
const asks = (attempt: RunAttempt) => {
  const names = new Set(hostTools(attempt).filter((t) => t.permission === 'always_ask').map((t) => t.name));
  return (name: string): 'allow' | 'ask' => (names.has(name) ? 'ask' : 'allow');
};

/**
 * The attempt with a bridge whose commits are recorded (every message this attempt committed, in
 * order), so the executor knows the Run's transcript when a park finds its answers already there.
 */
function recorded(attempt: RunAttempt): { attempt: RunAttempt; committed: TranscriptMessage[] } {
  const committed: TranscriptMessage[] = [];
  const bridge = new Proxy(attempt.bridge, {
    get(target, key) {
      if (key === 'commit') {
        return async (...args: Parameters<typeof target.commit>) => {
          const messages = await target.commit(...args);
          committed.push(...messages);
          return messages;
        };
      }
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { attempt: { ...attempt, bridge }, committed };
}

/**
 * The open round of a Run resumed after parking (or whose answers were in the ledger before it
 * could park), finished as the native loop finishes it (live-inbox.md "Tools and boundaries",
 * requires_action): confirmed and allowed host tools run through the Tool port (with the Run's abort),
 * a denial is an error result carrying its `deny_message` (else "The user denied this call of
 * <name>."), then ONE user turn of every result in tool-use order and the drained Live Inbox input
 * is committed; returns the committed messages. The framework then goes on from the transcript.
 */
const errorResult = (tool_use_id: string, message: string): ToolResultBlock => ({ type: 'tool_result', tool_use_id, content: [{ type: 'text', text: message }], is_error: true });

async function settleRound(attempt: RunAttempt, round: OpenRound): Promise<TranscriptMessage[]> {
  const tools = new Map(hostTools(attempt).map((t) => [t.name, t]));
  const results = await Promise.all(round.tool_uses.map(async (u): Promise<ToolResultBlock> => {
    if (u.result !== undefined) return u.result;
    const d = u.disposition;
    const r = u.resolution;
    if (d.kind === 'refused') return errorResult(u.block.id, d.reason);
    if (r?.type === 'custom_result') return { type: 'tool_result', tool_use_id: u.block.id, content: r.content, is_error: r.is_error };
    if (d.kind === 'host' && (d.permission === 'allow' || (r?.type === 'confirmation' && r.result === 'allow'))) {
      const tool = tools.get(u.block.name);
      if (tool === undefined) return errorResult(u.block.id, `There is no tool named ${JSON.stringify(u.block.name)}.`);
      try {
        return { type: 'tool_result', tool_use_id: u.block.id, content: textBlocks(await runTool(tool, attempt, u.block.input, u.block.id)), is_error: false };
      } catch (error) {
        if (attempt.signal.aborted) throw error;
        return errorResult(u.block.id, error instanceof Error ? error.message : String(error));
      }
    }
    if (r?.type === 'confirmation') return errorResult(u.block.id, r.deny_message !== null && r.deny_message !== '' ? r.deny_message : `The user denied this call of ${u.block.name}.`);
    return errorResult(u.block.id, 'The call got no answer.');
  }));
  const recordedResults = round.tool_uses.filter((u) => u.result !== undefined || u.resolution?.type === 'custom_result').map((u) => u.block.id);
  const message: TranscriptMessage = { id: toolResultsMessageId(round.step_id), role: 'user', content: results };
  return attempt.bridge.commit(attempt.bridge.drain(), { output: [message], recorded_results: recordedResults });
}

/**
 * Runs `loop` (one framework invocation from `transcript`) until it ends without stopping for a
 * tool approval: a resumed Run's open round is settled first; a stop on approvals parks the Run
 * (`awaiting`), or — answered already — is settled and the loop goes on from the new transcript.
 */
async function withApprovals(
  attempt: RunAttempt,
  loop: (attempt: RunAttempt) => Promise<{ park?: () => Promise<RunLedgerParkOutcome & { step: TranscriptMessage; ready?: ToolResultBlock[] }> }>,
): Promise<RunOutcome> {
  let transcript = [...attempt.transcript];
  let round = attempt.resume;
  const permission = asks(attempt);
  for (;;) {
    const { attempt: current, committed } = recorded({ ...attempt, transcript });
    if (round !== undefined) {
      current.transcript.push(...(await settleRound(current, round)));
      round = undefined;
      committed.length = 0;
    }
    const stopped = await loop(current);
    if (stopped.park === undefined) return outcomeOf(attempt);
    const parked = await stopped.park();
    if (parked.parked) return { status: 'awaiting' };
    // Every call was answered before the Run could park: finish the round here and go on.
    const { step, ready = [] } = parked;
    round = {
      step_id: step.id,
      tool_uses: step.content.flatMap((b) => (b.type === 'tool_use' ? [{
        block: b, disposition: { kind: 'host' as const, permission: permission(b.name) },
        ...(ready.find((r) => r.tool_use_id === b.id) ? { result: ready.find((r) => r.tool_use_id === b.id)! } : {}),
        ...(parked.resolutions[b.id] ? { resolution: parked.resolutions[b.id]! } : {}),
      }] : [])),
    };
    transcript = [...current.transcript, ...committed];
  }
}
const specsOf = (tools: readonly { name: string; description?: string }[]): ToolSpec[] =>
  tools.map((t) => ({ name: t.name, description: t.description ?? '', input_schema: { type: 'object' } }));

let scriptedIds = 0;
/** A model step's content as tool calls with fresh ids (the scripted model reuses one id). */
function stepCalls(content: readonly TranscriptBlock[]): Array<{ id: string; name: string; input: Record<string, unknown> }> {
  return content.flatMap((b) => (b.type === 'tool_use' ? [{ id: `call_${String(++scriptedIds)}`, name: b.name, input: b.input }] : []));
}
const stepText = (content: readonly TranscriptBlock[]) => content.map((b) => (b.type === 'text' ? b.text : '')).join('');
const textBlocks = (t: string): ContentBlock[] => (t === '' ? [] : [{ type: 'text', text: t }]);

// — the AI SDK —

async function aiSdkExecutor(config: DemoConfig, model: Model): Promise<RunExecutor> {
  const ai = await import('ai');
  const { aiSdkLiveInbox } = await import('@inbox-kit/ai-sdk');
  let languageModel: unknown;
  if (config.model.kind === 'anthropic') {
    const { createAnthropic } = await import('@ai-sdk/anthropic');
    languageModel = createAnthropic({ apiKey: config.model.apiKey, baseURL: `${config.model.baseURL ?? 'https://api.anthropic.com'}/v1` })(config.model.model);
  } else {
    languageModel = portLanguageModel(model);
  }
  return {
    kind: 'ai-sdk',
    async execute(attempt) {
      const permission = asks(attempt);
      const tools = Object.fromEntries(hostTools(attempt).map((t) => [t.name, ai.tool({
        description: t.description, inputSchema: ai.jsonSchema(t.input_schema as never),
        // DEMO_TOOL_POLICY=always_ask: the SDK's tool approval stops the loop; the Run parks.
        needsApproval: permission(t.name) === 'ask',
        execute: (input: unknown, options: { toolCallId: string; abortSignal?: AbortSignal }) => runTool(t, attempt, input, options.toolCallId, options.abortSignal),
      })]));
      try {
        return await withApprovals(attempt, async (current) => {
          const inbox = aiSdkLiveInbox(current, { permission });
          await inbox.run(async (options) => {
            let failure: unknown;
            const stream = ai.streamText({ model: languageModel as never, system: current.system ?? DEMO_SYSTEM_PROMPT, tools, stopWhen: ai.stepCountIs(50), maxOutputTokens: 512, ...options, onError: ({ error }) => void (failure ??= error) });
            await stream.consumeStream();
            if (failure !== undefined) throw failure;
            return { steps: await stream.steps };
          });
          return inbox.awaiting !== undefined ? { park: () => inbox.park() } : {};
        });
      } catch (error) {
        return outcomeOf(attempt, error);
      }
    },
  };
}

/** The Model port as an AI SDK language model (`specificationVersion: 'v3'`), for the scripted model. */
function portLanguageModel(model: Model) {
  const call = async (options: { prompt: any[]; tools?: Array<{ name: string; description?: string }>; abortSignal?: AbortSignal }) => {
    const transcript: TranscriptMessage[] = [];
    let i = 0;
    for (const m of options.prompt) {
      const id = String(m.providerOptions?.inboxKit?.id ?? `m${i++}`);
      if (m.role === 'user') transcript.push({ id, role: 'user', content: m.content.filter((p: any) => p.type === 'text').map((p: any) => ({ type: 'text', text: p.text })) });
      else if (m.role === 'assistant') {
        transcript.push({ id, role: 'assistant', content: m.content.flatMap((p: any) => (p.type === 'text' ? [{ type: 'text', text: p.text }] : p.type === 'tool-call' ? [{ type: 'tool_use', id: p.toolCallId, name: p.toolName, input: typeof p.input === 'string' ? JSON.parse(p.input) : p.input }] : [])) });
      } else if (m.role === 'tool') {
        transcript.push({ id: `${id}-results`, role: 'user', content: m.content.map((p: any) => ({ type: 'tool_result', tool_use_id: p.toolCallId, content: textBlocks(String(p.output?.value ?? '')), is_error: p.output?.type === 'error-text' })) });
      }
    }
    const result = await model.step(transcript, options.abortSignal ?? new AbortController().signal, { tools: specsOf(options.tools ?? []), session_id: '', run_id: '' });
    const calls = stepCalls(result.content);
    const content = [
      ...textBlocks(stepText(result.content)).map((b) => ({ type: 'text' as const, text: (b as { text: string }).text })),
      ...calls.map((c) => ({ type: 'tool-call' as const, toolCallId: c.id, toolName: c.name, input: JSON.stringify(c.input) })),
    ];
    return { content, finishReason: { unified: calls.length > 0 ? 'tool-calls' : 'stop', raw: undefined } as const };
  };
  const usage = { inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 0, text: 0, reasoning: 0 } };
  return {
    specificationVersion: 'v3' as const, provider: 'inbox-kit', modelId: 'inbox-kit-demo-scripted', supportedUrls: {},
    async doGenerate(options: any) {
      const { content, finishReason } = await call(options);
      return { content, finishReason, usage, warnings: [] };
    },
    async doStream(options: any) {
      const { content, finishReason } = await call(options);
      const parts: unknown[] = [{ type: 'stream-start', warnings: [] }];
      content.forEach((c, n) => {
        if (c.type === 'text') parts.push({ type: 'text-start', id: `t${n}` }, { type: 'text-delta', id: `t${n}`, delta: c.text }, { type: 'text-end', id: `t${n}` });
        else parts.push(c);
      });
      parts.push({ type: 'finish', finishReason, usage });
      return { stream: new ReadableStream({ start(controller) { for (const p of parts) controller.enqueue(p); controller.close(); } }) };
    },
  };
}

// — LangGraph.js (langchain's createAgent) —

async function langGraphExecutor(config: DemoConfig, model: Model): Promise<RunExecutor> {
  const { createAgent, humanInTheLoopMiddleware } = await import('langchain');
  const { MemorySaver } = await import('@langchain/langgraph');
  const { tool } = await import('@langchain/core/tools');
  const { liveInboxMiddleware, toLangChainMessages } = await import('@inbox-kit/langgraph');
  let chatModel: unknown;
  if (config.model.kind === 'anthropic') {
    const { ChatAnthropic } = await import('@langchain/anthropic');
    chatModel = new ChatAnthropic({
      model: config.model.model, apiKey: config.model.apiKey, maxTokens: 512, streaming: true, maxRetries: 2,
      ...(config.model.baseURL ? { anthropicApiUrl: config.model.baseURL } : {}),
    });
  } else {
    chatModel = await portChatModel(model);
  }
  return {
    kind: 'langgraph',
    async execute(attempt) {
      const permission = asks(attempt);
      const tools = hostTools(attempt).map((t) => tool(
        async (input: unknown, runConfig?: { toolCall?: { id?: string }; signal?: AbortSignal }) => runTool(t, attempt, input, runConfig?.toolCall?.id ?? t.name, runConfig?.signal),
        { name: t.name, description: t.description, schema: t.input_schema as never },
      ));
      const interruptOn = Object.fromEntries(hostTools(attempt).filter((t) => permission(t.name) === 'ask').map((t) => [t.name, { allowedDecisions: ['approve', 'reject'] as const }]));
      try {
        return await withApprovals(attempt, async (current) => {
          const inbox = liveInboxMiddleware(current, { permission });
          // DEMO_TOOL_POLICY=always_ask: langchain's human-in-the-loop interrupt stops the agent
          // before the tool runs (it needs a checkpointer); the Run parks instead of resuming it.
          const hitl = Object.keys(interruptOn).length > 0 ? [humanInTheLoopMiddleware({ interruptOn: interruptOn as never })] : [];
          const agent = createAgent({
            model: chatModel as never, tools, systemPrompt: current.system ?? DEMO_SYSTEM_PROMPT, middleware: [...hitl, inbox],
            ...(hitl.length > 0 ? { checkpointer: new MemorySaver() } : {}),
          } as never) as { invoke(input: unknown, config: unknown): Promise<unknown> };
          const state = await agent.invoke({ messages: toLangChainMessages(current.transcript) }, {
            signal: current.signal, recursionLimit: 200, ...(hitl.length > 0 ? { configurable: { thread_id: current.run_id } } : {}),
          }) as { messages: any[]; __interrupt__?: unknown[] };
          return (state.__interrupt__ ?? []).length > 0 ? { park: () => inbox.park(state) } : {};
        });
      } catch (error) {
        return outcomeOf(attempt, error);
      }
    },
  };
}

/** The Model port as a LangChain chat model, for the scripted model. */
async function portChatModel(model: Model): Promise<unknown> {
  const { BaseChatModel } = await import('@langchain/core/language_models/chat_models');
  const { AIMessage } = await import('@langchain/core/messages');
  class PortChatModel extends BaseChatModel {
    toolSpecs: ToolSpec[] = [];
    _llmType() {
      return 'inbox-kit-port';
    }
    override bindTools(tools: Array<{ name: string; description?: string }>): any {
      const next = new PortChatModel({});
      next.toolSpecs = specsOf(tools);
      return next;
    }
    async _generate(messages: any[], options: { signal?: AbortSignal }) {
      const transcript: TranscriptMessage[] = [];
      messages.forEach((m, i) => {
        const type = m.getType();
        const text = typeof m.content === 'string' ? m.content : m.content.map((c: any) => c.text ?? '').join('');
        const id = String(m.id ?? `m${i}`);
        if (type === 'human') transcript.push({ id, role: 'user', content: textBlocks(text) });
        else if (type === 'ai') transcript.push({ id, role: 'assistant', content: [...textBlocks(text), ...(m.tool_calls ?? []).map((c: any) => ({ type: 'tool_use', id: c.id, name: c.name, input: c.args }))] });
        else if (type === 'tool') transcript.push({ id: `${id}-results`, role: 'user', content: [{ type: 'tool_result', tool_use_id: m.tool_call_id, content: textBlocks(text), is_error: m.status === 'error' }] });
      });
      const result = await model.step(transcript, options.signal ?? new AbortController().signal, { tools: this.toolSpecs, session_id: '', run_id: '' });
      const calls = stepCalls(result.content);
      const message = new AIMessage({ content: stepText(result.content), tool_calls: calls.map((c) => ({ id: c.id, name: c.name, args: c.input, type: 'tool_call' as const })) });
      return { generations: [{ text: stepText(result.content), message }] };
    }
  }
  return new PortChatModel({});
}

// — the OpenAI Agents SDK —

async function openAIAgentsExecutor(model: Model): Promise<RunExecutor> {
  const agents = await import('@openai/agents');
  const { openAIAgentsLiveInbox } = await import('@inbox-kit/openai-agents');
  agents.setTracingDisabled(true);
  const portModel = {
    async getResponse(request: { input: string | any[]; systemInstructions?: string; tools: Array<{ name: string; description?: string }>; signal?: AbortSignal }) {
      const items = typeof request.input === 'string' ? [{ role: 'user', content: request.input }] : request.input;
      const transcript: TranscriptMessage[] = [];
      const text = (content: unknown) => (typeof content === 'string' ? content : Array.isArray(content) ? content.map((c: any) => c.text ?? '').join('') : '');
      items.forEach((item: any, i: number) => {
        const id = String(item.providerData?.inbox_kit_id ?? `i${i}`);
        const last = transcript[transcript.length - 1];
        if (item.type === 'function_call') {
          const use = { type: 'tool_use' as const, id: String(item.callId), name: String(item.name), input: JSON.parse(String(item.arguments || '{}')) };
          if (last?.role === 'assistant') last.content.push(use);
          else transcript.push({ id, role: 'assistant', content: [use] });
        } else if (item.type === 'function_call_result') {
          const result = { type: 'tool_result' as const, tool_use_id: String(item.callId), content: textBlocks(text([item.output]) || String(item.output?.text ?? item.output ?? '')), is_error: item.providerData?.inbox_kit_is_error === true };
          if (last?.role === 'user' && last.content.every((b) => b.type === 'tool_result')) last.content.push(result);
          else transcript.push({ id: `${id}-results`, role: 'user', content: [result] });
        } else if (item.role === 'assistant') transcript.push({ id, role: 'assistant', content: textBlocks(text(item.content)) });
        else if (item.role === 'user') transcript.push({ id, role: 'user', content: textBlocks(text(item.content)) });
      });
      const result = await model.step(transcript, request.signal ?? new AbortController().signal, { tools: specsOf(request.tools), session_id: '', run_id: '', ...(request.systemInstructions ? { system: request.systemInstructions } : {}) });
      const output: any[] = [];
      const t = stepText(result.content);
      if (t !== '') output.push({ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: t }] });
      for (const c of stepCalls(result.content)) output.push({ type: 'function_call', callId: c.id, name: c.name, arguments: JSON.stringify(c.input), status: 'completed' });
      return { usage: new agents.Usage(), output };
    },
    getStreamedResponse(): AsyncIterable<never> {
      throw new Error('the demo runs the Agents SDK without streaming');
    },
  };
  return {
    kind: 'openai-agents',
    async execute(attempt) {
      const permission = asks(attempt);
      const tools = hostTools(attempt).map((t) => agents.tool({
        name: t.name, description: t.description, parameters: t.input_schema as never, strict: false,
        // DEMO_TOOL_POLICY=always_ask: the SDK's tool approval stops the run; the Run parks.
        needsApproval: permission(t.name) === 'ask',
        execute: (input: unknown, _context?: unknown, details?: { toolCall?: { callId?: string } }) => runTool(t, attempt, input, details?.toolCall?.callId ?? t.name),
      }));
      try {
        return await withApprovals(attempt, async (current) => {
          const inbox = openAIAgentsLiveInbox(current, { permission });
          // Wrapped: a response with tool calls is committed before the SDK runs them (the native order).
          const agent = new agents.Agent({ name: 'assistant', instructions: current.system ?? DEMO_SYSTEM_PROMPT, model: inbox.model(portModel) as never, tools });
          const result = await inbox.run((input, options) => agents.run(agent, input as never, { ...options, maxTurns: 50 } as never) as never) as { interruptions?: unknown[] };
          return (result.interruptions ?? []).length > 0 ? { park: () => inbox.park() } : {};
        });
      } catch (error) {
        return outcomeOf(attempt, error);
      }
    },
  };
}

/**
 * The executor of DEMO_RUNTIME `runtime` (undefined for `native`: the Runtime's own loop on
 * `model`). The framework packages are loaded only here.
 */
export async function createDemoExecutor(runtime: DemoRuntime, config: DemoConfig, model: Model): Promise<RunExecutor | undefined> {
  if (runtime === 'ai-sdk') return aiSdkExecutor(config, model);
  if (runtime === 'langgraph') return langGraphExecutor(config, model);
  if (runtime === 'openai-agents') return openAIAgentsExecutor(model);
  return undefined;
}
