// An unreachable PostgreSQL through `openPostgres`'s pool (README "Unreachable database"): a
// connection lost mid-query, or between two statements of a transaction (the server ends the
// backend while the services think), fails the call with `storage_unavailable` — never an
// unhandled 'error' event, which would end the process — and the pool serves again afterwards
// with a fresh connection. (The whole server stopped and started under a running demo:
// apps/demo test/health.test.ts.)
import pg from 'pg';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isInboxKitError } from '@inbox-kit/core';
import { migrateToLatest } from '../src/index.js';
import { openPostgres } from '../src/entry-postgres.js';
import { PG_URL, freshPostgresDatabase, postgresUnavailable } from './helpers.js';

if (!PG_URL) {
  postgresUnavailable('unreachable PostgreSQL');
} else {
  describe('a lost PostgreSQL connection', () => {
    let database: { url: string; drop(): Promise<void> };
    let admin: pg.Client;
    beforeAll(async () => {
      database = await freshPostgresDatabase(PG_URL as string);
      admin = new pg.Client({ connectionString: PG_URL as string });
      await admin.connect();
    });
    afterAll(async () => {
      await admin?.end();
      await database?.drop();
    });

    const terminate = (pid: number) => admin.query('select pg_terminate_backend($1)', [pid]);
    const expectUnavailable = (error: unknown) => {
      expect(isInboxKitError(error) && error.code, String(error)).toBe('storage_unavailable');
      expect(String((error as Error).cause)).toMatch(/terminat|connection error/i);
    };

    it('between two statements of a transaction: the next one fails with storage_unavailable, the process lives on', async () => {
      const lost: Error[] = [];
      const db = openPostgres(database.url, { onError: (error) => lost.push(error) });
      try {
        await migrateToLatest(db);
        const error = await db.transaction().execute(async (trx) => {
          const pid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)).rows[0]!.pid;
          await terminate(pid);
          // The server's goodbye reaches the idle, checked-out connection as an 'error' event.
          for (let i = 0; lost.length === 0; i++) {
            if (i > 500) throw new Error('the lost connection was never reported');
            await new Promise((r) => setTimeout(r, 10));
          }
          await sql`select 1`.execute(trx);
        }).then(() => undefined, (e: unknown) => e);
        expectUnavailable(error);
        expect((await sql<{ one: number }>`select 1 as one`.execute(db)).rows).toEqual([{ one: 1 }]);
      } finally {
        await db.destroy();
      }
    });

    it('mid-query: storage_unavailable, and the pool connects afresh', async () => {
      const db = openPostgres(database.url, { onError: () => undefined });
      try {
        const pid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db)).rows[0]!.pid;
        const sleeping = sql`select pg_sleep(30), pg_backend_pid()`.execute(db).then(() => undefined, (e: unknown) => e);
        for (let i = 0; (await admin.query("select 1 from pg_stat_activity where query like 'select pg_sleep(30)%' and pid <> pg_backend_pid()")).rowCount === 0; i++) {
          if (i > 500) throw new Error('the query never started');
          await new Promise((r) => setTimeout(r, 10));
        }
        const running = (await admin.query<{ pid: number }>("select pid from pg_stat_activity where query like 'select pg_sleep(30)%' and pid <> pg_backend_pid()")).rows[0]!.pid;
        expect(running).toBe(pid); // the pool's one idle connection ran it
        await terminate(running);
        expectUnavailable(await sleeping);
        expect((await sql<{ one: number }>`select 1 as one`.execute(db)).rows).toEqual([{ one: 1 }]);
      } finally {
        await db.destroy();
      }
    });
  });
}
