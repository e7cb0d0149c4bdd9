import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createIdGenerator, createManualClock } from './clock.js';

const ID = /^pinbox_[A-Za-z0-9_-]{21}$/;

describe('createIdGenerator (platform.md "Ids and time")', () => {
  it('makes `<prefix>_` + 21 URL-safe characters, unique within one millisecond', () => {
    const clock = createManualClock();
    const ids = createIdGenerator({ clock });
    const made = Array.from({ length: 10_000 }, () => ids.next('pinbox'));
    for (const id of made.slice(0, 100)) expect(id).toMatch(ID);
    expect(new Set(made).size).toBe(made.length);
    // One millisecond: the 8 time characters are shared, the 13 after them are not.
    expect(new Set(made.map((id) => id.slice(7, 15))).size).toBe(1);
    expect(new Set(made.map((id) => id.slice(15))).size).toBe(made.length);
  });

  it('sorts ids by their creation millisecond, in JavaScript and in byte order alike', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 48 - 2 }), fc.integer({ min: 1, max: 2 ** 40 }), (earlier, step) => {
        const later = Math.min(earlier + step, 2 ** 48 - 1);
        const clock = createManualClock(earlier);
        const ids = createIdGenerator({ clock });
        const a = ids.next('evt');
        clock.set(later);
        const b = ids.next('evt');
        expect(a < b).toBe(true);
        expect(Buffer.compare(Buffer.from(a), Buffer.from(b))).toBe(-1);
      }),
    );
  });

  it('writes the clock\'s millisecond in the time part (0 and the largest 48-bit time at the ends)', () => {
    const clock = createManualClock(0);
    const ids = createIdGenerator({ clock, random: (size) => 'r'.repeat(size) });
    expect(ids.next('ws')).toBe(`ws_--------${'r'.repeat(13)}`);
    clock.set(2 ** 48 - 1);
    expect(ids.next('ws')).toBe(`ws_zzzzzzzz${'r'.repeat(13)}`);
    clock.set(64);
    expect(ids.next('ws')).toBe(`ws_------0-${'r'.repeat(13)}`);
    // Out of range: before the epoch, past 48 bits, not a number — still 21 valid characters.
    for (const [ms, time] of [[-5, '--------'], [2 ** 60, 'zzzzzzzz'], [Number.NaN, '--------'], [1.9, '-------0']] as const) {
      clock.set(ms);
      expect(ids.next('ws')).toBe(`ws_${time}${'r'.repeat(13)}`);
    }
  });

  it('draws the random part from `random(13)` when given', () => {
    const sizes: number[] = [];
    const ids = createIdGenerator({ random: (size) => (sizes.push(size), 'A'.repeat(size)) });
    expect(ids.next('key')).toMatch(/^key_[A-Za-z0-9_-]{8}A{13}$/);
    expect(sizes).toEqual([13]);
  });

  it('keeps the earlier form: a function gives all 21 characters', () => {
    const ids = createIdGenerator(() => 'x'.repeat(21));
    expect(ids.next('sess')).toBe(`sess_${'x'.repeat(21)}`);
  });
});
