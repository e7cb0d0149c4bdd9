// Reads outside transactions skip Kysely's connection queue on SQLite (src/direct-reads.ts, issue
// 18), and never see what an open transaction has not committed. Nothing here is timed: the tests
// hold the connection or a transaction open and look at which reads settle.
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Project, ProjectInboxItem, Store, StoreTx } from '@inbox-kit/core';
import type { Kysely } from 'kysely';
import { createKyselyStore, migrateToLatest, type Database } from '../src/index.js';
import { openSqlite } from '../src/entry-sqlite.js';
import { directReaderOf, isSelect } from '../src/direct-reads.js';
import { tempDir } from './helpers.js';

const project = (id: string): Project => ({ id, workspace_id: 'ws_1', account_id: 'acc_1', name: id, status: 'active', created_at: 1, updated_at: 1 });

/** A promise and its resolver. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => { open = resolve; });
  return { promise, open };
}

/**
 * A transaction held open: it runs `body`, then waits until `release()` (ending with `failure`,
 * a rollback, when given). `opened` resolves once `body` has run.
 */
function holdTransaction(store: Store, body: (tx: StoreTx) => Promise<unknown> = async () => undefined, failure?: Error) {
  const inside = gate();
  const released = gate();
  const done = store.transaction(async (tx) => {
    await body(tx);
    inside.open();
    await released.promise;
    if (failure) throw failure;
  });
  return { opened: inside.promise, release: released.open, done };
}

/** Whether `promise` has settled after the event loop has turned a few times. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => { done = true; }, () => { done = true; });
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe('SQLite direct reads (issue 18)', () => {
  const dir = tempDir();
  let db: Kysely<Database>;
  let store: Store;

  beforeEach(async () => {
    db = openSqlite(join(dir.dir, `direct-${Date.now()}-${Math.random()}.sqlite`));
    await migrateToLatest(db, 'sqlite');
    store = createKyselyStore(db, { dialect: 'sqlite' });
    await store.insertWorkspace({ id: 'ws_1', name: 'W', created_at: 1 });
    await store.insertAccount({ id: 'acc_1', name: 'A', created_at: 1 }, ['ws_1']);
  });
  afterEach(async () => {
    await store.close();
  });

  it('openSqlite registers a reader; a Kysely instance derived from it has none', () => {
    expect(directReaderOf(db)).toBeDefined();
    expect(directReaderOf(db.withoutPlugins())).toBeUndefined();
  });

  it('only plain SELECTs are read directly', () => {
    expect(isSelect('SELECT 1')).toBe(true);
    expect(isSelect('  select "id" from "projects"')).toBe(true);
    for (const text of ['insert into x values (1)', 'update x set a = 1 returning a', 'with t as (select 1) select * from t', 'selectx']) expect(isSelect(text)).toBe(false);
  });

  it('a read made while the connection is held (no transaction open) settles at once with the committed row', async () => {
    await store.insertProject(project('proj_1'));
    const held = gate();
    const holding = db.connection().execute(() => held.promise);
    try {
      const read = store.getProject('ws_1', 'proj_1');
      expect(await settled(read)).toBe(true);
      expect(await read).toEqual(project('proj_1'));
      // A write is never made directly: it waits for the connection.
      const write = store.insertProject(project('proj_2'));
      expect(await settled(write)).toBe(false);
      held.open();
      await write;
    } finally {
      held.open();
      await holding;
    }
    expect(await store.getProject('ws_1', 'proj_2')).toEqual(project('proj_2'));
  });

  it('a read made while a transaction is open waits for its commit, then sees the committed row', async () => {
    const tx = holdTransaction(store, (t) => t.insertProject(project('proj_tx')));
    await tx.opened;
    const read = store.getProject('ws_1', 'proj_tx');
    expect(await settled(read)).toBe(false);
    tx.release();
    await tx.done;
    expect(await read).toEqual(project('proj_tx'));
  });

  it('a read made while a transaction is open never sees its rolled-back rows', async () => {
    const tx = holdTransaction(store, (t) => t.insertProject(project('proj_gone')), new Error('roll back'));
    await tx.opened;
    const read = store.getProject('ws_1', 'proj_gone');
    expect(await settled(read)).toBe(false);
    tx.release();
    await expect(tx.done).rejects.toThrow('roll back');
    expect(await read).toBeUndefined();
  });

  it('the access reads answer from the direct path the same as through Kysely', async () => {
    await store.insertProject(project('proj_a'));
    await store.upsertMembership({ project_id: 'proj_a', account_id: 'acc_1', role: 'deriver', created_at: 2 });
    const item: ProjectInboxItem = {
      id: 'pinbox_1', workspace_id: 'ws_1', project_id: 'proj_a', account_id: 'acc_1', sender_account_id: 'acc_1', type: 't', title: 'T', payload: { a: [1, 'b'] },
      source_event_id: null, source_session_id: null, source_floor_id: null, source_page_id: null, status: 'pending', decided_by_account_id: null, decided_at: null,
      created_at: 3, updated_at: 3,
    };
    await store.insertInboxItem(item);
    const direct = await store.getInboxItemWithAccess!('ws_1', 'proj_a', 'acc_1', 'pinbox_1');
    // The same read while the connection is held by a transaction goes through Kysely.
    const tx = holdTransaction(store);
    await tx.opened;
    const queued = store.getInboxItemWithAccess!('ws_1', 'proj_a', 'acc_1', 'pinbox_1');
    tx.release();
    await tx.done;
    expect(await queued).toEqual(direct);
    expect(direct).toEqual({ project: project('proj_a'), membership: { project_id: 'proj_a', account_id: 'acc_1', role: 'deriver', created_at: 2 }, item });
    expect(await store.getInboxItemWithAccess!('ws_1', 'proj_a', 'acc_other', 'pinbox_1')).toEqual({ project: project('proj_a'), membership: undefined, item });
    expect(await store.getInboxItemWithAccess!('ws_1', 'proj_a', 'acc_1', 'pinbox_none')).toEqual({ project: project('proj_a'), membership: expect.anything(), item: undefined });
    expect(await store.getInboxItemWithAccess!('ws_2', 'proj_a', 'acc_1', 'pinbox_1')).toBeUndefined();
  });
});
