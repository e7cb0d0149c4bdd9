/**
 * Idempotency keys (`Idempotency-Key` header on creates): the key's format and the request hash
 * that tells a retry of the same request from another request reusing the key. The store keeps
 * one record per `(workspace, acting account, key)` (`StoreTx.insertIdempotencyRecord`).
 */
import { z } from 'zod';
import { InboxKitError } from './errors.js';
import { sha256Hex } from './digest.js';

/** An `Idempotency-Key`: 1–255 printable ASCII characters (U+0020–U+007E). */
export const idempotencyKeySchema = z
  .string()
  .regex(/^[\x20-\x7e]{1,255}$/, 'must be 1–255 printable ASCII characters')
  .describe('Idempotency-Key: 1–255 printable ASCII characters; a retry with the same key and body returns the first result');

/**
 * Checks a caller's key.
 * @throws InboxKitError validation_error (detail path `idempotency_key`) when it is not 1–255 printable ASCII.
 */
export function parseIdempotencyKey(key: unknown): string {
  const result = idempotencyKeySchema.safeParse(key);
  if (!result.success) {
    throw new InboxKitError('validation_error', 'Invalid Idempotency-Key', [
      { path: 'idempotency_key', message: 'must be 1–255 printable ASCII characters', code: 'invalid_idempotency_key' },
    ]);
  }
  return result.data;
}

/** JSON with object keys sorted at every depth (arrays keep their order): one text per value. */
export function canonicalJson(value: unknown): string {
  const sortKeys = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sortKeys);
    if (v !== null && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      return Object.fromEntries(Object.keys(o).sort().map((k) => [k, sortKeys(o[k])]));
    }
    return v;
  };
  return JSON.stringify(sortKeys(value)) ?? 'null';
}

/**
 * The request hash of an idempotent request: hex SHA-256 (`./digest.ts`) of
 * `METHOD + ' ' + path + '\n' + canonicalJson(body)`, where `body` is the validated, normalised
 * request body (so two bodies that mean the same, e.g. differing only in key order or in a
 * trimmed title, hash alike).
 */
export async function idempotencyRequestHash(method: string, path: string, body: unknown): Promise<string> {
  const text = `${method.toUpperCase()} ${path}\n${canonicalJson(body)}`;
  return sha256Hex(text);
}
