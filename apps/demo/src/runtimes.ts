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
import type {
  ContentBlock, Model, RunAttempt, RunExecutor, RunOutcome, Tool, ToolSpec, TranscriptBlock, TranscriptMessage,
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
      const tools = Object.fromEntries(hostTools(attempt).map((t) => [t.name, ai.tool({
        description: t.description, inputSchema: ai.jsonSchema(t.input_schema as never),
        execute: (input: unknown, options: { toolCallId: string; abortSignal?: AbortSignal }) => runTool(t, attempt, input, options.toolCallId, options.abortSignal),
      })]));
      const inbox = aiSdkLiveInbox(attempt);
      try {
        await inbox.run(async (options) => {
          let failure: unknown;
          const stream = ai.streamText({ model: languageModel as never, system: attempt.system ?? DEMO_SYSTEM_PROMPT, tools, stopWhen: ai.stepCountIs(50), maxOutputTokens: 512, ...options, onError: ({ error }) => void (failure ??= error) });
          await stream.consumeStream();
          if (failure !== undefined) throw failure;
          return { steps: await stream.steps };
        });
        return outcomeOf(attempt);
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
  const { createAgent } = await import('langchain');
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
      const tools = hostTools(attempt).map((t) => tool(
        async (input: unknown, runConfig?: { toolCall?: { id?: string }; signal?: AbortSignal }) => runTool(t, attempt, input, runConfig?.toolCall?.id ?? t.name, runConfig?.signal),
        { name: t.name, description: t.description, schema: t.input_schema as never },
      ));
      const agent = createAgent({ model: chatModel as never, tools, systemPrompt: attempt.system ?? DEMO_SYSTEM_PROMPT, middleware: [liveInboxMiddleware(attempt)] });
      try {
        await agent.invoke({ messages: toLangChainMessages(attempt.transcript) }, { signal: attempt.signal, recursionLimit: 200 });
        return outcomeOf(attempt);
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
          const result = { type: 'tool_result' as const, tool_use_id: String(item.callId), content: textBlocks(text([item.output]) || String(item.output?.text ?? item.output ?? '')), is_error: false };
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
      const tools = hostTools(attempt).map((t) => agents.tool({
        name: t.name, description: t.description, parameters: t.input_schema as never, strict: false,
        execute: (input: unknown, _context?: unknown, details?: { toolCall?: { callId?: string } }) => runTool(t, attempt, input, details?.toolCall?.callId ?? t.name),
      }));
      const inbox = openAIAgentsLiveInbox(attempt);
      // Wrapped: a response with tool calls is committed before the SDK runs them (the native order).
      const agent = new agents.Agent({ name: 'assistant', instructions: attempt.system ?? DEMO_SYSTEM_PROMPT, model: inbox.model(portModel) as never, tools });
      try {
        await inbox.run((input, options) => agents.run(agent, input as never, { ...options, maxTurns: 50 } as never) as never);
        return outcomeOf(attempt);
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
