// Migrations (README "Migrations") on SQLite and PostgreSQL: `openStore({ migrate: false })` opens
// without migrating and its store's readiness says `not_migrated` (naming what is pending) until
// `migrateToLatest` ran; a database migrated further by a newer release (a migration this release
// does not know) is served as it is — nothing applied, `migrations.unknown` names it, ready — while
// one that also lacks migrations of this release is refused; `migrationStatus` reads all of it.
// And the pool of `openPostgres` maps an unreachable server to `storage_unavailable`.
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { createIdGenerator, createLocalEventBus, isInboxKitError, PlatformService, systemClock } from '@inbox-kit/core';
import { asStorageError, isConnectionError, migrateToLatest, migrationsFor, migrationStatus, openStore, type OpenedStore } from '../src/index.js';
import { PG_URL, freshPostgresDatabase, postgresUnavailable, tempDir } from './helpers.js';

const ALL = Object.keys(migrationsFor('sqlite')).sort();

const engines: Array<{ name: string; open: (migrate: boolean) => Promise<OpenedStore & { dispose(): Promise<void> }> }> = [];
const disposers: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const d of disposers) await d();
});

engines.push({
  name: 'SQLite',
  open: async (migrate) => {
    const tmp = tempDir();
    disposers.push(() => tmp.remove());
    const file = join(tmp.dir, 'm.sqlite');
    const opened = await openStore({ sqliteFile: file, migrate });
    return { ...opened, dispose: () => opened.close() };
  },
});
if (PG_URL) {
  engines.push({
    name: 'PostgreSQL',
    open: async (migrate) => {
      const db = await freshPostgresDatabase(PG_URL as string);
      const opened = await openStore({ databaseUrl: db.url, migrate });
      return { ...opened, dispose: async () => { await opened.close(); await db.drop(); } };
    },
  });
} else {
  postgresUnavailable('migrations');
}

describe.each(engines)('migrations on $name', ({ open }) => {
  it('migrate: false opens without migrating; readiness says not_migrated until migrateToLatest ran', async () => {
    const opened = await open(false);
    try {
      expect(opened.migrations).toEqual({ applied: [], pending: ALL, unknown: [] });
      const readiness = await opened.store.readiness!();
      expect(readiness).toEqual({ ready: false, reason: 'not_migrated', message: `The database lacks ${ALL.length} migrations of this release (${ALL.join(', ')}): run the migrations` });
      expect(await migrateToLatest(opened.db)).toEqual(ALL);
      expect(await opened.store.readiness!()).toEqual({ ready: true });
      expect(await migrationStatus(opened.db)).toEqual({ applied: ALL, pending: [], unknown: [] });
      expect(await migrateToLatest(opened.db)).toEqual([]);
    } finally {
      await opened.dispose();
    }
  });

  it('0011 gives the Sessions stored without them an agent snapshot (the Runtime\'s) and environment_id "default"', async () => {
    const opened = await open(true);
    try {
      const platform = new PlatformService({ store: opened.store, bus: createLocalEventBus(), clock: systemClock, ids: createIdGenerator() });
      await platform.createWorkspace({ id: 'ws_m', name: 'M' });
      await platform.createAccount({ id: 'acc_m', name: 'm', workspace_ids: ['ws_m'] });
      const ctx = { principal: await platform.authenticate((await platform.issueApiKey({ workspace_id: 'ws_m', account_id: 'acc_m' })).secret), request_id: 'req_m' };
      await platform.createSession(ctx, { id: 'sess_old', title: 'stored before 0011' });
      await platform.createSession(ctx, { id: 'sess_new', title: 'made after' });
      expect(await platform.getSession(ctx, 'sess_new')).toMatchObject({ agent: { type: 'agent', id: 'runtime' }, environment_id: 'default' });
      // As a row written before the migration: both null.
      await sql`update sessions set agent = null, environment_id = null where id = 'sess_old'`.execute(opened.db);
      await sql`delete from kysely_migration where name = '0011_session_agent_snapshots'`.execute(opened.db);
      expect(await migrateToLatest(opened.db)).toEqual(['0011_session_agent_snapshots']);
      const old = await platform.getSession(ctx, 'sess_old');
      expect(old.agent).toMatchObject({ type: 'agent', id: 'runtime', version: 1, name: 'Runtime', model: { id: 'runtime' }, tools: [] });
      expect(old.environment_id).toBe('default');
    } finally {
      await opened.dispose();
    }
  });

  it('a database migrated further by a newer release is served as it is; one that also lacks ours is refused', async () => {
    const opened = await open(true);
    try {
      expect(opened.migrations.applied).toEqual(ALL);
      await sql`insert into kysely_migration (name, timestamp) values ('9999_from_the_future', ${new Date().toISOString()})`.execute(opened.db);
      expect(await migrationStatus(opened.db)).toEqual({ applied: ALL, pending: [], unknown: ['9999_from_the_future'] });
      expect(await migrateToLatest(opened.db)).toEqual([]);
      expect(await opened.store.readiness!()).toEqual({ ready: true });
      // And the store works on it.
      await opened.store.insertWorkspace({ id: 'ws_future', name: 'Future', created_at: 1 });
      expect(await opened.store.getWorkspace('ws_future')).toEqual({ id: 'ws_future', name: 'Future', created_at: 1 });

      // Lacking one of ours too: another line of releases migrated it.
      await sql`delete from kysely_migration where name = '0010_administration'`.execute(opened.db);
      await expect(migrateToLatest(opened.db)).rejects.toThrow(/holds migrations this release does not know \(9999_from_the_future\) and lacks some of its own \(0010_administration\)/);
    } finally {
      await opened.dispose();
    }
  });
});

describe('several processes migrating one new database at once', () => {
  // Each store has its own connection, as each process of a deployment does; on SQLite Kysely's
  // migrator takes no lock and no transaction, so the store does (migrate.ts).
  const together = async (open: () => Promise<OpenedStore>, count: number) => {
    const settled = await Promise.allSettled(Array.from({ length: count }, open));
    const opened = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    try {
      expect(settled.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
      // Every migration applied by exactly one of them; all see the latest schema.
      expect(opened.flatMap((o) => o.migrations.applied).sort()).toEqual(ALL);
      for (const o of opened) expect(await migrationStatus(o.db)).toEqual({ applied: ALL, pending: [], unknown: [] });
    } finally {
      for (const o of opened) await o.close();
    }
  };

  it('SQLite: four stores opening one new file at once all open, each migration applied once (five files)', async () => {
    for (let round = 0; round < 5; round++) {
      const tmp = tempDir();
      disposers.push(() => tmp.remove());
      const file = join(tmp.dir, 'race.sqlite');
      await together(() => openStore({ sqliteFile: file }), 4);
    }
  });

  it('SQLite: a migration that fails leaves nothing of the run behind (one transaction, as on PostgreSQL)', async () => {
    const tmp = tempDir();
    disposers.push(() => tmp.remove());
    const file = join(tmp.dir, 'half.sqlite');
    // A table in the way of 0008: the run fails there, after 0001–0007 ran.
    const blocker = await openStore({ sqliteFile: file, migrate: false });
    await sql`create table agents (x integer)`.execute(blocker.db);
    await expect(migrateToLatest(blocker.db)).rejects.toThrow(/migration "0008_agents" failed: table "?agents"? already exists/);
    expect(await migrationStatus(blocker.db)).toEqual({ applied: [], pending: ALL, unknown: [] });
    const tables = await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name = 'workspaces'`.execute(blocker.db);
    expect(tables.rows).toEqual([]);
    // Out of the way, the next run applies everything.
    await sql`drop table agents`.execute(blocker.db);
    expect(await migrateToLatest(blocker.db)).toEqual(ALL);
    await blocker.close();
  });

  it.skipIf(!PG_URL)('PostgreSQL: four stores opening one new database at once all open, each migration applied once', async () => {
    const db = await freshPostgresDatabase(PG_URL as string);
    try {
      await together(() => openStore({ databaseUrl: db.url }), 4);
    } finally {
      await db.drop();
    }
  });
});

describe('connection errors', () => {
  it('are storage_unavailable (the driver error as cause); other errors pass through', () => {
    for (const error of [
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
      Object.assign(new Error('the database system is starting up'), { code: '57P03' }),
      Object.assign(new Error('sorry, too many clients already'), { code: '53300' }),
      Object.assign(new Error('connection failure'), { code: '08006' }),
      new Error('Connection terminated unexpectedly'),
      new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })], 'all attempts failed'),
    ]) {
      expect(isConnectionError(error), error.message).toBe(true);
      const mapped = asStorageError(error);
      expect(isInboxKitError(mapped) && mapped.code === 'storage_unavailable' && mapped.cause === error, error.message).toBe(true);
    }
    const unique = Object.assign(new Error('duplicate key value'), { code: '23505' });
    expect(asStorageError(unique)).toBe(unique);
    expect(isConnectionError(new Error('syntax error'))).toBe(false);
  });

  it('an unreachable PostgreSQL fails openStore with storage_unavailable, naming the cause', async () => {
    const error = await openStore({ databaseUrl: 'postgres://nobody@127.0.0.1:1/none' }).catch((e: unknown) => e);
    expect(isInboxKitError(error) && error.code).toBe('storage_unavailable');
    expect(String((error as Error).cause)).toMatch(/ECONNREFUSED/);
  });
});
