import { describe, it, expect } from 'vitest';
import { InboxKitError } from '../errors.js';
import { cloneContent, contentSchema, isBlockedImageHost, MAX_IMAGE_BASE64_CHARS, parseContent, type ContentBlock } from './index.js';

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

/** Base64 of a byte string (test data only). */
const b64 = (bytes: number[] | string) => Buffer.from(typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : Uint8Array.from(bytes)).toString('base64');
const PNG = b64([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
const JPEG = b64([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46]);
const GIF = b64('GIF89a\x01\x00\x01\x00');
const WEBP = b64('RIFF\x24\x00\x00\x00WEBPVP8 ');
const image = (media_type: string, data: string) => [{ type: 'image', source: { type: 'base64', media_type, data } }];
const url = (u: string) => [{ type: 'image', source: { type: 'url', url: u } }];

/** The `path` of every issue `parseContent` reports for `input`. */
function issuePaths(input: unknown): string[] {
  try {
    parseContent(input);
  } catch (error) {
    expect(error).toBeInstanceOf(InboxKitError);
    expect((error as InboxKitError).code).toBe('validation_error');
    return (error as InboxKitError).details.map((d) => d.path);
  }
  return [];
}

describe('content a Messages-API model accepts (live-inbox.md "Content blocks")', () => {
  it.each([
    ['empty text', [{ type: 'text', text: '' }], 'content.0.text'],
    ['spaces', [{ type: 'text', text: '   ' }], 'content.0.text'],
    ['newline and tab', [{ type: 'text', text: '\n\t' }], 'content.0.text'],
    ['Unicode spaces only (NBSP, ideographic space, line separator)', [{ type: 'text', text: '\u00a0\u3000\u2028' }], 'content.0.text'],
    ['a blank second block', [{ type: 'text', text: 'ok' }, { type: 'text', text: ' ' }], 'content.1.text'],
  ])('blank text is refused: %s', (_what, input, path) => {
    expect(issuePaths(input)).toEqual([path]);
  });

  it('text with any non-whitespace character is accepted (emoji, a zero-width joiner sequence, text padded by spaces)', () => {
    for (const text of ['a', ' x ', '😀', '👨‍👩‍👧', '。']) expect(issuePaths([{ type: 'text', text }])).toEqual([]);
  });

  it('each accepted media type with its own bytes is accepted', () => {
    for (const [type, data] of [['image/png', PNG], ['image/jpeg', JPEG], ['image/gif', GIF], ['image/webp', WEBP]] as const) {
      expect(issuePaths(image(type, data)), type).toEqual([]);
    }
  });

  it.each([
    ['text/html', image('text/html', PNG), 'content.0.source.media_type'],
    ['image/svg+xml', image('image/svg+xml', PNG), 'content.0.source.media_type'],
    ['IMAGE/PNG (media types are matched exactly)', image('IMAGE/PNG', PNG), 'content.0.source.media_type'],
    ['empty data', image('image/png', ''), 'content.0.source.data'],
    ['data that is not base64', image('image/png', 'not base64!'), 'content.0.source.data'],
    ['base64url alphabet', image('image/png', PNG.replace(/\+/g, '-').replace(/\//g, '_') + '-_-_'), 'content.0.source.data'],
    ['unpadded base64', image('image/png', PNG.slice(0, -1)), 'content.0.source.data'],
    ['base64 with a line break', image('image/png', `${PNG.slice(0, 8)}\n${PNG.slice(8)}`), 'content.0.source.data'],
    ['a data: URL instead of base64', image('image/png', `data:image/png;base64,${PNG}`), 'content.0.source.data'],
    ['JPEG bytes labelled image/png', image('image/png', JPEG), 'content.0.source.data'],
    ['text labelled image/gif', image('image/gif', b64('<html></html>')), 'content.0.source.data'],
    ['base64 over the size limit', image('image/png', PNG + 'A'.repeat(MAX_IMAGE_BASE64_CHARS)), 'content.0.source.data'],
  ])('base64 images are refused: %s', (_what, input, path) => {
    expect(issuePaths(input)).toEqual([path]);
  });

  it('base64 at the size limit is accepted', () => {
    const data = PNG + 'A'.repeat(MAX_IMAGE_BASE64_CHARS - PNG.length);
    expect(data.length).toBe(MAX_IMAGE_BASE64_CHARS);
    expect(issuePaths(image('image/png', data))).toEqual([]);
  });

  it.each([
    'file:///etc/passwd', 'javascript:alert(1)', 'data:image/png;base64,iVBORw0KGgo=', 'ftp://example.com/a.png', '/relative.png', 'example.com/a.png', '',
    'http://169.254.169.254/latest/meta-data/', 'http://[fd00:ec2::254]/', 'http://metadata.google.internal/computeMetadata/v1/',
    'http://localhost/a.png', 'http://api.localhost/', 'http://127.0.0.1:8080/', 'http://127.1/', 'http://2130706433/', 'http://0x7f000001/',
    'http://0.0.0.0/', 'http://[::1]/', 'http://[::ffff:127.0.0.1]/', 'http://[fe80::1]/', 'http://10.0.0.5/', 'http://172.16.0.1/',
    'http://192.168.1.1/', 'http://printer.local/', 'https://user:secret@example.com/a.png', `https://example.com/${'a'.repeat(2048)}`,
  ])('URL images are refused: %s', (u) => {
    expect(issuePaths(url(u))).toEqual(['content.0.source.url']);
  });

  it('absolute public http(s) URLs are accepted', () => {
    for (const u of ['https://example.com/a.png', 'http://example.com:8080/a.png?x=1#y', 'https://8.8.8.8/a.png', 'https://[2001:db8::1]/a.png', 'https://172.32.0.1/']) {
      expect(issuePaths(url(u)), u).toEqual([]);
    }
    expect(isBlockedImageHost('example.com')).toBe(false);
    expect(isBlockedImageHost('169.254.169.254')).toBe(true);
  });

  it('every problem is reported, each with its own path', () => {
    expect(issuePaths([{ type: 'text', text: '' }, ...image('text/html', ''), ...url('file:///x')])).toEqual([
      'content.0.text', 'content.1.source.media_type', 'content.1.source.data', 'content.2.source.url',
    ]);
  });
});
