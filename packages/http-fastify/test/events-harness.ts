/**
 * Harness of the Project Events suites (platform.md "Project Events"): one seeded database —
 * a SQLite temp file, or a fresh PostgreSQL database when `INBOX_KIT_TEST_PG_URL` is set — and any
 * number of real servers on it (`startServer`), each with its own store, services and event bus
 * (in-process on SQLite; `createPostgresEventBus` on PostgreSQL, so two servers behave like two
 * processes). The Server-Sent Events client is the conformance kit's `openStream`.
 *
 * World (ws_demo): acc_owner, acc_deriver, acc_deriver2, acc_observer, acc_outsider (no
 * membership); ws_other: acc_stranger. Projects are made per test with `newProject`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  PlatformService, ProjectInboxService, createIdGenerator, createLocalEventBus, type BusMessage, type EventBus,
  type RequestContext, type ServiceDeps,
} from '@inbox-kit/core';
import { openStore, type OpenedStore, type PostgresEventBus } from '@inbox-kit/storage-kysely';
import { createPostgresEventBus } from '@inbox-kit/storage-kysely/postgres';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { type StreamTiming } from '../src/index.js';
import { createServer } from '../src/entry-server.js';
import { createPgDatabase, failingStore, type Engine, type FailureSwitch } from './harness.js';

export { PG_ADMIN_URL, engines, type Engine } from './harness.js';

/** Polls `check` until it holds; throws `timed out: <label>` after `timeoutMs` (a deadline, never a measurement). */
export async function waitUntil(check: () => boolean | Promise<boolean>, label: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${label}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** `[from, from + 1, …, to]`. */
export const range = (from: number, to: number): number[] => Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);

// — SSE client: the conformance kit's (one copy) —

import { openStream, type Frame, type OpenStreamOptions, type SseStream } from '@inbox-kit/core/testing';

export { openStream, type Frame, type OpenStreamOptions, type SseStream };

// — servers over one database —

export interface EventsServer {
  url: string;
  app: FastifyInstance;
  /** The bus the services publish to (PostgreSQL bus on PostgreSQL). */
  bus: EventBus;
  /** The PostgreSQL bus, when the engine is PostgreSQL. */
  pgBus: PostgresEventBus | undefined;
  /** Every message the services published on this server, in order. */
  published: BusMessage[];
  failure: FailureSwitch;
  /** JSON request with an API key; returns status and parsed body. */
  request(method: string, path: string, opts?: { key?: string; body?: unknown; headers?: Record<string, string> }): Promise<{ status: number; body: any; headers: Headers }>;
  /** Opens an event stream on this server. */
  stream(path: string, opts?: OpenStreamOptions): Promise<SseStream>;
  close(): Promise<void>;
}

export interface StartServerOptions {
  streamTiming?: StreamTiming;
  /** Use the in-process bus even on PostgreSQL. */
  localBus?: boolean;
  /** First reconnect delay of the PostgreSQL bus in ms (default 20). */
  reconnectMinMs?: number;
}

export interface EventsWorld {
  engine: Engine;
  keys: Record<'acc_owner' | 'acc_deriver' | 'acc_deriver2' | 'acc_observer' | 'acc_outsider' | 'acc_stranger', string>;
  /** PostgreSQL URL of the world's database (undefined on SQLite). */
  databaseUrl: string | undefined;
  startServer(options?: StartServerOptions): Promise<EventsServer>;
  /** A fresh project owned by acc_owner with both derivers and the observer, and sessions `<id>_a`, `<id>_b`. */
  newProject(): Promise<{ project_id: string; session_a: string; session_b: string }>;
  /** Runs raw SQL on the world's database. */
  raw<T = Record<string, unknown>>(text: string): Promise<T[]>;
  close(): Promise<void>;
}

/** Creates and seeds the world's database. Call `close()` in `afterAll`. */
export async function startEventsWorld(engine: Engine): Promise<EventsWorld> {
  const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-events-'));
  const pgDb = engine === 'postgres' ? await createPgDatabase('inbox_kit_ev') : undefined;
  const sqliteFile = join(dir, 'events.sqlite');
  const open = () => openStore(pgDb ? { databaseUrl: pgDb.url } : { sqliteFile });
  const seedStore = await open();
  const seedDeps: ServiceDeps = { store: seedStore.store, bus: createLocalEventBus(), clock: { now: () => Date.now() }, ids: createIdGenerator() };
  const platform = new PlatformService(seedDeps);
  await platform.createWorkspace({ id: 'ws_demo', name: 'Demo workspace' });
  await platform.createWorkspace({ id: 'ws_other', name: 'Another tenant' });
  const keys = {} as EventsWorld['keys'];
  for (const id of ['acc_owner', 'acc_deriver', 'acc_deriver2', 'acc_observer', 'acc_outsider'] as const) {
    await platform.createAccount({ id, name: id, workspace_ids: ['ws_demo'] });
    keys[id] = (await platform.issueApiKey({ workspace_id: 'ws_demo', account_id: id })).secret;
  }
  await platform.createAccount({ id: 'acc_stranger', name: 'Sam Stranger', workspace_ids: ['ws_other'] });
  keys.acc_stranger = (await platform.issueApiKey({ workspace_id: 'ws_other', account_id: 'acc_stranger' })).secret;

  const servers = new Set<EventsServer>();
  let projects = 0;

  const startServer = async (options: StartServerOptions = {}): Promise<EventsServer> => {
    const opened: OpenedStore = engine === 'sqlite' ? seedStore : await open();
    const failure: FailureSwitch = { method: null };
    const pgBus = pgDb && !options.localBus
      ? createPostgresEventBus({
        url: pgDb.url, db: opened.db, reconnectMinMs: options.reconnectMinMs ?? 20, reconnectMaxMs: Math.max(200, options.reconnectMinMs ?? 0), onError: () => undefined,
      })
      : undefined;
    await pgBus?.start();
    const inner: EventBus = pgBus ?? createLocalEventBus();
    const published: BusMessage[] = [];
    const bus: EventBus = {
      publish: (m) => {
        published.push(m);
        inner.publish(m);
      },
      subscribe: (topic, listener) => inner.subscribe(topic, listener),
      subscriberCount: () => inner.subscriberCount(),
    };
    const deps: ServiceDeps = { store: failingStore(opened.store, failure, async (call, method) => {
      await call();
      throw new Error(`injected failure after ${method}`); // after it ran: the write is rolled back
    }), bus, clock: { now: () => Date.now() }, ids: createIdGenerator() };
    const app = await createServer({
      services: { platform: new PlatformService(deps), projectInbox: new ProjectInboxService(deps) },
      ...(options.streamTiming ? { streamTiming: options.streamTiming } : {}),
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    if (!address || typeof address !== 'object') throw new Error('events harness: no address');
    const url = `http://127.0.0.1:${address.port}`;
    let closed = false;
    const server: EventsServer = {
      url, app, bus, pgBus, published, failure,
      async request(method, path, opts = {}) {
        const headers: Record<string, string> = { ...opts.headers };
        if (opts.key !== undefined) headers.authorization = `Bearer ${opts.key}`;
        if (opts.body !== undefined) headers['content-type'] = 'application/json';
        const res = await fetch(url + path, {
          method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body), signal: AbortSignal.timeout(20_000),
        });
        const text = await res.text();
        return { status: res.status, body: text && (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text, headers: res.headers };
      },
      stream: (path, opts) => openStream(url, path, opts),
      async close() {
        if (closed) return;
        closed = true;
        servers.delete(server);
        await app.close();
        await pgBus?.close();
        if (opened !== seedStore) await opened.close();
      },
    };
    servers.add(server);
    return server;
  };

  const seedCtx = async (account: keyof EventsWorld['keys']): Promise<RequestContext> => ({
    principal: await platform.authenticate(keys[account]), request_id: 'req_seed',
  });

  return {
    engine, keys, databaseUrl: pgDb?.url, startServer,
    async newProject() {
      const owner = await seedCtx('acc_owner');
      const project_id = `proj_ev${++projects}_${Math.random().toString(36).slice(2, 8)}`;
      await platform.createProject(owner, { id: project_id, name: project_id });
      await platform.addMember(owner, project_id, { account_id: 'acc_deriver', role: 'deriver' });
      await platform.addMember(owner, project_id, { account_id: 'acc_deriver2', role: 'deriver' });
      await platform.addMember(owner, project_id, { account_id: 'acc_observer', role: 'observer' });
      await platform.createSession(owner, { id: `${project_id}_a`, project_id, title: 'a' });
      await platform.createSession(owner, { id: `${project_id}_b`, project_id, title: 'b' });
      return { project_id, session_a: `${project_id}_a`, session_b: `${project_id}_b` };
    },
    raw: async <T>(text: string) => (await sql.raw<T>(text).execute(seedStore.db)).rows,
    async close() {
      for (const server of [...servers]) await server.close();
      await seedStore.close();
      await pgDb?.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Files an inbox item as `key`'s account; returns the item (throws unless 201). */
export async function createItem(server: EventsServer, key: string, project_id: string, body: Record<string, unknown> = {}): Promise<any> {
  const res = await server.request('POST', `/projects/${project_id}/inbox`, { key, body: { type: 'summary', title: 't', payload: { n: 1 }, ...body } });
  if (res.status !== 201) throw new Error(`create item: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.item;
}
