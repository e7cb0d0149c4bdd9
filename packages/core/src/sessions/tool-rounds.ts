/**
 * Tool rounds in the Session ledger (live-inbox.md "Tools and boundaries"): the events a round
 * writes (`agent.tool_use`, `agent.custom_tool_use`, `agent.tool_result`, and the client's
 * `user.custom_tool_result` / `user.tool_confirmation`), how committed history is read back into a
 * transcript with `tool_use` / `tool_result` blocks, and the open round of a Run — its last step's
 * tool uses with their results and the client's answers — found by reading the ledger backwards.
 * Pure functions over events, plus one store read. Internal to the core.
 */
import { contentSchema, type ContentBlock } from '../live-inbox/content.js';
import type { TranscriptMessage } from '../live-inbox/bridge.js';
import {
  toolResultsMessageId, type OpenRound, type OpenToolUse, type ToolResultBlock, type ToolUseBlock, type ToolUseDisposition,
  type ToolUseResolution,
} from '../live-inbox/tools.js';
import type { StoreTx } from '../ports/store.js';
import type { JsonValue, SessionEvent } from '../records.js';

/** Session event types of a tool round. */
export const TOOL_EVENT_TYPES = {
  toolUse: 'agent.tool_use',
  customToolUse: 'agent.custom_tool_use',
  toolResult: 'agent.tool_result',
  customToolResult: 'user.custom_tool_result',
  toolConfirmation: 'user.tool_confirmation',
} as const;

const TOOL_USE_TYPES: readonly string[] = [TOOL_EVENT_TYPES.toolUse, TOOL_EVENT_TYPES.customToolUse];

/** The stored `content` of a tool-use event (the event's id is the tool use's id). */
export function toolUseContent(block: ToolUseBlock, disposition: ToolUseDisposition): JsonValue {
  const base = { name: block.name, input: block.input as JsonValue };
  if (disposition.kind === 'custom') return base;
  if (disposition.kind === 'refused') return { ...base, evaluated_permission: 'deny', reason: disposition.reason };
  return { ...base, evaluated_permission: disposition.permission, evaluation: { type: disposition.permission === 'ask' ? 'always_ask' : 'always_allow' } };
}

/** The stored `content` of an `agent.tool_result` event. */
export function toolResultContent(result: ToolResultBlock): JsonValue {
  return { tool_use_id: result.tool_use_id, content: result.content as unknown as JsonValue, is_error: result.is_error };
}

const obj = (v: JsonValue): Record<string, JsonValue> => (v !== null && typeof v === 'object' && !Array.isArray(v) ? v : {});
const blocksOf = (v: JsonValue | undefined): ContentBlock[] => {
  if (v === undefined || (Array.isArray(v) && v.length === 0)) return [];
  const parsed = contentSchema.safeParse(v);
  return parsed.success ? parsed.data : [];
};

/** The tool use a tool-use event records. */
export function toolUseOf(event: SessionEvent): ToolUseBlock {
  const c = obj(event.content);
  return { type: 'tool_use', id: event.id, name: String(c.name ?? ''), input: obj(c.input ?? null) as Record<string, unknown> };
}

/** How a tool-use event recorded its tool use. */
export function dispositionOf(event: SessionEvent): ToolUseDisposition {
  if (event.type === TOOL_EVENT_TYPES.customToolUse) return { kind: 'custom' };
  const c = obj(event.content);
  if (c.evaluated_permission === 'ask') return { kind: 'host', permission: 'ask' };
  if (c.evaluated_permission === 'deny') return { kind: 'refused', reason: typeof c.reason === 'string' ? c.reason : 'The call was refused.' };
  return { kind: 'host', permission: 'allow' };
}

/** The result an `agent.tool_result` or `user.custom_tool_result` event holds, with the tool use it answers. */
export function eventResult(event: SessionEvent): ToolResultBlock | undefined {
  const c = obj(event.content);
  const id = event.type === TOOL_EVENT_TYPES.toolResult ? c.tool_use_id : event.type === TOOL_EVENT_TYPES.customToolResult ? c.custom_tool_use_id : undefined;
  if (typeof id !== 'string') return undefined;
  return { type: 'tool_result', tool_use_id: id, content: blocksOf(c.content), is_error: c.is_error === true };
}

/** The client's answer a `user.custom_tool_result` or `user.tool_confirmation` event holds, with the tool use it answers. */
export function resolutionOf(event: SessionEvent): { id: string; resolution: ToolUseResolution } | undefined {
  const c = obj(event.content);
  if (event.type === TOOL_EVENT_TYPES.customToolResult && typeof c.custom_tool_use_id === 'string') {
    return { id: c.custom_tool_use_id, resolution: { type: 'custom_result', content: blocksOf(c.content), is_error: c.is_error === true } };
  }
  if (event.type === TOOL_EVENT_TYPES.toolConfirmation && typeof c.tool_use_id === 'string') {
    return {
      id: c.tool_use_id,
      resolution: { type: 'confirmation', result: c.result === 'allow' ? 'allow' : 'deny', deny_message: typeof c.deny_message === 'string' ? c.deny_message : null },
    };
  }
  return undefined;
}

/** A Run's open round as the ledger has it, with what is still pending. */
export interface LedgerRound extends OpenRound {
  /** Tool uses waiting for the client: custom tools without a result, `always_ask` tools without a confirmation. */
  pending: string[];
  /** Whether every tool use has its result committed (the round is closed). */
  complete: boolean;
}

/** Whether `use` waits for the client. */
export function isPending(use: OpenToolUse): boolean {
  if (use.result !== undefined) return false;
  if (use.disposition.kind === 'custom') return use.resolution === undefined;
  return use.disposition.kind === 'host' && use.disposition.permission === 'ask' && use.resolution === undefined;
}

/** The round of `step_id` from its tool-use events and the events answering them. */
function roundOf(step_id: string, uses: SessionEvent[], answers: SessionEvent[]): LedgerRound {
  const tool_uses: OpenToolUse[] = uses.map((e) => ({ block: toolUseOf(e), disposition: dispositionOf(e) }));
  const byId = new Map(tool_uses.map((u) => [u.block.id, u]));
  for (const e of answers) {
    const result = eventResult(e);
    if (result !== undefined) {
      const use = byId.get(result.tool_use_id);
      if (use !== undefined && use.result === undefined) use.result = result;
    }
    const answer = resolutionOf(e);
    if (answer !== undefined) {
      const use = byId.get(answer.id);
      if (use !== undefined && use.resolution === undefined) use.resolution = answer.resolution;
    }
  }
  return { step_id, tool_uses, pending: tool_uses.filter(isPending).map((u) => u.block.id), complete: tool_uses.every((u) => u.result !== undefined) };
}

/** Events read per page when the ledger is read backwards. */
const BACK_PAGE = 200;

/**
 * Inside `tx` (or on the store): the last tool round of `run_id` in the Session's ledger, read
 * backwards from the newest event until the round's step — its tool-use events (one commit, so
 * contiguous), and after them the results and the client's answers. `undefined` when the Run's
 * latest step called no tool (or it has none). Events of other Runs end the search (they precede
 * the Run); durable input (`run_id` null) is skipped.
 */
export async function lastRound(tx: Pick<StoreTx, 'listSessionEvents'>, session_id: string, run_id: string): Promise<LedgerRound | undefined> {
  const answers: SessionEvent[] = [];
  const uses: SessionEvent[] = [];
  let step: string | undefined;
  let before: number | undefined;
  for (;;) {
    const rows = await tx.listSessionEvents({ session_id, after: 0, ...(before !== undefined ? { before } : {}), order: 'desc', limit: BACK_PAGE });
    for (const e of rows) {
      if (e.run_id === null) continue;
      if (e.run_id !== run_id) return step === undefined ? undefined : roundOf(step, uses.reverse(), answers.reverse());
      if (step === undefined) {
        if (TOOL_USE_TYPES.includes(e.type)) {
          step = e.message_id ?? '';
          uses.push(e);
        } else if (e.type === 'agent.message' || e.type === 'user.message') return undefined;
        else answers.push(e);
      } else if (TOOL_USE_TYPES.includes(e.type) && e.message_id === step) uses.push(e);
      else return roundOf(step, uses.reverse(), answers.reverse());
    }
    const last = rows[rows.length - 1];
    if (rows.length < BACK_PAGE || last === undefined) return step === undefined ? undefined : roundOf(step, uses.reverse(), answers.reverse());
    before = last.seq;
  }
}

/** Builds transcripts from committed events, oldest first (see {@link TranscriptBuilder.add}). */
export class TranscriptBuilder {
  readonly #out: TranscriptMessage[] = [];
  readonly #steps = new Map<string, TranscriptMessage>();
  readonly #results = new Map<string, ToolResultBlock>();

  /**
   * Takes one event: `user.message` and `agent.message` become messages (id: the Run-scoped
   * `message_id`, or the event id); a tool-use event adds its `tool_use` block to its step's
   * assistant message (made when the step had no text); results are kept for {@link build}.
   */
  add(e: SessionEvent): void {
    if (e.type === 'user.message' || e.type === 'agent.message') {
      const content = contentSchema.safeParse(e.content);
      if (!content.success) return;
      const role = e.type === 'user.message' ? 'user' : 'assistant';
      const message: TranscriptMessage = { id: e.message_id ?? e.id, role, content: content.data };
      this.#out.push(message);
      if (role === 'assistant' && e.message_id !== null) this.#steps.set(e.message_id, message);
      return;
    }
    if (TOOL_USE_TYPES.includes(e.type)) {
      const step_id = e.message_id ?? e.id;
      let message = this.#steps.get(step_id);
      if (message === undefined || this.#out[this.#out.length - 1] !== message) {
        message = { id: step_id, role: 'assistant', content: [] };
        this.#out.push(message);
        this.#steps.set(step_id, message);
      }
      message.content.push(toolUseOf(e));
      return;
    }
    const result = eventResult(e);
    if (result !== undefined && !this.#results.has(result.tool_use_id)) this.#results.set(result.tool_use_id, result);
  }

  /**
   * The transcript: after every assistant message with tool uses, the user message
   * `{step}-results` with one result per tool use in tool-use order — except for `open`, the
   * step of a Run resumed mid-round, which is left without results (the round is finished by the
   * loop). A tool use with no result recorded (a Run that ended without closing its round) gets an
   * error result, so the transcript stays valid for the model.
   */
  build(open?: string): TranscriptMessage[] {
    const out: TranscriptMessage[] = [];
    for (const m of this.#out) {
      out.push(m);
      const uses = m.role === 'assistant' ? m.content.filter((b): b is ToolUseBlock => b.type === 'tool_use') : [];
      if (uses.length === 0 || m.id === open) continue;
      out.push({
        id: toolResultsMessageId(m.id), role: 'user',
        content: uses.map((u) => this.#results.get(u.id) ?? {
          type: 'tool_result', tool_use_id: u.id, content: [{ type: 'text', text: 'No result was recorded for this call.' }], is_error: true,
        }),
      });
    }
    return out;
  }
}
