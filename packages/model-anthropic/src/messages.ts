/** Transcript → Messages API `messages`: the pure mapping the adapter sends on every step. */
import type { TranscriptBlock, TranscriptMessage } from '@inbox-kit/core';

/** A text block of a request message. */
export interface TextBlockParam {
  type: 'text';
  text: string;
}

/** An image block of a request message, inline (base64) or by URL. */
export interface ImageBlockParam {
  type: 'image';
  source: { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };
}

/** A tool call in an assistant turn: the model's `tool_use` (id, tool name, JSON input). */
export interface ToolUseBlockParam {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
}

/** The result of a tool call, first in the user turn that follows the `tool_use`. */
export interface ToolResultBlockParam {
  type: 'tool_result';
  tool_use_id: string;
  content?: Array<TextBlockParam | ImageBlockParam>;
  is_error?: boolean;
}

/** One message of a Messages API request: `role` and its content blocks. */
export interface MessageParam {
  role: 'user' | 'assistant';
  content: Array<TextBlockParam | ImageBlockParam | ToolUseBlockParam | ToolResultBlockParam>;
}

/**
 * A tool-use id as the Messages API takes it (`^[a-zA-Z0-9_-]+$`): the Run-scoped id
 * (`{run_id}-tool-{j}`) with any other character replaced by `_` — the same everywhere, so a
 * `tool_use` and its `tool_result` keep matching.
 */
export function toolUseIdParam(id: string): string {
  const safe = id.replace(/[^a-zA-Z0-9_-]/g, '_');
  return safe === '' ? '_' : safe;
}

/**
 * Maps a Run's transcript (oldest first) to Messages API `messages`. Spec: live-inbox.md "Drain,
 * commit, carry-over".
 *
 * - Every message keeps its role and its blocks in order; consecutive messages of one role (a
 *   durable user message followed by drained Live Inbox messages, say) become one turn whose
 *   blocks keep the transcript order, so the provider sees strictly alternating turns.
 * - The Run-scoped ids (`{run_id}-inbox-{n}`, `{run_id}-step-{k}`) are not sent: they stay in the
 *   Session ledger.
 * - Blocks the API refuses are left out: empty text blocks, and images in assistant turns; a
 *   message left with no block is left out entirely.
 * - A final assistant turn (the model continues its own turn, e.g. after `pause_turn`) loses its
 *   trailing whitespace, which the API refuses there.
 * - Tool rounds: `tool_use` blocks of an assistant turn go as they are (ids through
 *   {@link toolUseIdParam}); `tool_result` blocks come first in the user turn that follows (the
 *   round's results, then the Live Inbox messages drained with them), as the API requires.
 *
 * Pure: does not touch `transcript` and returns new objects.
 */
export function toMessageParams(transcript: readonly TranscriptMessage[]): MessageParam[] {
  const out: MessageParam[] = [];
  for (const message of transcript) {
    const blocks = message.content.flatMap((block) => blockParam(block, message.role));
    if (blocks.length === 0) continue;
    const last = out[out.length - 1];
    if (last !== undefined && last.role === message.role) last.content.push(...blocks);
    else out.push({ role: message.role, content: blocks });
  }
  for (const m of out) {
    // The results of a round lead their user turn (a stable partition: each keeps its order).
    if (m.role === 'user' && m.content.some((b) => b.type === 'tool_result')) {
      m.content = [...m.content.filter((b) => b.type === 'tool_result'), ...m.content.filter((b) => b.type !== 'tool_result')];
    }
  }
  const final = out[out.length - 1];
  if (final !== undefined && final.role === 'assistant') {
    const tail = final.content[final.content.length - 1];
    if (tail !== undefined && tail.type === 'text') {
      tail.text = tail.text.trimEnd();
      if (tail.text === '') final.content.pop();
      if (final.content.length === 0) out.pop();
    }
  }
  return out;
}

function blockParam(block: TranscriptBlock, role: 'user' | 'assistant'): MessageParam['content'] {
  if (block.type === 'text') return block.text === '' ? [] : [{ type: 'text', text: block.text }];
  if (block.type === 'tool_use') return role === 'assistant' ? [{ type: 'tool_use', id: toolUseIdParam(block.id), name: block.name, input: structuredClone(block.input) }] : [];
  if (block.type === 'tool_result') {
    if (role !== 'user') return [];
    const content = block.content.flatMap((b) => blockParam(b, 'user')) as Array<TextBlockParam | ImageBlockParam>;
    return [{ type: 'tool_result', tool_use_id: toolUseIdParam(block.tool_use_id), ...(content.length > 0 ? { content } : {}), ...(block.is_error ? { is_error: true } : {}) }];
  }
  if (role === 'assistant') return [];
  const source = block.source;
  return [
    source.type === 'base64'
      ? { type: 'image', source: { type: 'base64', media_type: source.media_type, data: source.data } }
      : { type: 'image', source: { type: 'url', url: source.url } },
  ];
}
