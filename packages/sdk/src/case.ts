/**
 * Case mapping between the SDK (camelCase) and the wire (snake_case). Only the top-level keys of
 * one record or body are renamed; nested values (`payload`, `content`, `metadata`, …) pass through
 * untouched, by reference. Spec: project-inbox.md "SDK".
 */

/** `sourceSessionId` → `source_session_id`. Keys already in snake_case are unchanged. */
export function snakeKey(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** `source_session_id` → `sourceSessionId`. Keys already in camelCase are unchanged. */
export function camelKey(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * A copy of `input` with its top-level keys in snake_case, leaving out `undefined` values (so an
 * omitted optional field is not sent; `null` is sent). Nested values are not touched.
 */
export function toWire(input: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    if (value === undefined) continue;
    out[snakeKey(key)] = value;
  }
  return out;
}

/**
 * A copy of a wire record with its top-level keys in camelCase. Nested values are not touched. A
 * value that is not a plain object is returned as is.
 */
export function fromWire<T>(record: unknown): T {
  if (!isPlainObject(record)) return record as T;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) out[camelKey(key)] = value;
  return out as T;
}

/** {@link fromWire} over every element of a wire array (a non-array becomes `[]`). */
export function listFromWire<T>(records: unknown): T[] {
  return Array.isArray(records) ? records.map((r) => fromWire<T>(r)) : [];
}

/**
 * The record under `key` of a `{ key: record }` body, mapped by {@link fromWire}. When the body has
 * no such key, the body itself is taken as the record.
 */
export function unwrap<T>(body: unknown, key: string): T {
  const record = body !== null && typeof body === 'object' && key in body ? (body as Record<string, unknown>)[key] : body;
  return fromWire<T>(record);
}
