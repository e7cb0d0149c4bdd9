/**
 * Integration-test harness: a real inbox-kit server (`createServer`) listening on a real port,
 * over a real database opened by `@inbox-kit/storage-kysely` — a SQLite temp file, and
 * PostgreSQL when `INBOX_KIT_TEST_PG_URL` names an admin URL (a fresh database per harness,
 * dropped on close). Thin glue over the one seeded world of `@inbox-kit/core/testing`
 * (`seedTestWorld`, `recordingBus`, `testClock`) and the raw row reader of
 * `@inbox-kit/storage-kysely/testing`; what is Fastify's own here is the server and raw SQL reads.
 *
 * World (ws_demo): acc_owner, acc_deriver, acc_deriver2, acc_observer, acc_outsider.
 *   proj_main (owner acc_owner; acc_deriver + acc_deriver2 derivers, acc_observer observer):
 *   sess_001 (floor A with pages A1, A2; floor B with page B1), sess_002 (floor C, page C1).
 *   proj_side (owner acc_owner): sess_side (floor S, page S1). sess_loose (no project).
 * World (ws_other): acc_stranger; proj_foreign with sess_foreign (floor F, page F1).
 * Keys: one per account, `service` (ws_demo, may act as any ws_demo account) and `revoked`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  LiveInboxHost, PlatformService, type LiveInboxLimits, ProjectInboxService, SessionRuntimeService, createIdGenerator,
  type Floor, type Model, type Page, type ProjectEvent, type ServiceDeps, type Store, type StoreTx,
} from '@inbox-kit/core';
import { failureHides, failureHits, recordingBus, seedTestWorld, testClock, type TestClock } from '@inbox-kit/core/testing';
import { openStore, type OpenedStore } from '@inbox-kit/storage-kysely';
import { kyselyRowReader } from '@inbox-kit/storage-kysely/testing';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import pg from 'pg';
import { expect } from 'vitest';
import { createServer, type CreateServerOptions } from '../src/entry-server.js';

export type Engine = 'sqlite' | 'postgres';

/** Admin URL of a PostgreSQL server for tests (a database per harness is created through it). */
export const PG_ADMIN_URL = process.env.INBOX_KIT_TEST_PG_URL || undefined;

/** The engines every suite runs on. */
export const engines: Engine[] = PG_ADMIN_URL ? ['sqlite', 'postgres'] : ['sqlite'];

/** A clock tests may freeze: `Date.now()` unless frozen (the world's, `@inbox-kit/core/testing`). */
export type { TestClock } from '@inbox-kit/core/testing';

/** Makes one store method misbehave inside transactions (see {@link failingStore}); `null`: none. */
export interface FailureSwitch {
  method: keyof StoreTx | null;
}

export interface HarnessOptions {
  bodyLimit?: number;
  /**
   * Registers the Session Runtime (the `/v1/sessions/:id/events` and Live Inbox routes) with this
   * model; without it those routes are absent.
   */
  model?: Model;
  /** Bounds of the Live Inbox host (with `model`); default: the host's defaults. */
  liveInboxLimits?: Partial<LiveInboxLimits>;
  /** Wraps the store every service uses (after the seed), e.g. to make reads fail. */
  wrapStore?: (store: Store) => Store;
  /** Load shedding, rate limits and body deadline of `createServer` (defaults: `createServer`'s). */
  protection?: Pick<CreateServerOptions, 'underPressure' | 'rateLimit' | 'bodyTimeoutMs' | 'credentialThrottle' | 'maxBodiesPerKey' | 'bodyBytesPerSecondPerKey' | 'connections'>;
  /** `createServer`'s logger (default: off). */
  logger?: CreateServerOptions['logger'];
  /** `createServer`'s `responseValidation` (default: on, as in every test). */
  responseValidation?: boolean;
}

export interface Response<T = any> {
  status: number;
  headers: Headers;
  /** Parsed JSON when the body is JSON, else the text. */
  body: T;
  text: string;
}

export interface RequestOptions {
  /** A key name of `keys` (e.g. `acc_owner`) or a literal secret; omit for no credentials. */
  as?: string;
  /** `x-account-id` (service key impersonation). */
  accountId?: string;
  /** JSON-encoded unless `raw` is given. */
  body?: unknown;
  /** Sent verbatim (string or bytes). */
  raw?: string | Uint8Array;
  headers?: Record<string, string>;
  /** `bearer` (default) or `x-api-key`. */
  via?: 'bearer' | 'x-api-key';
}

export interface Harness {
  engine: Engine;
  url: string;
  app: FastifyInstance;
  /** Secrets by name: acc_owner, acc_deriver, acc_deriver2, acc_observer, acc_outsider, acc_stranger, service, revoked. */
  keys: Record<string, string>;
  store: Store;
  opened: OpenedStore;
  clock: TestClock;
  failure: FailureSwitch;
  /** Every Project Event published to the bus, in order. */
  published: ProjectEvent[];
  /** The Session Runtime, when `model` was given. */
  runtime?: SessionRuntimeService;
  floors: Record<'A' | 'B' | 'C' | 'S' | 'L' | 'F', Floor>;
  pages: Record<'A1' | 'A2' | 'B1' | 'C1' | 'S1' | 'L1' | 'F1', Page>;
  /** Runs raw SQL on the database and returns the rows. */
  raw<T = Record<string, unknown>>(text: string): Promise<T[]>;
  /** `SELECT COUNT(*)` of a table, optionally with a WHERE clause. */
  count(table: 'project_inbox_items' | 'operation_logs' | 'project_events' | 'sessions' | 'floors' | 'pages', where?: string): Promise<number>;
  /** Items, inbox operation-log rows and inbox events currently stored. */
  inboxRows(): Promise<{ items: number; logs: number; events: number }>;
  request<T = any>(method: string, path: string, opts?: RequestOptions): Promise<Response<T>>;
  /**
   * Creates a fresh project owned by acc_owner over HTTP, with acc_deriver and acc_deriver2 as
   * derivers, acc_observer as observer and one session; returns their ids.
   */
  newProject(): Promise<{ project_id: string; session_id: string }>;
  close(): Promise<void>;
}

/**
 * Row counts of every application table of `db` (migration bookkeeping excluded), in one query:
 * the raw reader the HTTP conformance kit's hostile-input suite checks "nothing written" with.
 */
export function sqlRowCounts(db: OpenedStore['db']): () => Promise<Record<string, number>> {
  const reader = kyselyRowReader(db);
  return () => reader.rowCounts();
}

/** Every row of every application table of `db`, each as JSON, sorted per table: the kit's `dumpRows` reader. */
export function sqlDumpRows(db: OpenedStore['db']): () => Promise<Record<string, string[]>> {
  const reader = kyselyRowReader(db);
  return () => reader.dumpRows();
}

/** Quotes a string literal for raw SQL in tests (ids we made ourselves). */
export const lit = (s: string) => `'${s.replaceAll("'", "''")}'`;

/** A fresh PostgreSQL database on the test server (`INBOX_KIT_TEST_PG_URL`), dropped by `drop()`. */
export async function createPgDatabase(prefix = 'inbox_kit_t'): Promise<{ url: string; drop: () => Promise<void> }> {
  const admin = new URL(PG_ADMIN_URL!);
  const name = `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const client = new pg.Client({ connectionString: PG_ADMIN_URL });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(admin.toString());
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: PG_ADMIN_URL });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/**
 * A store whose transactions run `failure.method` through `misbehave` (given the real call and the
 * method's name), e.g. to call it twice (a real duplicate-key error) or to throw after it ran.
 */
export function failingStore(
  inner: Store, failure: FailureSwitch, misbehave: (call: () => Promise<unknown>, method: string) => Promise<unknown>,
): Store {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      // A write in one call that a failure armed on one of its parts cannot make fail half-way is
      // hidden (the kit's rule, as the HTTP world applies it), so the service makes the calls it hits.
      if (failureHides(prop, failure.method)) return undefined;
      if (prop !== 'transaction') return Reflect.get(target, prop, receiver);
      return <T>(fn: (tx: StoreTx) => Promise<T>) =>
        target.transaction((tx) =>
          fn(new Proxy(tx, {
            get(t, p, r) {
              if (failureHides(p, failure.method)) return undefined;
              const real = Reflect.get(t, p, r) as unknown;
              const hit = failureHits(p, failure.method);
              if (!hit || typeof real !== 'function') return real;
              return (...args: unknown[]) => misbehave(() => (real as (...a: unknown[]) => Promise<unknown>).apply(t, args), String(p));
            },
          })));
    },
  });
}

/** Starts a seeded server on `engine`. Call `close()` in `afterAll`. */
export async function startHarness(engine: Engine, options: HarnessOptions = {}): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-http-'));
  const pgDb = engine === 'postgres' ? await createPgDatabase() : undefined;
  const opened = await openStore(pgDb ? { databaseUrl: pgDb.url } : { sqliteFile: join(dir, 'test.sqlite') });
  if (opened.dialect !== engine) throw new Error(`harness: asked for ${engine}, got ${opened.dialect}`);

  const clock: TestClock = testClock();
  const failure: FailureSwitch = { method: null };
  const store = failingStore(opened.store, failure, async (call) => {
    await call();
    return call(); // the same row again: the database refuses it (primary key)
  });
  const { bus, published } = recordingBus();
  const deps: ServiceDeps = { store, bus, clock, ids: createIdGenerator() };
  const platform = new PlatformService(deps);
  const projectInbox = new ProjectInboxService(deps);

  // — the one seeded world of @inbox-kit/core/testing (`seedTestWorld`) —
  const { keys, floors, pages } = await seedTestWorld(platform);
  published.length = 0;

  const served: ServiceDeps = options.wrapStore ? { ...deps, store: options.wrapStore(store) } : deps;
  const runtime = options.model ? new SessionRuntimeService({ ...served, host: new LiveInboxHost({ limits: options.liveInboxLimits }), model: options.model }) : undefined;
  const services = options.wrapStore
    ? { platform: new PlatformService(served), projectInbox: new ProjectInboxService(served) }
    : { platform, projectInbox };
  // The tests send many bad keys from one address on purpose: the throttle is off unless a test sets it.
  const app = await createServer({ services: { ...services, ...(runtime ? { runtime } : {}) }, ...(options.bodyLimit ? { bodyLimit: options.bodyLimit } : {}), credentialThrottle: false, bodyBytesPerSecondPerKey: 0, ...options.protection,
    ...(options.responseValidation === undefined ? {} : { responseValidation: options.responseValidation }),
    ...(options.logger === undefined ? {} : { logger: options.logger }) });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (!address || typeof address !== 'object') throw new Error('harness: no address');
  const url = `http://127.0.0.1:${address.port}`;

  const raw = async <T>(text: string): Promise<T[]> => (await sql.raw<T>(text).execute(opened.db)).rows;
  const count: Harness['count'] = async (table, where) => {
    const rows = await raw<{ n: number | string }>(`SELECT COUNT(*) AS n FROM ${table}${where ? ` WHERE ${where}` : ''}`);
    return Number(rows[0]!.n);
  };

  const request = async <T>(method: string, path: string, opts: RequestOptions = {}): Promise<Response<T>> => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.as !== undefined) {
      const secret = keys[opts.as] ?? opts.as;
      if (opts.via === 'x-api-key') headers['x-api-key'] = secret;
      else headers.authorization = `Bearer ${secret}`;
    }
    if (opts.accountId !== undefined) headers['x-account-id'] = opts.accountId;
    let body: string | Uint8Array | undefined = opts.raw;
    if (body === undefined && opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(url + path, { method, headers, body: body as BodyInit | undefined, signal: AbortSignal.timeout(20_000) });
    const text = await res.text();
    let parsed: unknown = text;
    if ((res.headers.get('content-type') ?? '').includes('json')) parsed = JSON.parse(text);
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  };

  let projects = 0;
  const newProject = async () => {
    const must = async (res: Promise<Response>, status: number) => {
      const r = await res;
      if (r.status !== status) throw new Error(`harness: expected ${status}, got ${r.status}: ${r.text}`);
      return r.body;
    };
    const { project: { id: project_id } } = await must(request('POST', '/projects', { as: 'acc_owner', body: { name: `Test ${++projects}` } }), 201);
    for (const [account_id, role] of [['acc_deriver', 'deriver'], ['acc_deriver2', 'deriver'], ['acc_observer', 'observer']]) {
      await must(request('POST', `/projects/${project_id}/members`, { as: 'acc_owner', body: { account_id, role } }), 201);
    }
    const { session: { id: session_id } } = await must(request('POST', '/sessions', { as: 'acc_owner', body: { project_id, title: 'test session' } }), 201);
    return { project_id: project_id as string, session_id: session_id as string };
  };

  let closed = false;
  return {
    engine, url, app, keys, store, opened, clock, failure, published, ...(runtime ? { runtime } : {}),
    floors, pages,
    raw,
    count,
    inboxRows: async () => ({
      items: await count('project_inbox_items'),
      logs: await count('operation_logs', `action LIKE 'project_inbox_item.%'`),
      events: await count('project_events', `type LIKE 'project_inbox.%'`),
    }),
    request,
    newProject,
    close: async () => {
      if (closed) return;
      closed = true;
      await runtime?.close();
      await app.close();
      await opened.close();
      await pgDb?.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The `error.type` platform.md gives each status. */
export function errorKindOf(status: number): string {
  return ({
    400: 'invalid_request_error', 401: 'authentication_error', 403: 'permission_error', 404: 'not_found_error', 408: 'invalid_request_error',
    409: 'invalid_request_error', 410: 'invalid_request_error', 413: 'request_too_large', 415: 'invalid_request_error',
    431: 'invalid_request_error', 429: 'rate_limit_error', 500: 'api_error', 503: 'overloaded_error',
  } as Record<number, string>)[status] ?? 'unknown';
}

/** The error envelope of a response body. */
export interface Envelope {
  type: 'error';
  error: { type: string; code: string; message: string; details: { path: string; message: string; code?: string }[]; request_id: string };
}

/**
 * Checks a response is exactly the error envelope: `{ type: 'error', error: { type, code, message,
 * details, request_id } }` with `error.type` for the status and `x-request-id` and `request-id` equal to
 * `error.request_id`. `code` may be omitted to accept any code. Returns the envelope.
 */
export function expectError(res: Response, status: number, code?: string): Envelope {
  expect(res.status, res.text.slice(0, 500)).toBe(status);
  expect(res.headers.get('content-type') ?? '').toMatch(/^application\/json/);
  const body = res.body as Envelope;
  expect(Object.keys(body).sort()).toEqual(['error', 'type']);
  expect(body.type).toBe('error');
  expect(Object.keys(body.error).sort()).toEqual(['code', 'details', 'message', 'request_id', 'type']);
  expect(body.error.type).toBe(errorKindOf(status));
  if (code !== undefined) expect(body.error.code).toBe(code);
  expect(typeof body.error.code).toBe('string');
  expect(typeof body.error.message).toBe('string');
  expect(Array.isArray(body.error.details)).toBe(true);
  expect(body.error.request_id).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
  expect(res.headers.get('x-request-id')).toBe(body.error.request_id);
  expect(res.headers.get('request-id')).toBe(body.error.request_id);
  return body;
}

/** A JSON column read with raw SQL: text on SQLite, already parsed by node-postgres on PostgreSQL. */
export const fromJson = (value: unknown): any => (typeof value === 'string' ? JSON.parse(value) : value);
