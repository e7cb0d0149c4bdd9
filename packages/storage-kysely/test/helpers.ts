// Test helpers: conformance subjects for SQLite (a temp file each) and PostgreSQL (a fresh
// database each, created through the admin URL in INBOX_KIT_TEST_PG_URL and dropped after), with
// raw readers that use their own driver connection — not the Kysely store under test.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { RawReader, StoreConformanceSubject } from '@inbox-kit/core/testing';
import { createKyselyStore, migrateToLatest } from '../src/index.js';
import { openPostgres } from '../src/entry-postgres.js';
import { openSqlite } from '../src/entry-sqlite.js';

/** The PostgreSQL URL tests may use (a database the user can CREATE DATABASE from), if any. */
export const PG_URL = process.env.INBOX_KIT_TEST_PG_URL;

/**
 * Without PG_URL, a PostgreSQL suite is not silently skipped: registers one test, named after
 * `suite`, that says so (and fails in CI).
 */
export function postgresUnavailable(suite: string): void {
  describe(suite, () => {
    it(`PostgreSQL is available for the ${suite} suite`, (ctx) => {
      const why = `INBOX_KIT_TEST_PG_URL is not set: the ${suite} suite did not run. `
        + 'Start a server with `node scripts/postgres.mjs` and export the URL it prints.';
      if (process.env.CI) expect.fail(why);
      ctx.skip(why); // counted as skipped, not passed
    });
  });
}

/** A fresh temp directory, removed by the returned function. */
export function tempDir(): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-sqlite-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

type Query = (text: string, params: unknown[]) => Promise<Array<Record<string, unknown>>>;

/** The raw reader, written once in SQL and run through `query`. */
function sqlRawReader(query: Query, placeholder: (n: number) => string): RawReader {
  const $ = placeholder;
  const tables = new Set(['project_inbox_items', 'project_events', 'operation_logs']);
  const one = async (text: string, params: unknown[]) => (await query(text, params))[0];
  return {
    async countRows(table, project_id) {
      if (!tables.has(table)) throw new Error(`unknown table ${table}`);
      const row = await one(`select count(*) as n from ${table} where project_id = ${$(1)}`, [project_id]);
      return Number(row?.n);
    },
    async eventSequences(project_id) {
      const rows = await query(`select sequence from project_events where project_id = ${$(1)} order by sequence`, [project_id]);
      return rows.map((r) => Number(r.sequence));
    },
    async sessionEventSeqs(session_id) {
      const rows = await query(`select seq from session_events where session_id = ${$(1)} order by seq`, [session_id]);
      return rows.map((r) => Number(r.seq));
    },
    async itemStatus(item_id) {
      return (await one(`select status from project_inbox_items where id = ${$(1)}`, [item_id]))?.status as string | undefined;
    },
    async itemPayloadText(item_id) {
      // `payload::text` on PostgreSQL whatever the column type; SQLite stores the text itself.
      const row = await one(`select cast(payload as text) as payload from project_inbox_items where id = ${$(1)}`, [item_id]);
      return row?.payload as string | undefined;
    },
    async memberRole(project_id, account_id) {
      return (await one(`select role from project_members where project_id = ${$(1)} and account_id = ${$(2)}`, [project_id, account_id]))?.role as string | undefined;
    },
    async runStatus(run_id) {
      return (await one(`select status from runs where id = ${$(1)}`, [run_id]))?.status as string | undefined;
    },
    async idempotencyRequestHashes(scope) {
      const rows = await query(
        `select request_hash from idempotency_records where workspace_id = ${$(1)} and account_id = ${$(2)} and key = ${$(3)}`,
        [scope.workspace_id, scope.account_id, scope.key],
      );
      return rows.map((r) => String(r.request_hash));
    },
    async attemptOwnerHosts(session_id) {
      const rows = await query(`select host_id from attempt_owners where session_id = ${$(1)}`, [session_id]);
      return rows.map((r) => String(r.host_id));
    },
  };
}

/** A raw reader on its own read-only better-sqlite3 connection to `file`. */
export function sqliteRawReader(file: string): { raw: RawReader; close(): void } {
  const conn = new SqliteDatabase(file, { readonly: true, fileMustExist: true });
  const query: Query = async (text, params) => conn.prepare(text).all(...params) as Array<Record<string, unknown>>;
  // SQLite's clock is the machine's: what SQLite itself reads for 'now'.
  const clockNow = async () => Math.floor(Number((conn.prepare("select (julianday('now') - 2440587.5) * 86400000.0 as t").get() as { t: number }).t));
  return { raw: { ...sqlRawReader(query, () => '?'), clockNow }, close: () => conn.close() };
}

/** A raw reader on its own pg client. */
export async function postgresRawReader(url: string): Promise<{ raw: RawReader; close(): Promise<void> }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const query: Query = async (text, params) => (await client.query(text, params)).rows as Array<Record<string, unknown>>;
  const clockNow = async () => Number((await client.query('select floor(extract(epoch from clock_timestamp()) * 1000)::text as t')).rows[0].t);
  return { raw: { ...sqlRawReader(query, (n) => `$${n}`), clockNow }, close: () => client.end() };
}

/** Conformance subject: a migrated SQLite store in a fresh temp file. */
export async function sqliteSubject(): Promise<StoreConformanceSubject & { file: string }> {
  const tmp = tempDir();
  const file = join(tmp.dir, 'store.sqlite');
  const db = openSqlite(file);
  await migrateToLatest(db);
  const store = createKyselyStore(db, { dialect: 'sqlite' });
  const reader = sqliteRawReader(file);
  return {
    store, raw: reader.raw, file,
    async close() {
      reader.close();
      await store.close();
      tmp.remove();
    },
  };
}

/** The URL of `database` on the server of `adminUrl`. */
export function databaseUrl(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/**
 * Creates a fresh, empty database on the server of `adminUrl`; `drop()` removes it.
 *
 * The database gets a linguistic default collation (ICU `en-US`, where `'_c' < '-d' < 'a' < 'B'`)
 * when the server has ICU, as production databases usually do — so the tests prove that `id`
 * ordering does not depend on the database's collation. Falls back to the server default.
 */
export async function freshPostgresDatabase(adminUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `inbox_kit_t_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    try {
      await admin.query(`create database "${name}" template template0 encoding 'UTF8' locale_provider icu icu_locale 'en-US' locale 'C.UTF-8'`);
    } catch {
      await admin.query(`create database "${name}"`);
    }
  } finally {
    await admin.end();
  }
  return {
    url: databaseUrl(adminUrl, name),
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      try {
        await c.query(`drop database if exists "${name}" with (force)`);
      } finally {
        await c.end();
      }
    },
  };
}

/**
 * Conformance subject: a migrated PostgreSQL store in a fresh database, on a pool of 10
 * connections (so the concurrency checks really run concurrently).
 */
export async function postgresSubject(adminUrl: string): Promise<StoreConformanceSubject & { url: string }> {
  const database = await freshPostgresDatabase(adminUrl);
  const db = openPostgres(database.url, { max: 10 });
  await migrateToLatest(db);
  const store = createKyselyStore(db, { dialect: 'postgres' });
  const reader = await postgresRawReader(database.url);
  return {
    store, raw: reader.raw, url: database.url,
    async close() {
      await reader.close();
      await store.close();
      await database.drop();
    },
  };
}
