/**
 * How `openAIAgentsLiveInbox` reads what the OpenAI Agents SDK did (see `index.ts`): its items
 * (assistant messages, function calls, function call results) become steps — an assistant turn
 * with its tool uses, then the turn of its results — ready to commit at the next boundary; a
 * model response with function calls becomes its step at once (committed before the SDK runs the
 * tools); the drained messages shown to the model are re-inserted at the positions they followed.
 * Spec: live-inbox.md "Framework adapters", "Tools and boundaries".
 */
import type { LiveInboxBridge, ToolUseDisposition, TranscriptMessage } from '@inbox-kit/core';
import type { AgentsInputItem } from './index.js';

export const textOf = (content: unknown): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.map((c: { text?: unknown }) => (typeof c.text === 'string' ? c.text : '')).join('') : '';
const outputOf = (output: unknown): string => (typeof output === 'string' ? output : textOf([output]) || JSON.stringify(output ?? null));

/** A function call's `arguments` (a JSON string) as the tool use's input; `{}` when it is not JSON. */
export function parseArguments(raw: unknown): unknown {
  try {
    return JSON.parse(String(raw ?? '{}'));
  } catch {
    return {};
  }
}

/** How the tool uses of `output` are recorded (see `OpenAIAgentsLiveInboxOptions.permission`). */
export function dispositionsOf(output: readonly TranscriptMessage[], permission: ((name: string) => 'allow' | 'ask') | undefined): Record<string, ToolUseDisposition> {
  const tool_uses: Record<string, ToolUseDisposition> = {};
  for (const m of output) for (const b of m.content) if (b.type === 'tool_use') tool_uses[b.id] = { kind: 'host', permission: permission?.(b.name) ?? 'allow' };
  return tool_uses;
}

/** `items` with each drained message at the position it followed. */
export function withInserted(items: readonly AgentsInputItem[], inserted: ReadonlyArray<{ at: number; item: AgentsInputItem }>): AgentsInputItem[] {
  const out: AgentsInputItem[] = [];
  let i = 0;
  items.forEach((item, index) => {
    while (i < inserted.length && inserted[i]!.at <= index) out.push(inserted[i++]!.item);
    out.push(item);
  });
  while (i < inserted.length) out.push(inserted[i++]!.item);
  return out;
}

/** The step being read (text and calls of one model response), with its results. */
export interface OpenStep {
  text: string;
  calls: Array<{ id: string; name: string; input: unknown }>;
  results: Array<{ id: string; output: unknown }>;
  /** Its assistant turn, when committed as its model returned it. */
  committed?: TranscriptMessage;
}

/** Reads the SDK's items into steps, in order, remembering how far it read. */
export class StepReader {
  /** The step being read. */
  open: OpenStep | undefined;
  /** Steps committed as their model returned them, by the SDK's call id. */
  readonly early = new Map<string, TranscriptMessage>();
  /** Steps read and not committed yet. */
  readonly finished: TranscriptMessage[] = [];

  /** @param seen items of the SDK's input already read (recorded as output, or input). */
  constructor(readonly bridge: LiveInboxBridge, public seen: number) {}

  /** Ends the open step: its assistant turn (unless committed already) and its results join `finished`. */
  close(): void {
    const open = this.open;
    if (open === undefined) return;
    if (open.committed !== undefined) {
      this.finished.push(this.bridge.results(open.committed, open.results));
      this.open = undefined;
      return;
    }
    const step = this.bridge.step({ text: open.text, tool_calls: open.calls });
    this.finished.push(step);
    if (open.calls.length > 0) this.finished.push(this.bridge.results(step, open.results));
    this.open = undefined;
  }

  /** Reads the items after the ones already seen. */
  read(items: readonly AgentsInputItem[]): void {
    for (const item of items.slice(this.seen)) {
      const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
      if (type === 'message' && item.role === 'assistant') {
        if (this.open !== undefined && this.open.results.length > 0) this.close();
        this.open ??= { text: '', calls: [], results: [] };
        this.open.text += textOf(item.content);
      } else if (type === 'function_call') {
        if (this.open !== undefined && this.open.results.length > 0) this.close();
        this.open ??= { text: '', calls: [], results: [] };
        const committed = this.early.get(String(item.callId));
        if (committed !== undefined) this.open.committed = committed;
        this.open.calls.push({ id: String(item.callId), name: String(item.name), input: parseArguments(item.arguments) });
      } else if (type === 'function_call_result') {
        this.open?.results.push({ id: String(item.callId), output: outputOf(item.output) });
      }
    }
    this.seen = items.length;
  }

  /**
   * The step of a model response with function calls, to commit before the SDK runs the tools
   * (then record it in {@link early} under `call_ids`); undefined without calls.
   */
  responseStep(output: readonly AgentsInputItem[]): { step: TranscriptMessage; call_ids: string[] } | undefined {
    const calls = output.filter((i) => i.type === 'function_call');
    if (calls.length === 0) return undefined;
    const text = output.filter((i) => (i.type ?? 'message') === 'message' && i.role === 'assistant').map((i) => textOf(i.content)).join('');
    const step = this.bridge.step({ text, tool_calls: calls.map((c) => ({ id: String(c.callId), name: String(c.name), input: parseArguments(c.arguments) })) });
    return { step, call_ids: calls.map((c) => String(c.callId)) };
  }
}
