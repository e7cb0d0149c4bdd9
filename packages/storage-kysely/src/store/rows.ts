/**
 * Records ↔ rows, derived from the record schemas of `@inbox-kit/core` (`recordFields`): the
 * column list, the row → record mapping and the record → values mapping of every table are read
 * from one schema, so a field added to a record needs no edit here (a migration adds its column;
 * `test/record-columns.test.ts` fails while a field has no column on either engine).
 *
 * Conversions: `number` fields through `Number()` (a PostgreSQL `bigint` may arrive as a string
 * from a foreign pool); `json` fields written as `JSON.stringify` text and parsed on the way out
 * (read back as text through the dialect); a nullable `json` field keeps null as SQL `NULL`.
 */
import {
  accountSchema, apiKeySchema, floorSchema, membershipSchema, operationLogSchema, pageSchema, projectEventSchema, projectInboxItemSchema,
  projectSchema, recordFields, runSchema, sessionEventSchema, sessionSchema, workspaceSchema,
  type Account, type ApiKey, type AttemptOwnership, type Floor, type IdempotencyRecord, type JsonValue, type Membership, type OperationLog, type Page,
  type Project, type ProjectEvent, type ProjectInboxItem, type RecordField, type RecordFieldKind, type Run, type Session, type SessionEvent,
  type Workspace,
} from '@inbox-kit/core';
import { sql, type AliasedRawBuilder, type RawBuilder } from 'kysely';
import type { Database } from '../schema.js';
import type { SqlDialect } from './dialect.js';

/** A driver number (PostgreSQL `bigint` may arrive as a string from a foreign pool) as a JS number. */
export const num = (value: unknown): number => (typeof value === 'number' ? value : Number(value));

export const toJson = (value: unknown): string => {
  const text = JSON.stringify(value);
  if (text === undefined) throw new TypeError('@inbox-kit/storage-kysely: value is not JSON-serialisable');
  return text;
};

export const fromJson = <T = JsonValue>(text: unknown): T => {
  if (typeof text !== 'string') throw new TypeError('@inbox-kit/storage-kysely: a JSON column was not read as text');
  return JSON.parse(text) as T;
};

/** A page size as the non-negative integer SQL wants. */
export const limitOf = (limit: number): number => Math.max(0, Math.floor(limit));

/** A stored value of `field` as the record holds it. */
function decodeValue(field: RecordField, value: unknown): unknown {
  if (field.kind === 'text') return value;
  if (field.nullable && (value === null || value === undefined)) return null;
  return field.kind === 'number' ? num(value) : fromJson(value);
}

/** A record's value of `field` as the column stores it. */
function encodeValue(field: RecordField, value: unknown): unknown {
  if (field.kind !== 'json' || (field.nullable && value === null)) return value;
  return toJson(value);
}

/** The mapping between one record and its table's row. */
export interface Codec<R> {
  readonly table: keyof Database;
  readonly fields: readonly RecordField[];
  /** The column names, in record order. */
  readonly columns: readonly string[];
  /** The select list for this table (JSON columns read back as their text); pass to `select`/`returning`. */
  select(dialect: SqlDialect): never;
  /** Raw select-list text for a joined query: `alias.column AS prefix_column`, JSON as text. */
  selectRaw(dialect: SqlDialect, alias: string, prefix: string): string;
  /** The record a row (or a `prefix_`-named slice of a joined row) holds. */
  decode(row: Record<string, unknown>, prefix?: string): R;
  /** The column values of `record`, in {@link columns} order. */
  encode(record: R): unknown[];
  /** The row of `record`: its column values by column name. */
  row(record: R): Record<string, unknown>;
  /** The record's fields of `values`, in record order (other keys dropped). */
  pick(values: { [K in keyof R]: R[K] }): R;
}

/** A codec over `fields` of `table`. */
export function codecOf<R>(table: keyof Database, fields: readonly RecordField[]): Codec<R> {
  const columns = fields.map((f) => f.name);
  const converted = fields.filter((f) => f.kind !== 'text');
  const selects = new Map<SqlDialect, Array<string | AliasedRawBuilder<string, string>>>();
  return {
    table,
    fields,
    columns,
    select(dialect) {
      let list = selects.get(dialect);
      if (list === undefined) {
        list = fields.map((f) => (f.kind === 'json' ? dialect.jsonText(f.name).as(f.name) : f.name));
        selects.set(dialect, list);
      }
      return list as never;
    },
    selectRaw(dialect, alias, prefix) {
      return fields.map((f) => {
        const ref = `${alias}.${f.name}`;
        return `${f.kind === 'json' ? dialect.jsonTextSql(ref) : ref} AS ${prefix}_${f.name}`;
      }).join(', ');
    },
    decode(row, prefix) {
      if (prefix === undefined) {
        // A row of `select`/`returning` with this codec's list holds exactly the columns, in record
        // order: copy it and convert the few that need it (4× faster than building field by field).
        const record: Record<string, unknown> = { ...row };
        for (const f of converted) record[f.name] = decodeValue(f, row[f.name]);
        return record as R;
      }
      const record: Record<string, unknown> = {};
      for (const f of fields) record[f.name] = decodeValue(f, row[`${prefix}_${f.name}`]);
      return record as R;
    },
    encode(record) {
      const values = record as Record<string, unknown>;
      return fields.map((f) => encodeValue(f, values[f.name]));
    },
    pick(values) {
      const source = values as Record<string, unknown>;
      const record: Record<string, unknown> = {};
      for (const column of columns) record[column] = source[column];
      return record as R;
    },
    row(record) {
      const values = record as Record<string, unknown>;
      return Object.fromEntries(fields.map((f) => [f.name, encodeValue(f, values[f.name])]));
    },
  };
}

/** Fields of a port type that has no record schema, checked to name every key of `T` once. */
function fieldsOf<T>(kinds: { [K in keyof T & string]-?: RecordFieldKind }): RecordField[] {
  return Object.entries(kinds).map(([name, kind]) => ({ name, kind: kind as RecordFieldKind, nullable: false }));
}

// — the tables of the records (counters such as `event_sequence` are columns outside the record) —

export const WORKSPACE = codecOf<Workspace>('workspaces', recordFields(workspaceSchema));
export const ACCOUNT = codecOf<Account>('accounts', recordFields(accountSchema));
export const API_KEY = codecOf<ApiKey>('api_keys', recordFields(apiKeySchema));
export const PROJECT = codecOf<Project>('projects', recordFields(projectSchema));
export const MEMBER = codecOf<Membership>('project_members', recordFields(membershipSchema));
export const SESSION = codecOf<Session>('sessions', recordFields(sessionSchema));
export const FLOOR = codecOf<Floor>('floors', recordFields(floorSchema));
export const PAGE = codecOf<Page>('pages', recordFields(pageSchema));
export const ITEM = codecOf<ProjectInboxItem>('project_inbox_items', recordFields(projectInboxItemSchema));
export const EVENT = codecOf<ProjectEvent>('project_events', recordFields(projectEventSchema));
export const LOG = codecOf<OperationLog>('operation_logs', recordFields(operationLogSchema));
export const RUN = codecOf<Run>('runs', recordFields(runSchema));
export const SESSION_EVENT = codecOf<SessionEvent>('session_events', recordFields(sessionEventSchema));
export const IDEMPOTENCY = codecOf<IdempotencyRecord>('idempotency_records', fieldsOf<IdempotencyRecord>({
  workspace_id: 'text', account_id: 'text', key: 'text', request_hash: 'text', resource_type: 'text', resource_id: 'text', created_at: 'number',
}));
export const OWNER = codecOf<AttemptOwnership>('attempt_owners', fieldsOf<AttemptOwnership>({
  session_id: 'text', run_id: 'text', host_id: 'text', host_url: 'text', lease_expires_at: 'number',
}));

/** Every record table's codec (the column check of `test/record-columns.test.ts` walks them). */
export const CODECS: ReadonlyArray<Pick<Codec<unknown>, 'table' | 'fields' | 'columns'>> = [
  WORKSPACE, ACCOUNT, API_KEY, PROJECT, MEMBER, SESSION, FLOOR, PAGE, ITEM, EVENT, LOG, RUN, SESSION_EVENT, IDEMPOTENCY, OWNER,
];

/** `NULL AS prefix_column` for every column of `codec`: the other branches' columns in a `UNION ALL` of point reads. */
export function nullsRaw(codec: Pick<Codec<unknown>, 'columns'>, prefix: string): string {
  return codec.columns.map((c) => `NULL AS ${prefix}_${c}`).join(', ');
}

/**
 * The membership of `account_id` in the project aliased `p`, as one scalar read by primary key per
 * column, named `m_<column>` (the access reads without joins, `SqlDialect.accessReadsWithoutJoins`).
 */
export function membershipScalars(account_id: unknown): RawBuilder<unknown> {
  return sql.join(MEMBER.columns.map((c) =>
    sql`(SELECT m.${sql.raw(c)} FROM project_members m WHERE m.project_id = p.id AND m.account_id = ${account_id}) AS ${sql.raw(`m_${c}`)}`));
}

/** The `select` list of a table without JSON columns, each column named with its table (for joins). */
export function qualified<R>(codec: Codec<R>): never {
  if (codec.fields.some((f) => f.kind === 'json')) throw new TypeError(`@inbox-kit/storage-kysely: ${codec.table} has JSON columns`);
  return codec.columns.map((c) => `${codec.table}.${c}`) as never;
}
