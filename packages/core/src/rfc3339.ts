/**
 * RFC 3339 timestamps in queries, parsed exactly (live-inbox.md "Managed Agents compatibility",
 * time filters). One parser for every route that takes a time filter: `Date.parse` rolls impossible
 * dates over (`2026-02-30` → March 2) and drops sub-millisecond digits, so neither is used here.
 *
 * Grammar (RFC 3339 §5.6 `date-time`): `YYYY-MM-DD` `T` (or `t`, or one space) `HH:MM:SS`, an
 * optional fraction `.d…` (1–9 digits), then `Z` (or `z`) or an offset `±HH:MM`. Checked: month
 * 01–12, the day exists in that month (leap years included), hour 00–23 (`24:00` is refused),
 * minute 00–59, second 00–59 (a leap second `:60` cannot be represented and is refused), offset
 * hour 00–23 and minute 00–59. A timestamp without offset (local time) is refused: it names no
 * instant.
 */

/** An instant read from an RFC 3339 timestamp: whole ms since the epoch, plus what is below the ms. */
export interface Rfc3339Instant {
  /** Whole milliseconds since the epoch (floor of the instant). */
  ms: number;
  /** Whether the instant lies strictly after `ms` (non-zero digits below the millisecond). */
  subMs: boolean;
}

const PATTERN = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const daysIn = (y: number, m: number) => [31, isLeap(y) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1] ?? 0;
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/**
 * Parses an RFC 3339 timestamp exactly.
 * @returns the instant, or `{ error }` with a sentence saying what is wrong (for a 400 detail).
 */
export function parseRfc3339(text: string): Rfc3339Instant | { error: string } {
  const m = PATTERN.exec(text);
  if (m === null) return { error: 'must be an RFC 3339 timestamp with a time zone, e.g. 2026-01-01T00:00:00Z or 2026-01-01T01:00:00.250+01:00' };
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12) return { error: `month ${m[2]} does not exist (01–12)` };
  if (day < 1 || day > daysIn(year, month)) return { error: `${MONTHS[month - 1]} ${day} does not exist in ${m[1]}` };
  if (hour > 23) return { error: `hour ${m[4]} does not exist (00–23; midnight is 00:00 of the next day)` };
  if (minute > 59) return { error: `minute ${m[5]} does not exist (00–59)` };
  if (second === 60) return { error: 'leap seconds (:60) cannot be represented; use :59.999 or the next second' };
  if (second > 59) return { error: `second ${m[6]} does not exist (00–59)` };
  let offsetMinutes = 0;
  if (m[8] === undefined) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return { error: `offset ${m[9]}${m[10]}:${m[11]} does not exist (±00:00 to ±23:59)` };
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const fraction = (m[7] ?? '').padEnd(9, '0');
  const wholeMs = Number(fraction.slice(0, 3));
  const subMs = Number(fraction.slice(3)) !== 0;
  // Date.UTC with every field in range: exact, no roll-over (years 0–99 are set explicitly).
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, wholeMs);
  const ms = date.getTime() - offsetMinutes * 60_000;
  return { ms, subMs };
}

/** The comparison a time bound makes: after (`gt`, `gte`) or before (`lt`, `lte`). */
export type TimeBoundOperator = 'gt' | 'gte' | 'lt' | 'lte';

/**
 * The whole-millisecond bound that selects exactly the integer-ms times the exact `instant` bound
 * selects with `op`. Stored times are whole ms, so for an instant `x` strictly between `ms` and
 * `ms + 1`: `t > x` ⟺ `t > ms`, `t ≥ x` ⟺ `t ≥ ms + 1`, `t < x` ⟺ `t < ms + 1`, `t ≤ x` ⟺ `t ≤ ms`.
 */
export function wholeMsBound(instant: Rfc3339Instant, op: TimeBoundOperator): number {
  if (!instant.subMs) return instant.ms;
  return op === 'gte' || op === 'lt' ? instant.ms + 1 : instant.ms;
}
