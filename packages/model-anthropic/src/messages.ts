/** Transcript → Messages API `messages`: the pure mapping the adapter sends on every step. */
import type { ContentBlock, TranscriptMessage } from '@inbox-kit/core';

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

/** One message of a Messages API request: `role` and its content blocks. */
export interface MessageParam {
  role: 'user' | 'assistant';
  content: Array<TextBlockParam | ImageBlockParam>;
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

function blockParam(block: ContentBlock, role: 'user' | 'assistant'): Array<TextBlockParam | ImageBlockParam> {
  if (block.type === 'text') return block.text === '' ? [] : [{ type: 'text', text: block.text }];
  if (role === 'assistant') return [];
  const source = block.source;
  return [
    source.type === 'base64'
      ? { type: 'image', source: { type: 'base64', media_type: source.media_type, data: source.data } }
      : { type: 'image', source: { type: 'url', url: source.url } },
  ];
}
