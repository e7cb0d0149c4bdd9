/**
 * How `aiSdkLiveInbox` records what the AI SDK did (see `index.ts`): a finished step becomes its
 * assistant turn and the turn of its tool results (errors as `is_error` results), or — when the
 * loop stopped on tool approvals (`needsApproval`) — an open round with the results ready and the
 * Run-scoped ids still awaiting; on `ai` ≥ 7, a model response's tool-use turn is committed before
 * its tools run; on `ai` 5/6, the drained messages are re-inserted right after the
 * step they followed. Spec: live-inbox.md "Framework adapters", "Tools and boundaries".
 */
import type { LiveInboxBridge, ToolResultBlock, ToolUseDisposition, TranscriptMessage } from '@inbox-kit/core';
import type { AiSdkLiveInbox, AiSdkMessage, AiSdkStepLike } from './index.js';

/** The final step's tool calls that wait for the user's approval, with the results ready. */
export interface AwaitingApproval {
  step: TranscriptMessage;
  pending: string[];
  ready: ToolResultBlock[];
}

/** What recording one step adds: output to commit, the step's turns as the SDK's response messages, or the approvals it stopped on. */
export interface RecordedStep {
  output: TranscriptMessage[];
  /** The turns whose response messages carry into the next call. */
  responses: TranscriptMessage[];
  awaiting?: AwaitingApproval;
}

/** A step's tool results and tool errors, as the bridge's results take them. */
function toolOutcomesOf(step: AiSdkStepLike): Array<{ id: string; output: unknown; is_error?: boolean }> {
  const errors = step.content.filter((p) => p.type === 'tool-error');
  return [
    ...step.toolResults.map((r) => ({ id: r.toolCallId, output: r.output })),
    ...errors.map((e) => ({ id: e.toolCallId ?? '', output: e.error instanceof Error ? e.error.message : String(e.error), is_error: true })),
  ];
}

/**
 * Records a finished step. `early`: its assistant turn when `onLanguageModelCallEnd` committed it
 * already (ai ≥ 7, before its tools ran): only its results are output then.
 */
export function recordStep(bridge: LiveInboxBridge, step: AiSdkStepLike, early: TranscriptMessage | undefined): RecordedStep {
  const approvals = new Set(step.content.filter((p) => p.type === 'tool-approval-request').map((p) => (p as { toolCall?: { toolCallId?: string } }).toolCall?.toolCallId ?? ''));
  const assistant = early ?? bridge.step({ text: step.text, tool_calls: step.toolCalls.map((c) => ({ id: c.toolCallId, name: c.toolName, input: c.input })) });
  if (approvals.size > 0) {
    // The loop stopped for approvals: the round stays open (no result for those calls).
    const pending = [...approvals].map((id) => bridge.toolUseIdOf(id) ?? id);
    const results = bridge.results(assistant, toolOutcomesOf(step));
    const ready = results.content.filter((b): b is ToolResultBlock => b.type === 'tool_result' && !pending.includes(b.tool_use_id));
    return { output: early === undefined ? [assistant] : [], responses: [], awaiting: { step: assistant, pending, ready } };
  }
  if (early !== undefined) {
    // Committed already (before the tools ran): only its results are output now.
    const results = bridge.results(assistant, toolOutcomesOf(step));
    return { output: [results], responses: [assistant, results] };
  }
  const messages = [assistant];
  if (step.toolCalls.length > 0) messages.push(bridge.results(assistant, toolOutcomesOf(step)));
  return { output: messages, responses: messages };
}

/**
 * ai ≥ 7, `onLanguageModelCallEnd`: the assistant turn of a model response with tool calls the
 * SDK runs (text and tool uses), to commit alone before its tools run; undefined when it has none.
 */
export function responseStep(bridge: LiveInboxBridge, event: Parameters<AiSdkLiveInbox['onLanguageModelCallEnd']>[0]): TranscriptMessage | undefined {
  const calls = event.content.filter((p) => p.type === 'tool-call' && p.providerExecuted !== true);
  if (calls.length === 0) return undefined;
  const text = event.content.filter((p) => p.type === 'text').map((p) => p.text ?? '').join('');
  return bridge.step({ text, tool_calls: calls.map((c) => ({ id: c.toolCallId ?? '', name: c.toolName ?? '', input: c.input })) });
}

/** How the tool uses of `messages` are recorded (see `AiSdkLiveInboxOptions.permission`). */
export function dispositionsOf(messages: readonly TranscriptMessage[], permission: ((name: string) => 'allow' | 'ask') | undefined): Record<string, ToolUseDisposition> {
  const out: Record<string, ToolUseDisposition> = {};
  for (const m of messages) for (const b of m.content) if (b.type === 'tool_use') out[b.id] = { kind: 'host', permission: permission?.(b.name) ?? 'allow' };
  return out;
}

/**
 * ai 5/6: `messages` is the call's input (its first `base`) plus the response messages of every
 * step; each drained message goes right after the response messages of the step it followed.
 */
export function withInserted(messages: readonly unknown[], base: number, inserted: ReadonlyArray<{ after: number; message: AiSdkMessage }>): unknown[] {
  const rebuilt: unknown[] = messages.slice(0, base);
  let step = 0;
  let i = 0;
  for (const part of splitPerStep(messages.slice(base))) {
    rebuilt.push(...part);
    step++;
    while (i < inserted.length && inserted[i]!.after <= step) rebuilt.push(inserted[i++]!.message);
  }
  while (i < inserted.length) rebuilt.push(inserted[i++]!.message);
  return rebuilt;
}

/** ai 5/6 response messages, grouped per step: an assistant message and the tool message that answers it. */
function splitPerStep(messages: readonly unknown[]): unknown[][] {
  const parts: unknown[][] = [];
  for (const m of messages) {
    const role = (m as { role?: string }).role;
    if (role === 'tool' && parts.length > 0) parts[parts.length - 1]!.push(m);
    else parts.push([m]);
  }
  return parts;
}
