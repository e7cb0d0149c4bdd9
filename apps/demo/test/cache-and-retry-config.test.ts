/**
 * PRINCIPAL_CACHE_TTL_MS and SSE_RETRY_MS (README "Demo configuration"): parsed strictly, the
 * defaults unchanged (1 s, 2 s); a demo started with them sends that `retry:` hint on its event
 * streams, and with no principal cache (0) refuses a key revoked directly in storage on the next
 * request (storage changed under the server is what another process's revocation looks like; the
 * lifetime itself: core's principal-cache-ttl.test.ts, on a manual clock).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildDemo, loadConfig } from '../src/index.js';
import { openEventStream, waitUntil } from './demo-process.js';
import { closeDemo, listen } from './listen.js';

describe('PRINCIPAL_CACHE_TTL_MS / SSE_RETRY_MS', () => {
  it('are parsed strictly; the defaults are 1000 and 2000 ms; 0 turns the principal cache off', () => {
    expect(loadConfig({})).toMatchObject({ principalCacheTtlMs: 1_000, sessionGateCacheTtlMs: 1_000, sseRetryMs: 2_000 });
    expect(loadConfig({ SESSION_GATE_CACHE_TTL_MS: '0' })).toMatchObject({ sessionGateCacheTtlMs: 0 });
    expect(() => loadConfig({ SESSION_GATE_CACHE_TTL_MS: '-1' })).toThrow(/SESSION_GATE_CACHE_TTL_MS/);
    expect(loadConfig({ PRINCIPAL_CACHE_TTL_MS: '0', SSE_RETRY_MS: '250' })).toMatchObject({ principalCacheTtlMs: 0, sseRetryMs: 250 });
    expect(() => loadConfig({ PRINCIPAL_CACHE_TTL_MS: '1.5' })).toThrow(/PRINCIPAL_CACHE_TTL_MS/);
    expect(() => loadConfig({ PRINCIPAL_CACHE_TTL_MS: '-1' })).toThrow(/PRINCIPAL_CACHE_TTL_MS/);
    expect(() => loadConfig({ SSE_RETRY_MS: '0' })).toThrow(/SSE_RETRY_MS/);
    expect(() => loadConfig({ SSE_RETRY_MS: 'soon' })).toThrow(/SSE_RETRY_MS/);
  });

  it('a demo with them: its streams send that retry: hint; with no principal cache a key revoked in storage is refused at once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-cache-retry-'));
    const demo = await buildDemo(loadConfig({ DATA_DIR: dir, PORT: '0', LOG_LEVEL: 'silent', PRINCIPAL_CACHE_TTL_MS: '0', SSE_RETRY_MS: '750' }));
    try {
      const base = await listen(demo);
      const key = demo.credentials.acc_owner!;
      const stream = await openEventStream(`${base}/projects/proj_main/events/stream`, key);
      try {
        await waitUntil(() => stream.text().includes('retry:'), 'the retry hint');
        expect(stream.text()).toMatch(/^retry: 750$/m);
      } finally {
        stream.close();
      }
      const me = async () => (await fetch(`${base}/me`, { headers: { authorization: `Bearer ${key}` } })).status;
      expect(await me()).toBe(200);
      const principal = await demo.http.services.platform.authenticate(key);
      // Revoked in storage, past the platform (so nothing forgets a cached entry): no cache, refused at once.
      await demo.store.revokeApiKey(principal.key_id, Date.now());
      expect(await me()).toBe(401);
    } finally {
      await closeDemo(demo);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
