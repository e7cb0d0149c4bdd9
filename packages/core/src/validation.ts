/**
 * Text and payload rules shared by every schema: lengths in Unicode code points, trimming, lone
 * surrogates, JSON payload size in UTF-8 bytes. Spec: project-inbox.md "Resource".
 */
import { z } from 'zod';
import { InboxKitError, type ErrorDetail } from './errors.js';
import type { JsonValue } from './records.js';

/**
 * Metadata key of a query or path parameter that arrives as digits and means an integer
 * (`{ minimum, maximum }`): the OpenAPI document shows it as `{ type: integer, minimum, maximum }`
 * (`zodToJsonSchema` of `@inbox-kit/core/http`).
 */
export const INTEGER_PARAMETER = 'x-inbox-kit-integer';

/** Length of `s` in Unicode code points (an emoji counts 1). */
export function codePointLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/**
 * Number of bytes of `s` in UTF-8, as `new TextEncoder().encode(s).length` gives it (a lone
 * surrogate counts 3, the bytes of U+FFFD it is encoded as) without building the bytes.
 */
export function utf8ByteLength(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) {
      n += 1;
    } else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 2; // a pair: 2 UTF-16 units, 4 bytes
      i++;
    } else {
      n += 2;
    }
  }
  return n;
}

/** True when `s` holds a UTF-16 surrogate that is not part of a valid pair. */
export function hasLoneSurrogate(s: string): boolean {
  return /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s);
}

/** True when `s` holds U+0000, which PostgreSQL `text` can neither store nor compare (so no engine gets it). */
export function hasNul(s: string): boolean {
  return s.includes('\u0000');
}

/** A free-text query filter: `min`–`max` code points (zod counts code points), no U+0000. */
export function queryText(opts: { min?: number; max: number }) {
  return z
    .string()
    .min(opts.min ?? 0)
    .max(opts.max)
    .refine((s) => !hasNul(s), { message: 'must not contain U+0000' })
    .meta({ pattern: NO_NUL_PATTERN });
}

/** JSON Schema `pattern` of a string without U+0000 (what no engine can store). */
const NO_NUL_PATTERN = '^[^\\u0000]*$';
/** … and with at least one non-whitespace character (non-blank after trimming). */
const NON_BLANK_PATTERN = '^[^\\u0000]*\\S[^\\u0000]*$';

/**
 * A string schema: rejects lone surrogates and U+0000, trims, then checks `min`–`max` code points.
 * With `blankToNull`, an empty or blank string (and `null`) becomes `null`.
 */
export function text(opts: { min?: number; max: number }) {
  const min = opts.min ?? 0;
  return z
    .string()
    .refine((s) => !hasLoneSurrogate(s), { message: 'must not contain a lone surrogate' })
    .refine((s) => !hasNul(s), { message: 'must not contain U+0000' })
    .transform((s) => s.trim())
    .refine((s) => codePointLength(s) >= min, { message: `must be at least ${min} characters after trimming` })
    .refine((s) => codePointLength(s) <= opts.max, { message: `must be at most ${opts.max} characters` })
    // What the checks above say, for a generator or a fuzzer reading the OpenAPI document.
    .meta({
      pattern: min > 0 ? NON_BLANK_PATTERN : NO_NUL_PATTERN,
      description: `${min > 0 ? `${min}–` : 'At most '}${opts.max} characters (Unicode code points) after trimming whitespace${min > 0 ? ' (so not blank)' : ''}; no U+0000, no lone surrogate`,
    });
}

/** Like {@link text}, but `null`, `""` and blank strings become `null`. */
export function optionalText(max: number) {
  return z
    .union([z.null(), text({ max })])
    .optional()
    .transform((s) => (s === undefined || s === null || s === '' ? null : s));
}

/** An id in a request: 1–128 printable ASCII characters. */
export const idString = z.string().min(1).max(128).regex(/^[\x21-\x7e]+$/, 'must be printable ASCII').describe('An id: 1–128 printable ASCII characters (e.g. `proj_…`)');

/** A value {@link measurePayload} visits: its parent's visit and its key there (the path is built only for an error). */
interface Visit {
  v: unknown;
  parent: Visit | undefined;
  key: string | number;
  depth: number;
}

/**
 * The JSONPath-like path of a visit (`$.a[0].b`); past 16 levels the middle is elided
 * (`$[0][0]…(500 levels)…[0]`), so an error message stays short however deep the payload.
 */
function pathOf(at: Visit): string {
  const keys: Array<string | number> = [];
  for (let v: Visit | undefined = at; v !== undefined && v.parent !== undefined; v = v.parent) keys.push(v.key);
  keys.reverse();
  const segment = (k: string | number) => (typeof k === 'number' ? `[${k}]` : `.${k}`);
  if (keys.length <= 16) return `$${keys.map(segment).join('')}`;
  return `$${keys.slice(0, 8).map(segment).join('')}…(${keys.length - 12} levels)…${keys.slice(-4).map(segment).join('')}`;
}

/** The deepest nesting of arrays and objects a payload may have (levels). */
export const MAX_PAYLOAD_DEPTH = 512;

/** The Project Inbox payload limit: 262,144 bytes of compact UTF-8 JSON (256 KiB). */
export const MAX_PAYLOAD_BYTES = 262_144;

/** The runtime's native UTF-8 length of a string, where it has one (Node, Bun, Deno's `Buffer`). */
const nativeByteLength: ((s: string, encoding: 'utf8') => number) | undefined = (() => {
  const buffer = (globalThis as { Buffer?: { byteLength?: (s: string, encoding: 'utf8') => number } }).Buffer;
  return typeof buffer?.byteLength === 'function' ? buffer.byteLength.bind(buffer) : undefined;
})();

/**
 * The UTF-8 byte count of a string without lone surrogates: the runtime's native count where it
 * has one (~10 × faster on a big payload), else {@link utf8ByteLength}.
 */
function wellFormedByteLength(s: string): number {
  return nativeByteLength !== undefined ? nativeByteLength(s, 'utf8') : utf8ByteLength(s);
}

/** Characters `JSON.stringify` escapes in a string: `"`, `\\` and the C0 controls. */
const JSON_ESCAPED = /["\\\u0000-\u001f]/g;

/**
 * The UTF-8 bytes of `JSON.stringify(s)` for a string without lone surrogates: its quotes, its
 * characters, and what the escapes add (`\"` `\\` `\b` `\t` `\n` `\f` `\r`: one byte each;
 * any other control `\u00XX`: five).
 */
function jsonStringBytes(s: string): number {
  let n = wellFormedByteLength(s) + 2;
  JSON_ESCAPED.lastIndex = 0;
  if (!JSON_ESCAPED.test(s)) return n;
  JSON_ESCAPED.lastIndex = 0;
  for (let m = JSON_ESCAPED.exec(s); m !== null; m = JSON_ESCAPED.exec(s)) {
    const c = s.charCodeAt(m.index);
    n += c === 0x22 || c === 0x5c || c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d ? 1 : 5;
  }
  return n;
}

/**
 * Serialises a payload compactly and measures it.
 * @param maxBytes the caller's limit: a payload over it is measured but neither serialised nor
 *   copied (`value` is then `null`: the caller refuses it). Default: no limit. The bytes are
 *   counted while the payload is checked, exactly those of `JSON.stringify(payload)` in UTF-8.
 * @returns the JSON value (a deep copy; `null` when over `maxBytes`) and its UTF-8 byte count.
 * @throws InboxKitError `project_inbox_payload_invalid` for values JSON cannot represent (BigInt,
 *   cycles, functions, `undefined`, symbols, non-finite numbers, lone surrogates in strings or keys,
 *   nesting deeper than {@link MAX_PAYLOAD_DEPTH}).
 */
export function measurePayload(payload: unknown, maxBytes = Infinity): { value: JsonValue; bytes: number } {
  const invalid = (why: string, at: Visit) => new InboxKitError('project_inbox_payload_invalid', `payload is not JSON-serialisable: ${why} at ${pathOf(at)}`);
  // An explicit stack (not recursion) so a deeply nested payload can never overflow the call stack.
  const ancestors = new Set<object>();
  const stack: Array<Visit | { exit: object }> = [{ v: payload, parent: undefined, key: '', depth: 0 }];
  let bytes = 0;
  while (stack.length > 0) {
    const top = stack.pop()!;
    if ('exit' in top) {
      ancestors.delete(top.exit);
      continue;
    }
    const { v, depth } = top;
    switch (typeof v) {
      case 'string':
        if (hasLoneSurrogate(v)) throw invalid('lone surrogate', top);
        bytes += jsonStringBytes(v);
        continue;
      case 'boolean':
        bytes += v ? 4 : 5;
        continue;
      case 'number':
        if (!Number.isFinite(v)) throw invalid('non-finite number', top);
        // JSON writes a finite number as ToString does (-0 as 0).
        bytes += String(v).length;
        continue;
      case 'object': {
        if (v === null) {
          bytes += 4;
          continue;
        }
        if (depth >= MAX_PAYLOAD_DEPTH) throw invalid(`nested deeper than ${MAX_PAYLOAD_DEPTH} levels`, top);
        if (ancestors.has(v)) throw invalid('cycle', top);
        ancestors.add(v);
        stack.push({ exit: v });
        if (Array.isArray(v)) {
          // `[` `]` and a comma between items.
          bytes += 2 + Math.max(0, v.length - 1);
          for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], parent: top, key: i, depth: depth + 1 });
        } else {
          const proto = Object.getPrototypeOf(v);
          if (proto !== Object.prototype && proto !== null) throw invalid('non-plain object', top);
          const entries = Object.entries(v);
          // `{` `}`, a comma between members, each key quoted and its colon.
          bytes += 2 + Math.max(0, entries.length - 1);
          for (const [k, x] of entries) {
            if (hasLoneSurrogate(k)) throw invalid('lone surrogate in a key', top);
            bytes += jsonStringBytes(k) + 1;
            stack.push({ v: x, parent: top, key: k, depth: depth + 1 });
          }
        }
        continue;
      }
      default:
        throw invalid(typeof v, top);
    }
  }
  // Counted on the way (the bytes of `JSON.stringify(payload)`, never built for a payload over the limit).
  if (bytes > maxBytes) return { value: null, bytes };
  return { value: JSON.parse(JSON.stringify(payload)) as JsonValue, bytes };
}

/** Turns zod issues into envelope details (`path` joined with dots). */
export function issuesToDetails(issues: readonly z.core.$ZodIssue[]): ErrorDetail[] {
  return issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message, code: i.code }));
}

/** Values that are the output of a schema's parse, by value (internal: set by the HTTP pipeline for a route's body and query). */
const parsedBy = new WeakMap<object, z.ZodType>();

/**
 * Records that the object `value` is what `schema` parsed out (a fresh object no one else holds),
 * so a service handed it may skip parsing it again ({@link wasParsedBy}). Internal to the core.
 */
export function markParsed(schema: z.ZodType, value: unknown): void {
  if (typeof value === 'object' && value !== null) parsedBy.set(value, schema);
}

/** True when `value` is the output of `schema`'s parse, as {@link markParsed} recorded (never for a caller's own object). Internal. */
export function wasParsedBy(schema: z.ZodType, value: unknown): boolean {
  return typeof value === 'object' && value !== null && parsedBy.get(value) === schema;
}

/**
 * Parses `input` with `schema`; a request part the HTTP pipeline already parsed with `schema`
 * ({@link markParsed}) is returned as it is, not parsed again.
 * @throws InboxKitError `validation_error` with one detail per issue.
 */
export function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown, what = 'request'): z.output<S> {
  // A request part the HTTP pipeline parsed with this very schema is already its output (`markParsed`).
  if (wasParsedBy(schema, input)) return input as z.output<S>;
  const r = schema.safeParse(input);
  if (!r.success) throw new InboxKitError('validation_error', `Invalid ${what}`, issuesToDetails(r.error.issues));
  return r.data;
}
