import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { InboxKitError } from './errors.js';
import { createInboxItemBody, decideInboxItemBody, listInboxItemsQuery } from './project-inbox/schemas.js';
import {
  MAX_PAYLOAD_BYTES, codePointLength, hasLoneSurrogate, idString, issuesToDetails, markParsed, measurePayload, MAX_PAYLOAD_DEPTH, optionalText,
  parseOrThrow, text, utf8ByteLength, wasParsedBy,
} from './validation.js';
import { parseRequestPart } from './http/parse.js';
import { contentSchema, parseContent } from './live-inbox/content.js';
import { codeOf } from './test-support.js';

/** The code of the InboxKitError `fn` throws (fails the test when it throws anything else). */
const bytesOf = (s: string) => new TextEncoder().encode(s).length;

describe('codePointLength', () => {
  it.each([
    ['', 0],
    ['abc', 3],
    ['é', 1],
    ['中文', 2],
    ['😀', 1],
    ['a😀b', 3],
    ['👩‍💻', 3], // ZWJ sequence: 3 code points, never UTF-16 units (5) or bytes (11)
    ['\ud83d', 1], // a lone high surrogate is one code point
    ['\ude00x', 2],
  ])('%j has %i code points', (s, n) => {
    expect(codePointLength(s)).toBe(n);
    expect(codePointLength(s)).toBe([...s].length);
  });
});

describe('hasLoneSurrogate', () => {
  it.each([
    ['plain', false],
    ['😀', false],
    ['a😀b😀', false],
    ['\ud83d', true],
    ['\ude00', true],
    ['x\ud83dy', true],
    ['\ude00\ud83d', true], // low before high is two lone halves
    ['😀\ud83d', true],
    ['\ud83d\ud83d\ude00', true],
  ])('%j → %s', (s, expected) => {
    expect(hasLoneSurrogate(s)).toBe(expected);
  });
});

describe('text()', () => {
  const schema = text({ min: 1, max: 5 });

  it('trims before measuring and returns the trimmed string', () => {
    expect(schema.parse('  abc  ')).toBe('abc');
    expect(schema.parse('   abcde   ')).toBe('abcde');
  });

  it('measures in code points: 5 emoji fit, 6 do not', () => {
    expect(schema.parse('😀😀😀😀😀')).toBe('😀😀😀😀😀');
    expect(schema.safeParse('😀😀😀😀😀😀').success).toBe(false);
    expect(schema.safeParse('abcdef').success).toBe(false);
  });

  it('applies the minimum after trimming', () => {
    expect(schema.safeParse('').success).toBe(false);
    expect(schema.safeParse('   ').success).toBe(false);
  });

  it('rejects lone surrogates', () => {
    expect(schema.safeParse('a\ud83d').success).toBe(false);
    expect(schema.safeParse('\ude00').success).toBe(false);
  });

  it('rejects non-strings', () => {
    expect(schema.safeParse(5).success).toBe(false);
    expect(schema.safeParse(null).success).toBe(false);
  });
});

describe('optionalText()', () => {
  const schema = optionalText(3);
  it.each([[undefined], [null], [''], ['   '], ['\t\n']])('%j becomes null', (v) => {
    expect(schema.parse(v)).toBeNull();
  });
  it('keeps trimmed text and limits code points', () => {
    expect(schema.parse(' ab ')).toBe('ab');
    expect(schema.parse('😀😀😀')).toBe('😀😀😀');
    expect(schema.safeParse('😀😀😀😀').success).toBe(false);
    expect(schema.safeParse('\ud800').success).toBe(false);
  });
});

describe('idString', () => {
  it('accepts 1–128 printable ASCII characters', () => {
    expect(idString.parse('proj_main')).toBe('proj_main');
    expect(idString.parse('x'.repeat(128))).toHaveLength(128);
  });
  it.each([[''], ['x'.repeat(129)], ['has space'], ['é'], ['tab\t'], [42]])('rejects %j', (v) => {
    expect(idString.safeParse(v).success).toBe(false);
  });
});

describe('measurePayload', () => {
  it('is 256 KiB', () => {
    expect(MAX_PAYLOAD_BYTES).toBe(262_144);
  });

  it('counts UTF-8 bytes of compact JSON', () => {
    expect(measurePayload({}).bytes).toBe(2);
    expect(measurePayload({ a: 1 }).bytes).toBe(7);
    expect(measurePayload('é').bytes).toBe(4); // quotes + 2 bytes
    expect(measurePayload('😀').bytes).toBe(6); // quotes + 4 bytes
    expect(measurePayload('中').bytes).toBe(5);
    expect(measurePayload(['a', 1, true, null]).bytes).toBe(bytesOf('["a",1,true,null]'));
    // escapes count as they are serialised: "\n" is 2 bytes, "\"" is 2 bytes
    expect(measurePayload('\n"').bytes).toBe(6);
    expect(measurePayload('\u0001').bytes).toBe(8); // "\u0001"
  });

  it('over the caller\'s limit: the exact byte count, no copy (value null); at the limit: the copy', () => {
    const over = { k: 'é'.repeat(MAX_PAYLOAD_BYTES) };
    expect(measurePayload(over, MAX_PAYLOAD_BYTES)).toEqual({ value: null, bytes: 8 + 2 * MAX_PAYLOAD_BYTES });
    const at = { k: 'a'.repeat(MAX_PAYLOAD_BYTES - 8) };
    const measured = measurePayload(at, MAX_PAYLOAD_BYTES);
    expect(measured.bytes).toBe(MAX_PAYLOAD_BYTES);
    expect(measured.value).toEqual(at);
    expect(measured.value).not.toBe(at);
    // Surrogate pairs in keys and values count 4 bytes, as TextEncoder counts them.
    const pairs = { '😀': ['😀', { x: '中é' }] };
    expect(measurePayload(pairs, 10).bytes).toBe(bytesOf(JSON.stringify(pairs)));
  });

  it('measures a 262,144-byte payload exactly (ASCII and multibyte)', () => {
    const ascii = { k: 'a'.repeat(MAX_PAYLOAD_BYTES - 8) }; // {"k":""} is 8 bytes
    expect(measurePayload(ascii).bytes).toBe(MAX_PAYLOAD_BYTES);
    const multi = { k: 'é'.repeat((MAX_PAYLOAD_BYTES - 8) / 2) };
    expect(measurePayload(multi).bytes).toBe(MAX_PAYLOAD_BYTES);
    const emoji = { k: '😀'.repeat((MAX_PAYLOAD_BYTES - 8) / 4) };
    expect(measurePayload(emoji).bytes).toBe(MAX_PAYLOAD_BYTES);
  });

  it('returns a deep copy as a JSON value', () => {
    const input = { a: { b: [1, 2] } };
    const { value } = measurePayload(input);
    expect(value).toEqual(input);
    expect(value).not.toBe(input);
    (input.a.b as number[]).push(3);
    expect(value).toEqual({ a: { b: [1, 2] } });
  });

  it('accepts the same object referenced twice (not a cycle)', () => {
    const shared = { x: 1 };
    expect(measurePayload([shared, shared]).value).toEqual([{ x: 1 }, { x: 1 }]);
    expect(measurePayload({ a: shared, b: { c: shared } }).bytes).toBe(bytesOf('{"a":{"x":1},"b":{"c":{"x":1}}}'));
  });

  it('accepts null-prototype objects', () => {
    const o = Object.create(null) as Record<string, unknown>;
    o.a = 1;
    expect(measurePayload(o).value).toEqual({ a: 1 });
  });

  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = cyclic;
  const cyclicArray: unknown[] = [];
  cyclicArray.push({ inner: cyclicArray });

  it.each<[string, unknown]>([
    ['BigInt', 10n],
    ['a nested BigInt', { a: [1, 2n] }],
    ['a cycle', cyclic],
    ['a cycle through an array', cyclicArray],
    ['a function', () => 1],
    ['a nested function', { f: () => 1 }],
    ['undefined', undefined],
    ['a nested undefined', { a: undefined }],
    ['undefined in an array', [1, undefined]],
    ['a symbol', Symbol('s')],
    ['NaN', Number.NaN],
    ['Infinity', { n: Number.POSITIVE_INFINITY }],
    ['a lone surrogate in a string', { s: 'a\ud83d' }],
    ['a lone surrogate in a key', { ['\ude00']: 1 }],
    ['a Date', new Date(0)],
    ['a Map', new Map()],
  ])('rejects %s with project_inbox_payload_invalid', (_, value) => {
    expect(codeOf(() => measurePayload(value))).toBe('project_inbox_payload_invalid');
  });

  it('rejects a deeply nested payload with project_inbox_payload_invalid, never a RangeError', () => {
    // Valid JSON text of 200 KB that JSON.parse accepts (the HTTP layer hands exactly this to the service).
    const deep = JSON.parse('['.repeat(100_000) + ']'.repeat(100_000)) as unknown;
    expect(codeOf(() => measurePayload(deep))).toBe('project_inbox_payload_invalid');
  });

  it('names where the payload fails (keys and indexes); a deep path is cut short', () => {
    const messageOf = (value: unknown) => {
      try {
        measurePayload(value);
      } catch (error) {
        return (error as Error).message;
      }
      return 'no error';
    };
    expect(messageOf({ a: [1, { b: 2n }] })).toBe('payload is not JSON-serialisable: bigint at $.a[1].b');
    expect(messageOf(Number.NaN)).toBe('payload is not JSON-serialisable: non-finite number at $');
    expect(messageOf(cyclic)).toBe('payload is not JSON-serialisable: cycle at $.self');
    const deep = JSON.parse('['.repeat(1000) + ']'.repeat(1000)) as unknown;
    const message = messageOf(deep);
    expect(message).toBe(`payload is not JSON-serialisable: nested deeper than ${MAX_PAYLOAD_DEPTH} levels at $${'[0]'.repeat(8)}…(${MAX_PAYLOAD_DEPTH - 12} levels)…${'[0]'.repeat(4)}`);
    expect(message.length).toBeLessThan(200);
  });

  it('never leaks the payload into the error beyond a path', () => {
    try {
      measurePayload({ secret: 'top-secret-value', bad: 1n });
      expect.unreachable();
    } catch (error) {
      expect((error as Error).message).not.toContain('top-secret-value');
    }
  });
});

describe('parseOrThrow and issuesToDetails', () => {
  const schema = z.strictObject({ a: z.string(), b: z.object({ c: z.number() }) });

  it('returns parsed data', () => {
    expect(parseOrThrow(schema, { a: 'x', b: { c: 1 } })).toEqual({ a: 'x', b: { c: 1 } });
  });

  it('throws validation_error with one detail per issue, paths joined by dots', () => {
    try {
      parseOrThrow(schema, { a: 1, b: { c: 'no' }, extra: true }, 'thing');
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InboxKitError);
      const e = error as InboxKitError;
      expect(e.code).toBe('validation_error');
      expect(e.message).toBe('Invalid thing');
      const paths = e.details.map((d) => d.path).sort();
      expect(paths).toEqual(['', 'a', 'b.c'].sort());
      for (const d of e.details) {
        expect(typeof d.message).toBe('string');
        expect(typeof d.code).toBe('string');
      }
    }
  });

  it('issuesToDetails maps array indices', () => {
    const r = z.array(z.string()).safeParse(['a', 2]);
    expect(r.success).toBe(false);
    if (!r.success) expect(issuesToDetails(r.error.issues)[0]?.path).toBe('1');
  });
});

describe('Project Inbox request schemas', () => {
  it('create: type is trimmed, 1–128 code points', () => {
    expect(createInboxItemBody.parse({ type: '  t  ' }).type).toBe('t');
    expect(createInboxItemBody.parse({ type: '😀'.repeat(128) }).type).toBe('😀'.repeat(128));
    expect(createInboxItemBody.safeParse({ type: '😀'.repeat(129) }).success).toBe(false);
    expect(createInboxItemBody.safeParse({ type: '   ' }).success).toBe(false);
    expect(createInboxItemBody.safeParse({}).success).toBe(false);
    expect(createInboxItemBody.safeParse({ type: 'a\ud83d' }).success).toBe(false);
  });

  it('create: title ≤ 200 code points, blank or null becomes null', () => {
    expect(createInboxItemBody.parse({ type: 't' }).title).toBeNull();
    expect(createInboxItemBody.parse({ type: 't', title: null }).title).toBeNull();
    expect(createInboxItemBody.parse({ type: 't', title: '  ' }).title).toBeNull();
    expect(createInboxItemBody.parse({ type: 't', title: ' x ' }).title).toBe('x');
    expect(createInboxItemBody.parse({ type: 't', title: '😀'.repeat(200) }).title).toBe('😀'.repeat(200));
    expect(createInboxItemBody.safeParse({ type: 't', title: '😀'.repeat(201) }).success).toBe(false);
  });

  it('create: sources default to null; unknown fields are rejected', () => {
    const parsed = createInboxItemBody.parse({ type: 't' });
    expect(parsed).toMatchObject({ source_event_id: null, source_session_id: null, source_floor_id: null, source_page_id: null });
    expect(createInboxItemBody.parse({ type: 't', source_page_id: null }).source_page_id).toBeNull();
    expect(createInboxItemBody.safeParse({ type: 't', extra: 1 }).success).toBe(false);
    expect(createInboxItemBody.safeParse({ type: 't', sourceSessionId: 'sess_1' }).success).toBe(false);
    expect(createInboxItemBody.safeParse({ type: 't', source_session_id: '' }).success).toBe(false);
  });

  it('decide: decision is one of accept/reject/archive; note ≤ 500 code points, trimmed', () => {
    expect(decideInboxItemBody.parse({ decision: 'accept' })).toEqual({ decision: 'accept', note: null });
    expect(decideInboxItemBody.parse({ decision: 'reject', note: '  n  ' })).toEqual({ decision: 'reject', note: 'n' });
    expect(decideInboxItemBody.parse({ decision: 'archive', note: '😀'.repeat(500) }).note).toBe('😀'.repeat(500));
    expect(decideInboxItemBody.safeParse({ decision: 'archive', note: '😀'.repeat(501) }).success).toBe(false);
    expect(decideInboxItemBody.safeParse({ decision: 'approve' }).success).toBe(false);
    expect(decideInboxItemBody.safeParse({ decision: 'accept', status: 'accepted' }).success).toBe(false);
    expect(decideInboxItemBody.safeParse({}).success).toBe(false);
  });

  it('list: limit 1–200 (default 50), digits only', () => {
    expect(listInboxItemsQuery.parse({}).limit).toBe(50);
    expect(listInboxItemsQuery.parse({ limit: '1' }).limit).toBe(1);
    expect(listInboxItemsQuery.parse({ limit: '200' }).limit).toBe(200);
    for (const bad of ['0', '201', '-1', '1.5', 'abc', '', ' 5', '1e2']) {
      expect(listInboxItemsQuery.safeParse({ limit: bad }).success, bad).toBe(false);
    }
    // Not digits: one issue that says what is expected (not a union's "Invalid input").
    expect(listInboxItemsQuery.safeParse({ limit: 'abc' }).error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([['limit', 'must be an integer from 1 to 200']]);
    expect(listInboxItemsQuery.safeParse({ status: 'done' }).success).toBe(false);
    expect(listInboxItemsQuery.safeParse({ unknown: 'x' }).success).toBe(false);
  });
});

describe('utf8ByteLength', () => {
  it('counts the bytes TextEncoder produces, without encoding', () => {
    const samples = ['', 'a', 'é', '€', '😀', 'a😀b', '\u007f', '\u0080', '\u07ff', '\u0800', '\uffff', '\ud800', '\udc00', '\udc00\ud800', 'x\ud83d', '\ud83dx', '已确认。', JSON.stringify({ t: 'naïve 😀 \ud800' }), 'é'.repeat(1000)];
    for (const s of samples) expect(utf8ByteLength(s), JSON.stringify(s)).toBe(new TextEncoder().encode(s).length);
  });
});

describe('markParsed / wasParsedBy (a body or query parsed once)', () => {
  const schema = z.strictObject({ n: z.number() });

  it('knows the output of a request body or query parse, by schema, and nothing else', () => {
    const parsed = parseRequestPart('body', schema, { n: 1 });
    expect(wasParsedBy(schema, parsed)).toBe(true);
    expect(wasParsedBy(schema, parseRequestPart('querystring', schema, { n: 1 }))).toBe(true);
    expect(wasParsedBy(z.strictObject({ n: z.number() }), parsed)).toBe(false); // another schema
    expect(wasParsedBy(schema, { n: 1 })).toBe(false); // a caller's own object
    expect(wasParsedBy(schema, parseRequestPart('params', schema, { n: 1 }))).toBe(false); // params and headers are not marked
    expect(wasParsedBy(schema, 1)).toBe(false);
  });

  it('parseOrThrow takes the pipeline\'s output of the same schema as it is, and parses anything else', () => {
    const trimmed = z.strictObject({ s: z.string().trim().min(1) });
    const parsed = parseRequestPart('body', trimmed, { s: '  a ' });
    expect(parseOrThrow(trimmed, parsed)).toBe(parsed); // not parsed again
    expect(parseOrThrow(trimmed, { s: '  a ' })).toEqual({ s: 'a' }); // a caller's own object: parsed
    expect(() => parseOrThrow(trimmed, { s: ' ' })).toThrow(InboxKitError);
    // Output of another schema is parsed by this one (and refused when it does not fit).
    const other = parseRequestPart('body', z.object({ s: z.string() }), { s: ' ' });
    expect(() => parseOrThrow(trimmed, other)).toThrow(InboxKitError);
    // The Project Inbox bodies and query the services parse are the routes' own schemas: parsed once.
    const body = parseRequestPart('body', createInboxItemBody, { type: 'x', payload: { a: 1 } });
    expect(parseOrThrow(createInboxItemBody, body)).toBe(body);
    const query = parseRequestPart('querystring', listInboxItemsQuery, { limit: '5' });
    expect(parseOrThrow(listInboxItemsQuery, query)).toBe(query);
  });

  it('parseContent still validates a caller\'s content, and copies marked content without sharing it', () => {
    expect(() => parseContent([{ type: 'text', text: '' }, { type: 'nope' }])).toThrow(InboxKitError);
    const content = [{ type: 'text' as const, text: 'hi' }];
    markParsed(contentSchema, content);
    const copy = parseContent(content);
    expect(copy).toEqual(content);
    expect(copy).not.toBe(content);
    expect(copy[0]).not.toBe(content[0]);
  });
});
