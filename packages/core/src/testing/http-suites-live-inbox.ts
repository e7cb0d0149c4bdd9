/**
 * The Live Inbox and durable Session event routes over real HTTP (live-inbox.md "HTTP", "Managed
 * Agents compatibility"): editing the queue during a Run, roles, tenants, bad input, a failing
 * ownership read, interrupts, history pages and the Session stream. A model whose steps the test
 * releases by hand (no timers: every wait is on a condition). Moved from `@inbox-kit/http-fastify`'s
 * `live-inbox.test.ts` so every adapter runs it; registered by `runHttpConformance`. Data
 * (`http-suites-kit.ts`): two blocks of named checks (`http-suites-live-inbox-checks.ts`), each check on its own world.
 */
import { expect } from 'vitest';
import { registerSuite, type HttpSuiteBase, type HttpSuiteGroup } from './http-suites-kit.js';
import { liveInboxRouteChecks, sessionEventChecks } from './http-suites-live-inbox-checks.js';
import type { ContentBlock } from '../live-inbox/content.js';
import { LiveInboxHost } from '../live-inbox/registry.js';
import type { Model, ModelStepResult, TranscriptMessage } from '../live-inbox/agent-loop.js';
import { createSequentialIdGenerator, systemClock } from '../ports/clock.js';
import { createLocalEventBus } from '../ports/event-bus.js';
import type { Store } from '../ports/store.js';
import { PlatformService } from '../platform/service.js';
import { ProjectInboxService } from '../project-inbox/service.js';
import { SessionRuntimeService } from '../sessions/service.js';
import { serverFetch, type HttpConformanceOptions } from './http-conformance-checks.js';
import { createMemoryStore } from './memory-store.js';

export const text = (t: string): ContentBlock[] => [{ type: 'text', text: t }];

export interface PendingStep {
  transcript: readonly TranscriptMessage[];
  signal: AbortSignal;
  reply(t: string, more?: boolean): void;
}

export function gatedModel(): Model & { next(): Promise<PendingStep> } {
  const calls: PendingStep[] = [];
  let taken = 0;
  let wake: (() => void) | undefined;
  return {
    step(transcript, signal) {
      return new Promise<ModelStepResult>((resolve, reject) => {
        const onAbort = () => reject(signal.reason);
        if (signal.aborted) return onAbort();
        signal.addEventListener('abort', onAbort, { once: true });
        calls.push({ transcript, signal, reply: (t, more = false) => resolve({ content: text(t), continue: more }) });
        wake?.();
      });
    },
    async next() {
      while (calls.length <= taken) await new Promise<void>((r) => (wake = r));
      return calls[taken++] as PendingStep;
    },
  };
}

export interface Harness {
  base: string;
  /** `fetch` to the adapter (in-process or over its socket). */
  fetch: (url: string, init?: RequestInit) => Promise<Response>;
  store: Store;
  model: ReturnType<typeof gatedModel>;
  runtime: SessionRuntimeService;
  host: LiveInboxHost;
  keys: Record<string, string>;
  call(key: string, method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any; headers: Headers }>;
  close(): Promise<void>;
}

/** Polls `probe` every 5 ms until it returns a truthy value (returned), or throws after `ms`. */
export async function waitFor<T>(probe: () => T | Promise<T>, what: string, ms = 10_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** What a Live Inbox world may be started with: the Runtime's store wrapped (e.g. to make its reads fail), its Session gate cache's lifetime. */
export interface LiveInboxWorldOptions {
  wrapStore?: (store: Store) => Store;
  /** The Runtime's `sessionGateCacheTtlMs` (default: the services' 1 s). */
  sessionGateCacheTtlMs?: number;
}

/** A small world for one test: its own store, a gated model, the adapter started with `kit.start`. */
export async function startLiveInboxWorld(kit: HttpConformanceOptions, options: LiveInboxWorldOptions = {}): Promise<Harness> {
  const opened = kit.openStore ? await kit.openStore() : { store: createMemoryStore() as Store, close: async () => {} };
  const store = opened.store;
  const bus = createLocalEventBus();
  const deps = { store, bus, clock: systemClock, ids: createSequentialIdGenerator() };
  const platform = new PlatformService(deps);
  await platform.createWorkspace({ id: 'ws_demo', name: 'Demo' });
  await platform.createWorkspace({ id: 'ws_other', name: 'Other' });
  const keys: Record<string, string> = {};
  for (const id of ['acc_owner', 'acc_deriver', 'acc_observer', 'acc_outsider']) {
    await platform.createAccount({ id, name: id, workspace_ids: ['ws_demo'] });
    keys[id] = (await platform.issueApiKey({ workspace_id: 'ws_demo', account_id: id })).secret;
  }
  await platform.createAccount({ id: 'acc_stranger', name: 'stranger', workspace_ids: ['ws_other'] });
  keys.acc_stranger = (await platform.issueApiKey({ workspace_id: 'ws_other', account_id: 'acc_stranger' })).secret;
  keys.service = (await platform.issueApiKey({ workspace_id: 'ws_demo', account_id: 'acc_owner', kind: 'service' })).secret;
  const owner = { principal: await platform.authenticate(keys.acc_owner!), request_id: 'req_seed' };
  await platform.createProject(owner, { id: 'proj_main', name: 'Main' });
  await platform.addMember(owner, 'proj_main', { account_id: 'acc_deriver', role: 'deriver' });
  await platform.addMember(owner, 'proj_main', { account_id: 'acc_observer', role: 'observer' });
  await platform.createSession(owner, { id: 'sess_001', project_id: 'proj_main', title: 'First' });
  await platform.createSession(owner, { id: 'sess_free', title: 'No project' });

  const host = new LiveInboxHost();
  const model = gatedModel();
  const runtime = new SessionRuntimeService({
    ...deps, store: options.wrapStore ? options.wrapStore(store) : store, host, model,
    ...(options.sessionGateCacheTtlMs === undefined ? {} : { sessionGateCacheTtlMs: options.sessionGateCacheTtlMs }),
  });
  const server = await kit.start({ platform, projectInbox: new ProjectInboxService(deps), runtime }, { streamTiming: { heartbeatMs: 60_000 } });
  const base = server.url.replace(/\/+$/, '');
  const send = serverFetch(server);
  return {
    base, fetch: send, store, model, runtime, host, keys,
    async call(key, method, path, body, headers = {}) {
      const res = await send(base + path, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      const raw = await res.text();
      return { status: res.status, body: raw === '' ? undefined : JSON.parse(raw), headers: res.headers };
    },
    async close() {
      await runtime.close();
      await server.close();
      await opened.close();
    },
  };
}

export const LI = (session = 'sess_001') => `/v1/awaken/sessions/${session}/live-inbox`;
export const EV = (session = 'sess_001') => `/v1/sessions/${session}/events`;

/** Every live-inbox and session-event route, with a valid body. */
export const everyRoute = (session = 'sess_001'): [string, string, unknown?][] => [
  ['GET', LI(session)],
  ['POST', LI(session), { content: text('x') }],
  ['PUT', `${LI(session)}/order`, { order: [1] }],
  ['PUT', `${LI(session)}/1`, { content: text('x') }],
  ['DELETE', `${LI(session)}/1`],
  ['POST', EV(session), { events: [{ type: 'user.message', content: text('x') }] }],
  ['GET', EV(session)],
  ['GET', `${EV(session)}/stream`],
];

export async function startRun(h: Harness, content = 'task', session = 'sess_001') {
  const sent = await h.call(h.keys.acc_owner!, 'POST', EV(session), { events: [{ type: 'user.message', content: text(content) }] });
  expect(sent.status).toBe(200);
  const step = await h.model.next();
  const run = (await h.store.getRunningRun(session))!;
  return { sent, step, run };
}

export async function history(h: Harness, session = 'sess_001'): Promise<any[]> {
  const res = await h.call(h.keys.acc_owner!, 'GET', `${EV(session)}?limit=1000`);
  expect(res.status).toBe(200);
  return res.body.data;
}
/** What the Live Inbox checks share: `harness()` starts a world of their own, closed after each check. */
export interface LiveInboxCtx extends HttpSuiteBase {
  harness(options?: LiveInboxWorldOptions): Promise<Harness>;
  /** The worlds started by the running check. */
  started: Harness[];
}

/** The Live Inbox and Session event suites (see the file comment), as data. */
export const liveInboxGroup: HttpSuiteGroup<LiveInboxCtx> = {
  name: 'Live Inbox and Session events over HTTP',
  open(base) {
    const started: Harness[] = [];
    return {
      ...base, started,
      async harness(options = {}) {
        const h = await startLiveInboxWorld(base.kit, options);
        started.push(h);
        return h;
      },
    };
  },
  async afterEach(ctx) {
    for (const h of ctx.started.splice(0)) await h.close();
  },
  blocks: [
    { name: 'Live Inbox routes', checks: liveInboxRouteChecks },
    { name: 'Session event routes', checks: sessionEventChecks },
  ],
};

/** Registers the Live Inbox and Session event suites for the adapter `kit` starts. */
export function liveInboxSuite(kit: HttpConformanceOptions): void {
  registerSuite(kit, liveInboxGroup);
}
