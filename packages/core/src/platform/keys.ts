/**
 * API key secrets: generation, hashing (SHA-256: `node:crypto` where the runtime lends it, else Web
 * Crypto; see `../digest.ts`) and constant-time comparison. Only hashes are stored (platform.md
 * "Identity and credentials").
 */
import { sha256Hex } from '../digest.js';

/** A new secret: `ik_` + 40 URL-safe random characters (240 bits). */
export function generateApiKeySecret(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(40));
  let s = 'ik_';
  for (const b of bytes) s += alphabet[b & 63];
  return s;
}

/** Lowercase hex SHA-256 of a secret's UTF-8 bytes (what `api_keys.key_hash` stores). */
export async function hashApiKey(secret: string): Promise<string> {
  return sha256Hex(secret);
}

/** Compares two strings in time that depends only on their lengths. */
export function constantTimeEqual(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) diff |= (a.charCodeAt(i) || 0) ^ (b.charCodeAt(i) || 0);
  return diff === 0;
}
