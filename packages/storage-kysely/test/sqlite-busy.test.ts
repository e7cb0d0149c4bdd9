// SQLite under another process's write lock (platform.md "Many processes"): a second connection
// (standing in for a backup tool, another server or an admin script) holds `BEGIN IMMEDIATE`. The
// store's writes wait for it without blocking the thread — timers fire, reads answer, all while a
// write waits — and past the busy timeout they fail with `storage_busy`, writing nothing; a lock
// released before the deadline lets the waiting write commit. Transactions (group commit) and
// autocommit writes alike.
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { isInboxKitError } from '@inbox-kit/core';
import { openStore, type OpenedStore } from '../src/index.js';
import { tempDir } from './helpers.js';

describe('SQLite: writes waiting for another process\'s lock', () => {
  const cleanups: Array<() => void | Promise<void>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function setup(busyTimeoutMs: number) {
    const tmp = tempDir();
    cleanups.push(() => tmp.remove());
    const file = join(tmp.dir, 'busy.sqlite');
    const opened: OpenedStore = await openStore({ sqliteFile: file, sqlite: { busyTimeoutMs } });
    cleanups.push(() => opened.close());
    await opened.store.insertWorkspace({ id: 'ws_b', name: 'b', created_at: 1 });
    const other = new SqliteDatabase(file);
    cleanups.push(() => {
      other.close();
    });
    /** Takes the write lock on the other connection; the returned function releases it. */
    const hold = () => {
      other.exec('BEGIN IMMEDIATE');
      return () => {
        other.exec('COMMIT');
      };
    };
    return { store: opened.store, hold };
  }

  const insert = (store: OpenedStore['store'], id: string) => store.transaction((tx) => tx.insertAccount({ id, name: id, created_at: 2 }, ['ws_b']));

  it('a transaction waits without blocking the thread, reads go on, and past the deadline it fails with storage_busy, writing nothing', async () => {
    const { store, hold } = await setup(400);
    const release = hold();
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 5);
    try {
      const started = Date.now();
      const write = insert(store, 'acc_late').then(() => 'written', (e: unknown) => e);
      let readsDone = 0;
      // Reads answer while the write waits (the point reads and the queued ones).
      for (let i = 0; i < 5; i++) {
        expect(await store.getWorkspace('ws_b')).toMatchObject({ id: 'ws_b' });
        expect(await store.listRunningRuns(10)).toEqual([]);
        readsDone++;
      }
      const ticksBefore = ticks;
      const outcome = await write;
      expect(readsDone).toBe(5);
      expect(ticks).toBeGreaterThan(ticksBefore); // timers fired during the wait: the thread was free
      expect(isInboxKitError(outcome) && outcome.code).toBe('storage_busy');
      expect(Date.now() - started).toBeGreaterThanOrEqual(400);
      expect(await store.getWorkspaceAccount('ws_b', 'acc_late')).toBeUndefined();
      // Autocommit writes wait and fail the same way.
      const direct = await store.insertWorkspace({ id: 'ws_late', name: 'late', created_at: 3 }).then(() => 'written', (e: unknown) => e);
      expect(isInboxKitError(direct) && direct.code).toBe('storage_busy');
    } finally {
      clearInterval(ticker);
      release();
    }
    expect(await store.getWorkspace('ws_late')).toBeUndefined();
    await insert(store, 'acc_after');
    expect(await store.getWorkspaceAccount('ws_b', 'acc_after')).toMatchObject({ id: 'acc_after' });
  });

  it('a lock released before the deadline lets the waiting writes commit, in the order they were asked for', async () => {
    const { store, hold } = await setup(5_000);
    const release = hold();
    const writes = [insert(store, 'acc_1'), insert(store, 'acc_2'), store.insertWorkspace({ id: 'ws_2', name: '2', created_at: 4 })];
    await new Promise((r) => setTimeout(r, 100));
    release();
    await Promise.all(writes);
    expect(await store.getWorkspaceAccount('ws_b', 'acc_1')).toMatchObject({ id: 'acc_1' });
    expect(await store.getWorkspaceAccount('ws_b', 'acc_2')).toMatchObject({ id: 'acc_2' });
    expect(await store.getWorkspace('ws_2')).toMatchObject({ id: 'ws_2' });
  });
});
