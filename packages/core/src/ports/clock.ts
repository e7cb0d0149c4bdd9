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

/** Makes resource ids: `<prefix>_` + 21 URL-safe random characters. */
export interface IdGenerator {
  next(prefix: IdPrefix): string;
}

const URL_ALPHABET = 'useandom-26T198340PX75pxJACKVERYMINDBUSHWOLF_GQZbfghjklqvwyzrict';

/**
 * The default id generator: 21 characters from the 64-symbol URL-safe alphabet, drawn from
 * `globalThis.crypto.getRandomValues` (126 bits of randomness). Pass `random` to use another
 * generator of 21-char ids (e.g. `nanoid`).
 */
export function createIdGenerator(random?: () => string): IdGenerator {
  const draw =
    random ??
    (() => {
      const bytes = globalThis.crypto.getRandomValues(new Uint8Array(21));
      let out = '';
      for (const b of bytes) out += URL_ALPHABET[b & 63];
      return out;
    });
  return { next: (prefix) => `${prefix}_${draw()}` };
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
