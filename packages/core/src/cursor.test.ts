import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor, filterFingerprint } from './cursor.js';
import { codeOf } from './test-support.js';

const b64url = (s: string) => Buffer.from(s, 'utf8').toString('base64url');

const FP = filterFingerprint({ status: 'pending' });
const POS = { created_at: 1_735_689_600_000, id: 'pinbox_abcDEF123-_xyz0123456' };

describe('filterFingerprint', () => {
  it('ignores key order and drops undefined and null values', () => {
    expect(filterFingerprint({ b: '2', a: '1' })).toBe(filterFingerprint({ a: '1', b: '2' }));
    expect(filterFingerprint({ a: '1', b: undefined, c: null })).toBe(filterFingerprint({ a: '1' }));
    expect(filterFingerprint({})).toBe(filterFingerprint({ x: undefined }));
  });

  it('differs when any value differs or a filter is added', () => {
    const base = filterFingerprint({ status: 'pending' });
    expect(filterFingerprint({ status: 'accepted' })).not.toBe(base);
    expect(filterFingerprint({ status: 'pending', type: 't' })).not.toBe(base);
    expect(filterFingerprint({ type: 'pending' })).not.toBe(base);
    expect(filterFingerprint({})).not.toBe(base);
    expect(filterFingerprint({ limit: 1 })).not.toBe(filterFingerprint({ limit: '1' }));
  });
});

describe('encodeCursor / decodeCursor', () => {
  it('round-trips the position for the same scope and filters', () => {
    const c = encodeCursor('proj_a', FP, POS);
    expect(decodeCursor(c, 'proj_a', FP)).toEqual(POS);
  });

  it('is opaque base64url (no padding, no + or /)', () => {
    const c = encodeCursor('proj_a', FP, POS);
    expect(c).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(c).not.toContain(POS.id);
  });

  it('round-trips non-ASCII scopes and filters', () => {
    const fp = filterFingerprint({ type: '候选摘要 😀' });
    const c = encodeCursor('proj_ü', fp, { created_at: 0, id: 'x' });
    expect(decodeCursor(c, 'proj_ü', fp)).toEqual({ created_at: 0, id: 'x' });
  });

  it('rejects a cursor minted for another project', () => {
    const c = encodeCursor('proj_a', FP, POS);
    expect(codeOf(() => decodeCursor(c, 'proj_b', FP))).toBe('invalid_cursor');
  });

  it('rejects a cursor minted for another filter set', () => {
    const c = encodeCursor('proj_a', FP, POS);
    expect(codeOf(() => decodeCursor(c, 'proj_a', filterFingerprint({})))).toBe('invalid_cursor');
    expect(codeOf(() => decodeCursor(c, 'proj_a', filterFingerprint({ status: 'pending', type: 't' })))).toBe('invalid_cursor');
  });

  const valid = { v: 1, s: 'proj_a', f: FP, c: POS.created_at, i: POS.id };
  it.each<[string, string]>([
    ['empty', ''],
    ['garbage', 'not a cursor!'],
    ['one base64 char too many', 'abcde'],
    ['base64 of non-JSON', b64url('hello')],
    ['base64 of a JSON array', b64url('[1]')],
    ['base64 of null', b64url('null')],
    ['an extra field', b64url(JSON.stringify({ ...valid, x: 1 }))],
    ['a missing field', b64url(JSON.stringify({ v: 1, s: 'proj_a', f: FP, c: POS.created_at }))],
    ['another version', b64url(JSON.stringify({ ...valid, v: 2 }))],
    ['a negative time', b64url(JSON.stringify({ ...valid, c: -1 }))],
    ['a fractional time', b64url(JSON.stringify({ ...valid, c: 1.5 }))],
    ['a string time', b64url(JSON.stringify({ ...valid, c: String(POS.created_at) }))],
    ['an empty id', b64url(JSON.stringify({ ...valid, i: '' }))],
    ['keys in another order', b64url(JSON.stringify({ i: POS.id, c: POS.created_at, f: FP, s: 'proj_a', v: 1 }))],
    ['whitespace in the JSON', b64url(JSON.stringify(valid, null, 1))],
    ['invalid UTF-8', Buffer.from([0xff, 0xfe, 0x7b]).toString('base64url')],
  ])('rejects %s', (_, cursor) => {
    expect(codeOf(() => decodeCursor(cursor, 'proj_a', FP))).toBe('invalid_cursor');
  });

  it('rejects padded, standard-alphabet and otherwise non-canonical spellings of a valid cursor', () => {
    // Find a cursor whose length leaves unused low bits in its last character.
    let c = encodeCursor('proj_a', FP, POS);
    for (let n = 0; c.length % 4 === 0; n++) c = encodeCursor('proj_a', FP, { ...POS, id: POS.id + 'x'.repeat(n + 1) });
    const pos = decodeCursor(c, 'proj_a', FP);
    expect(pos.created_at).toBe(POS.created_at);

    const padded = c + '='.repeat((4 - (c.length % 4)) % 4);
    expect(codeOf(() => decodeCursor(padded, 'proj_a', FP))).toBe('invalid_cursor');

    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet.indexOf(c[c.length - 1]!);
    const sibling = c.slice(0, -1) + alphabet[last ^ 1]; // flips an unused bit: same bytes, other spelling
    expect(Buffer.from(sibling, 'base64url').equals(Buffer.from(c, 'base64url'))).toBe(true);
    expect(codeOf(() => decodeCursor(sibling, 'proj_a', FP))).toBe('invalid_cursor');

    const std = Buffer.from(c, 'base64url').toString('base64');
    if (std !== c) expect(codeOf(() => decodeCursor(std, 'proj_a', FP))).toBe('invalid_cursor');
    expect(codeOf(() => decodeCursor(` ${c}`, 'proj_a', FP))).toBe('invalid_cursor');
    expect(codeOf(() => decodeCursor(`${c}\n`, 'proj_a', FP))).toBe('invalid_cursor');
  });

  it('never throws anything but invalid_cursor for arbitrary strings', () => {
    const samples = ['A', 'AA', 'AAA', 'AAAA', '____', '----', 'eyJ2IjoxfQ', 'e30', 'W10', '\u0000', '😀', 'x'.repeat(3000)];
    for (const s of samples) expect(codeOf(() => decodeCursor(s, 'proj_a', FP)), s).toBe('invalid_cursor');
  });
});
