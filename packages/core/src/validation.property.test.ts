import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hasLoneSurrogate, measurePayload } from './validation.js';

const bytesOf = (s: string) => new TextEncoder().encode(s).length;
/** Strings of any code point (astral ones, controls, quotes, backslashes), no lone surrogate. */
const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.string({ unit: fc.constantFrom('"', '\\', '\b', '\t', '\n', '\f', '\r', '\u0000', '\u001f', '\u007f', '\u2028', 'é', '中', '😀', 'a'), maxLength: 20 }),
).filter((s) => !hasLoneSurrogate(s));
const json = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    text, fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer(), fc.boolean(), fc.constant(null), fc.constant(-0),
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(text, tie('value'), { maxKeys: 5 }),
  ),
})).value;

describe('measurePayload (property)', () => {
  it('counts exactly the UTF-8 bytes of JSON.stringify, copies within the limit, skips the copy over it', () => {
    fc.assert(
      fc.property(json, fc.nat({ max: 400 }), (payload, limit) => {
        const expected = bytesOf(JSON.stringify(payload));
        expect(measurePayload(payload).bytes).toBe(expected);
        const capped = measurePayload(payload, limit);
        expect(capped.bytes).toBe(expected);
        expect(capped.value).toEqual(expected > limit ? null : JSON.parse(JSON.stringify(payload)));
      }),
      { numRuns: 500 },
    );
  });
});
