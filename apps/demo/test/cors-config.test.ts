/**
 * The demo's CORS configuration (README "Demo configuration", platform.md "Browsers" → "CORS"):
 * CORS_ORIGINS lists exact origins (comma or space separated), unset means CORS off; a wildcard,
 * a path or a trailing slash is refused at start-up; a demo started with it answers a listed
 * origin's preflight and requests, and nothing for another origin.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildDemo, loadConfig } from '../src/index.js';
import { closeDemo, listen } from './listen.js';

describe('CORS_ORIGINS', () => {
  it('is parsed strictly: exact origins only; unset means off', () => {
    expect(loadConfig({}).corsOrigins).toEqual([]);
    expect(loadConfig({ CORS_ORIGINS: 'https://app.example.com, http://localhost:5173' }).corsOrigins).toEqual(['https://app.example.com', 'http://localhost:5173']);
    for (const bad of ['*', 'https://app.example.com/', 'https://app.example.com/path', 'app.example.com', 'https://*.example.com']) {
      expect(() => loadConfig({ CORS_ORIGINS: bad }), bad).toThrow(/CORS_ORIGINS/);
    }
  });

  it('a demo with CORS_ORIGINS answers the listed origin (preflight 204, exposed request-id) and not another', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-cors-'));
    const demo = await buildDemo(loadConfig({ DATA_DIR: dir, PORT: '0', LOG_LEVEL: 'silent', CORS_ORIGINS: 'http://localhost:5173' }));
    try {
      const base = await listen(demo);
      const preflight = await fetch(`${base}/projects/proj_main/events/stream`, { method: 'OPTIONS', headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'GET' } });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
      const res = await fetch(`${base}/me`, { headers: { origin: 'http://localhost:5173', authorization: `Bearer ${demo.credentials.acc_owner}` } });
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
      expect(res.headers.get('access-control-expose-headers')).toMatch(/request-id/);
      const other = await fetch(`${base}/me`, { headers: { origin: 'http://evil.example', authorization: `Bearer ${demo.credentials.acc_owner}` } });
      expect(other.headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      await closeDemo(demo);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
