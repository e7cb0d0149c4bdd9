/**
 * The Tool port of the native agent loop and the runtime-only transcript blocks of a tool round
 * (`tool_use`, `tool_result`): tool definitions, their input check against the JSON Schema they
 * declare, and the execution of host tools (timeout, abort, bounded concurrency, results in
 * tool-use order). Spec: live-inbox.md "Tools and boundaries".
 */
import { z } from 'zod';
import { contentBlockSchema, cloneContent, type ContentBlock } from './content.js';
import { contentBytes } from './queue.js';

/** A JSON Schema of a tool's input: an object schema (`{ type: 'object', properties?, required?, … }`). */
export interface JsonSchemaObject {
  type: 'object';
  properties?: Record<string, unknown> | null;
  required?: string[] | null;
  [keyword: string]: unknown;
}

/**
 * What the model is told about a tool in a step: `name` (1–128 of `A–Z a–z 0–9 _ -`), a
 * `description` and the JSON Schema of its `input`.
 */
export interface ToolSpec {
  name: string;
  description: string;
  input_schema: JsonSchemaObject;
}

/**
 * When a host tool runs: `always_allow` as soon as the model calls it; `always_ask` only after a
 * `user.tool_confirmation` with `result: 'allow'` (the Run waits, `requires_action`).
 */
export type ToolPermission = 'always_allow' | 'always_ask';

/** What a host tool's `execute` gets besides its input. */
export interface ToolContext {
  /** Aborted when the Run is interrupted or the tool's timeout passes: stop promptly. */
  signal: AbortSignal;
  session_id: string;
  run_id: string;
  /** The Run-scoped id of this tool use (`{run_id}-tool-{j}`), also the id of its `agent.tool_use` event. */
  tool_use_id: string;
}

/**
 * What a host tool returns: text, content blocks (text or image), or either with `is_error` (the
 * model is told the call failed). Throwing is the same as `{ content: <the error's message>,
 * is_error: true }`.
 */
export type ToolOutput = string | ContentBlock[] | { content: string | ContentBlock[]; is_error?: boolean };

/**
 * A tool of the native loop. With `execute` it is a **host** tool: the Runtime runs it between
 * model calls (after a confirmation when `permission` is `always_ask`). Without it, a **client**
 * tool (a Managed Agents custom tool): the Run emits `agent.custom_tool_use` and waits for the
 * client's `user.custom_tool_result`. The input is checked against `input_schema` before anything
 * else: an invalid input is answered with an error result, never executed or sent.
 */
export interface Tool extends ToolSpec {
  /** Default `always_allow`. Ignored for client tools (the client decides). */
  permission?: ToolPermission;
  /** Runs the tool; absent for a client tool. */
  execute?: (input: Record<string, unknown>, context: ToolContext) => ToolOutput | Promise<ToolOutput>;
  /** This tool's timeout (ms, integer ≥ 1); default the Run's `toolTimeoutMs`. */
  timeoutMs?: number;
}

/** A tool call in an assistant message of the transcript (runtime-only: never accepted from callers). */
export interface ToolUseBlock {
  type: 'tool_use';
  /** Run-scoped: `{run_id}-tool-{j}` (see {@link toolUseId}). */
  id: string;
  name: string;
  input: Record<string, unknown>;
}

/** The result of one tool call, in the user turn right after the assistant's tool uses (runtime-only). */
export interface ToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content: ContentBlock[];
  is_error: boolean;
}

/** A block of a transcript message: content (text, image) or a tool round's `tool_use` / `tool_result`. */
export type TranscriptBlock = ContentBlock | ToolUseBlock | ToolResultBlock;

/**
 * How a tool use is recorded in the Session ledger when its assistant turn is committed (its
 * Managed Agents event): `host` — `agent.tool_use` with `evaluated_permission` `allow` (runs now)
 * or `ask` (waits for `user.tool_confirmation`); `custom` — `agent.custom_tool_use` (waits for
 * `user.custom_tool_result`); `refused` — `agent.tool_use` with `evaluated_permission: 'deny'`
 * (unknown tool, invalid input: never run; an error result says `reason`).
 */
export type ToolUseDisposition =
  | { kind: 'host'; permission: 'allow' | 'ask' }
  | { kind: 'custom' }
  | { kind: 'refused'; reason: string };

/** What a client sent for a pending tool use: a custom tool's result, or a confirmation verdict. */
export type ToolUseResolution =
  | { type: 'custom_result'; content: ContentBlock[]; is_error: boolean }
  | { type: 'confirmation'; result: 'allow' | 'deny'; deny_message: string | null };

/** One tool use of a round that has not been answered in the transcript yet (a Run resumed mid-round). */
export interface OpenToolUse {
  block: ToolUseBlock;
  disposition: ToolUseDisposition;
  /** Its result, when already committed to the ledger (host result committed as the Run parked, client result). */
  result?: ToolResultBlock;
  /** The client's answer, when it sent one. */
  resolution?: ToolUseResolution;
}

/** The last assistant step of a Run and its tool uses, when the Run is resumed before their results were committed. */
export interface OpenRound {
  /** The step's message id, `{run_id}-step-{k}`. */
  step_id: string;
  tool_uses: OpenToolUse[];
}

/** Tool names as the Messages API and Managed Agents take them. */
export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;
/** Longest tool description (code points). */
export const MAX_TOOL_DESCRIPTION_CHARS = 10_000;
/** Largest `input_schema` (bytes of its JSON text). */
export const MAX_TOOL_SCHEMA_BYTES = 64 * 1024;
/** Largest result content of a host tool (bytes of its JSON text); past it the result is an error. */
export const MAX_TOOL_RESULT_BYTES = 1024 * 1024;

/**
 * The Run-scoped id of the `j`-th tool use of a Run (`j` integer ≥ 0, over all its attempts):
 * `{run_id}-tool-{j}`. It is also the id of the tool use's ledger event, so a client answers with
 * it (`custom_tool_use_id`, `tool_use_id`). Spec: live-inbox.md "Tools and boundaries".
 */
export function toolUseId(run_id: string, j: number): string {
  return `${run_id}-tool-${String(j)}`;
}

/** The message id of the tool results answering step `step_id`: `{step_id}-results`. */
export function toolResultsMessageId(step_id: string): string {
  return `${step_id}-results`;
}

/** A deep copy of transcript blocks that shares nothing with the input. */
export function cloneBlocks(blocks: readonly TranscriptBlock[]): TranscriptBlock[] {
  return blocks.map((block): TranscriptBlock => {
    if (block.type === 'tool_use') return { type: 'tool_use', id: block.id, name: block.name, input: structuredClone(block.input) };
    if (block.type === 'tool_result') return { type: 'tool_result', tool_use_id: block.tool_use_id, content: cloneContent(block.content), is_error: block.is_error };
    return cloneContent([block])[0] as ContentBlock;
  });
}

/** A tool checked and ready: its input validator. */
export interface CompiledTool {
  tool: Tool;
  /** `undefined` when `input` is valid, else what is wrong (one line per problem). */
  check(input: unknown): string | undefined;
}

/**
 * Checks one tool definition: a valid name, a description of at most {@link MAX_TOOL_DESCRIPTION_CHARS},
 * an object `input_schema` of at most {@link MAX_TOOL_SCHEMA_BYTES} that zod can turn into a
 * validator (`z.fromJSONSchema`: drafts 4, 7, 2020-12; `if`/`then`/`else`, `unevaluated*` and
 * remote `$ref`s are not supported), an integer `timeoutMs` ≥ 1 when given.
 * @returns the problems (empty when the tool is fine), each `{ path, message }` relative to the tool.
 */
export function toolDefinitionProblems(tool: Pick<Tool, 'name' | 'description' | 'input_schema'> & { timeoutMs?: unknown }): Array<{ path: string; message: string }> {
  const problems: Array<{ path: string; message: string }> = [];
  if (typeof tool.name !== 'string' || !TOOL_NAME.test(tool.name)) {
    problems.push({ path: 'name', message: 'must be 1–128 characters of letters, digits, underscores and hyphens' });
  }
  if (typeof tool.description !== 'string' || [...tool.description].length > MAX_TOOL_DESCRIPTION_CHARS) {
    problems.push({ path: 'description', message: `must be a string of at most ${MAX_TOOL_DESCRIPTION_CHARS} characters` });
  }
  const schema = tool.input_schema as unknown;
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema) || (schema as { type?: unknown }).type !== 'object') {
    problems.push({ path: 'input_schema', message: 'must be a JSON Schema object with "type": "object"' });
  } else {
    const text = JSON.stringify(schema);
    if (text === undefined || new TextEncoder().encode(text).length > MAX_TOOL_SCHEMA_BYTES) {
      problems.push({ path: 'input_schema', message: `must be JSON of at most ${MAX_TOOL_SCHEMA_BYTES} bytes` });
    } else {
      try {
        z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
      } catch (error) {
        problems.push({ path: 'input_schema', message: `is not a JSON Schema this runtime can check: ${error instanceof Error ? error.message : String(error)}` });
      }
    }
  }
  if (tool.timeoutMs !== undefined && (typeof tool.timeoutMs !== 'number' || !Number.isInteger(tool.timeoutMs) || tool.timeoutMs < 1 || tool.timeoutMs > 2 ** 31 - 1)) {
    problems.push({ path: 'timeoutMs', message: 'must be an integer from 1 to 2147483647 (ms)' });
  }
  return problems;
}

/**
 * Compiles a Run's tools: each definition checked ({@link toolDefinitionProblems}), names unique.
 * @throws TypeError naming the first bad tool.
 */
export function compileTools(tools: readonly Tool[]): Map<string, CompiledTool> {
  const out = new Map<string, CompiledTool>();
  for (const [i, tool] of tools.entries()) {
    const problems = toolDefinitionProblems(tool);
    if (problems.length > 0) throw new TypeError(`tool ${i} (${JSON.stringify(tool.name)}): ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`);
    if (out.has(tool.name)) throw new TypeError(`tool ${i}: the name ${JSON.stringify(tool.name)} is used twice`);
    const schema = z.fromJSONSchema(tool.input_schema as Parameters<typeof z.fromJSONSchema>[0]);
    out.set(tool.name, {
      tool,
      check(input) {
        if (input === null || typeof input !== 'object' || Array.isArray(input)) return 'the input must be a JSON object';
        const parsed = schema.safeParse(input);
        if (parsed.success) return undefined;
        return parsed.error.issues.slice(0, 10).map((issue) => `${issue.path.length === 0 ? 'input' : issue.path.join('.')}: ${issue.message}`).join('; ');
      },
    });
  }
  return out;
}

/** The specs the model is told about (name, description, input schema), in the tools' order. */
export function toolSpecs(tools: readonly Tool[]): ToolSpec[] {
  return tools.map((t) => ({ name: t.name, description: t.description, input_schema: structuredClone(t.input_schema) }));
}

/** An error result (`is_error: true`) with one text block. */
export function errorResult(tool_use_id: string, message: string): ToolResultBlock {
  return { type: 'tool_result', tool_use_id, content: [{ type: 'text', text: message }], is_error: true };
}

const outputContent = z.array(contentBlockSchema).min(1);

/**
 * A host tool's output as a result block: text → one text block (empty text → `(no output)`);
 * blocks are checked like Live Inbox content (an invalid block, or content past
 * {@link MAX_TOOL_RESULT_BYTES}, makes an error result saying so).
 */
export function resultOf(tool_use_id: string, output: ToolOutput): ToolResultBlock {
  const raw = typeof output === 'string' || Array.isArray(output) ? output : output?.content;
  const is_error = typeof output === 'object' && output !== null && !Array.isArray(output) && output.is_error === true;
  const blocks: unknown = typeof raw === 'string' ? [{ type: 'text', text: raw === '' ? '(no output)' : raw }] : raw;
  const parsed = outputContent.safeParse(blocks);
  if (!parsed.success) return errorResult(tool_use_id, 'The tool returned content that is not text or image blocks a model accepts.');
  const content = cloneContent(parsed.data as ContentBlock[]);
  if (contentBytes(content) > MAX_TOOL_RESULT_BYTES) return errorResult(tool_use_id, `The tool's result is larger than ${MAX_TOOL_RESULT_BYTES} bytes.`);
  return { type: 'tool_result', tool_use_id, content, is_error };
}

/** The message of a thrown value, for an error result (first 2,000 code points). */
function messageOf(error: unknown): string {
  const text = error instanceof Error ? error.message : typeof error === 'string' ? error : 'The tool failed.';
  const chars = [...(text || 'The tool failed.')];
  return chars.length > 2000 ? `${chars.slice(0, 1999).join('')}…` : chars.join('');
}

/** Options of {@link executeHostTool}. */
export interface ExecuteToolOptions {
  session_id: string;
  run_id: string;
  /** The Run's signal: aborting it aborts the tool and rejects with its reason. */
  signal: AbortSignal;
  /** ms; the tool's own `timeoutMs` wins. */
  timeoutMs: number;
}

/**
 * Runs one host tool on `input` (already checked). Resolves with its result: the output, or an
 * error result when it throws (`is_error`, the error's message), exceeds its timeout ("timed out
 * after N ms"; its signal is aborted) or returns something that is not content. Rejects only with
 * the Run signal's reason when the Run is aborted meanwhile (the tool's signal is aborted too; a
 * tool that ignores it is not waited for).
 */
export async function executeHostTool(tool: Tool, use: ToolUseBlock, options: ExecuteToolOptions): Promise<ToolResultBlock> {
  const { signal } = options;
  if (signal.aborted) throw signal.reason;
  const timeoutMs = tool.timeoutMs ?? options.timeoutMs;
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => {
      controller.abort(signal.reason);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
  const timedOut = new Promise<ToolResultBlock>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new Error(`The tool timed out after ${timeoutMs} ms`));
      resolve(errorResult(use.id, `The tool ${use.name} timed out after ${timeoutMs} ms.`));
    }, timeoutMs);
  });
  const running = (async () => {
    try {
      const output = await tool.execute!(structuredClone(use.input), {
        signal: controller.signal, session_id: options.session_id, run_id: options.run_id, tool_use_id: use.id,
      });
      return resultOf(use.id, output);
    } catch (error) {
      return errorResult(use.id, messageOf(error));
    }
  })();
  try {
    return await Promise.race([running, timedOut, aborted]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener('abort', onAbort);
    aborted.catch(() => undefined);
  }
}

/**
 * `fn` over `items` with at most `limit` calls in flight; resolves with the results in `items`'
 * order, or rejects with the first rejection (the calls already started are not waited for).
 */
export async function mapBounded<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i] as T, i);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return results;
}
