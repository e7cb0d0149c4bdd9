import { describe, expect, it } from 'vitest';
import { parseRfc3339, wholeMsBound, type Rfc3339Instant } from './rfc3339.js';

const ok = (text: string) => {
  const r = parseRfc3339(text);
  if ('error' in r) throw new Error(`${text}: ${r.error}`);
  return r;
};
const error = (text: string) => {
  const r = parseRfc3339(text);
  return 'error' in r ? r.error : undefined;
};

describe('parseRfc3339', () => {
  it('reads instants exactly: offsets, lower-case separators, fractions of any length up to 9 digits', () => {
    const t = Date.UTC(2026, 10, 30, 14, 37, 57, 123);
    expect(ok('2026-11-30T14:37:57.123Z')).toEqual({ ms: t, subMs: false });
    expect(ok('2026-11-30t15:37:57.123+01:00')).toEqual({ ms: t, subMs: false });
    expect(ok('2026-11-30 09:07:57.123-05:30')).toEqual({ ms: t, subMs: false });
    expect(ok('2026-11-30T14:37:57.123000000z')).toEqual({ ms: t, subMs: false });
    expect(ok('2026-11-30T14:37:57.1234Z')).toEqual({ ms: t, subMs: true });
    expect(ok('2026-11-30T14:37:57.123000001Z')).toEqual({ ms: t, subMs: true });
    expect(ok('2026-11-30T14:37:57.5Z').ms).toBe(t - 123 + 500);
    expect(ok('2026-11-30T14:37:57-00:00').ms).toBe(t - 123);
    expect(ok('2024-02-29T00:00:00Z').ms).toBe(Date.UTC(2024, 1, 29));
    expect(ok('2000-02-29T23:59:59Z').ms).toBe(Date.UTC(2000, 1, 29, 23, 59, 59));
    expect(ok('0001-01-01T00:00:00Z').ms).toBe(-62_135_596_800_000);
    expect(ok('1969-12-31T23:59:59.999Z').ms).toBe(-1);
  });

  it('refuses impossible dates and times instead of rolling them over', () => {
    expect(error('2026-02-30T00:00:00Z')).toBe('February 30 does not exist in 2026');
    expect(error('2026-02-29T00:00:00Z')).toBe('February 29 does not exist in 2026');
    expect(error('1900-02-29T00:00:00Z')).toMatch(/February 29/);
    expect(error('2026-04-31T00:00:00Z')).toMatch(/April 31/);
    expect(error('2026-00-10T00:00:00Z')).toMatch(/month 00/);
    expect(error('2026-13-01T00:00:00Z')).toMatch(/month 13/);
    expect(error('2026-01-00T00:00:00Z')).toMatch(/January 0/);
    expect(error('2026-01-01T24:00:00Z')).toMatch(/hour 24/);
    expect(error('2026-01-01T23:60:00Z')).toMatch(/minute 60/);
    expect(error('2026-12-31T23:59:60Z')).toMatch(/leap second/);
    expect(error('2026-01-01T00:00:61Z')).toMatch(/second 61/);
    expect(error('2026-01-01T00:00:00+24:00')).toMatch(/offset/);
    expect(error('2026-01-01T00:00:00+01:60')).toMatch(/offset/);
  });

  it('refuses what is not an RFC 3339 date-time with a time zone', () => {
    for (const bad of ['2026-01-01', '2026-01-01T00:00:00', '2026-01-01T00:00Z', '2026-1-01T00:00:00Z', '2026-01-01T00:00:00.Z',
      '2026-01-01T00:00:00.1234567890Z', '2026-01-01T00:00:00+0100', '2026-01-01T00:00:00+01', ' 2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z ',
      '+2026-01-01T00:00:00Z', '2026-01-01T00:00:00UTC', '١٢٣٤-01-01T00:00:00Z', '1700000000000', 'now', '']) {
      expect(error(bad), bad).toMatch(/RFC 3339/);
    }
  });
});

describe('wholeMsBound', () => {
  const at = (ms: number, subMs: boolean): Rfc3339Instant => ({ ms, subMs });
  it('is the instant itself without sub-ms digits', () => {
    for (const op of ['gt', 'gte', 'lt', 'lte'] as const) expect(wholeMsBound(at(10, false), op)).toBe(10);
  });
  it('selects exactly the whole-ms times the exact bound selects', () => {
    // x = 10.5: t > x ⟺ t > 10, t ≥ x ⟺ t ≥ 11, t < x ⟺ t < 11, t ≤ x ⟺ t ≤ 10.
    const x = 10.5;
    const times = [9, 10, 11, 12];
    const bound = { gt: wholeMsBound(at(10, true), 'gt'), gte: wholeMsBound(at(10, true), 'gte'), lt: wholeMsBound(at(10, true), 'lt'), lte: wholeMsBound(at(10, true), 'lte') };
    expect(times.filter((t) => t > bound.gt)).toEqual(times.filter((t) => t > x));
    expect(times.filter((t) => t >= bound.gte)).toEqual(times.filter((t) => t >= x));
    expect(times.filter((t) => t < bound.lt)).toEqual(times.filter((t) => t < x));
    expect(times.filter((t) => t <= bound.lte)).toEqual(times.filter((t) => t <= x));
  });
});
