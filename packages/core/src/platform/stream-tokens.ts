/**
 * Stream tokens (platform.md "Browsers" → "Stream tokens"): a page's `EventSource` cannot send
 * `Authorization`, so it opens a stream with a short-lived token as the RFC 6750 `access_token`
 * query parameter instead. A token names the API key that asked for it, the account it acts as,
 * and when it expires (at most 15 minutes on); it is signed with HMAC-SHA-256 keyed by that key's
 * stored hash, so no server secret is needed, every process verifies it, it survives a restart,
 * and it stops working when the key is revoked or rotated away. Pure functions (HMAC by `../digest.ts`).
 */
import { z } from 'zod';
import { hmacSha256 } from '../digest.js';

/** Prefix of every stream token (an API key starts `ik_`: the two are never confused). */
export const STREAM_TOKEN_PREFIX = 'ikst_';

/** Longest lifetime of a stream token: 900 s (15 minutes), also the default. */
export const MAX_STREAM_TOKEN_TTL_SECONDS = 900;

/** `POST /stream-tokens` body: `{ ttl_seconds? }` (1–900, default 900), or none. */
export const createStreamTokenBody = z
  .strictObject({
    ttl_seconds: z.number().int().min(1).max(MAX_STREAM_TOKEN_TTL_SECONDS).optional()
      .describe('Seconds the token opens streams for: 1–900 (default 900, 15 minutes)'),
  })
  .optional();

/** What a token says: the key, the acting account, the workspace, the expiry (ms). */
export interface StreamTokenClaims {
  key_id: string;
  account_id: string;
  workspace_id: string;
  expires_at: number;
}

const encoder = new TextEncoder();
const DOMAIN = 'inbox-kit stream token v1\n';

function base64url(bytes: Uint8Array): string {
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64url(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return undefined;
  try {
    const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4));
    return Uint8Array.from(binary, (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}

const hmac = (keyMaterial: string, data: string) => hmacSha256(keyMaterial, DOMAIN + data);

/** A signed token for `claims`, keyed by the API key's stored hash. */
export async function signStreamToken(claims: StreamTokenClaims, keyHash: string): Promise<string> {
  const payload = base64url(encoder.encode(JSON.stringify([claims.key_id, claims.account_id, claims.workspace_id, claims.expires_at])));
  return `${STREAM_TOKEN_PREFIX}${payload}.${base64url(await hmac(keyHash, payload))}`;
}

/** The claims a token states, unverified (`undefined` when it is not a well-formed token). */
export function readStreamToken(token: string): (StreamTokenClaims & { payload: string; signature: string }) | undefined {
  if (!token.startsWith(STREAM_TOKEN_PREFIX) || token.length > 1024) return undefined;
  const [payload, signature, extra] = token.slice(STREAM_TOKEN_PREFIX.length).split('.');
  if (payload === undefined || signature === undefined || extra !== undefined) return undefined;
  const bytes = fromBase64url(payload);
  if (bytes === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed) || parsed.length !== 4) return undefined;
  const [key_id, account_id, workspace_id, expires_at] = parsed as unknown[];
  if (typeof key_id !== 'string' || typeof account_id !== 'string' || typeof workspace_id !== 'string' || !Number.isSafeInteger(expires_at)) return undefined;
  return { key_id, account_id, workspace_id, expires_at: expires_at as number, payload, signature };
}

/** True when `signature` is the token signature of `payload` under `keyHash` (compared in constant time). */
export async function streamTokenSignatureValid(payload: string, signature: string, keyHash: string): Promise<boolean> {
  const expected = base64url(await hmac(keyHash, payload));
  let diff = expected.length ^ signature.length;
  for (let i = 0; i < expected.length; i++) diff |= expected.charCodeAt(i) ^ (signature.charCodeAt(i) || 0);
  return diff === 0;
}

/** True when a bearer credential is a stream token (not an API key). */
export function isStreamToken(credential: string): boolean {
  return credential.startsWith(STREAM_TOKEN_PREFIX);
}
