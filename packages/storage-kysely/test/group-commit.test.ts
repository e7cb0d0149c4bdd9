// Group commit on SQLite (group-commit.ts): transactions waiting together share one commit, a
// failing unit of work is undone alone, a failing group writes nothing, order is kept.
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect, sql, type Generated, type LogEvent } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { createGroupCommit, GroupCommitAbortedError } from '../src/group-commit.js';
import { tempDir } from './helpers.js';

interface Db {
  t: { id: Generated<number>; name: string; parent: number | null };
}

describe('createGroupCommit', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /**
   * A file database with table `t`; `logged` records its statements (`commits()` counts COMMITs),
   * `impatient` is a second connection that waits only 50 ms for another process's lock.
   */
  async function subject() {
    const { dir, remove } = tempDir();
    cleanups.push(remove);
    const file = join(dir, 'group.sqlite');
    const statements: string[] = [];
    const log = (event: LogEvent) => {
      statements.push(event.query.sql);
    };
    const logged = new Kysely<Db>({ dialect: new SqliteDialect({ database: new SqliteDatabase(file) }), log });
    const impatient = new Kysely<Db>({ dialect: new SqliteDialect({ database: new SqliteDatabase(file, { timeout: 50 }) }) });
    cleanups.push(() => impatient.destroy(), () => logged.destroy());
    await sql`pragma journal_mode = wal`.execute(logged);
    await sql`pragma foreign_keys = on`.execute(logged);
    await sql`create table t (id integer primary key, name text not null, parent integer references t (id))`.execute(logged);
    statements.length = 0;
    const names = async () => (await logged.selectFrom('t').select('name').orderBy('id').execute()).map((r) => r.name);
    return { logged, impatient, file, statements, names, commits: () => statements.filter((s) => s === 'commit').length };
  }

  const insert = (name: string) => async (trx: Kysely<Db>) => {
    await trx.insertInto('t').values({ name }).execute();
    return name;
  };

  it('transactions asked for together share one BEGIN IMMEDIATE … COMMIT, each in a savepoint', async () => {
    const { logged, statements, names, commits } = await subject();
    const transaction = createGroupCommit(logged);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => transaction(insert(`n${i}`))));
    expect(results).toEqual(Array.from({ length: 20 }, (_, i) => `n${i}`));
    expect(commits()).toBe(1);
    expect(statements.filter((s) => s === 'begin immediate')).toHaveLength(1);
    expect(statements.filter((s) => s.startsWith('savepoint'))).toHaveLength(20);
    expect(await names()).toEqual(Array.from({ length: 20 }, (_, i) => `n${i}`));
  });

  it('a lone transaction commits without a savepoint', async () => {
    const { logged, statements, names } = await subject();
    const transaction = createGroupCommit(logged);
    await transaction(insert('alone'));
    expect(statements.filter((s) => /^(begin|savepoint|release|commit|rollback)/.test(s))).toEqual(['begin immediate', 'commit']);
    expect(await names()).toEqual(['alone']);
  });

  it('units run in the order asked for, each seeing the writes before it', async () => {
    const { logged } = await subject();
    const transaction = createGroupCommit(logged);
    const seen = await Promise.all(Array.from({ length: 5 }, (_, i) => transaction(async (trx) => {
      const before = await trx.selectFrom('t').select('name').orderBy('id').execute();
      await trx.insertInto('t').values({ name: `u${i}` }).execute();
      return before.map((r) => r.name);
    })));
    expect(seen).toEqual([[], ['u0'], ['u0', 'u1'], ['u0', 'u1', 'u2'], ['u0', 'u1', 'u2', 'u3']]);
  });

  it('a unit that throws is undone alone and rejects with its own error; the rest commit', async () => {
    const { logged, names, commits } = await subject();
    const transaction = createGroupCommit(logged);
    const failure = new Error('unit 2 gives up');
    const outcomes = await Promise.allSettled([
      transaction(insert('a')),
      transaction(insert('b')),
      transaction(async (trx) => {
        await trx.insertInto('t').values({ name: 'written then undone' }).execute();
        throw failure;
      }),
      transaction(async (trx) => {
        // A constraint error of SQLite itself (a missing parent) is undone the same way.
        await trx.insertInto('t').values({ name: 'orphan', parent: 999 }).execute();
      }),
      transaction(insert('c')),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect((outcomes[2] as PromiseRejectedResult).reason).toBe(failure);
    expect(String((outcomes[3] as PromiseRejectedResult).reason)).toMatch(/FOREIGN KEY/);
    expect(await names()).toEqual(['a', 'b', 'c']);
    expect(commits()).toBe(1);
  });

  it('a lone unit that throws is rolled back and the next transaction works', async () => {
    const { logged, names } = await subject();
    const transaction = createGroupCommit(logged);
    await expect(transaction(async (trx) => {
      await trx.insertInto('t').values({ name: 'gone' }).execute();
      throw new Error('no');
    })).rejects.toThrow('no');
    await transaction(insert('kept'));
    expect(await names()).toEqual(['kept']);
  });

  it('a failed COMMIT writes nothing of the group and rejects every unit', async () => {
    const { logged, names } = await subject();
    const transaction = createGroupCommit(logged);
    const outcomes = await Promise.allSettled([
      transaction(insert('a')),
      transaction(async (trx) => {
        // Deferred: the missing parent fails the COMMIT, not the statement.
        await sql`pragma defer_foreign_keys = on`.execute(trx);
        await trx.insertInto('t').values({ name: 'orphan', parent: 999 }).execute();
      }),
      transaction(insert('b')),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
    for (const o of outcomes) expect(String((o as PromiseRejectedResult).reason)).toMatch(/FOREIGN KEY/);
    expect(await names()).toEqual([]);
    await transaction(insert('after'));
    expect(await names()).toEqual(['after']);
  });

  it('a unit whose error rolls back the whole transaction: it gets its error, earlier units a GroupCommitAbortedError, later ones run again', async () => {
    const { logged, names } = await subject();
    // RAISE(ROLLBACK) ends the whole transaction, as SQLITE_FULL or an I/O error would.
    await sql`create trigger boom before insert on t when new.name = 'boom' begin select raise(rollback, 'boom refused'); end`.execute(logged);
    const transaction = createGroupCommit(logged);
    const ran: string[] = [];
    const unit = (name: string) => async (trx: Kysely<Db>) => {
      ran.push(name);
      await trx.insertInto('t').values({ name }).execute();
      return name;
    };
    const outcomes = await Promise.allSettled(['a', 'b', 'boom', 'c', 'd'].map((name) => transaction(unit(name))));
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected', 'fulfilled', 'fulfilled']);
    const [a, , boom] = outcomes as PromiseRejectedResult[];
    expect(String(boom?.reason)).toMatch(/boom refused/);
    expect(a?.reason).toBeInstanceOf(GroupCommitAbortedError);
    expect((a?.reason as Error).message).toMatch(/boom refused/);
    expect((a?.reason as Error).cause).toBe(boom?.reason);
    // c and d had not run when the transaction ended: they ran once, in the next group.
    expect(ran).toEqual(['a', 'b', 'boom', 'c', 'd']);
    expect(await names()).toEqual(['c', 'd']);
  });

  it('maxGroupSize caps a group; the rest run in the next ones', async () => {
    const { logged, names, commits } = await subject();
    const transaction = createGroupCommit(logged, { maxGroupSize: 3 });
    await Promise.all(Array.from({ length: 10 }, (_, i) => transaction(insert(`n${i}`))));
    expect(commits()).toBe(4);
    expect(await names()).toHaveLength(10);
    expect(() => createGroupCommit(logged, { maxGroupSize: 0 })).toThrow(TypeError);
  });

  it('when BEGIN IMMEDIATE waits behind another process past the busy timeout, the group rejects with storage_busy and later ones succeed', async () => {
    const { impatient, file, names } = await subject();
    const other = new SqliteDatabase(file);
    cleanups.push(() => {
      other.close();
    });
    other.exec('begin immediate');
    const transaction = createGroupCommit(impatient, { busyTimeoutMs: 100 });
    const outcomes = await Promise.allSettled([transaction(insert('a')), transaction(insert('b'))]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
    expect((outcomes[0] as PromiseRejectedResult).reason).toMatchObject({ code: 'storage_busy' });
    expect(String((outcomes[0] as PromiseRejectedResult).reason)).toMatch(/locked by another process/);
    other.exec('rollback');
    await transaction(insert('c'));
    expect(await names()).toEqual(['c']);
  });
});
