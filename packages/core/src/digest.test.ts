import { createHash, createHmac } from 'node:crypto';
import * as nodeCrypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { digestsOf, hmacSha256, sha256Hex } from './digest.js';
import { hashApiKey } from './platform/keys.js';

const texts = ['', 'ik_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_ab', 'ünïcødé ✓ 𝄞', 'x'.repeat(10_000)];
const webCrypto = digestsOf(undefined);
const withoutOneShot = digestsOf({ createHash, createHmac });

describe('digests (digest.ts)', () => {
  it('on Node, hashes synchronously through node:crypto', () => {
    expect(typeof sha256Hex('secret')).toBe('string');
    expect(hmacSha256('key', 'data')).toBeInstanceOf(Uint8Array);
  });

  it.each(texts)('SHA-256 of %# is the same lowercase hex on node:crypto (one-shot and createHash) and Web Crypto', async (text) => {
    const expected = createHash('sha256').update(text, 'utf8').digest('hex');
    expect(sha256Hex(text)).toBe(expected);
    expect(withoutOneShot.sha256Hex(text)).toBe(expected);
    const viaWeb = webCrypto.sha256Hex(text);
    expect(viaWeb).toBeInstanceOf(Promise);
    expect(await viaWeb).toBe(expected);
    expect(await hashApiKey(text)).toBe(expected);
  });

  // Web Crypto refuses an empty HMAC key; a stream token's key is a stored key hash, never empty.
  it.each(texts.slice(1))('HMAC-SHA-256 keyed by %# is the same 32 bytes on both', async (key) => {
    const expected = new Uint8Array(createHmac('sha256', key).update('inbox-kit ✓ data', 'utf8').digest());
    expect(expected).toHaveLength(32);
    expect(hmacSha256(key, 'inbox-kit ✓ data')).toEqual(expected);
    expect(await webCrypto.hmacSha256(key, 'inbox-kit ✓ data')).toEqual(expected);
  });

  it('uses the one-shot hash when node:crypto has it', () => {
    let oneShot = 0;
    const digests = digestsOf({ ...nodeCrypto, hash: (algorithm, data, encoding) => (oneShot++, createHash(algorithm).update(data).digest(encoding)) });
    expect(digests.sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(oneShot).toBe(1);
  });
});
