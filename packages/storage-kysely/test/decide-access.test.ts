// `lockInboxItemWithAccess` (issue 33: the access read and the row lock in one statement): inside a
// transaction it answers what lockProject, getMembership and getInboxItem answer (scoping kept: a
// project of another workspace is undefined, an item of another project is not returned), and on
// PostgreSQL it holds the project's row as lockProject does — a concurrent decision's lock waits for
// the commit (seen in pg_locks / pg_stat_activity, nothing timed).
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Project, ProjectInboxItem, Store } from '@inbox-kit/core';
import type { Kysely } from 'kysely';
import pg from 'pg';
import { createKyselyStore, migrateToLatest, type Database } from '../src/index.js';
import { openPostgres } from '../src/entry-postgres.js';
import { openSqlite } from '../src/entry-sqlite.js';
import { PG_URL, freshPostgresDatabase, postgresUnavailable, tempDir } from './helpers.js';

const T0 = 1_700_000_000_000;
const project = (id: string, workspace_id = 'ws_1'): Project => ({ id, workspace_id, account_id: 'acc_1', name: id, status: 'active', created_at: T0, updated_at: T0 });
const item = (id: string, project_id: string): ProjectInboxItem => ({
  id, workspace_id: 'ws_1', project_id, account_id: 'acc_1', sender_account_id: 'acc_2', type: 'task', title: id, payload: { n: 1 },
  source_event_id: null, source_session_id: null, source_floor_id: null, source_page_id: null, status: 'pending',
  decided_by_account_id: null, decided_at: null, created_at: T0, updated_at: T0,
});

async function seed(store: Store): Promise<void> {
  await store.insertWorkspace({ id: 'ws_1', name: 'one', created_at: T0 });
  await store.insertWorkspace({ id: 'ws_2', name: 'two', created_at: T0 });
  for (const id of ['acc_1', 'acc_2', 'acc_3']) await store.insertAccount({ id, name: id, created_at: T0 }, ['ws_1']);
  await store.insertProject(project('proj_a'));
  await store.insertProject(project('proj_b'));
  await store.insertProject(project('proj_x', 'ws_2'));
  await store.upsertMembership({ project_id: 'proj_a', account_id: 'acc_2', role: 'deriver', created_at: T0 });
  await store.insertInboxItem(item('pinbox_a1', 'proj_a'));
  await store.insertInboxItem(item('pinbox_b1', 'proj_b'));
}

type Engine = { name: string; open(): Promise<{ db: Kysely<Database>; store: Store; url?: string; close(): Promise<void> }> };
const engines: Engine[] = [{
  name: 'sqlite',
  async open() {
    const tmp = tempDir();
    const db = openSqlite(join(tmp.dir, 'a.sqlite'));
    await migrateToLatest(db);
    return { db, store: createKyselyStore(db, { dialect: 'sqlite' }), close: async () => { await db.destroy(); tmp.remove(); } };
  },
}];
if (PG_URL) {
  engines.push({
    name: 'postgres',
    async open() {
      const fresh = await freshPostgresDatabase(PG_URL!);
      const db = openPostgres(fresh.url);
      await migrateToLatest(db);
      return { db, store: createKyselyStore(db, { dialect: 'postgres' }), url: fresh.url, close: async () => { await db.destroy(); await fresh.drop(); } };
    },
  });
} else {
  postgresUnavailable('lockInboxItemWithAccess (PostgreSQL)');
}

describe.each(engines)('lockInboxItemWithAccess ($name)', (engine) => {
  let opened: Awaited<ReturnType<Engine['open']>>;
  beforeAll(async () => {
    opened = await engine.open();
    await seed(opened.store);
  });
  afterAll(async () => opened?.close());

  it('answers, in a transaction, what lockProject, getMembership and getInboxItem answer', async () => {
    const { store } = opened;
    expect(store.lockInboxItemWithAccess).toBeTypeOf('function');
    await store.transaction(async (tx) => {
      const cases: Array<[string, string, string, string]> = [
        ['ws_1', 'proj_a', 'acc_2', 'pinbox_a1'], // a member, its project's item
        ['ws_1', 'proj_a', 'acc_1', 'pinbox_a1'], // the owner (no membership row)
        ['ws_1', 'proj_a', 'acc_3', 'pinbox_a1'], // no role at all
        ['ws_1', 'proj_a', 'acc_2', 'pinbox_b1'], // an item of another project
        ['ws_1', 'proj_a', 'acc_2', 'pinbox_none'],
      ];
      for (const [ws, p, account, id] of cases) {
        const expected = { project: await tx.lockProject(ws, p), membership: await tx.getMembership(p, account), item: await tx.getInboxItem(p, id) };
        expect(await tx.lockInboxItemWithAccess!(ws, p, account, id), `${p} ${account} ${id}`).toEqual(expected);
      }
      // Scoping: a project of another workspace is not there at all.
      expect(await tx.lockInboxItemWithAccess!('ws_1', 'proj_x', 'acc_1', 'pinbox_a1')).toBeUndefined();
      expect(await tx.lockInboxItemWithAccess!('ws_2', 'proj_a', 'acc_1', 'pinbox_a1')).toBeUndefined();
    });
  });

  // PostgreSQL only (SQLite's write transaction holds the whole database's lock: nothing to see per row).
  if (engine.name === 'postgres') it('holds the project row as lockProject does: another transaction\'s lock waits for the commit', async () => {
    const { store, url } = opened;
    const watcher = new pg.Client({ connectionString: url });
    await watcher.connect();
    try {
      let release!: () => void;
      const released = new Promise<void>((resolve) => { release = resolve; });
      let locked!: () => void;
      const holding = new Promise<void>((resolve) => { locked = resolve; });
      const first = store.transaction(async (tx) => {
        await tx.lockInboxItemWithAccess!('ws_1', 'proj_a', 'acc_1', 'pinbox_a1');
        locked();
        await released;
      });
      await holding;
      let secondDone = false;
      const second = store.transaction((tx) => tx.lockProject('ws_1', 'proj_a')).then(() => { secondDone = true; });
      // Poll until the second transaction's backend waits on a lock (never a fixed sleep).
      for (let i = 0; ; i++) {
        const { rows } = await watcher.query("select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'");
        if (rows[0].n > 0) break;
        if (i > 500) throw new Error('the second lock never waited');
        await new Promise((resolve) => setImmediate(resolve));
      }
      expect(secondDone).toBe(false);
      release();
      await first;
      await second;
      expect(secondDone).toBe(true);
    } finally {
      await watcher.end();
    }
  });
});
