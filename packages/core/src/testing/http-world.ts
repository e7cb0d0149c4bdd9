/**
 * The seeded world of the HTTP conformance kit's suites (`http-suites.ts`): services over a fresh
 * store (the in-memory one, or the adapter author's `openStore()`), a bus that records what was
 * published, the adapter started on them with `start(services, settings)`, and a `fetch` client.
 * Reads that check "nothing was written" go through the `Store` port, never through the adapter
 * under test. Needs vitest (an optional peer of `@inbox-kit/core`): `expectError` uses `expect`.
 *
 * The world is the one of `world.ts` (`seedTestWorld`): see there for who and what it holds.
 */
import { expect } from 'vitest';
import { LiveInboxHost } from '../live-inbox/registry.js';
import type { LiveInboxLimits } from '../live-inbox/queue.js';
import type { Model } from '../live-inbox/agent-loop.js';
import { createIdGenerator } from '../ports/clock.js';
import type { Store, StoreTx } from '../ports/store.js';
import type { Floor, Page, ProjectEvent } from '../records.js';
import { PlatformService } from '../platform/service.js';
import { ProjectInboxService } from '../project-inbox/service.js';
import { SessionRuntimeService } from '../sessions/service.js';
import { ManagedSessionsService } from '../sessions/managed-sessions.js';
import type { CallerBudgetOptions } from '../caller-budgets.js';
import { errorKind, SHOULD_RETRY_HEADER, shouldRetry } from '../http/errors.js';
import { KIT_ADAPTER_SETTINGS, serverFetch, type HttpAdapterSettings, type HttpConformanceOptions, type HttpConformanceServer } from './http-conformance-checks.js';
import { createMemoryStore } from './memory-store.js';
import { failureHides, failureHits } from './failure-injection.js';
import { recordingBus, seedTestWorld, testClock } from './world.js';

export { heldModel, type HeldModel } from './world.js';

/** A response as the suites see it: status, headers, parsed JSON (or the text), the text. */
export interface WorldResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** Options of {@link HttpWorld.request}. */
export interface WorldRequestOptions {
  /** A key name of `keys` (e.g. `acc_owner`) or a literal secret; omit for no credentials. */
  as?: string;
  /** `x-account-id` (service key impersonation). */
  accountId?: string;
  /** JSON-encoded unless `raw` is given. */
  body?: unknown;
  /** Sent verbatim. */
  raw?: string | Uint8Array;
  headers?: Record<string, string>;
  /** `bearer` (default) or `x-api-key`. */
  via?: 'bearer' | 'x-api-key';
}

/** A running world. */
export interface HttpWorld {
  /** The adapter's base URL (in-process: only the base requests are built on; no socket listens there). */
  url: string;
  /** `fetch` to the adapter: in-process when it was started as a handler, else over its socket. */
  fetch: (url: string, init?: RequestInit) => Promise<Response>;
  keys: Record<string, string>;
  /** The id of each key of `keys` (and `probe`: a key of `acc_probe` that nothing authenticates with). */
  keyIds: Record<string, string>;
  /** The store under the services, unwrapped (for reads that do not go through the adapter). */
  store: Store;
  /** Every Project Event published to the bus, in order (seed excluded). */
  published: ProjectEvent[];
  /** The services' clock: the wall clock unless frozen (`freeze(ms)`, `unfreeze()`). */
  clock: { now(): number; freeze(ms: number): void; unfreeze(): void };
  /**
   * Set `method` to make that store method misbehave inside transactions (called twice: the
   * database refuses the duplicate); `null`: none. Set `everything` to make every Store call but
   * authentication's (`findApiKeyByHash`, `getWorkspaceAccount`) fail, in and out of transactions,
   * with an error whose message, `detail` and `query` hold SQL (which no answer may show).
   */
  failure: { method: keyof StoreTx | null; everything?: boolean };
  floors: Record<'A' | 'B' | 'C' | 'S' | 'L' | 'F', Floor>;
  pages: Record<'A1' | 'A2' | 'B1' | 'C1' | 'S1' | 'L1' | 'F1', Page>;
  request<T = any>(method: string, path: string, opts?: WorldRequestOptions): Promise<WorldResponse<T>>;
  /** A fresh project of acc_owner (created over HTTP) with acc_deriver, acc_deriver2 as derivers, acc_observer as observer, and one session. */
  newProject(): Promise<{ project_id: string; session_id: string }>;
  /** Inbox items, inbox Operation Log rows and inbox Project Events stored in every project of the world (read through the Store port). */
  inboxRows(): Promise<{ items: number; logs: number; events: number }>;
  /**
   * What a refused request must leave as it was: how many projects, members, sessions, floors,
   * pages, inbox items, Operation Log rows, Project Events, Session events and running Runs the
   * store holds in the world (read through the Store port), how many Project Events were
   * published, and the Live Inbox window at `liveInboxPath` (read as `as`, default the owner).
   */
  worldState(liveInboxPath?: string, as?: string): Promise<WorldState>;
  /** Row counts of every table, from the `rowCounts` reader `openStore` gave; `null` without one. */
  rowCounts(): Promise<Record<string, number> | null>;
  /**
   * Every row of every table (each row as JSON, sorted per table): from the `dumpRows` reader
   * `openStore` gave, or the rows of the kit's in-memory store; `null` for another store without a reader.
   * A key's `last_used_at` is shown as `null`: recording that a key authenticated is bookkeeping
   * of authentication, not a write of the request (platform.md "Identity and credentials").
   */
  dumpRows(): Promise<Record<string, string[]> | null>;
  /** How many subscriptions the services' event bus holds (open event streams subscribe one each). */
  subscriberCount(): number;
  /** The Session Runtime the routes serve (with `model`). */
  runtime?: SessionRuntimeService;
  close(): Promise<void>;
}

/** See {@link HttpWorld.worldState}. */
export interface WorldState {
  counts: Record<string, number>;
  published: number;
  liveInbox: unknown;
}

/** Options of {@link startHttpWorld}. */
export interface HttpWorldOptions {
  /** Serves the Session Runtime with this model (else its routes are absent). */
  model?: Model;
  /** Bounds of the Live Inbox host (with `model`). */
  liveInboxLimits?: Partial<LiveInboxLimits>;
  settings?: HttpAdapterSettings;
  /** Per-caller budgets of the services (`ServiceDeps.budgets`); default: the services' defaults. */
  budgets?: CallerBudgetOptions;
  /** Also serve the Session resource (`/v1/sessions`) with one agent, `kit_agent` (with `model`). */
  managedSessions?: boolean;
}

/** Seeds the world on a fresh store and starts the adapter. Call `close()` when done. */
export async function startHttpWorld(kit: HttpConformanceOptions, options: HttpWorldOptions = {}): Promise<HttpWorld> {
  const memory = kit.openStore ? undefined : createMemoryStore();
  const opened: Awaited<ReturnType<NonNullable<HttpConformanceOptions['openStore']>>> = kit.openStore
    ? await kit.openStore()
    : { store: memory as Store, close: async () => {}, dumpRows: async () => memoryRows(memory!) };
  const { bus, published } = recordingBus();
  const failure: HttpWorld['failure'] = { method: null };
  const clock: HttpWorld['clock'] = testClock();
  const deps = { store: failingStore(opened.store, failure), bus, clock, ids: createIdGenerator(), ...(options.budgets ? { budgets: options.budgets } : {}) };
  const platform = new PlatformService(deps);
  const runtime = options.model ? new SessionRuntimeService({ ...deps, host: new LiveInboxHost({ limits: options.liveInboxLimits }), model: options.model }) : undefined;
  const managedSessions = runtime && options.managedSessions
    ? new ManagedSessionsService({ ...deps, platform, runtime, agents: [{ id: 'kit_agent', name: 'Kit agent', model: 'held', version: 1 }] })
    : undefined;
  let server: HttpConformanceServer | undefined;
  try {
    const { keys, keyIds, floors, pages } = await seedTestWorld(platform);
    published.length = 0;

    server = await kit.start({ platform, projectInbox: new ProjectInboxService(deps), ...(runtime ? { runtime } : {}), ...(managedSessions ? { managedSessions } : {}) }, { ...KIT_ADAPTER_SETTINGS, ...options.settings });
    const url = server.url.replace(/\/+$/, '');
    const send = serverFetch(server);

    const request = async <T>(method: string, path: string, opts: WorldRequestOptions = {}): Promise<WorldResponse<T>> => {
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
      const res = await send(url + path, { method, headers, body: body as BodyInit | undefined, signal: AbortSignal.timeout(20_000) });
      const text = await res.text();
      let parsed: unknown = text;
      if ((res.headers.get('content-type') ?? '').includes('json')) parsed = JSON.parse(text);
      return { status: res.status, headers: res.headers, body: parsed as T, text };
    };

    let projects = 0;
    const must = async (res: Promise<WorldResponse>, status: number) => {
      const r = await res;
      if (r.status !== status) throw new Error(`http world: expected ${status}, got ${r.status}: ${r.text}`);
      return r.body;
    };
    const newProject = async () => {
      const { project: { id: project_id } } = await must(request('POST', '/projects', { as: 'acc_owner', body: { name: `Test ${++projects}` } }), 201);
      for (const [account_id, role] of [['acc_deriver', 'deriver'], ['acc_deriver2', 'deriver'], ['acc_observer', 'observer']]) {
        await must(request('POST', `/projects/${project_id}/members`, { as: 'acc_owner', body: { account_id, role } }), 201);
      }
      const { session: { id: session_id } } = await must(request('POST', '/sessions', { as: 'acc_owner', body: { project_id, title: 'test session' } }), 201);
      return { project_id: project_id as string, session_id: session_id as string };
    };

    const store = opened.store;
    const inboxRows = async () => {
      const all = [...await store.listProjectsForAccount('ws_demo', 'acc_owner'), ...await store.listProjectsForAccount('ws_other', 'acc_stranger')];
      let items = 0;
      let logs = 0;
      let events = 0;
      for (const { id: project_id } of all) {
        for (let after: { created_at: number; id: string } | undefined, page; (page = await store.listInboxItems({ project_id, limit: 1000, ...(after ? { after } : {}) })).length > 0;) {
          items += page.length;
          const last = page[page.length - 1]!;
          after = { created_at: last.created_at, id: last.id };
        }
        for (let after: { created_at: number; id: string } | undefined, page; (page = await store.listOperationLogs({ project_id, limit: 1000, ...(after ? { after } : {}) })).length > 0;) {
          logs += page.filter((l) => l.action.startsWith('project_inbox_item.')).length;
          const last = page[page.length - 1]!;
          after = { created_at: last.created_at, id: last.id };
        }
        for (let after = 0, page; (page = await store.listProjectEvents({ project_id, after, limit: 1000 })).length > 0; after = page[page.length - 1]!.sequence) {
          events += page.filter((e) => e.type.startsWith('project_inbox.')).length;
        }
      }
      return { items, logs, events };
    };

    const worldState = async (liveInboxPath?: string, as = 'acc_owner'): Promise<WorldState> => {
      const liveInbox = liveInboxPath === undefined ? null : (await request('GET', liveInboxPath, { as })).body;
      const counts: Record<string, number> = { projects: 0, members: 0, sessions: 0, floors: 0, pages: 0, items: 0, logs: 0, events: 0, session_events: 0, running_runs: 0 };
      const all = [...await store.listProjectsForAccount('ws_demo', 'acc_owner'), ...await store.listProjectsForAccount('ws_other', 'acc_stranger')];
      counts.projects = all.length;
      for (const { id: project_id } of all) counts.members! += (await store.listMemberships(project_id)).length;
      const { items, logs, events } = await inboxRows();
      for (const { id: project_id } of all) {
        counts.logs! += (await store.listOperationLogs({ project_id, limit: 1000 })).length;
        counts.events! += (await store.listProjectEvents({ project_id, after: 0, limit: 1000 })).length;
      }
      counts.items = items;
      counts.inbox_logs = logs;
      counts.inbox_events = events;
      for (const workspace_id of ['ws_demo', 'ws_other']) {
        for (const session of await store.listSessions(workspace_id, {})) {
          counts.sessions!++;
          if (await store.getRunningRun(session.id)) counts.running_runs!++;
          counts.session_events! += (await store.listSessionEvents({ session_id: session.id, after: 0, limit: 1000 })).length;
          for (const floor of await store.listFloors(session.id)) {
            counts.floors!++;
            counts.pages! += (await store.listPages(floor.id)).length;
          }
        }
      }
      return { counts, published: published.length, liveInbox };
    };

    const running = server;
    const rowCounts = async () => (opened.rowCounts ? opened.rowCounts() : null);
    const dumpRows = async () => {
      const dump = opened.dumpRows ? await opened.dumpRows() : null;
      if (dump === null) return null;
      // `last_used_at` (a key's authentication bookkeeping) is left out of "nothing written".
      return Object.fromEntries(Object.entries(dump).map(([table, rows]) => [table, rows.map((r) => r.replace(/"last_used_at":("?)\d+\1/g, '"last_used_at":null')).sort()]));
    };
    return {
      url, fetch: send, keys, keyIds, store, published, clock, failure, request, newProject, inboxRows, worldState, rowCounts, dumpRows, subscriberCount: () => bus.subscriberCount(),
      ...(runtime ? { runtime } : {}),
      floors, pages,
      close: async () => {
        await runtime?.close();
        await running.close();
        await opened.close();
      },
    };
  } catch (error) {
    await runtime?.close();
    await server?.close();
    await opened.close();
    throw error;
  }
}

/** Every row of the in-memory store, by collection, each as JSON, sorted. */
function memoryRows(store: ReturnType<typeof createMemoryStore>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, rows] of Object.entries(store.raw())) {
    const list = rows instanceof Map ? [...rows.entries()] : [...(rows as Iterable<unknown>)];
    out[name] = list.map((r) => JSON.stringify(r)).sort();
  }
  return out;
}

/** Store methods authentication uses; `failure.everything` leaves them working so each route fails further in. */
const AUTH_METHODS = new Set(['findApiKeyByHash', 'getWorkspaceAccount']);

/** The error `failure.everything` throws: SQL in its message and fields, which no answer may show. */
function sqlLadenError(name: string): Error {
  const error = new Error(`SQLITE_ERROR: near "SELCT": syntax error in "SELECT * FROM api_keys WHERE key_hash = 'deadbeef'" (${name})`);
  Object.assign(error, { code: 'SQLITE_ERROR', detail: 'relation "project_inbox_items" does not exist', query: 'INSERT INTO operation_logs VALUES ($1)' });
  return error;
}

/**
 * `inner`, whose transactions call `failure.method` twice (a real duplicate-key error from the
 * database) while it is set, and whose every call but authentication's fails while `failure.everything`.
 */
function failingStore(inner: Store, failure: HttpWorld['failure']): Store {
  const broken = (target: object, prop: string | symbol, real: unknown): unknown => {
    if (typeof real !== 'function' || typeof prop !== 'string') return real;
    return (...args: unknown[]) => {
      if (failure.everything && !AUTH_METHODS.has(prop)) return Promise.reject(sqlLadenError(prop));
      return (real as (...a: unknown[]) => unknown).apply(target, args);
    };
  };
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (failureHides(prop, failure.method)) return undefined;
      if (prop !== 'transaction') return broken(target, prop, Reflect.get(target, prop, receiver));
      return <T>(fn: (tx: StoreTx) => Promise<T>) =>
        target.transaction((tx) =>
          fn(new Proxy(tx, {
            get(t, p, r) {
              if (failureHides(p, failure.method)) return undefined;
              const real = Reflect.get(t, p, r) as unknown;
              if (!failureHits(p, failure.method) || typeof real !== 'function') return broken(t, p, real);
              return async (...args: unknown[]) => {
                await (real as (...a: unknown[]) => Promise<unknown>).apply(t, args);
                return (real as (...a: unknown[]) => Promise<unknown>).apply(t, args);
              };
            },
          })));
    },
  });
}

/** The error envelope of a response body. */
export interface WorldEnvelope {
  type: 'error';
  error: { type: string; code: string; message: string; details: { path: string; message: string; code?: string }[]; request_id: string };
}

/**
 * Checks a response is exactly the error envelope: `{ type: 'error', error: { type, code, message,
 * details, request_id } }` with `error.type` for the status and `x-request-id` and `request-id` equal to
 * `error.request_id`. `code` may be omitted to accept any code. Returns the envelope.
 */
export function expectError(res: WorldResponse, status: number, code?: string): WorldEnvelope {
  expect(res.status, res.text.slice(0, 500)).toBe(status);
  expect(res.headers.get('content-type') ?? '').toMatch(/^application\/json/);
  const body = res.body as WorldEnvelope;
  expect(Object.keys(body).sort()).toEqual(['error', 'type']);
  expect(body.type).toBe('error');
  expect(Object.keys(body.error).sort()).toEqual(['code', 'details', 'message', 'request_id', 'type']);
  expect(body.error.type).toBe(errorKind(status));
  if (code !== undefined) expect(body.error.code).toBe(code);
  expect(typeof body.error.code).toBe('string');
  expect(typeof body.error.message).toBe('string');
  expect(Array.isArray(body.error.details)).toBe(true);
  expect(body.error.request_id).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
  expect(res.headers.get('x-request-id')).toBe(body.error.request_id);
  expect(res.headers.get('request-id')).toBe(body.error.request_id);
  // Every error answer says whether a retry can succeed (platform.md "Errors" → "Retries"), whoever made it.
  const retry = shouldRetry(res.status);
  expect(res.headers.get(SHOULD_RETRY_HEADER) ?? undefined, `${SHOULD_RETRY_HEADER} of a ${res.status}`).toBe(retry === undefined ? undefined : String(retry));
  return body;
}
