/**
 * Opaque keyset cursors: base64url of a small JSON object naming the last row returned
 * (`created_at` and `id`), the scope it was minted for (e.g. a project) and the filter set.
 * Decoding is strict: anything that is not exactly what `encodeCursor` makes is rejected.
 * Spec: project-inbox.md "GET /projects/:id/inbox".
 */
import { z } from 'zod';
import { InboxKitError } from './errors.js';

/** The position a cursor names. */
export interface CursorPosition {
  created_at: number;
  id: string;
}

const payloadSchema = z.strictObject({
  v: z.literal(1),
  s: z.string(),
  f: z.string(),
  c: z.number().int().nonnegative(),
  // Row ids are generated or `idString`s: printable ASCII (never U+0000, which PostgreSQL refuses).
  i: z.string().min(1).max(128).regex(/^[\x21-\x7e]+$/),
});

function toBase64Url(s: string): string {
  const bytes = new TextEncoder().encode(s);
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(s: string): string | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(s) || s.length % 4 === 1) return undefined;
  try {
    const bin = atob(s.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (s.length % 4)) % 4));
    const bytes = Uint8Array.from(bin, (ch) => ch.charCodeAt(0));
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** A stable fingerprint of a filter set: keys sorted, absent and undefined values dropped. */
export function filterFingerprint(filters: Record<string, string | number | undefined | null>): string {
  return JSON.stringify(
    Object.keys(filters)
      .sort()
      .filter((k) => filters[k] !== undefined && filters[k] !== null)
      .map((k) => [k, filters[k]]),
  );
}

/** Mints a cursor for `position` within `scope` (e.g. the project id) and `filters`. */
export function encodeCursor(scope: string, filters: string, position: CursorPosition): string {
  return toBase64Url(JSON.stringify({ v: 1, s: scope, f: filters, c: position.created_at, i: position.id }));
}

/**
 * Decodes a cursor minted by {@link encodeCursor} for the same `scope` and `filters`.
 * @throws InboxKitError `invalid_cursor` when it does not decode strictly, or names another scope or filter set.
 */
export function decodeCursor(cursor: string, scope: string, filters: string): CursorPosition {
  const bad = () => new InboxKitError('invalid_cursor', 'Cursor is invalid');
  const json = fromBase64Url(cursor);
  if (json === undefined) throw bad();
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    throw bad();
  }
  const parsed = payloadSchema.safeParse(raw);
  if (!parsed.success) throw bad();
  const p = parsed.data;
  // Strict: only the exact bytes we mint are accepted.
  if (encodeCursor(p.s, p.f, { created_at: p.c, id: p.i }) !== cursor) throw bad();
  if (p.s !== scope || p.f !== filters) throw bad();
  return { created_at: p.c, id: p.i };
}
