// The Kysely store beyond the conformance kit: opening by URL, migrations, schema parity between
// the engines, JSON storage, and the Project Inbox service under concurrent load on each engine.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createLocalEventBus, createIdGenerator, InboxKitError, ProjectInboxService, systemClock, type RequestContext, type Store,
} from '@inbox-kit/core';
import { Migrator, sql, type Kysely } from 'kysely';
import { isPostgresUrl, migrateToLatest, openStore, type Database } from '../src/index.js';
import { openPostgres } from '../src/entry-postgres.js';
import { openSqlite } from '../src/entry-sqlite.js';
import { initialMigration } from '../src/migrations/0001-initial.js';
import { migrationsFor } from '../src/migrations/index.js';
import { PG_URL, freshPostgresDatabase, postgresRawReader, sqliteRawReader, tempDir } from './helpers.js';

const T0 = 1_700_000_000_000;

describe('openStore', () => {
  it('opens and migrates a SQLite file named by sqliteFile, a file: URL or a plain path', async () => {
    const tmp = tempDir();
    try {
      for (const opts of [
        { sqliteFile: join(tmp.dir, 'a', 'one.sqlite') },
        { databaseUrl: pathToFileURL(join(tmp.dir, 'two.sqlite')).href },
        { databaseUrl: `file:${join(tmp.dir, 'three.sqlite')}` },
        { databaseUrl: join(tmp.dir, 'four.sqlite') },
        { databaseUrl: '', sqliteFile: join(tmp.dir, 'five.sqlite') },
      ]) {
        const opened = await openStore(opts);
        expect(opened.dialect).toBe('sqlite');
        await opened.store.insertWorkspace({ id: 'ws_1', name: 'one', created_at: T0 });
        expect(await opened.store.getWorkspace('ws_1')).toEqual({ id: 'ws_1', name: 'one', created_at: T0 });
        await opened.close();
        await opened.close(); // idempotent
      }
    } finally {
      tmp.remove();
    }
  });

  it('sets the SQLite pragmas', async () => {
    const tmp = tempDir();
    const db = openSqlite(join(tmp.dir, 'p.sqlite'));
    try {
      const pragma = async (name: string) => Object.values((await sql<Record<string, unknown>>`${sql.raw(`pragma ${name}`)}`.execute(db)).rows[0] ?? {})[0];
      expect(await pragma('journal_mode')).toBe('wal');
      expect(await pragma('foreign_keys')).toBe(1);
      expect(await pragma('busy_timeout')).toBe(0); // writes wait for another process's lock asynchronously (sqlite-busy.test.ts)
      expect(await pragma('synchronous')).toBe(2); // FULL
    } finally {
      await db.destroy();
      tmp.remove();
    }
  });

  it('recognises PostgreSQL URLs', () => {
    expect(isPostgresUrl('postgres://u@h/db')).toBe(true);
    expect(isPostgresUrl('postgresql://u@h/db')).toBe(true);
    expect(isPostgresUrl('file:x.sqlite')).toBe(false);
    expect(isPostgresUrl(undefined)).toBe(false);
  });

  it.runIf(PG_URL)('opens and migrates PostgreSQL when databaseUrl is a postgres:// URL', async () => {
    const database = await freshPostgresDatabase(PG_URL as string);
    try {
      const opened = await openStore({ databaseUrl: database.url });
      expect(opened.dialect).toBe('postgres');
      await opened.store.insertWorkspace({ id: 'ws_1', name: 'one', created_at: T0 });
      expect(await opened.store.getWorkspace('ws_1')).toEqual({ id: 'ws_1', name: 'one', created_at: T0 });
      await opened.close();
    } finally {
      await database.drop();
    }
  });

  it('fails with a clear error (and closes) when the database cannot be migrated', async () => {
    const tmp = tempDir();
    const file = join(tmp.dir, 'bad.sqlite');
    const db = openSqlite(file);
    await sql`create table workspaces (x int)`.execute(db);
    await db.destroy();
    try {
      await expect(openStore({ sqliteFile: file })).rejects.toThrow(/migration "0001_initial" failed/);
    } finally {
      tmp.remove();
    }
  });
});

/** Tables → sorted column names with nullability, from Kysely's introspection. */
async function schemaOf(db: Kysely<Database>) {
  const tables = await db.introspection.getTables();
  return Object.fromEntries(tables.map((t) => [t.name, t.columns.map((c) => `${c.name}${c.isNullable ? '?' : ''}`).sort()]).sort());
}

/** Every migration of this release, in the order they apply. */
const ALL_MIGRATIONS = Object.keys(migrationsFor('sqlite')).sort();

describe('migrations', () => {
  const EXPECTED_TABLES = [
    'accounts', 'agents', 'api_keys', 'attempt_owners', 'floors', 'idempotency_records', 'operation_logs', 'pages', 'project_events', 'project_inbox_items', 'project_members',
    'projects', 'runs', 'session_events', 'sessions', 'workspace_members', 'workspaces',
  ];
  let sqliteSchema: Record<string, string[]>;

  it('are idempotent on SQLite and create every table', async () => {
    const tmp = tempDir();
    const db = openSqlite(join(tmp.dir, 'm.sqlite'));
    try {
      expect(await migrateToLatest(db)).toEqual(ALL_MIGRATIONS);
      expect(await migrateToLatest(db)).toEqual([]);
      sqliteSchema = await schemaOf(db);
      expect(Object.keys(sqliteSchema)).toEqual(EXPECTED_TABLES);
      const indexes = (await sql<{ name: string }>`select name from sqlite_master where type = 'index' and name not like 'sqlite_%'`.execute(db)).rows.map((r) => r.name);
      expect(indexes).toEqual(expect.arrayContaining([
        'project_inbox_items_page_idx', 'project_inbox_items_status_page_idx', 'project_inbox_items_sender_page_idx',
        'project_inbox_items_source_session_page_idx', 'operation_logs_page_idx', 'runs_running_idx', 'api_keys_workspace_created_idx',
        'operation_logs_workspace_idx',
      ]));
    } finally {
      await db.destroy();
      tmp.remove();
    }
  });

  /** Migrates `db` to 0001 only (a database of the first release). */
  const migrateTo0001 = async (db: Kysely<Database>, dialect: 'sqlite' | 'postgres') => {
    const { error } = await new Migrator({ db, provider: { getMigrations: async () => ({ '0001_initial': initialMigration(dialect) }) } }).migrateToLatest();
    if (error) throw error;
  };
  const upgradeKeepsRows = async (db: Kysely<Database>, dialect: 'sqlite' | 'postgres') => {
    await migrateTo0001(db, dialect);
    await db.insertInto('workspaces').values({ id: 'ws_old', name: 'before 0002', created_at: T0 }).execute();
    // A Session of the first release: 0005 gives it metadata {}, updated_at = created_at, nulls elsewhere.
    await sql`insert into sessions (id, workspace_id, project_id, title, created_by_account_id, created_at) values ('sess_old', 'ws_old', null, 'old', 'acc_1', ${T0 + 5})`.execute(db);
    expect(await migrateToLatest(db)).toEqual(ALL_MIGRATIONS.filter((name) => name > '0001_initial'));
    expect(await db.selectFrom('workspaces').selectAll().execute()).toEqual([{ id: 'ws_old', name: 'before 0002', created_at: T0 }]);
    const session = await db.selectFrom('sessions').select(['agent', 'environment_id', 'metadata', 'updated_at', 'archived_at', 'deleted_at']).executeTakeFirstOrThrow();
    const metadata: unknown = typeof session.metadata === 'string' ? JSON.parse(session.metadata) : session.metadata;
    const agent: unknown = typeof session.agent === 'string' ? JSON.parse(session.agent) : session.agent;
    // 0011: a Session without an agent takes the Runtime's snapshot and the environment `default`.
    expect({ ...session, agent, metadata, updated_at: Number(session.updated_at) }).toEqual({
      agent: expect.objectContaining({ type: 'agent', id: 'runtime', version: 1 }), environment_id: 'default', metadata: {}, updated_at: T0 + 5, archived_at: null, deleted_at: null,
    });
    await db.insertInto('idempotency_records').values({
      workspace_id: 'ws_old', account_id: 'acc_1', key: 'k', request_hash: 'h', resource_type: 'project_inbox_item', resource_id: 'pinbox_1', created_at: T0,
    }).execute();
    await expect(db.insertInto('idempotency_records').values({
      workspace_id: 'ws_old', account_id: 'acc_1', key: 'k', request_hash: 'h2', resource_type: 'project_inbox_item', resource_id: 'pinbox_2', created_at: T0,
    }).execute()).rejects.toThrow();
  };

  it('0002–0010 upgrade a database of 0001 in place (rows kept; the key is unique per workspace and account; old Sessions get metadata {} and updated_at)', async () => {
    const tmp = tempDir();
    const db = openSqlite(join(tmp.dir, 'upgrade.sqlite'));
    try {
      await upgradeKeepsRows(db, 'sqlite');
    } finally {
      await db.destroy();
      tmp.remove();
    }
  });

  it.runIf(PG_URL)('0002–0010 upgrade a PostgreSQL database of 0001 in place', async () => {
    const database = await freshPostgresDatabase(PG_URL as string);
    const db = openPostgres(database.url);
    try {
      await upgradeKeepsRows(db, 'postgres');
    } finally {
      await db.destroy();
      await database.drop();
    }
  });

  it('a database at 0010 without 0007 (merged after 0008 and 0010) gets 0007 applied, not refused as out of order', async () => {
    const tmp = tempDir();
    const db = openSqlite(join(tmp.dir, 'm.sqlite'));
    try {
      const all = migrationsFor('sqlite');
      const without = Object.fromEntries(Object.entries(all).filter(([name]) => name !== '0007_paging_and_retention'));
      const { error } = await new Migrator({ db, provider: { getMigrations: async () => without } }).migrateToLatest();
      if (error) throw error;
      expect(await migrateToLatest(db)).toEqual(['0007_paging_and_retention']);
      expect(await migrateToLatest(db)).toEqual([]);
    } finally {
      await db.destroy();
      tmp.remove();
    }
  });

  /** Events written before 0006 get the visibility and source of the rules that wrote them; new values are checked. */
  const upgradeBackfillsEvents = async (db: Kysely<Database>, dialect: 'sqlite' | 'postgres') => {
    const all = migrationsFor(dialect);
    const before = Object.fromEntries(Object.entries(all).filter(([name]) => name < '0006'));
    const { error } = await new Migrator({ db, provider: { getMigrations: async () => before } }).migrateToLatest();
    if (error) throw error;
    const untyped = db as unknown as Kysely<any>;
    await untyped.insertInto('workspaces').values({ id: 'ws_1', name: 'w', created_at: T0 }).execute();
    await untyped.insertInto('accounts').values({ id: 'acc_1', name: 'a', created_at: T0 }).execute();
    await untyped.insertInto('projects').values({ id: 'proj_1', workspace_id: 'ws_1', account_id: 'acc_1', name: 'p', status: 'active', event_sequence: 3, created_at: T0, updated_at: T0 }).execute();
    const row = (id: string, sequence: number, type: string, correlation_id: string) => ({
      id, workspace_id: 'ws_1', project_id: 'proj_1', sequence, type, actor_account_id: 'acc_1', correlation_id, payload: '{}', created_at: T0,
    });
    await untyped.insertInto('project_events').values([
      row('evt_1', 1, 'project.created', 'req_seed'), row('evt_2', 2, 'project_inbox.item.created', 'req_x'), row('evt_3', 3, 'project_inboxer.x', 'req_y'),
    ]).execute();
    expect(await migrateToLatest(db)).toEqual(ALL_MIGRATIONS.filter((name) => name >= '0006'));
    const rows = await untyped.selectFrom('project_events').select(['id', 'visibility', 'source']).orderBy('sequence').execute();
    expect(rows).toEqual([
      { id: 'evt_1', visibility: 'project', source: 'system' },
      { id: 'evt_2', visibility: 'owner', source: 'api' },
      { id: 'evt_3', visibility: 'project', source: 'api' },
    ]);
    await expect(untyped.insertInto('project_events').values({ ...row('evt_4', 4, 't', 'r'), visibility: 'internal', source: 'api' }).execute()).rejects.toThrow();
    await expect(untyped.insertInto('project_events').values({ ...row('evt_5', 5, 't', 'r'), visibility: 'project', source: 'migration' }).execute()).rejects.toThrow();
  };

  it('0006 backfills visibility and source of existing events on SQLite and refuses other values', async () => {
    const tmp = tempDir();
    const db = openSqlite(join(tmp.dir, 'upgrade6.sqlite'));
    try {
      await upgradeBackfillsEvents(db, 'sqlite');
    } finally {
      await db.destroy();
      tmp.remove();
    }
  });

  it.runIf(PG_URL)('0006 backfills visibility and source of existing events on PostgreSQL and refuses other values', async () => {
    const database = await freshPostgresDatabase(PG_URL as string);
    const db = openPostgres(database.url);
    try {
      await upgradeBackfillsEvents(db, 'postgres');
    } finally {
      await db.destroy();
      await database.drop();
    }
  });

  it.runIf(PG_URL)('are idempotent on PostgreSQL and produce the same tables, columns and nullability as on SQLite', async () => {
    const database = await freshPostgresDatabase(PG_URL as string);
    const db = openPostgres(database.url);
    try {
      const [first, concurrent] = await Promise.all([migrateToLatest(db), migrateToLatest(db)]);
      expect([...first, ...concurrent]).toEqual(ALL_MIGRATIONS);
      expect(await migrateToLatest(db)).toEqual([]);
      expect(await schemaOf(db)).toEqual(sqliteSchema);
      const json = await sql<{ column_name: string; data_type: string }>`
        select column_name, data_type from information_schema.columns
        where table_schema = 'public' and column_name in ('payload', 'metadata', 'content') order by table_name, column_name`.execute(db);
      expect(new Set(json.rows.map((r) => r.data_type))).toEqual(new Set(['json']));
      const bigints = await sql<{ n: number }>`
        select count(*) as n from information_schema.columns
        where table_schema = 'public' and (column_name like '%\_at' escape '\\') and data_type <> 'bigint'`.execute(db);
      expect(Number(bigints.rows[0]?.n)).toBe(0);
    } finally {
      await db.destroy();
      await database.drop();
    }
  });
});

// — the Project Inbox service on each engine —

interface Engine {
  name: string;
  open(): Promise<{ store: Store; raw: import('@inbox-kit/core/testing').RawReader; close(): Promise<void> }>;
}

const engines: Engine[] = [{
  name: 'sqlite',
  async open() {
    const tmp = tempDir();
    const opened = await openStore({ sqliteFile: join(tmp.dir, 'svc.sqlite') });
    const reader = sqliteRawReader(join(tmp.dir, 'svc.sqlite'));
    return { store: opened.store, raw: reader.raw, async close() { reader.close(); await opened.close(); tmp.remove(); } };
  },
}];
const pgUrl = PG_URL;
if (pgUrl) {
  engines.push({
    name: 'postgres',
    async open() {
      const database = await freshPostgresDatabase(pgUrl);
      const opened = await openStore({ databaseUrl: database.url, postgres: { max: 10 } });
      const reader = await postgresRawReader(database.url);
      return { store: opened.store, raw: reader.raw, async close() { await reader.close(); await opened.close(); await database.drop(); } };
    },
  });
}

describe.each(engines)('Project Inbox service on $name', (engine) => {
  let subject: Awaited<ReturnType<Engine['open']>>;
  let service: ProjectInboxService;
  const owner: RequestContext = { principal: { workspace_id: 'ws_main', account_id: 'acc_owner', key_id: 'key_owner', key_kind: 'standard' }, request_id: 'req_owner' };
  const deriver: RequestContext = { principal: { workspace_id: 'ws_main', account_id: 'acc_deriver', key_id: 'key_deriver', key_kind: 'standard' }, request_id: 'req_deriver' };

  beforeAll(async () => {
    subject = await engine.open();
    const { store } = subject;
    await store.insertWorkspace({ id: 'ws_main', name: 'Main', created_at: T0 });
    await store.insertAccount({ id: 'acc_owner', name: 'Owner', created_at: T0 }, ['ws_main']);
    await store.insertAccount({ id: 'acc_deriver', name: 'Deriver', created_at: T0 }, ['ws_main']);
    for (const id of ['proj_load', 'proj_race']) {
      await store.insertProject({ id, workspace_id: 'ws_main', account_id: 'acc_owner', name: id, status: 'active', created_at: T0, updated_at: T0 });
      await store.upsertMembership({ project_id: id, account_id: 'acc_deriver', role: 'deriver', created_at: T0 });
    }
    service = new ProjectInboxService({ store, bus: createLocalEventBus(), clock: systemClock, ids: createIdGenerator() });
  });
  afterAll(async () => {
    await subject?.close();
  });

  it('200 concurrent creates in one project → sequences 1..200, no error (no SQLITE_BUSY)', async () => {
    const results = await Promise.allSettled(Array.from({ length: 200 }, (_, i) => service.create(
      { ...deriver, request_id: `req_${i}` }, 'proj_load', { type: 'load.test', title: `#${i}`, payload: { i, emoji: '😀' } },
    )));
    const failures = results.filter((r) => r.status === 'rejected');
    expect(failures.map((f) => String((f as PromiseRejectedResult).reason))).toEqual([]);
    expect(await subject.raw.eventSequences('proj_load')).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(await subject.raw.countRows('project_inbox_items', 'proj_load')).toBe(200);
    expect(await subject.raw.countRows('operation_logs', 'proj_load')).toBe(200);
  });

  it('20 concurrent decisions on one item → exactly one success, one log row, one event', async () => {
    const item = await service.create(deriver, 'proj_race', { type: 'race', payload: { a: 1, b: [1, 2] } });
    const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => service.decide(
      { ...owner, request_id: `req_d${i}` }, 'proj_race', item.id, { decision: i % 2 === 0 ? 'accept' : 'reject' },
    )));
    const wins = results.filter((r) => r.status === 'fulfilled');
    const losses = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(wins).toHaveLength(1);
    expect(losses.map((l) => (l.reason instanceof InboxKitError ? l.reason.code : String(l.reason)))).toEqual(Array(19).fill('project_inbox_invalid_transition'));
    const decided = (wins[0] as PromiseFulfilledResult<Awaited<ReturnType<ProjectInboxService['decide']>>>).value;
    expect(await subject.raw.itemStatus(item.id)).toBe(decided.status);
    // create + the one decision
    expect(await subject.raw.countRows('operation_logs', 'proj_race')).toBe(2);
    expect(await subject.raw.eventSequences('proj_race')).toEqual([1, 2]);
    // The stored payload is what was sent.
    expect(await subject.raw.itemPayloadText(item.id)).toBe('{"a":1,"b":[1,2]}');
  });
});
