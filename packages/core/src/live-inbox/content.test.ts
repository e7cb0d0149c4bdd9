import { describe, it, expect } from 'vitest';
import { InboxKitError } from '../errors.js';
import { cloneContent, contentSchema, parseContent, type ContentBlock } from './index.js';

const valid: ContentBlock[] = [
  { type: 'text', text: 'hello' },
  { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
  { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
];

describe('contentSchema', () => {
  it('accepts text, base64 image and url image blocks', () => {
    expect(contentSchema.safeParse(valid).success).toBe(true);
  });

  it.each([
    ['an empty array', []],
    ['a non-array', { type: 'text', text: 'x' }],
    ['an unknown block type', [{ type: 'audio', data: 'x' }]],
    ['an unknown field on a text block', [{ type: 'text', text: 'x', cache_control: {} }]],
    ['a text block without text', [{ type: 'text' }]],
    ['a non-string text', [{ type: 'text', text: 3 }]],
    ['an unknown source type', [{ type: 'image', source: { type: 'file', file_id: 'f' } }]],
    ['an unknown field in a source', [{ type: 'image', source: { type: 'url', url: 'u', detail: 'high' } }]],
    ['an unknown field on an image block', [{ type: 'image', source: { type: 'url', url: 'u' }, alt: 'a' }]],
    ['a base64 source without media_type', [{ type: 'image', source: { type: 'base64', data: 'x' } }]],
  ])('rejects %s', (_label, input) => {
    expect(contentSchema.safeParse(input).success).toBe(false);
  });
});

describe('parseContent', () => {
  it('returns a deep copy sharing nothing with the input', () => {
    const input = cloneContent(valid);
    const out = parseContent(input);
    expect(out).toEqual(valid);
    (input[0] as { text: string }).text = 'mutated';
    (input[2] as { source: { url: string } }).source.url = 'mutated';
    expect(out).toEqual(valid);
  });

  it('throws validation_error with paths rooted at content', () => {
    try {
      parseContent([{ type: 'text', text: 'ok' }, { type: 'text', text: 1 }]);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InboxKitError);
      const e = error as InboxKitError;
      expect(e.code).toBe('validation_error');
      expect(e.details.map((d) => d.path)).toContain('content.1.text');
    }
  });
});
