// The prepared-statement cache of the SQLite adapter (sqlite.ts `cachingStatements`): one prepare
// per SQL text, least recently used evicted, results unchanged, schema changes picked up.
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { cachingStatements, openSqlite } from '../src/sqlite.js';
import { tempDir } from './helpers.js';

describe('cachingStatements', () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const cleanup of cleanups.splice(0)) cleanup();
  });

  function counting() {
    const db = new SqliteDatabase(':memory:');
    const prepared: string[] = [];
    const cached = cachingStatements({ close: () => db.close(), prepare: (text) => (prepared.push(text), db.prepare(text)) }, 2);
    cleanups.push(() => cached.close());
    return { cached, prepared };
  }

  it('prepares each SQL text once and returns the same statement', () => {
    const { cached, prepared } = counting();
    const a = cached.prepare('select 1 as one');
    expect(cached.prepare('select 1 as one')).toBe(a);
    expect(prepared).toEqual(['select 1 as one']);
    expect(a.all([])).toEqual([{ one: 1 }]);
  });

  it('evicts the least recently used statement beyond its size', () => {
    const { cached, prepared } = counting();
    cached.prepare('select 1');
    cached.prepare('select 2');
    cached.prepare('select 1'); // 1 is now the most recent
    cached.prepare('select 3'); // evicts 2
    cached.prepare('select 1');
    cached.prepare('select 2');
    expect(prepared).toEqual(['select 1', 'select 2', 'select 3', 'select 2']);
  });

  it('does not cache a statement that fails to prepare', () => {
    const { cached, prepared } = counting();
    expect(() => cached.prepare('select * from missing')).toThrow();
    expect(() => cached.prepare('select * from missing')).toThrow();
    expect(prepared).toEqual(['select * from missing', 'select * from missing']);
  });

  it('through openSqlite: repeated queries bind fresh parameters and see schema changes', async () => {
    const { dir, remove } = tempDir();
    cleanups.push(remove);
    const db = openSqlite(join(dir, 'cache.sqlite'));
    try {
      await sql`create table t (id integer primary key, name text)`.execute(db);
      for (const name of ['a', 'b']) await sql`insert into t (name) values (${name})`.execute(db);
      const byName = (name: string) => sql<{ id: number }>`select id from t where name = ${name}`.execute(db);
      expect((await byName('a')).rows).toEqual([{ id: 1 }]);
      expect((await byName('b')).rows).toEqual([{ id: 2 }]);
      const all = () => sql`select * from t order by id`.execute(db);
      expect((await all()).rows).toEqual([{ id: 1, name: 'a' }, { id: 2, name: 'b' }]);
      await sql`alter table t add column extra text default 'x'`.execute(db);
      expect((await all()).rows).toEqual([{ id: 1, name: 'a', extra: 'x' }, { id: 2, name: 'b', extra: 'x' }]);
    } finally {
      await db.destroy();
    }
  });
});
