/**
 * The storage side of the security review, on every engine: API keys are stored only as SHA-256
 * hashes (nothing in the database holds a secret, nor a fragment of one) and compared in constant
 * time (`constantTimeEqual` agrees with `===`). The HTTP side — credentials on every route,
 * tenancy in both directions, impersonation, no internals in any error — moved to the HTTP
 * conformance kit of `@inbox-kit/core/testing` (`securitySuite`), which `conformance.test.ts` runs
 * on the in-memory store and on every engine, with every row of every table (`dumpRows`) as its
 * "nothing written" reader.
 */
import { createHash } from 'node:crypto';
import { constantTimeEqual } from '@inbox-kit/core';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines, startHarness, type Harness } from './harness.js';
import { dumpAll, expectNoLeak, tableNames } from './hostile-helpers.js';

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

describe.each(engines)('API keys at rest (%s)', (engine) => {
  let h: Harness;
  let tables: string[];
  let secrets: string[];

  beforeAll(async () => {
    h = await startHarness(engine);
    tables = await tableNames(h);
    secrets = Object.values(h.keys);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('API keys are stored only as their SHA-256: no secret, nor a fragment of one, anywhere in the database', async () => {
    const keys = await h.raw<{ key_hash: string }>('SELECT * FROM api_keys');
    expect(keys.length).toBeGreaterThanOrEqual(secrets.length);
    for (const row of keys) expect(row.key_hash).toMatch(/^[0-9a-f]{64}$/);
    const hashes = new Set(keys.map((k) => k.key_hash));
    for (const secret of secrets) {
      expect(secret).toMatch(/^ik_[A-Za-z0-9_-]{40}$/); // 240 random bits
      expect(hashes.has(sha256(secret))).toBe(true);
    }
    const everything = JSON.stringify(await dumpAll(h, tables));
    for (const secret of secrets) {
      for (let at = 3; at + 16 <= secret.length; at += 8) expect(everything.includes(secret.slice(at, at + 16)), 'a secret fragment is stored').toBe(false);
    }
    // GET /me shows the key's kind, never its hash or secret.
    const me = await h.request('GET', '/me', { as: 'acc_owner' });
    expect(me.status).toBe(200);
    expectNoLeak(me.text, secrets, 'GET /me');
    for (const k of keys) expect(me.text.includes(k.key_hash)).toBe(false);
  });

  it('constantTimeEqual agrees with === on any strings, near misses included (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 80 }), fc.nat(), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }), (a, at, ch) => {
        expect(constantTimeEqual(a, a)).toBe(true);
        const i = a.length === 0 ? 0 : at % a.length;
        const flipped = a.slice(0, i) + ch + a.slice(i + 1);
        expect(constantTimeEqual(a, flipped)).toBe(a === flipped);
        expect(constantTimeEqual(a, a + ch)).toBe(false);
        expect(constantTimeEqual(a + ch, a)).toBe(false);
        expect(constantTimeEqual(a, '')).toBe(a === '');
      }),
      { numRuns: 500 },
    );
    // Lengths differ but the shorter is a prefix padded with what charCodeAt(out of range) would be.
    expect(constantTimeEqual('abc', 'abc\u0000')).toBe(false);
    expect(constantTimeEqual('\u0000', '')).toBe(false);
  });
});
