/**
 * The demo hashes API keys with node:crypto (synchronous); it must give exactly the digest the
 * core's Web Crypto default stores, or keys issued by one would not authenticate through the other.
 */
import { createHash } from 'node:crypto';
import { hashApiKey, generateApiKeySecret } from '@inbox-kit/core';
import { describe, expect, it } from 'vitest';

describe('API key hashing', () => {
  it('node:crypto and the core default agree on every secret', async () => {
    const secrets = ['', 'ik_abc', 'ключ-🔑', ...Array.from({ length: 50 }, () => generateApiKeySecret())];
    for (const secret of secrets) {
      expect(createHash('sha256').update(secret, 'utf8').digest('hex')).toBe(await hashApiKey(secret));
    }
  });
});
