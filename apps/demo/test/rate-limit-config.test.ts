/**
 * The demo's rate-limit configuration (README "Demo configuration"): RATE_LIMIT_MAX and
 * RATE_LIMIT_WINDOW_MS are parsed strictly, unset or 0 means no limit, and a demo started with a
 * limit answers 429 `rate_limited` with `Retry-After` per API key.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildDemo, loadConfig } from '../src/index.js';
import { listen } from './listen.js';

describe('RATE_LIMIT_MAX / RATE_LIMIT_WINDOW_MS', () => {
  it('are parsed strictly; unset or 0 means no limit; the window defaults to 60 s', () => {
    expect(loadConfig({}).rateLimit).toBeUndefined();
    expect(loadConfig({ RATE_LIMIT_MAX: '0' }).rateLimit).toBeUndefined();
    expect(loadConfig({ RATE_LIMIT_MAX: '100' }).rateLimit).toEqual({ max: 100, timeWindowMs: 60_000 });
    expect(loadConfig({ RATE_LIMIT_MAX: '5', RATE_LIMIT_WINDOW_MS: '1000' }).rateLimit).toEqual({ max: 5, timeWindowMs: 1000 });
    expect(() => loadConfig({ RATE_LIMIT_MAX: 'lots' })).toThrow(/RATE_LIMIT_MAX/);
    expect(() => loadConfig({ RATE_LIMIT_MAX: '-1' })).toThrow(/RATE_LIMIT_MAX/);
    expect(() => loadConfig({ RATE_LIMIT_MAX: '5', RATE_LIMIT_WINDOW_MS: '0' })).toThrow(/RATE_LIMIT_WINDOW_MS/);
    expect(() => loadConfig({ RATE_LIMIT_MAX: '5', RATE_LIMIT_WINDOW_MS: '1.5' })).toThrow(/RATE_LIMIT_WINDOW_MS/);
  });

  it('a demo with RATE_LIMIT_MAX=2 answers the third request of a key with 429 rate_limited; other keys go on', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-ratelimit-'));
    const demo = await buildDemo(loadConfig({ DATA_DIR: dir, PORT: '0', LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '2', RATE_LIMIT_WINDOW_MS: '60000' }));
    try {
      const url = `${await listen(demo)}/projects/proj_main/inbox`;
      const list = (key: string) => fetch(url, { headers: { authorization: `Bearer ${key}` } });
      expect((await list(demo.credentials.acc_owner!)).status).toBe(200);
      expect((await list(demo.credentials.acc_owner!)).status).toBe(200);
      const limited = await list(demo.credentials.acc_owner!);
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      const body = (await limited.json()) as { error: { type: string; code: string; request_id: string } };
      expect(body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited' });
      expect(limited.headers.get('x-request-id')).toBe(body.error.request_id);
      expect((await list(demo.credentials.acc_deriver!)).status).toBe(200);
    } finally {
      await demo.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
