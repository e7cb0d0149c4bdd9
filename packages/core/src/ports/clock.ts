/**
 * Time and ids come in through ports so tests can freeze them (platform.md "Ids and time").
 */

/** A source of time: integer milliseconds since the Unix epoch. */
export interface Clock {
  now(): number;
}

/** The wall clock (`Date.now()`). */
export const systemClock: Clock = { now: () => Date.now() };

/** Id prefixes of every resource (platform.md "Ids and time"). */
export type IdPrefix =
  | 'ws' | 'acc' | 'key' | 'proj' | 'sess' | 'floor' | 'page' | 'evt' | 'oplog' | 'pinbox' | 'run' | 'sevt' | 'req' | 'agent';

/** Makes resource ids: `<prefix>_` + 21 URL-safe characters (platform.md "Ids and time"). */
export interface IdGenerator {
  next(prefix: IdPrefix): string;
}

/** Options of {@link createIdGenerator}. */
export interface IdGeneratorOptions {
  /** Where the creation millisecond comes from (default {@link systemClock}): the services' clock. */
  clock?: Clock;
  /**
   * `size` URL-safe random characters (`[A-Za-z0-9_-]`), e.g. `nanoid`; default: drawn from
   * `globalThis.crypto.getRandomValues`.
   */
  random?: (size: number) => string;
}

const URL_ALPHABET = 'useandom-26T198340PX75pxJACKVERYMINDBUSHWOLF_GQZbfghjklqvwyzrict';
/** The same 64 symbols in ASCII order: a time written in them sorts as its number does. */
const SORTED_ALPHABET = '-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz';
/** Characters of an id's time part (6 bits each: 48 bits of milliseconds, past the year 10000). */
const TIME_CHARS = 8;
/** Characters of an id's random part (78 bits). */
const RANDOM_CHARS = 13;

const cryptoRandom = (size: number): string => {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(size));
  let out = '';
  for (const b of bytes) out += URL_ALPHABET[b & 63];
  return out;
};

/** The largest time an id's time part holds (2^48 − 1 ms). */
const MAX_TIME = 2 ** (6 * TIME_CHARS) - 1;

/**
 * `ms` in {@link TIME_CHARS} characters of {@link SORTED_ALPHABET}, most significant first; a
 * time before the epoch (or not a number) is written as 0, one past {@link MAX_TIME} as it.
 */
function timePart(ms: number): string {
  let out = '';
  let t = Number.isFinite(ms) ? Math.min(MAX_TIME, Math.max(0, Math.floor(ms))) : 0;
  for (let i = 0; i < TIME_CHARS; i++) {
    out = SORTED_ALPHABET[t % 64] + out;
    t = Math.floor(t / 64);
  }
  return out;
}

/**
 * The default id generator: `<prefix>_` + 21 URL-safe characters, the first 8 the creation
 * millisecond (from `clock`) written so that ids sort by it, the last 13 random (78 bits).
 * Time-ordered ids put a new row's primary-key entry at the right edge of its index, as an
 * integer key would, instead of on a random page of it: a write dirties and re-reads fewer pages
 * (SQLite's WAL, PostgreSQL's full-page writes). An id tells its creation millisecond, which its
 * record's `created_at` says too.
 *
 * Passing a function (`() => string` of 21 characters, the earlier form) makes every id's 21
 * characters that function's: fully random ids, without that locality.
 */
export function createIdGenerator(options: IdGeneratorOptions | (() => string) = {}): IdGenerator {
  if (typeof options === 'function') {
    const draw = options;
    return { next: (prefix) => `${prefix}_${draw()}` };
  }
  const clock = options.clock ?? systemClock;
  const random = options.random ?? cryptoRandom;
  let lastMs = Number.NaN;
  let lastTime = '';
  return {
    next(prefix) {
      const ms = clock.now();
      if (ms !== lastMs) {
        lastMs = ms;
        lastTime = timePart(ms);
      }
      return `${prefix}_${lastTime}${random(RANDOM_CHARS)}`;
    },
  };
}

/** A deterministic generator for tests: `<prefix>_` + a zero-padded counter per prefix. */
export function createSequentialIdGenerator(): IdGenerator {
  const counters = new Map<string, number>();
  return {
    next(prefix) {
      const n = (counters.get(prefix) ?? 0) + 1;
      counters.set(prefix, n);
      return `${prefix}_${String(n).padStart(21, '0')}`;
    },
  };
}

/** A clock tests move by hand. */
export function createManualClock(start = 1_735_689_600_000): Clock & { set(ms: number): void; advance(ms: number): void } {
  let t = start;
  return { now: () => t, set: (ms) => { t = ms; }, advance: (ms) => { t += ms; } };
}
