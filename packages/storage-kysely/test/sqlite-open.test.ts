// openSqlite's pragmas: WAL, synchronous=FULL, foreign keys, busy_timeout 0 (writes wait for a lock
// asynchronously, sqlite-busy.test.ts) and the page cache size;
// the files it creates are owner-only (0600).
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { createKyselyStore, migrateToLatest } from '../src/index.js';
import { openSqlite, SQLITE_BUSY_TIMEOUT_MS, SQLITE_CACHE_SIZE_KIB } from '../src/entry-sqlite.js';
import { tempDir } from './helpers.js';

describe('openSqlite', () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const cleanup of cleanups.splice(0)) cleanup();
  });

  async function pragmas(opts?: { cacheSizeKiB?: number }) {
    const { dir, remove } = tempDir();
    cleanups.push(remove);
    const db = openSqlite(join(dir, 'open.sqlite'), opts);
    try {
      const read = async (name: string) => Object.values((await sql.raw(`pragma ${name}`).execute(db)).rows[0] as object)[0];
      return {
        journal_mode: await read('journal_mode'), synchronous: await read('synchronous'), foreign_keys: await read('foreign_keys'),
        busy_timeout: await read('busy_timeout'), cache_size: await read('cache_size'),
      };
    } finally {
      await db.destroy();
    }
  }

  it('opens in WAL mode with synchronous=FULL, foreign keys, busy_timeout 0 (SQLite never sleeps in the thread) and a 4 MiB page cache', async () => {
    expect(SQLITE_CACHE_SIZE_KIB).toBe(4096);
    expect(await pragmas()).toEqual({ journal_mode: 'wal', synchronous: 2, foreign_keys: 1, busy_timeout: 0, cache_size: -4096 });
    expect(SQLITE_BUSY_TIMEOUT_MS).toBe(5000);
  });

  it('takes the page cache size in KiB and refuses a size that is not a whole number ≥ 0', async () => {
    expect((await pragmas({ cacheSizeKiB: 32_768 })).cache_size).toBe(-32_768);
    for (const cacheSizeKiB of [-1, 1.5, Number.NaN]) expect(() => openSqlite(':memory:', { cacheSizeKiB })).toThrow(TypeError);
  });

  it('creates the database, its -wal and its -shm files 0600; an existing file keeps its mode', async () => {
    const { dir, remove } = tempDir();
    cleanups.push(remove);
    const file = join(dir, 'private.sqlite');
    {
      const db = openSqlite(file);
      try {
        await migrateToLatest(db);
        await createKyselyStore(db, { dialect: 'sqlite' }).insertWorkspace({ id: 'ws_mode', name: 'mode', created_at: 1 });
        const mode = (path: string) => statSync(path).mode & 0o777;
        expect(mode(file)).toBe(0o600);
        expect(mode(`${file}-wal`)).toBe(0o600);
        expect(mode(`${file}-shm`)).toBe(0o600);
      } finally {
        await db.destroy();
      }
      const shared = join(dir, 'shared.sqlite');
      writeFileSync(shared, '', { mode: 0o640 });
      const other = openSqlite(shared);
      await other.destroy();
      expect(statSync(shared).mode & 0o777).toBe(0o640);
    }
  });
});
