// PostgreSQL: the store's compiled-once queries run as named prepared statements on pools of
// openPostgres (one parse and plan per connection), unless `preparedStatements: false`; the
// one-statement appendProjectEvent keeps sequences gap-free and refuses a missing project.
import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createKyselyStore, migrateToLatest } from '../src/index.js';
import { openPostgres } from '../src/entry-postgres.js';
import { PG_URL, freshPostgresDatabase, postgresUnavailable } from './helpers.js';

const pgUrl = PG_URL;

if (!pgUrl) postgresUnavailable('PostgreSQL prepared statements');
else describe('PostgreSQL prepared statements', () => {
  /** A migrated store on a fresh database over a pool of ONE connection (so the session is known). */
  async function subject(preparedStatements?: boolean) {
    const database = await freshPostgresDatabase(pgUrl as string);
    const errors: Error[] = [];
    const db = openPostgres(database.url, { max: 1, onError: (e) => errors.push(e), ...(preparedStatements === undefined ? {} : { preparedStatements }) });
    await migrateToLatest(db, 'postgres');
    const store = createKyselyStore(db, { dialect: 'postgres' });
    const prepared = async () => (await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements order by name`.execute(db)).rows;
    return {
      store, prepared, db, errors, url: database.url,
      close: async () => {
        await db.destroy();
        await database.drop();
      },
    };
  }

  async function seedProject(store: ReturnType<typeof createKyselyStore>) {
    await store.insertWorkspace({ id: 'ws_p', name: 'W', created_at: 1 });
    await store.insertAccount({ id: 'acc_p', name: 'A', created_at: 1 }, ['ws_p']);
    await store.insertProject({ id: 'proj_p', workspace_id: 'ws_p', account_id: 'acc_p', name: 'P', status: 'active', created_at: 1, updated_at: 1 });
  }

  const event = (id: string, project_id = 'proj_p') => ({
    id, workspace_id: 'ws_p', project_id, type: 'project_inbox.item.created', actor_account_id: 'acc_p', session_id: null,
    floor_id: null, page_id: null, operation_log_id: null, correlation_id: null, causation_event_id: null, visibility: 'project' as const, source: 'api' as const,
    payload: { n: id, nested: { ok: true } }, created_at: 1_764_000_000_000,
  });

  it('runs the compiled-once queries as named statements, once per text, and sequences stay gap-free', async () => {
    const { store, prepared, close } = await subject();
    try {
      await seedProject(store);
      for (let i = 0; i < 3; i++) expect((await store.getProject('ws_p', 'proj_p'))?.id).toBe('proj_p');
      const stored = [];
      for (let i = 1; i <= 3; i++) stored.push(await store.appendProjectEvent(event(`evt_${i}`)));
      expect(stored.map((e) => e.sequence)).toEqual([1, 2, 3]);
      expect(stored[0]?.payload).toEqual({ n: 'evt_1', nested: { ok: true } });
      expect((await store.listProjectEvents({ project_id: 'proj_p', after: 0, limit: 10 })).map((e) => [e.id, e.sequence, e.created_at]))
        .toEqual([['evt_1', 1, 1_764_000_000_000], ['evt_2', 2, 1_764_000_000_000], ['evt_3', 3, 1_764_000_000_000]]);
      // With a type filter (a list of any length) the query stays ad hoc.
      expect((await store.listProjectEvents({ project_id: 'proj_p', after: 0, limit: 10, types: ['project_inbox.item.created'] })).length).toBe(3);
      const names = await prepared();
      expect(names.every((p) => p.name.startsWith('inbox_kit_'))).toBe(true);
      expect(names.some((p) => /from "projects"/.test(p.statement))).toBe(true);
      expect(names.some((p) => /insert into project_events/.test(p.statement))).toBe(true);
      // One statement per text, whatever the number of calls; the unfiltered list of events (every
      // stream's replay, issue 33) is compiled once too; ad-hoc queries (a type filter) stay unnamed.
      expect(new Set(names.map((p) => p.statement)).size).toBe(names.length);
      expect(names.some((p) => /from "project_events"/.test(p.statement) && !/"type" in/.test(p.statement))).toBe(true);
      expect(names.some((p) => /from "project_events"/.test(p.statement) && /"type" in/.test(p.statement))).toBe(false);
      await expect(store.appendProjectEvent(event('evt_x', 'proj_missing'))).rejects.toThrow(/proj_missing does not exist/);
    } finally {
      await close();
    }
  });

  it('a statement gone stale (column type changed) fails once and its connection is replaced; deallocated statements turn naming off for the pool', async () => {
    const { store, db, url, errors, prepared, close } = await subject();
    try {
      await seedProject(store);
      const item = {
        id: 'pinbox_p1', workspace_id: 'ws_p', project_id: 'proj_p', account_id: 'acc_p', sender_account_id: 'acc_p',
        type: 'x.y', title: 'T', payload: { a: 1 }, source_event_id: null, source_session_id: null, source_floor_id: null,
        source_page_id: null, status: 'pending' as const, decided_by_account_id: null, decided_at: null, created_at: 1, updated_at: 1,
      };
      await store.insertInboxItem(item);
      expect((await store.getInboxItem('proj_p', 'pinbox_p1'))?.title).toBe('T');
      // Another connection changes a returned column's type: the prepared plan is stale.
      const other = openPostgres(url, { max: 1, preparedStatements: false });
      try {
        await sql`alter table project_inbox_items alter column title type varchar(500)`.execute(other);
      } finally {
        await other.destroy();
      }
      await expect(store.getInboxItem('proj_p', 'pinbox_p1')).rejects.toThrow(/cached plan must not change result type/);
      expect((await store.getInboxItem('proj_p', 'pinbox_p1'))?.title).toBe('T');
      // A pooler's DISCARD ALL / DEALLOCATE drops the statements behind node-postgres's back: the
      // server does not keep them, so the statement fails once (503 storage_unavailable, retry),
      // onError is told, and the pool runs every later statement unnamed.
      expect((await store.getProject('ws_p', 'proj_p'))?.id).toBe('proj_p');
      await sql`deallocate all`.execute(db);
      const error = await store.getProject('ws_p', 'proj_p').then(() => undefined, (e: unknown) => e);
      expect(error).toMatchObject({ code: 'storage_unavailable' });
      expect(String((error as Error).cause)).toMatch(/does not exist/);
      expect(errors.map((e) => e.message)).toEqual([expect.stringMatching(/does not keep the named prepared statements.*preparedStatements: false/s)]);
      for (let i = 0; i < 3; i++) expect((await store.getProject('ws_p', 'proj_p'))?.id).toBe('proj_p');
      expect(await prepared()).toEqual([]);
      expect(errors).toHaveLength(1);
    } finally {
      await close();
    }
  });

  it('with preparedStatements: false nothing is prepared', async () => {
    const { store, prepared, close } = await subject(false);
    try {
      await seedProject(store);
      await store.getProject('ws_p', 'proj_p');
      await store.appendProjectEvent(event('evt_1'));
      expect(await prepared()).toEqual([]);
    } finally {
      await close();
    }
  });
});
