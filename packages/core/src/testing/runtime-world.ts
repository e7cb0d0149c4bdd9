/**
 * The world of a Session Runtime test over real HTTP — the one the framework-adapter packages
 * (`@inbox-kit/ai-sdk`, `/langgraph`, `/openai-agents`) steer their loops in: the Session Runtime
 * with no model of its own (the application executes its Runs: `startRun`) or with a given
 * executor, served by an HTTP adapter the caller starts, on a store the caller opens, with a
 * workspace, an owner with an API key, a Session, helpers to steer over HTTP and to read committed
 * history. The adapter, the store and the history reader are injected (core imports neither an
 * HTTP framework nor a database nor an SDK). Spec: live-inbox.md ("Live Inbox", "Drain, commit,
 * carry-over").
 */
import { LiveInboxHost } from '../live-inbox/registry.js';
import type { ContentBlock } from '../live-inbox/content.js';
import { createIdGenerator, systemClock } from '../ports/clock.js';
import { createLocalEventBus } from '../ports/event-bus.js';
import type { Store } from '../ports/store.js';
import { PlatformService } from '../platform/service.js';
import { ProjectInboxService } from '../project-inbox/service.js';
import type { RequestContext } from '../context.js';
import type { RunExecutor } from '../sessions/executor.js';
import { ManagedSessionsService } from '../sessions/managed-sessions.js';
import { SessionRuntimeService } from '../sessions/service.js';
import type { HttpServices } from '../http/index.js';
import type { HttpConformanceServer } from './http-conformance-checks.js';
import { createMemoryStore } from './memory-store.js';

/** An HTTP answer of the world's helpers: the status and the parsed JSON body (absent when empty). */
export interface RuntimeWorldResponse {
  status: number;
  body: any;
}

/** What the world is seeded with and the helpers a test steers and reads through. */
export interface RuntimeWorld {
  /** The adapter's base URL (e.g. `http://127.0.0.1:PORT`). */
  url: string;
  /** The owner's API key secret (workspace `ws_a`, account `acc_owner`). */
  key: string;
  owner: RequestContext;
  runtime: SessionRuntimeService;
  host: LiveInboxHost;
  /** The seeded Session, `sess_a`. */
  session: string;
  /** `POST`/`PUT`/`DELETE`/`GET` on the Session's Live Inbox over HTTP (`path` after `/live-inbox`). */
  inbox(method: string, path?: string, body?: unknown): Promise<RuntimeWorldResponse>;
  /** Durable input over HTTP (`POST /v1/sessions/{id}/events`). */
  send(events: unknown[]): Promise<RuntimeWorldResponse>;
  /** The Session's committed history, oldest first, read by the options' `readHistory`. */
  history(): Promise<Array<Record<string, any>>>;
  /** Closes the Runtime, the adapter and the store. */
  close(): Promise<void>;
}

/** Options of {@link startRuntimeWorld}. */
export interface RuntimeWorldOptions {
  /** Starts the HTTP adapter on `services`, listening on a real socket (as the HTTP kit's `start`). */
  start(services: HttpServices): Promise<HttpConformanceServer>;
  /** A fresh, migrated store (default: the in-memory reference store). */
  openStore?: () => Promise<{ store: Store; close(): Promise<void> }>;
  /**
   * Reads the Session's committed history (e.g. with the official Anthropic SDK's
   * `beta.sessions.events.list`); default: the pages of `GET /v1/sessions/{id}/events` over fetch.
   */
  readHistory?: (at: { url: string; key: string; session: string }) => Promise<Array<Record<string, any>>>;
  /** The Runtime's executor of Runs that durable input starts (default: none; the test calls `startRun`). */
  executor?: RunExecutor;
}

/** Text content blocks: `[{ type: 'text', text }]`. */
export const textContent = (t: string): ContentBlock[] => [{ type: 'text', text: t }];

/** A gate: `wait` resolves once `open()` is called. */
export function gate(): { wait: Promise<void>; open(): void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

async function fetchHistory({ url, key, session }: { url: string; key: string; session: string }): Promise<Array<Record<string, any>>> {
  const out: Array<Record<string, any>> = [];
  let page: string | undefined;
  do {
    const res = await fetch(`${url}/v1/sessions/${session}/events?limit=100${page ? `&page=${encodeURIComponent(page)}` : ''}`, { headers: { authorization: `Bearer ${key}` } });
    if (res.status !== 200) throw new Error(`history: ${res.status} ${await res.text()}`);
    const body = (await res.json()) as { data: Array<Record<string, any>>; next_page?: string | null };
    out.push(...body.data);
    page = body.next_page ?? undefined;
  } while (page);
  return out;
}

/** A new world: seeds the store, starts the adapter. Call `close()` when done. */
export async function startRuntimeWorld(options: RuntimeWorldOptions): Promise<RuntimeWorld> {
  const opened = options.openStore ? await options.openStore() : { store: createMemoryStore(), close: async () => {} };
  const deps = { store: opened.store, bus: createLocalEventBus(), clock: systemClock, ids: createIdGenerator() };
  const platform = new PlatformService(deps);
  await platform.createWorkspace({ id: 'ws_a', name: 'Adapters' });
  await platform.createAccount({ id: 'acc_owner', name: 'Owner', workspace_ids: ['ws_a'] });
  const { secret } = await platform.issueApiKey({ workspace_id: 'ws_a', account_id: 'acc_owner' });
  const owner: RequestContext = { principal: await platform.authenticate(secret), request_id: 'req_test' };
  const session = 'sess_a';
  await platform.createSession(owner, { id: session, title: 'Steered' });
  const host = new LiveInboxHost();
  const runtime = new SessionRuntimeService({ ...deps, host, ...(options.executor ? { executor: options.executor } : {}) });
  const managedSessions = new ManagedSessionsService({ ...deps, platform, runtime });
  const server = await options.start({ platform, projectInbox: new ProjectInboxService(deps), runtime, managedSessions });
  const call = async (method: string, path: string, body?: unknown): Promise<RuntimeWorldResponse> => {
    const res = await fetch(server.url + path, {
      method, headers: { authorization: `Bearer ${secret}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const raw = await res.text();
    return { status: res.status, body: raw === '' ? undefined : JSON.parse(raw) };
  };
  const readHistory = options.readHistory ?? fetchHistory;
  return {
    url: server.url, key: secret, owner, runtime, host, session,
    inbox: (method, path = '', body) => call(method, `/v1/awaken/sessions/${session}/live-inbox${path}`, body),
    send: (events) => call('POST', `/v1/sessions/${session}/events`, { events }),
    history: () => readHistory({ url: server.url, key: secret, session }),
    close: async () => {
      await runtime.close();
      await server.close();
      await opened.close();
    },
  };
}

/**
 * Steers the Run over HTTP the way the adapters' scenario asks: queue two messages, reorder them,
 * replace the first, withdraw the second. Returns the replaced content's text.
 * @throws Error when any of the requests is not answered as the Live Inbox promises (200, 204).
 */
export async function steerTwoMessages(w: RuntimeWorld): Promise<string> {
  const a = await w.inbox('POST', '', { content: textContent('use the cache') });
  const b = await w.inbox('POST', '', { content: textContent('also check logs') });
  if (a.status !== 200 || b.status !== 200) throw new Error(`queue: ${a.status} ${b.status} ${JSON.stringify(a.body)}`);
  const order = await w.inbox('PUT', '/order', { order: [b.body.id, a.body.id] });
  const replaced = await w.inbox('PUT', `/${a.body.id}`, { content: textContent('use the cache, not the database') });
  const withdrawn = await w.inbox('DELETE', `/${b.body.id}`);
  if (order.status !== 204 || replaced.status !== 204 || withdrawn.status !== 204) throw new Error(`edit: ${order.status} ${replaced.status} ${withdrawn.status}`);
  return 'use the cache, not the database';
}
