// The prepared-statement cache of the SQLite adapter (sqlite.ts `cachingStatements`): one prepare
// per SQL text, least recently used evicted, results unchanged, schema changes picked up.
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { cachingStatements, openSqlite, rowBuilder } from '../src/sqlite.js';
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

  it('reads that name their columns build the same rows from raw arrays (all, iterate, duplicates, nulls)', async () => {
    const { dir, remove } = tempDir();
    cleanups.push(remove);
    const db = openSqlite(join(dir, 'raw.sqlite'));
    try {
      await sql`create table t (id integer primary key, name text, note text, n real)`.execute(db);
      await sql`insert into t (name, note, n) values ('a', null, 1.5), ('候选', 'x', null)`.execute(db);
      const rows = (await sql`select id, name, note, n from t order by id`.execute(db)).rows;
      expect(rows).toEqual([{ id: 1, name: 'a', note: null, n: 1.5 }, { id: 2, name: '候选', note: 'x', n: null }]);
      // A repeated name keeps the last value, as better-sqlite3's own rows do.
      expect((await sql`select id, name as x, note as x from t where id = 2`.execute(db)).rows).toEqual([{ id: 2, x: 'x' }]);
      const streamed: unknown[] = [];
      for await (const row of db.selectFrom('t' as never).select(['id', 'name'] as never).orderBy('id' as never).stream()) streamed.push(row);
      expect(streamed).toEqual([{ id: 1, name: 'a' }, { id: 2, name: '候选' }]);
      // Writes with RETURNING are reads too.
      expect((await sql`update t set n = 2 where id = 1 returning id, n`.execute(db)).rows).toEqual([{ id: 1, n: 2 }]);
      expect((await sql`insert into t (name) values ('c')`.execute(db)).numAffectedRows).toBe(1n);
    } finally {
      await db.destroy();
    }
  });
});

describe('rowBuilder (raw rows into objects)', () => {
  it('keys the values by column name, in column order', () => {
    const row = rowBuilder(['id', 'p_name', 'weird "name"\n', 'ünï'])(['a', 'b', 3, null]);
    expect(row).toEqual({ id: 'a', p_name: 'b', 'weird "name"\n': 3, ünï: null });
    expect(Object.keys(row)).toEqual(['id', 'p_name', 'weird "name"\n', 'ünï']);
  });

  it('a repeated column name keeps its last value, as a plain assignment would', () => {
    expect(rowBuilder(['a', 'b', 'a'])([1, 2, 3])).toEqual({ a: 3, b: 2 });
  });

  it('a column named __proto__ is an own property, never the prototype', () => {
    const row = rowBuilder(['id', '__proto__'])(['x', { polluted: true }]);
    expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
    expect(Object.hasOwn(row, '__proto__')).toBe(true);
    expect((row as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it('builds the same rows where code generation from strings is forbidden', () => {
    // What `--disallow-code-generation-from-strings` does to `new Function`: an EvalError.
    const RealFunction = globalThis.Function;
    globalThis.Function = function forbidden() {
      throw new EvalError('Code generation from strings disallowed for this context');
    } as unknown as FunctionConstructor;
    try {
      const row = rowBuilder(['id', 'n', 'weird "name"'])(['a', 1, null]);
      expect(row).toEqual({ id: 'a', n: 1, 'weird "name"': null });
    } finally {
      globalThis.Function = RealFunction;
    }
  });

  it('reads through a cached statement give the same rows as better-sqlite3 itself', () => {
    const db = new SqliteDatabase(':memory:');
    try {
      db.exec(`create table t (id text, "select" integer, n real); insert into t values ('a', 1, 0.5), ('b', 2, null)`);
      const text = 'select id, "select", n, id as again from t order by id';
      expect(cachingStatements(db).prepare(text).all([])).toEqual(db.prepare(text).all());
    } finally {
      db.close();
    }
  });
});
