// The reads every request makes on SQLite (the access reads of a get, a Live Inbox call, a
// credential) are point reads by primary key, never joins, even once `ANALYZE` has written
// `sqlite_stat4` (a bulk load or `PRAGMA optimize` does). With stat4, SQLite plans a statement
// whose plan may depend on a bound value again on every execution: a three-table join of
// `getInboxItemWithAccess` then cost ~20 µs a call instead of ~4, and halved the get and Live Inbox
// throughput of `pnpm bench` (issue 18). Nothing here is timed: the test reads the query plans of
// the statements the store actually sends, on a database with stat4 data.
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '@inbox-kit/core';
import { createKyselyStore, migrateToLatest, type Database } from '../src/index.js';
import { cachingStatements } from '../src/sqlite.js';
import { tempDir } from './helpers.js';

/** Plan lines of a point read: by a primary key (or unique index) with every key column bound, or the compound/subquery scaffolding around such reads. */
const POINT_READ = /^(SEARCH \S+ USING (COVERING )?INDEX sqlite_autoindex_\S+ \(.*\)|SEARCH \S+ USING INTEGER PRIMARY KEY .*|COMPOUND QUERY|LEFT-MOST SUBQUERY|UNION ALL|(CORRELATED )?SCALAR SUBQUERY \d+)$/;

describe('SQLite hot reads with sqlite_stat4 present (issue 18)', () => {
  const dir = tempDir();
  const file = join(dir.dir, 'hot.sqlite');
  const sent: string[] = [];
  let db: Kysely<Database>;
  let store: Store;
  let raw: SqliteDatabase.Database;

  beforeAll(async () => {
    db = new Kysely<Database>({
      dialect: new SqliteDialect({ database: cachingStatements(new SqliteDatabase(file)) }),
      log: (event) => { if (event.level === 'query') sent.push(event.query.sql); },
    });
    await migrateToLatest(db, 'sqlite');
    store = createKyselyStore(db, { dialect: 'sqlite' });
    await store.insertWorkspace({ id: 'ws_1', name: 'W', created_at: 1 });
    const accounts = Array.from({ length: 20 }, (_, i) => `acc_${i}`);
    for (const id of accounts) await store.insertAccount({ id, name: id, created_at: 1 }, ['ws_1']);
    for (let p = 0; p < 5; p++) {
      await store.insertProject({ id: `proj_${p}`, workspace_id: 'ws_1', account_id: 'acc_0', name: `P${p}`, status: 'active', created_at: p, updated_at: p });
      for (let a = 1; a < 10; a++) await store.upsertMembership({ project_id: `proj_${p}`, account_id: `acc_${a}`, role: a % 2 ? 'deriver' : 'observer', created_at: 1 });
      await store.insertSession({ id: `sess_${p}`, workspace_id: 'ws_1', project_id: `proj_${p}`, title: null, created_by_account_id: 'acc_0', created_at: p, updated_at: p, archived_at: null, agent: null, environment_id: null, metadata: {} });
    }
    raw = new SqliteDatabase(file);
    const insert = raw.prepare(`insert into project_inbox_items (id, workspace_id, project_id, account_id, sender_account_id, type, title, payload, status, created_at, updated_at)
      values (?, 'ws_1', ?, 'acc_0', ?, 'review', null, '{}', ?, ?, ?)`);
    raw.transaction(() => {
      for (let i = 0; i < 2000; i++) insert.run(`pinbox_${i}`, `proj_${i % 5}`, `acc_${1 + (i % 9)}`, i % 3 ? 'pending' : 'accepted', i, i);
    })();
    raw.exec('analyze');
  });

  afterAll(async () => {
    raw?.close();
    await db?.destroy();
    dir.remove();
  });

  /** The SQL texts `read` sends, each with its query plan on the analysed database. */
  async function plansOf(read: () => Promise<unknown>): Promise<Array<{ sql: string; plan: string[] }>> {
    sent.length = 0;
    await read();
    return sent.map((sql) => {
      const explain = raw.prepare(`explain query plan ${sql}`);
      const parameters = Array.from({ length: explain.reader ? (sql.match(/\?/g) ?? []).length : 0 }, () => 'x');
      return { sql, plan: (explain.all(...parameters) as Array<{ detail: string }>).map((r) => r.detail) };
    });
  }

  it('the database has sqlite_stat4 samples (the condition under which joins are planned per execution)', () => {
    expect((raw.prepare('select count(*) as n from sqlite_stat4').get() as { n: number }).n).toBeGreaterThan(0);
  });

  const reads: Array<[string, () => Promise<unknown>]> = [
    ['getInboxItemWithAccess', () => store.getInboxItemWithAccess!('ws_1', 'proj_1', 'acc_3', 'pinbox_6')],
    ['getSessionWithAccess', () => store.getSessionWithAccess!('ws_1', 'sess_2', 'acc_3')],
    ['getSessionGate', () => store.getSessionGate!('ws_1', 'sess_2', 'acc_3')],
    ['findApiKeyByHash', () => store.findApiKeyByHash('ab'.repeat(32))],
    ['getProject', () => store.getProject('ws_1', 'proj_1')],
    ['getMembership', () => store.getMembership('proj_1', 'acc_3')],
    ['getSession', () => store.getSession('ws_1', 'sess_2')],
    ['getInboxItem', () => store.getInboxItem('proj_1', 'pinbox_6')],
  ];
  for (const [name, read] of reads) {
    it(`${name}: one statement of point reads by primary key, no join, no scan`, async () => {
      const plans = await plansOf(read);
      expect(plans).toHaveLength(1);
      const { sql, plan } = plans[0]!;
      expect(sql).not.toMatch(/\bjoin\b/i);
      expect(plan.length).toBeGreaterThan(0);
      for (const line of plan) expect(line, `${name}: ${plan.join(' | ')}`).toMatch(POINT_READ);
    });
  }

  it('the access reads still answer what the single reads answer (membership, item of the project only)', async () => {
    const item = await store.getInboxItem('proj_1', 'pinbox_6');
    expect(item?.project_id).toBe('proj_1');
    expect(await store.getInboxItemWithAccess!('ws_1', 'proj_1', 'acc_3', 'pinbox_6')).toEqual({
      project: await store.getProject('ws_1', 'proj_1'), membership: await store.getMembership('proj_1', 'acc_3'), item,
    });
    expect(await store.getInboxItemWithAccess!('ws_1', 'proj_2', 'acc_3', 'pinbox_6')).toEqual({
      project: await store.getProject('ws_1', 'proj_2'), membership: await store.getMembership('proj_2', 'acc_3'), item: undefined,
    });
    expect(await store.getInboxItemWithAccess!('ws_1', 'proj_1', 'acc_15', 'pinbox_6')).toEqual({ project: await store.getProject('ws_1', 'proj_1'), membership: undefined, item });
    expect(await store.getInboxItemWithAccess!('ws_other', 'proj_1', 'acc_3', 'pinbox_6')).toBeUndefined();
    expect(await store.getSessionWithAccess!('ws_1', 'sess_2', 'acc_3')).toEqual({
      session: await store.getSession('ws_1', 'sess_2'), project: await store.getProject('ws_1', 'proj_2'), membership: await store.getMembership('proj_2', 'acc_3'),
    });
    expect(await store.getSessionWithAccess!('ws_other', 'sess_2', 'acc_3')).toBeUndefined();
    const session = await store.getSession('ws_1', 'sess_2');
    const project = await store.getProject('ws_1', 'proj_2');
    expect(await store.getSessionGate!('ws_1', 'sess_2', 'acc_3')).toEqual({
      session: { id: session!.id, project_id: session!.project_id, archived_at: session!.archived_at },
      project: { account_id: project!.account_id, status: project!.status }, role: (await store.getMembership('proj_2', 'acc_3'))?.role,
    });
    expect(await store.getSessionGate!('ws_other', 'sess_2', 'acc_3')).toBeUndefined();
  });
  // listInboxItemsJson's order rests on its page subquery running as a co-routine that hands its
  // rows to json_group_array in index order: no sort of its own, no temporary b-tree, no table scan.
  it('listInboxItemsJson: each filter set reads its page index as a co-routine, no sort, no scan; the pages answer in order', async () => {
    for (const q of [{}, { status: 'pending' as const }, { sender_account_id: 'acc_3' }, { status: 'accepted' as const, sender_account_id: 'acc_4' }, { after: { created_at: 1000, id: 'pinbox_1000' } }]) {
      const plans = await plansOf(() => store.listInboxItemsJson!({ project_id: 'proj_1', ...q, limit: 7 }));
      expect(plans).toHaveLength(1);
      const { plan } = plans[0]!;
      const what = `${JSON.stringify(q)}: ${plan.join(' | ')}`;
      expect(plan.filter((line) => line.startsWith('CO-ROUTINE')).length, what).toBe(2);
      expect(plan.every((line) => !/TEMP B-TREE|^SCAN project_inbox_items/.test(line)), what).toBe(true);
      expect(plan.filter((line) => line.startsWith('SEARCH project_inbox_items USING')).length, what).toBe(2);
      const got = await store.listInboxItemsJson!({ project_id: 'proj_1', ...q, limit: 7 });
      const rows = await store.listInboxItems({ project_id: 'proj_1', ...q, limit: 8 });
      expect(JSON.parse(got.json), what).toEqual(rows.slice(0, 7));
      expect(got.more, what).toBe(rows.length > 7);
    }
  });
});
