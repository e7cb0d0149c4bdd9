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
  accountSchema, agentSchema, apiKeySchema, floorSchema, membershipSchema, operationLogSchema, pageSchema, projectEventSchema, projectInboxItemSchema,
  projectSchema, recordFields, runSchema, sessionEventSchema, sessionSchema, workspaceSchema,
  type Account, type Agent, type ApiKey, type AttemptOwnership, type Floor, type IdempotencyRecord, type JsonValue, type Membership, type OperationLog, type Page,
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

/**
 * A string `JSON.stringify` writes as its characters between two quotes: no `"`, backslash, control
 * character (U+0000–U+001F) or surrogate (a lone one is escaped; a pair is left to `JSON.stringify`).
 */
const PLAIN_STRING = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;

/** `JSON.stringify(value)` of a text field's value: a plain string quoted as it is (one `JSON.stringify` call per field costs more than the test). */
const textJson = (value: unknown): string => (typeof value === 'string' && PLAIN_STRING.test(value) ? `"${value}"` : JSON.stringify(value));

/** `JSON.stringify(num(value))`: a finite number as its shortest text, anything else `null`. */
const numberJson = (value: unknown): string => {
  const n = num(value);
  return Number.isFinite(n) ? String(n) : 'null';
};

/** A JSON column's stored text, checked to be text (the dialect reads JSON columns as text), not parsed. */
const jsonText = (text: unknown): string => {
  if (typeof text !== 'string') throw new TypeError('@inbox-kit/storage-kysely: a JSON column was not read as text');
  return text;
};

export const fromJson = <T = JsonValue>(text: unknown): T => JSON.parse(jsonText(text)) as T;

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
  /**
   * The JSON text of the record a `select` row holds (`JSON.parse` of it deep-equals
   * {@link decode} of the row), built from the row: text fields as `JSON.stringify` writes them, numbers
   * as numbers, JSON columns as the text stored (what `toJson` wrote), so no JSON column is parsed
   * only to be stringified again. Reads the row, never changes it.
   * @throws TypeError when a non-null JSON column was not read as text.
   */
  json(row: Record<string, unknown>): string;
  /** The record whose i-th field is the row's column `names[i]` (a branch of {@link pointReads}). */
  decodeAt(row: Record<string, unknown>, names: readonly string[]): R;
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
  // `prefix_column` names per prefix, built once (not a template string per field per row).
  const prefixed = new Map<string, readonly string[]>();
  const namesWith = (prefix: string): readonly string[] => {
    let names = prefixed.get(prefix);
    if (names === undefined) {
      names = columns.map((c) => `${prefix}_${c}`);
      prefixed.set(prefix, names);
    }
    return names;
  };
  /** The record whose i-th field is `row[names[i]]`. */
  const decodeAt = (row: Record<string, unknown>, names: readonly string[]): R => {
    const record: Record<string, unknown> = {};
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i] as RecordField;
      record[f.name] = decodeValue(f, row[names[i] as string]);
    }
    return record as R;
  };
  // `{"name":` / `,"name":` of each field, in record order.
  const keys = fields.map((f, i) => `${i === 0 ? '{' : ','}${JSON.stringify(f.name)}:`);
  return {
    table,
    fields,
    columns,
    json(row) {
      let text = '';
      for (let i = 0; i < fields.length; i++) {
        const f = fields[i] as RecordField;
        const value = row[f.name];
        text += keys[i] as string;
        if (value === null || value === undefined) text += 'null';
        else if (f.kind === 'json') text += jsonText(value);
        else text += f.kind === 'number' ? numberJson(value) : textJson(value);
      }
      return fields.length === 0 ? '{}' : `${text}}`;
    },
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
        // order, and is the driver's fresh object for this read: convert the few columns that need
        // it in place (no copy; 4× faster than building field by field).
        for (const f of converted) row[f.name] = decodeValue(f, row[f.name]);
        return row as R;
      }
      return decodeAt(row, namesWith(prefix));
    },
    decodeAt,
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
export const AGENT = codecOf<Agent>('agents', recordFields(agentSchema));
export const OWNER = codecOf<AttemptOwnership>('attempt_owners', fieldsOf<AttemptOwnership>({
  session_id: 'text', run_id: 'text', host_id: 'text', host_url: 'text', lease_expires_at: 'number',
}));

/** Every record table's codec (the column check of `test/record-columns.test.ts` walks them). */
export const CODECS: ReadonlyArray<Pick<Codec<unknown>, 'table' | 'fields' | 'columns'>> = [
  WORKSPACE, ACCOUNT, API_KEY, PROJECT, MEMBER, SESSION, FLOOR, PAGE, ITEM, EVENT, LOG, RUN, SESSION_EVENT, IDEMPOTENCY, OWNER, AGENT,
];

/** The generic column names of a {@link pointReads} row: `c1 … cN`. */
export const POINT_COLUMNS: readonly string[] = Array.from({ length: 64 }, (_, i) => `c${i + 1}`);

/** One branch of {@link pointReads}: a row tagged `tag`, its select expressions, and the rest of its `SELECT` (`FROM … WHERE …`). */
export interface PointRead {
  tag: string;
  exprs: ReadonlyArray<string | RawBuilder<unknown>>;
  from: RawBuilder<unknown>;
}

/**
 * One statement of point reads by key (the access reads on SQLite,
 * `SqlDialect.accessReadsWithoutJoins`): a `UNION ALL` of branches that each read at most one row
 * of their own columns, as `k` (the branch's tag) and `c1 … cN` (its expressions in order), the
 * shorter branches padded with `NULL`. Rows stay as narrow as the widest branch.
 */
export function pointReads(branches: readonly PointRead[]): RawBuilder<unknown> {
  const width = Math.max(...branches.map((b) => b.exprs.length));
  if (width > POINT_COLUMNS.length) throw new RangeError(`@inbox-kit/storage-kysely: a point read of ${width} columns`);
  return sql.join(branches.map(({ tag, exprs, from }) => {
    const list = [sql`${sql.lit(tag)} AS k`];
    for (let i = 0; i < width; i++) {
      const expr = exprs[i] ?? 'NULL';
      list.push(sql`${typeof expr === 'string' ? sql.raw(expr) : expr} AS ${sql.raw(POINT_COLUMNS[i] as string)}`);
    }
    return sql`SELECT ${sql.join(list)} ${from}`;
  }), sql` UNION ALL `);
}

/** The select expressions of `codec`'s columns on `alias` (JSON as text), for a {@link pointReads} branch. */
export function columnsOf(codec: Pick<Codec<unknown>, 'fields'>, dialect: SqlDialect, alias: string): string[] {
  return codec.fields.map((f) => (f.kind === 'json' ? dialect.jsonTextSql(`${alias}.${f.name}`) : `${alias}.${f.name}`));
}

/**
 * The membership of `account_id` in the project aliased `p`, as {@link MEMBER}'s columns: the key
 * from `p.id` and the argument, the others one scalar read by primary key each (null when the
 * account is no member: test the `role` column).
 */
function membershipColumns(account_id: unknown): RawBuilder<unknown>[] {
  return MEMBER.columns.map((c) => {
    if (c === 'project_id') return sql`p.id`;
    if (c === 'account_id') return sql`${account_id}`;
    return sql`(SELECT m.${sql.raw(c)} FROM project_members m WHERE m.project_id = p.id AND m.account_id = ${account_id})`;
  });
}

/** The `c…` names of `count` columns starting after the first `offset` ones of a {@link pointReads} row. */
const pointColumns = (offset: number, count: number): readonly string[] => POINT_COLUMNS.slice(offset, offset + count);

/** Where the project's columns are in a {@link projectAccessRead} row. */
const PROJECT_AT = pointColumns(0, PROJECT.columns.length);
/** Where the membership's columns are there (after the project's). */
const MEMBER_AFTER_PROJECT_AT = pointColumns(PROJECT.columns.length, MEMBER.columns.length);
/** The membership's `role` column there: null when the account is no member. */
const MEMBER_ROLE_AT = MEMBER_AFTER_PROJECT_AT[MEMBER.columns.indexOf('role')] as string;

/**
 * The {@link pointReads} branch tagged `p` of the access reads: the project aliased `p` selected by
 * `from`, with the membership of `account_id` (a slot) in it. Decode its row with {@link decodeProjectAccess}.
 */
export function projectAccessRead(dialect: SqlDialect, account_id: unknown, from: RawBuilder<unknown>): PointRead {
  return { tag: 'p', exprs: [...columnsOf(PROJECT, dialect, 'p'), ...membershipColumns(account_id)], from };
}

/** The project and the caller's membership (undefined when no member) of a {@link projectAccessRead} row. */
export function decodeProjectAccess(row: Record<string, unknown>): { project: Project; membership: Membership | undefined } {
  return {
    project: PROJECT.decodeAt(row, PROJECT_AT),
    membership: row[MEMBER_ROLE_AT] == null ? undefined : MEMBER.decodeAt(row, MEMBER_AFTER_PROJECT_AT),
  };
}

/**
 * PostgreSQL: `codec`'s record on `alias` as one `json` value — `json_build_object` of its columns
 * by name in record order (`bigint` as JSON numbers, `json` columns embedded as they are stored,
 * SQL `NULL` as `null`): `JSON.parse` of its text is the record, with no decoding. With `nullWhen`
 * (a column of `alias`, e.g. the key of a `LEFT JOIN`ed row), `NULL` when that column is null.
 * A joined access read selects its records this way, in one `json_build_array(...)::text` column
 * (see {@link jsonRecords}): one field and one parse a row instead of a field per column, each
 * described by the server, parsed by the driver and decoded here (about a third of the read's
 * client CPU for a project, membership and item).
 */
export function jsonRecordSql(codec: Pick<Codec<unknown>, 'columns'>, alias: string, nullWhen?: string): string {
  const record = `json_build_object(${codec.columns.map((c) => `'${c}', ${alias}.${c}`).join(', ')})`;
  return nullWhen === undefined ? record : `CASE WHEN ${alias}.${nullWhen} IS NULL THEN NULL ELSE ${record} END`;
}

/** The records of a `json_build_array(…)::text` column of {@link jsonRecordSql} values, in its order (`null` where absent). */
export function jsonRecords<T extends readonly unknown[]>(text: unknown): { [K in keyof T]: T[K] | null } {
  return fromJson<{ [K in keyof T]: T[K] | null }>(text);
}

/** The `select` list of a table without JSON columns, each column named with its table (for joins). */
export function qualified<R>(codec: Codec<R>): never {
  if (codec.fields.some((f) => f.kind === 'json')) throw new TypeError(`@inbox-kit/storage-kysely: ${codec.table} has JSON columns`);
  return codec.columns.map((c) => `${codec.table}.${c}`) as never;
}
