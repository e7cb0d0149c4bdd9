import { describe, expect, it } from 'vitest';
import type { TranscriptMessage } from '@inbox-kit/core';
import { toMessageParams } from './messages.js';

const t = (id: string, role: 'user' | 'assistant', ...texts: string[]): TranscriptMessage => ({
  id, role, content: texts.map((text) => ({ type: 'text', text })),
});

describe('toMessageParams', () => {
  it('keeps roles and order, merges consecutive turns of one role, and sends no Run-scoped id', () => {
    const transcript = [
      t('sevt_1', 'user', 'task'),
      t('run_1-step-0', 'assistant', 'working'),
      t('run_1-inbox-0', 'user', 'first'),
      t('run_1-inbox-1', 'user', 'second', 'third'),
    ];
    const out = toMessageParams(transcript);
    expect(out).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'task' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'working' }] },
      { role: 'user', content: [{ type: 'text', text: 'first' }, { type: 'text', text: 'second' }, { type: 'text', text: 'third' }] },
    ]);
    expect(JSON.stringify(out)).not.toMatch(/run_1|sevt_1/);
  });

  it('maps images (inline and by URL) in user turns, drops them in assistant turns, drops empty text and emptied messages', () => {
    const transcript: TranscriptMessage[] = [
      { id: 'a', role: 'user', content: [{ type: 'text', text: '' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBOR' } }] },
      { id: 'b', role: 'assistant', content: [{ type: 'text', text: '' }] },
      { id: 'c', role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'https://example.test/a.png' } }] },
      { id: 'd', role: 'assistant', content: [{ type: 'image', source: { type: 'url', url: 'https://example.test/b.png' } }, { type: 'text', text: 'seen' }] },
      { id: 'e', role: 'user', content: [{ type: 'text', text: 'next' }] },
    ];
    expect(toMessageParams(transcript)).toEqual([
      {
        role: 'user',
        content: [
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBOR' } },
          { type: 'image', source: { type: 'url', url: 'https://example.test/a.png' } },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'seen' }] },
      { role: 'user', content: [{ type: 'text', text: 'next' }] },
    ]);
  });

  it('trims the trailing whitespace of a final assistant turn (a continued turn), and drops it when nothing is left', () => {
    expect(toMessageParams([t('u', 'user', 'go'), t('s', 'assistant', 'part one \n')])).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'go' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'part one' }] },
    ]);
    expect(toMessageParams([t('u', 'user', 'go'), t('s', 'assistant', '  ')])).toEqual([{ role: 'user', content: [{ type: 'text', text: 'go' }] }]);
    // Only the final turn is trimmed.
    expect(toMessageParams([t('u', 'user', 'go'), t('s', 'assistant', 'a '), t('v', 'user', 'b ')])[1]).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'a ' }] });
  });

  it('does not touch the transcript and shares no object with it', () => {
    const transcript = [t('u', 'user', 'go'), t('s', 'assistant', 'x ')];
    const before = JSON.stringify(transcript);
    const out = toMessageParams(transcript);
    expect(JSON.stringify(transcript)).toBe(before);
    expect(out[0]!.content[0]).not.toBe(transcript[0]!.content[0]);
  });

  it('a tool round: tool_use in the assistant turn, every tool_result first in the next user turn (then the drained steering), ids made API-safe', () => {
    const transcript: TranscriptMessage[] = [
      t('sevt_1', 'user', 'go'),
      { id: 'run:1-step-0', role: 'assistant', content: [{ type: 'text', text: 'looking' }, { type: 'tool_use', id: 'run:1-tool-0', name: 'wait', input: { ms: 5 } }] },
      { id: 'run:1-step-0-results', role: 'user', content: [{ type: 'tool_result', tool_use_id: 'run:1-tool-0', content: [{ type: 'text', text: 'waited 5 ms' }], is_error: false }] },
      t('run:1-inbox-0', 'user', 'steer'),
    ];
    expect(toMessageParams(transcript)).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'go' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'looking' }, { type: 'tool_use', id: 'run_1-tool-0', name: 'wait', input: { ms: 5 } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'run_1-tool-0', content: [{ type: 'text', text: 'waited 5 ms' }] }, { type: 'text', text: 'steer' }] },
    ]);
    // Results lead their turn even when another user message came first; an empty result has no content; errors say so.
    const out = toMessageParams([
      t('a', 'user', 'go'),
      { id: 's', role: 'assistant', content: [{ type: 'tool_use', id: 'x', name: 'n', input: {} }] },
      t('durable', 'user', 'meanwhile'),
      { id: 's-results', role: 'user', content: [{ type: 'tool_result', tool_use_id: 'x', content: [], is_error: true }] },
    ]);
    expect(out[2]).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'x', is_error: true }, { type: 'text', text: 'meanwhile' }] });
  });
});
