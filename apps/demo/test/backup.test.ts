/**
 * Backups (storage-kysely README "Backups") of the SQLite database: `npm run admin -- backup --to
 * <file>` taken while the running demo writes under load (four clients filing inbox items without
 * pause) is a complete database — `PRAGMA integrity_check` says ok, no foreign key dangles, it
 * holds every item acknowledged before the backup began — and restores: the demo starts on it in a
 * new DATA_DIR without `credentials.json` (a restored database) and serves its data with the old
 * keys. Needs the build.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { credentialsOf, runAdminCommand, startDemoProcess, stopDemoProcess, type DemoProcess } from './demo-process.js';

describe('an online backup of the SQLite database', () => {
  const dirs: string[] = [];
  const demos: DemoProcess[] = [];
  afterAll(async () => {
    for (const demo of demos) await stopDemoProcess(demo);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('taken under write load passes the integrity check, holds what was committed, and restores', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-backup-'));
    dirs.push(dir);
    const dataDir = join(dir, 'data');
    const demo = await startDemoProcess({ DATA_DIR: dataDir });
    demos.push(demo);
    const key = credentialsOf(dataDir).acc_deriver!;
    const create = async (i: number) => {
      const res = await fetch(`${demo.url}/projects/proj_main/inbox`, {
        method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'backup.load', title: `item ${i}`, payload: { i, filler: 'x'.repeat(2_000) } }),
      });
      expect(res.status).toBe(201);
    };

    // Load: four writers without pause until the backup is done.
    let acknowledged = 0;
    let writing = true;
    let n = 0;
    const writers = Array.from({ length: 4 }, async () => {
      while (writing) {
        await create(n++);
        acknowledged++;
      }
    });
    while (acknowledged < 200) await new Promise((r) => setTimeout(r, 10));
    const before = acknowledged;
    const file = join(dir, 'backups', 'inbox-kit.backup.sqlite');
    const backup = await runAdminCommand(['backup', '--to', file], { DATA_DIR: dataDir });
    const duringBackup = acknowledged - before;
    writing = false;
    await Promise.all(writers);
    expect(backup.code, backup.stderr).toBe(0);
    expect(backup.stdout).toMatch(/backed up to .*inbox-kit\.backup\.sqlite \(\d+ pages\)/);
    expect(duringBackup, 'the server kept committing writes while the backup ran').toBeGreaterThan(0);

    const copy = new Database(file, { readonly: true });
    let items: number;
    try {
      expect(copy.pragma('integrity_check')).toEqual([{ integrity_check: 'ok' }]);
      expect(copy.pragma('foreign_key_check')).toEqual([]);
      items = (copy.prepare("select count(*) as n from project_inbox_items where type = 'backup.load'").get() as { n: number }).n;
      const events = (copy.prepare("select count(*) as n from project_events where type = 'project_inbox.item.created'").get() as { n: number }).n;
      // Every item acknowledged before the backup began is in it, each with its event (one transaction).
      expect(items).toBeGreaterThanOrEqual(before);
      expect(items).toBeLessThanOrEqual(acknowledged);
      expect(events).toBe(items);
    } finally {
      copy.close();
    }

    // Restore: the backup as the database of a new DATA_DIR, no credentials.json there.
    const restoredDir = join(dir, 'restored');
    mkdirSync(restoredDir, { mode: 0o700 });
    copyFileSync(file, join(restoredDir, 'inbox-kit.sqlite'));
    const restored = await startDemoProcess({ DATA_DIR: restoredDir, LOG_LEVEL: 'info' });
    demos.push(restored);
    expect(restored.output()).not.toContain('freshly seeded');
    let count = 0;
    let cursor: string | null = null;
    do {
      const res = await fetch(`${restored.url}/projects/proj_main/inbox?limit=200&type=backup.load${cursor ? `&cursor=${cursor}` : ''}`, { headers: { authorization: `Bearer ${key}` } });
      expect(res.status).toBe(200);
      const page = (await res.json()) as { items: unknown[]; next_cursor: string | null };
      count += page.items.length;
      cursor = page.next_cursor;
    } while (cursor !== null);
    expect(count).toBe(items);
  });

  it('on PostgreSQL the command says to use pg_dump instead', async () => {
    const run = await runAdminCommand(['backup', '--to', '/tmp/never.sqlite'], { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('on PostgreSQL use pg_dump');
  });
});
