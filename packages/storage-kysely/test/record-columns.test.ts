// One shape, written once: the store's column lists and row mappings are derived from the record
// schemas of @inbox-kit/core (src/store/rows.ts). This test fails when a record field has no
// column of the same nullability on either engine (a field added to a schema without its
// migration), and shows that a field added to a schema reaches the mapping with no other edit.
import { join } from 'node:path';
import { sql, type Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { recordFields, sessionSchema, type Session } from '@inbox-kit/core';
import { migrateToLatest, type Database } from '../src/index.js';
import { openPostgres } from '../src/entry-postgres.js';
import { openSqlite } from '../src/entry-sqlite.js';
import { CODECS, codecOf } from '../src/store/rows.js';
import { dialects } from '../src/store/dialect.js';
import { PG_URL, freshPostgresDatabase, postgresUnavailable, tempDir } from './helpers.js';

/** Column name → nullable, per table, as the migrated database has them. */
type Columns = Record<string, Record<string, boolean>>;

async function sqliteColumns(db: Kysely<Database>): Promise<Columns> {
  const tables = (await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%' and name not like 'kysely_%'`.execute(db)).rows;
  const out: Columns = {};
  for (const { name: table } of tables) {
    const rows = (await sql<{ name: string; notnull: number; pk: number }>`select name, "notnull", pk from pragma_table_info(${table})`.execute(db)).rows;
    out[table] = Object.fromEntries(rows.map((r) => [r.name, r.notnull === 0 && r.pk === 0]));
  }
  return out;
}

async function postgresColumns(db: Kysely<Database>): Promise<Columns> {
  const rows = (await sql<{ table_name: string; column_name: string; is_nullable: string }>`
    select table_name, column_name, is_nullable from information_schema.columns where table_schema = current_schema()`.execute(db)).rows;
  const out: Columns = {};
  for (const r of rows) (out[r.table_name] ??= {})[r.column_name] = r.is_nullable === 'YES';
  return out;
}

/** Every record field whose column is missing or differs in nullability, as `table.field`. */
function mismatches(columns: Columns): string[] {
  return CODECS.flatMap((codec) => codec.fields.flatMap((field) => {
    const nullable = columns[codec.table]?.[field.name];
    if (nullable === undefined) return [`${codec.table}.${field.name}: no column`];
    return nullable === field.nullable ? [] : [`${codec.table}.${field.name}: column ${nullable ? 'nullable' : 'NOT NULL'}, field ${field.nullable ? 'nullable' : 'not nullable'}`];
  }));
}

describe('record fields ↔ columns', () => {
  it('every table of the store has a codec, and every record field a column of the same nullability (SQLite)', async () => {
    const tmp = tempDir();
    const db = openSqlite(join(tmp.dir, 'columns.sqlite'));
    try {
      await migrateToLatest(db);
      const columns = await sqliteColumns(db);
      // Every table holds a record, except the account ↔ workspace link (no record of its own).
      expect([...CODECS.map((c) => c.table), 'workspace_members'].sort()).toEqual(Object.keys(columns).sort());
      expect(mismatches(columns)).toEqual([]);
    } finally {
      await db.destroy();
      tmp.remove();
    }
  });

  const pgUrl = PG_URL;
  if (pgUrl) {
    it('every record field has a column of the same nullability (PostgreSQL)', async () => {
      const database = await freshPostgresDatabase(pgUrl);
      const db = openPostgres(database.url);
      try {
        await migrateToLatest(db);
        expect(mismatches(await postgresColumns(db))).toEqual([]);
      } finally {
        await db.destroy();
        await database.drop();
      }
    });
  } else {
    postgresUnavailable('record columns');
  }

  it('a field missing from the database is reported by table and field', () => {
    expect(mismatches({ sessions: { id: false } })).toContain('sessions.title: no column');
    expect(mismatches({ sessions: { id: true } })).toContain('sessions.id: column nullable, field not nullable');
  });

  it('a field added to a record schema reaches the column list and both mappings with no other edit', () => {
    // What a new nullable string column on Session amounts to in the store: the schema's field list.
    const fields = [...recordFields(sessionSchema), { name: 'note', kind: 'text' as const, nullable: true }];
    const codec = codecOf<Session & { note: string | null }>('sessions', fields);
    expect(codec.columns).toContain('note');
    const session: Session & { note: string | null } = {
      id: 'sess_1', workspace_id: 'ws', project_id: null, title: null, created_by_account_id: 'acc', created_at: 1,
      agent: { id: 'agent_1' }, environment_id: null, metadata: { a: 'b' }, updated_at: 2, archived_at: null, note: 'hello',
    };
    const row = codec.row(session);
    expect(row).toMatchObject({ note: 'hello', agent: '{"id":"agent_1"}', metadata: '{"a":"b"}' });
    expect(codec.decode(row)).toEqual(session);
    expect(codec.selectRaw(dialects.postgres, 's', 's')).toContain('s.agent::text AS s_agent');
    expect(codec.selectRaw(dialects.sqlite, 's', 's')).toContain('s.note AS s_note');
  });
});
