import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findInexactJsonNumber, isExactJsonNumber } from './json-numbers.js';

describe('the exact-number rule (platform.md "JSON numbers")', () => {
  it.each([
    '0', '-0', '1', '-1', '1.0', '1e0', '1E+2', '0.1', '-0.5', '123.456', '9007199254740991', '-9007199254740991', '9007199254740992',
    '1e300', '1.7976931348623157e308', '5e-324', '2.5e-10', '0.30000000000000004', '100000000000000000000', '0e400', '12345678901234.5',
  ])('%s reads back as itself', (literal) => {
    expect(isExactJsonNumber(literal)).toBe(true);
  });

  it.each([
    '9007199254740993', '-9007199254740993', '18446744073709551615', '12345678901234567890', '1e400', '-1e400', '1e-400',
    '0.10000000000000000001', '1.0000000000000002220446', '3.14159265358979323846', '2e308', '1.7976931348623159e308',
  ])('%s loses digits as a double', (literal) => {
    expect(isExactJsonNumber(literal)).toBe(false);
  });

  it('names the path of the first inexact number: keys, indexes, escaped keys, nesting', () => {
    expect(findInexactJsonNumber('{"type":"t","payload":{"n":9007199254740993}}')).toEqual({ path: ['payload', 'n'], literal: '9007199254740993' });
    expect(findInexactJsonNumber('{"a":[1,2,{"b\\"c":[0,1e400]}]}')).toEqual({ path: ['a', 2, 'b"c', 1], literal: '1e400' });
    expect(findInexactJsonNumber('9007199254740993')).toEqual({ path: [], literal: '9007199254740993' });
    expect(findInexactJsonNumber('[ 1 , 2 , -9007199254740993 ]')).toEqual({ path: [2], literal: '-9007199254740993' });
    expect(findInexactJsonNumber('{"a":{"x":1},"b":{"y":1},"c":12345678901234567890}')).toEqual({ path: ['c'], literal: '12345678901234567890' });
  });

  it('ignores digits inside strings and keys, escaped quotes included', () => {
    expect(findInexactJsonNumber('{"9007199254740993":"9007199254740993","s":"a\\\\","t":"\\"1e400"}')).toBeUndefined();
    expect(findInexactJsonNumber('{"n":9007199254740991,"list":[0.1,1e300,true,false,null]}')).toBeUndefined();
  });

  it('agrees with JSON.parse + JSON.stringify on what comes back', () => {
    for (const literal of ['9007199254740991', '0.1', '1e300', '1.5', '-2.25e-5']) {
      expect(JSON.parse(JSON.stringify(JSON.parse(literal)))).toBe(Number(literal));
      expect(findInexactJsonNumber(`{"v":${literal}}`)).toBeUndefined();
    }
  });
});

describe('findInexactJsonNumber (properties)', () => {
  it('finds nothing in any JSON text JSON.stringify writes (it writes every double exactly), with any spacing', () => {
    fc.assert(fc.property(fc.jsonValue(), fc.constantFrom(undefined, 2, '\t'), (value, space) => {
      expect(findInexactJsonNumber(JSON.stringify(value, null, space))).toBeUndefined();
    }), { numRuns: 300 });
  });

  it('finds an inexact number placed after any JSON value, at its path', () => {
    fc.assert(fc.property(fc.jsonValue(), fc.string(), (value, key) => {
      const text = `{${JSON.stringify(key)}:[${JSON.stringify(value)},9007199254740993]}`;
      expect(findInexactJsonNumber(text)).toEqual({ path: [key, 1], literal: '9007199254740993' });
    }), { numRuns: 300 });
  });
});
