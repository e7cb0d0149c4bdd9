// openSqlite's pragmas: WAL, synchronous=FULL, foreign keys, busy timeout and the page cache size.
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
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

  it('opens in WAL mode with synchronous=FULL, foreign keys, the busy timeout and a 4 MiB page cache', async () => {
    expect(SQLITE_CACHE_SIZE_KIB).toBe(4096);
    expect(await pragmas()).toEqual({ journal_mode: 'wal', synchronous: 2, foreign_keys: 1, busy_timeout: SQLITE_BUSY_TIMEOUT_MS, cache_size: -4096 });
  });

  it('takes the page cache size in KiB and refuses a size that is not a whole number ≥ 0', async () => {
    expect((await pragmas({ cacheSizeKiB: 32_768 })).cache_size).toBe(-32_768);
    for (const cacheSizeKiB of [-1, 1.5, Number.NaN]) expect(() => openSqlite(':memory:', { cacheSizeKiB })).toThrow(TypeError);
  });
});
