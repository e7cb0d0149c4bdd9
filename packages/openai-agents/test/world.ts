/**
 * The world of an adapter test: the Session Runtime with no model (the application executes its
 * Runs: `startRun`), on a real SQLite file, served over real HTTP by the Fastify preset, an API key,
 * a Session, helpers to steer over HTTP and the official Anthropic SDK to read committed history.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import {
  LiveInboxHost, ManagedSessionsService, PlatformService, ProjectInboxService, SessionRuntimeService, createIdGenerator, createLocalEventBus,
  systemClock, type RequestContext, type RunExecutor,
} from '@inbox-kit/core';
import { createServer } from '@inbox-kit/http-fastify/server';
import { openStore } from '@inbox-kit/storage-kysely';

export interface World {
  url: string;
  key: string;
  owner: RequestContext;
  runtime: SessionRuntimeService;
  host: LiveInboxHost;
  session: string;
  /** `POST`/`PUT`/`DELETE`/`GET` on the Session's Live Inbox over HTTP: `{ status, body }`. */
  inbox(method: string, path?: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** Durable input over HTTP (`POST /v1/sessions/{id}/events`). */
  send(events: unknown[]): Promise<{ status: number; body: any }>;
  /** Committed history, read with the official Anthropic SDK's `events.list`. */
  history(): Promise<Array<Record<string, any>>>;
  close(): Promise<void>;
}

/** A new world; `executor` is the Runtime's executor of Runs durable input starts (default none). */
export async function world(options: { executor?: RunExecutor } = {}): Promise<World> {
  const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-adapter-'));
  const opened = await openStore({ sqliteFile: join(dir, 'adapter.sqlite') });
  const deps = { store: opened.store, bus: createLocalEventBus(), clock: systemClock, ids: createIdGenerator() };
  const platform = new PlatformService(deps);
  await platform.createWorkspace({ id: 'ws_a', name: 'Adapters' });
  await platform.createAccount({ id: 'acc_owner', name: 'Owner', workspace_ids: ['ws_a'] });
  const { secret } = await platform.issueApiKey({ workspace_id: 'ws_a', account_id: 'acc_owner' });
  const owner: RequestContext = { principal: await platform.authenticate(secret), request_id: 'req_test' };
  await platform.createSession(owner, { id: 'sess_a', title: 'Steered' });
  const host = new LiveInboxHost();
  const runtime = new SessionRuntimeService({ ...deps, host, ...(options.executor ? { executor: options.executor } : {}) });
  const managedSessions = new ManagedSessionsService({ ...deps, platform, runtime });
  const app = await createServer({ services: { platform, projectInbox: new ProjectInboxService(deps), runtime, managedSessions }, logger: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(url + path, {
      method, headers: { authorization: `Bearer ${secret}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const raw = await res.text();
    return { status: res.status, body: raw === '' ? undefined : JSON.parse(raw) };
  };
  const client = new Anthropic({ baseURL: url, apiKey: secret });
  return {
    url, key: secret, owner, runtime, host, session: 'sess_a',
    inbox: (method, path = '', body) => call(method, `/v1/awaken/sessions/sess_a/live-inbox${path}`, body),
    send: (events) => call('POST', '/v1/sessions/sess_a/events', { events }),
    history: async () => {
      const out: Array<Record<string, any>> = [];
      for await (const e of client.beta.sessions.events.list('sess_a', { limit: 100 })) out.push(e as unknown as Record<string, any>);
      return out;
    },
    close: async () => {
      await runtime.close();
      await app.close();
      await opened.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const text = (t: string) => [{ type: 'text' as const, text: t }];

/** A gate: `wait` resolves once `open()` is called. */
export function gate(): { wait: Promise<void>; open(): void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

/**
 * Steers the Run over HTTP the way the scenario asks: queue two messages, reorder, replace one,
 * withdraw the other. Returns the replaced content's text.
 */
export async function steerTwoMessages(w: World): Promise<string> {
  const a = await w.inbox('POST', '', { content: text('use the cache') });
  const b = await w.inbox('POST', '', { content: text('also check logs') });
  if (a.status !== 200 || b.status !== 200) throw new Error(`queue: ${a.status} ${b.status} ${JSON.stringify(a.body)}`);
  const order = await w.inbox('PUT', '/order', { order: [b.body.id, a.body.id] });
  const replaced = await w.inbox('PUT', `/${a.body.id}`, { content: text('use the cache, not the database') });
  const withdrawn = await w.inbox('DELETE', `/${b.body.id}`);
  if (order.status !== 204 || replaced.status !== 204 || withdrawn.status !== 204) throw new Error(`edit: ${order.status} ${replaced.status} ${withdrawn.status}`);
  return 'use the cache, not the database';
}
