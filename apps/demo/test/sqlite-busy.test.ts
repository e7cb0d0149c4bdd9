/**
 * The demo on SQLite while another process holds the database's write lock (a backup tool, a
 * second process, an admin script; platform.md "Many processes"), over real HTTP on both adapters:
 * a write waits without blocking the server — `/health` and reads answer at once meanwhile — and
 * past the deadline (SQLITE_BUSY_TIMEOUT_MS) it answers 503 `storage_busy` with `Retry-After`,
 * writing nothing, and the storage-errors counter of `/metrics` counts it (once, with its code);
 * once the lock is released, writes succeed again. Needs the built demo.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { credentialsOf, startDemoProcess, stopDemoProcess, type DemoProcess } from './demo-process.js';

for (const adapter of ['fastify', 'hono'] as const) {
  describe(`SQLite under another process's write lock (${adapter})`, () => {
    const dir = mkdtempSync(join(tmpdir(), `inbox-kit-busy-${adapter}-`));
    let demo: DemoProcess | undefined;
    afterAll(async () => {
      await stopDemoProcess(demo);
      rmSync(dir, { recursive: true, force: true });
    }, 30_000);

    it('a write waits without blocking /health or reads, then answers 503 storage_busy with Retry-After; nothing is written, the storage-errors metric counts it', async () => {
      demo = await startDemoProcess({ DATA_DIR: dir, HTTP_ADAPTER: adapter, SQLITE_BUSY_TIMEOUT_MS: '1500', METRICS_PORT: '0' });
      const metricsUrl = /Metrics: (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(demo.output())?.[1];
      expect(metricsUrl, demo.output()).toBeDefined();
      /** `inbox_kit_storage_errors_total` with `code="storage_busy"`, by its `operation` label. */
      const busyErrors = async (): Promise<Record<string, number>> => {
        const text = await (await fetch(metricsUrl!)).text();
        const counted: Record<string, number> = {};
        for (const m of text.matchAll(/^inbox_kit_storage_errors_total\{([^}]*)\} (\d+)$/gm)) {
          if (!/code="storage_busy"/.test(m[1]!)) continue;
          const operation = /operation="([^"]*)"/.exec(m[1]!)?.[1] ?? '';
          counted[operation] = (counted[operation] ?? 0) + Number(m[2]);
        }
        return counted;
      };
      expect(await busyErrors()).toEqual({});
      const owner = credentialsOf(dir).acc_owner!;
      const api = (method: string, path: string, body?: unknown) => fetch(demo!.url + path, {
        method, headers: { authorization: `Bearer ${owner}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const before = (await (await api('GET', '/projects/proj_main/inbox?limit=200')).json()) as { items: unknown[] };

      const other = new SqliteDatabase(join(dir, 'inbox-kit.sqlite'));
      other.exec('BEGIN IMMEDIATE');
      let released = false;
      try {
        let writeSettled = false;
        const write = api('POST', '/projects/proj_main/inbox', { type: 'summary', title: 'while locked' }).finally(() => {
          writeSettled = true;
        });
        // While the write waits for the lock: liveness and reads answer, the write is still pending.
        for (let i = 0; i < 3; i++) {
          const health = await fetch(`${demo.url}/health`);
          expect(health.status).toBe(200);
          const read = await api('GET', '/projects/proj_main/inbox?limit=200');
          expect(read.status).toBe(200);
          expect(((await read.json()) as { items: unknown[] }).items).toHaveLength(before.items.length);
        }
        expect(writeSettled).toBe(false);
        const refused = await write;
        expect(refused.status).toBe(503);
        expect(refused.headers.get('retry-after')).toBe('1');
        const body = (await refused.json()) as { error: { type: string; code: string; message: string; request_id: string } };
        expect(body.error).toMatchObject({ type: 'overloaded_error', code: 'storage_busy', message: expect.stringMatching(/locked by another process/) });
        expect(body.error.request_id).toBe(refused.headers.get('x-request-id'));
        expect(JSON.stringify(body)).not.toMatch(/SQLITE|INSERT|\bat /);
        // Counted once, under the store call that failed.
        const counted = await busyErrors();
        expect(Object.values(counted).reduce((n, v) => n + v, 0), JSON.stringify(counted)).toBe(1);
        other.exec('COMMIT');
        released = true;
      } finally {
        if (!released) other.exec('ROLLBACK');
        other.close();
      }
      // Nothing of the refused write; the next one succeeds.
      const after = (await (await api('GET', '/projects/proj_main/inbox?limit=200')).json()) as { items: Array<{ title: string }> };
      expect(after.items.some((i) => i.title === 'while locked')).toBe(false);
      const counted = await busyErrors();
      expect((await api('POST', '/projects/proj_main/inbox', { type: 'summary', title: 'after the lock' })).status).toBe(201);
      expect(await busyErrors()).toEqual(counted);
    }, 60_000);
  });
}
