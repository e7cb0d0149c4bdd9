/**
 * The checks of the HTTP conformance kit, as plain async functions (no test framework): each gets
 * a fresh subject — an adapter serving the contract (`@inbox-kit/core/http`) over a real socket,
 * on services over a freshly seeded store — drives it with `fetch` only (black box), and throws an
 * `HttpConformanceError` naming what broke. `http-conformance.ts` registers them as a vitest suite.
 *
 * Success bodies are checked against the route table's own response schemas, errors against the
 * one envelope and the code → status → `error.type` table, so the kit follows the contract.
 */
import type { ContentBlock } from '../live-inbox/content.js';
import { LiveInboxHost } from '../live-inbox/registry.js';
import type { Model, ModelStepResult } from '../live-inbox/agent-loop.js';
import { createIdGenerator, systemClock } from '../ports/clock.js';
import { createLocalEventBus } from '../ports/event-bus.js';
import type { Store } from '../ports/store.js';
import { PlatformService } from '../platform/service.js';
import { ProjectInboxService } from '../project-inbox/service.js';
import { SessionRuntimeService } from '../sessions/service.js';
import { ManagedSessionsService } from '../sessions/managed-sessions.js';
import { HTTP_ROUTES, type HttpRoute, type HttpServices } from '../http/routes.js';
import { STATUS_BY_CODE, errorEnvelopeSchema, errorKind } from '../http/errors.js';
import type { ErrorCode } from '../errors.js';
import { createMemoryStore } from './memory-store.js';
import type { CorsOptions } from '../http/cors.js';
import { MAX_STREAM_TOKEN_TTL_SECONDS } from '../platform/stream-tokens.js';
import type { HttpCheckLayer, HttpKitMode, HttpKitOptOut } from './http-kit.js';

/** A check failed: `message` says which request and what differed. */
export class HttpConformanceError extends Error {
  override readonly name = 'HttpConformanceError';
}

/** What an adapter author's `start` returns: the base URL it listens on (no trailing slash) and how to stop it. */
export interface HttpConformanceServer {
  url: string;
  close(): Promise<void>;
  /**
   * In-process: a fetch-style handler (`(request: Request) => Promise<Response>`) the kit calls
   * instead of `fetch(url)` (then `url` is only the base the requests' URLs are built on, and no
   * socket is opened). Absent: the kit sends over a socket to `url`.
   */
  fetch?: (request: Request) => Promise<Response>;
}

/** `fetch`, sent to `server.fetch` (in-process) when the server has one, else over a socket. */
export function serverFetch(server: Pick<HttpConformanceServer, 'fetch'>): (url: string, init?: RequestInit) => Promise<Response> {
  const handler = server.fetch;
  return handler ? (url, init) => handler(new Request(url, init)) : (url, init) => fetch(url, init);
}

/** What the kit's suites ask of an adapter beyond its services (pass each on to the adapter's own options). */
export interface HttpAdapterSettings {
  /** SSE heartbeat and `retry:` hint (ms) and the per-caller cap on open event streams (default 16). */
  streamTiming?: { heartbeatMs?: number; retryMs?: number; maxStreamsPerCaller?: number };
  /** ms a request body has to arrive before 408 `request_timeout` (platform.md "Connections and request bodies"). */
  bodyTimeoutMs?: number;
  /**
   * The bad-credential throttle per remote address (platform.md "Per-caller bounds"): every
   * request of the kit comes from 127.0.0.1, so its suites pass `false` (off) but the budget suite,
   * which passes small numbers and checks the 429s.
   */
  credentialThrottle?: { maxFailures?: number; windowMs?: number } | false;
  /** Request bodies one API key may have in flight (the budget suite passes a small number). */
  maxBodiesPerKey?: number;
  /**
   * Bytes of request bodies one API key may send per second: the kit's suites pass 0 (off: the
   * hostile-input suite sends many bodies over the limit from one key), but the budget suite's
   * flood, which runs at the adapter's default.
   */
  bodyBytesPerSecondPerKey?: number;
  /**
   * The connection policy (platform.md "Connections and request bodies"): the connections suite
   * passes small caps and a short first-request window. An adapter embedded in a host passes it to
   * the host's `guardConnections` (`@inbox-kit/core/http`).
   */
  connections?: { maxConnections?: number; maxConnectionsPerAddress?: number; firstRequestTimeoutMs?: number; keepAliveTimeoutMs?: number; headersTimeoutMs?: number };
  /** CORS (platform.md "Browsers" → "CORS"): the CORS check passes exact origins; absent, CORS is off. */
  cors?: CorsOptions;
}

/**
 * The settings every suite and check of the kit starts an adapter with unless it says otherwise:
 * the bad-credential throttle and the body bytes per second off (the suites send thousands of bad
 * keys, and many bodies over the limit, from one address and key on purpose).
 */
export const KIT_ADAPTER_SETTINGS: HttpAdapterSettings = { credentialThrottle: false, bodyBytesPerSecondPerKey: 0 };

/** Options of the kit. */
export interface HttpConformanceOptions {
  /** Which layers of checks run (see `http-kit.ts`); default `sockets`: all of them. Set by the kit's runners. */
  mode?: HttpKitMode;
  /** Checks or groups not run, each with the reason (registered as skipped, the reason in the title). */
  optOut?: HttpKitOptOut;
  /** Starts the adapter on `services` with `settings` (absent: the adapter's defaults), listening on a real socket (e.g. 127.0.0.1, port 0). */
  start(services: HttpServices, settings?: HttpAdapterSettings): Promise<HttpConformanceServer>;
  /**
   * A fresh, migrated store per check (default: the in-memory reference store). `rowCounts`, when
   * given, reads the row count of every table of the database underneath with raw queries (not
   * through the adapter nor the Store port); the hostile-input suite then checks that no refused
   * request changed any of them. `dumpRows` likewise reads every row (the security suite's check).
   */
  openStore?: () => Promise<{
    store: Store;
    close(): Promise<void>;
    rowCounts?: () => Promise<Record<string, number>>;
    /** Every row of every table, each as JSON, sorted per table (raw queries): the security suite's "nothing written". */
    dumpRows?: () => Promise<Record<string, string[]>>;
  }>;
}

/** A model whose steps the check answers by hand (no timers). */
export interface GatedModel extends Model {
  /** Resolves with the next pending step; `reply(text)` ends it (the Run ends unless `more`). */
  next(): Promise<{ reply(text: string, more?: boolean): void }>;
}

/** The seeded world a check runs against. */
export interface HttpConformanceSubject {
  url: string;
  /** `fetch` to the adapter: in-process when the server gave a handler, else over its socket. */
  fetch: (url: string, init?: RequestInit) => Promise<Response>;
  /** Secrets: `acc_owner`, `acc_deriver`, `acc_observer`, `acc_outsider` (ws_kit), `acc_stranger` (ws_other), `service` (ws_kit, acting as anyone there), `revoked`. */
  keys: Record<string, string>;
  /** `proj_kit`: owner acc_owner, deriver acc_deriver, observer acc_observer; session `sess_kit` in it. */
  project_id: string;
  session_id: string;
  /** The one agent `POST /v1/sessions` may name: `kit_agent`, version 1. */
  agent_id: string;
  model: GatedModel;
}

function gatedModel(): GatedModel {
  const pending: Array<{ reply(text: string, more?: boolean): void }> = [];
  let taken = 0;
  let wake: (() => void) | undefined;
  return {
    step(_transcript, signal) {
      return new Promise<ModelStepResult>((resolve, reject) => {
        if (signal.aborted) return reject(signal.reason);
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
        pending.push({ reply: (text, more = false) => resolve({ content: [{ type: 'text', text }], continue: more }) });
        wake?.();
      });
    },
    async next() {
      while (pending.length <= taken) await new Promise<void>((r) => (wake = r));
      return pending[taken++]!;
    },
  };
}

/**
 * Builds the services on a fresh store, seeds the world, starts the adapter, runs `check`, and
 * stops everything whatever happened.
 */
export async function withHttpSubject(options: HttpConformanceOptions, check: (subject: HttpConformanceSubject) => Promise<void>, settings: HttpAdapterSettings = {}): Promise<void> {
  const opened = options.openStore ? await options.openStore() : { store: createMemoryStore() as Store, close: async () => {} };
  const deps = { store: opened.store, bus: createLocalEventBus(), clock: systemClock, ids: createIdGenerator() };
  const platform = new PlatformService(deps);
  const model = gatedModel();
  const runtime = new SessionRuntimeService({ ...deps, host: new LiveInboxHost(), model });
  try {
    await platform.createWorkspace({ id: 'ws_kit', name: 'Kit' });
    await platform.createWorkspace({ id: 'ws_other', name: 'Other' });
    const keys: Record<string, string> = {};
    for (const id of ['acc_owner', 'acc_deriver', 'acc_observer', 'acc_outsider']) {
      await platform.createAccount({ id, name: id, workspace_ids: ['ws_kit'] });
      keys[id] = (await platform.issueApiKey({ workspace_id: 'ws_kit', account_id: id })).secret;
    }
    await platform.createAccount({ id: 'acc_stranger', name: 'stranger', workspace_ids: ['ws_other'] });
    keys.acc_stranger = (await platform.issueApiKey({ workspace_id: 'ws_other', account_id: 'acc_stranger' })).secret;
    keys.service = (await platform.issueApiKey({ workspace_id: 'ws_kit', account_id: 'acc_owner', kind: 'service' })).secret;
    const revoked = await platform.issueApiKey({ workspace_id: 'ws_kit', account_id: 'acc_owner' });
    await platform.revokeApiKey(revoked.key.id);
    keys.revoked = revoked.secret;
    keys.admin = (await platform.issueApiKey({ workspace_id: 'ws_kit', account_id: 'acc_owner', kind: 'admin' })).secret;
    const owner = { principal: await platform.authenticate(keys.acc_owner), request_id: 'req_seed' };
    await platform.createProject(owner, { id: 'proj_kit', name: 'Kit project' });
    await platform.addMember(owner, 'proj_kit', { account_id: 'acc_deriver', role: 'deriver' });
    await platform.addMember(owner, 'proj_kit', { account_id: 'acc_observer', role: 'observer' });
    await platform.createSession(owner, { id: 'sess_kit', project_id: 'proj_kit', title: 'Kit session' });
    const managedSessions = new ManagedSessionsService({ ...deps, platform, runtime, agents: [{ id: 'kit_agent', name: 'Kit agent', model: 'gated', version: 1 }] });
    const server = await options.start({ platform, projectInbox: new ProjectInboxService(deps), runtime, managedSessions }, { ...KIT_ADAPTER_SETTINGS, ...settings });
    try {
      await check({ url: server.url.replace(/\/+$/, ''), fetch: serverFetch(server), keys, project_id: 'proj_kit', session_id: 'sess_kit', agent_id: 'kit_agent', model });
    } finally {
      await server.close();
    }
  } finally {
    await runtime.close();
    await opened.close();
  }
}

// — the client and the assertions —

interface Reply {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

interface Send {
  key?: string;
  body?: unknown;
  /** Sent as is (string or bytes) with `content-type: application/json` unless headers say otherwise. */
  raw?: string | Uint8Array;
  headers?: Record<string, string>;
}

async function send(subject: HttpConformanceSubject, method: string, path: string, options: Send = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...(options.key ? { authorization: `Bearer ${options.key}` } : {}) };
  let body: string | Uint8Array | undefined;
  if (options.raw !== undefined) body = options.raw;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined) headers['content-type'] = 'application/json';
  Object.assign(headers, options.headers);
  const res = await subject.fetch(`${subject.url}${path}`, { method, headers, body: body as BodyInit | undefined });
  const text = await res.text();
  let parsed: unknown = text;
  if ((res.headers.get('content-type') ?? '').includes('json') && text !== '') parsed = JSON.parse(text);
  return { status: res.status, headers: res.headers, text, body: parsed };
}

function fail(what: string, res: Reply | undefined, message: string): never {
  throw new HttpConformanceError(`${what}: ${message}${res ? ` (status ${res.status}, body ${res.text.slice(0, 500)})` : ''}`);
}

const matches = (route: HttpRoute, method: string, path: string) =>
  route.method === method && new RegExp(`^${route.path.replace(/:[a-z_]+/g, '[^/]+')}$`).test(path.split('?')[0]!);

/** The route of the table that `method path` reaches (a static segment wins over a parameter). */
function routeOf(method: string, path: string): HttpRoute {
  const params = (r: HttpRoute) => r.path.split(':').length;
  const route = HTTP_ROUTES.filter((r) => matches(r, method, path)).sort((a, b) => params(a) - params(b))[0];
  if (route === undefined) throw new HttpConformanceError(`no route of the table matches ${method} ${path}`);
  return route;
}

/** Calls a route and checks the documented status and that the body parses with the route's response schema. */
async function expectSuccess(subject: HttpConformanceSubject, covered: Set<string>, method: string, path: string, options: Send = {}): Promise<Reply> {
  const route = routeOf(method, path);
  const res = await send(subject, method, path, options);
  const what = `${method} ${path}`;
  if (res.status !== route.status) fail(what, res, `expected ${route.status}`);
  if (!/^[A-Za-z0-9._:-]{1,128}$/.test(res.headers.get('x-request-id') ?? '')) fail(what, res, 'no x-request-id header');
  if (route.status === 204) {
    if (res.text !== '') fail(what, res, 'a 204 must have no body');
  } else {
    if (!(res.headers.get('content-type') ?? '').startsWith('application/json')) fail(what, res, 'expected a JSON body');
    const parsed = route.response.safeParse(res.body);
    if (!parsed.success) fail(what, res, `the body does not match the route's response schema: ${parsed.error.message}`);
  }
  covered.add(`${route.method} ${route.path}`);
  return res;
}

/** Checks an error answer: the envelope, `code` (when given) and its status, `error.type`, and the request id header. */
function expectError(what: string, res: Reply, status: number, code?: ErrorCode): void {
  if (res.status !== status) fail(what, res, `expected ${status}${code ? ` ${code}` : ''}`);
  const parsed = errorEnvelopeSchema.safeParse(res.body);
  if (!parsed.success) fail(what, res, `not the error envelope: ${parsed.error.message}`);
  const error = parsed.data.error;
  if (code !== undefined && error.code !== code) fail(what, res, `expected code ${code}`);
  if (STATUS_BY_CODE[error.code] !== status && !(status === 400 && error.code === 'validation_error')) fail(what, res, `code ${error.code} belongs to status ${STATUS_BY_CODE[error.code]}`);
  if (error.type !== errorKind(status)) fail(what, res, `error.type must be ${errorKind(status)}`);
  if (res.headers.get('x-request-id') !== error.request_id) fail(what, res, 'x-request-id differs from error.request_id');
  if (/\bat .*\.[jt]s:\d+|SELECT |INSERT /.test(res.text)) fail(what, res, 'an error body shows a stack or SQL');
}

const text = (t: string): ContentBlock[] => [{ type: 'text', text: t }];

/** Reads SSE frames until `count` event frames arrived; returns them and the response headers. */
async function readFrames(subject: HttpConformanceSubject, path: string, key: string, count: number, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; frames: Array<{ id: number; event: string; data: any }>; preamble: string }> {
  const abort = new AbortController();
  const res = await subject.fetch(`${subject.url}${path}`, { headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream', ...headers }, signal: abort.signal });
  if (res.status !== 200 || res.body === null) {
    const body = await res.text();
    abort.abort();
    throw new HttpConformanceError(`GET ${path}: expected a 200 stream (status ${res.status}, body ${body.slice(0, 300)})`);
  }
  const frames: Array<{ id: number; event: string; data: any }> = [];
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let preamble = '';
  try {
    while (frames.length < count) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let cut: number;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const fields = Object.fromEntries(block.split('\n').filter((l) => !l.startsWith(':')).map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trimStart()]));
        if (fields.id !== undefined) frames.push({ id: Number(fields.id), event: fields.event ?? '', data: JSON.parse(fields.data ?? 'null') });
        else if (frames.length === 0) preamble += `${block}\n\n`;
      }
    }
  } finally {
    abort.abort();
    await reader.cancel().catch(() => {});
  }
  return { status: res.status, headers: res.headers, frames, preamble };
}

/** One check: a name and its body. */
export interface HttpConformanceCheck {
  name: string;
  /** The group it belongs to (a run may opt a whole group out). */
  group: string;
  /** `behaviour` (default: runs in-process too), `wire` or `both` (see `http-kit.ts`). */
  layer?: HttpCheckLayer;
  /** Adapter settings of this check on top of {@link KIT_ADAPTER_SETTINGS} (the CORS check's origins). */
  settings?: HttpAdapterSettings;
  run(subject: HttpConformanceSubject): Promise<void>;
}

const P = (s: HttpConformanceSubject) => `/projects/${s.project_id}`;
const LI = (s: HttpConformanceSubject) => `/v1/awaken/sessions/${s.session_id}/live-inbox`;

/** Every check of the kit, in order. */
export const httpConformanceChecks: HttpConformanceCheck[] = [
  {
    group: 'contract: routes',
    layer: 'both',
    name: 'every route answers its documented status with a body its response schema accepts',
    async run(s) {
      const covered = new Set<string>();
      const { acc_owner: owner, acc_deriver: deriver } = s.keys as Record<string, string>;
      await expectSuccess(s, covered, 'GET', '/health');
      await expectSuccess(s, covered, 'GET', '/me', { key: owner });
      const created = await expectSuccess(s, covered, 'POST', '/projects', { key: owner, body: { name: 'Second' } });
      const second = created.body.project.id as string;
      await expectSuccess(s, covered, 'GET', '/projects', { key: owner });
      await expectSuccess(s, covered, 'GET', `/projects/${second}`, { key: owner });
      await expectSuccess(s, covered, 'POST', `/projects/${second}/members`, { key: owner, body: { account_id: 'acc_outsider', role: 'observer' } });
      await expectSuccess(s, covered, 'GET', `/projects/${second}/members`, { key: owner });
      await expectSuccess(s, covered, 'DELETE', `/projects/${second}/members/acc_outsider`, { key: owner });
      const item = await expectSuccess(s, covered, 'POST', `${P(s)}/inbox`, { key: deriver, body: { type: 'derived_output.review', title: 'Check', payload: { n: 1 } } });
      const item_id = item.body.item.id as string;
      await expectSuccess(s, covered, 'GET', `${P(s)}/inbox`, { key: owner });
      await expectSuccess(s, covered, 'GET', `${P(s)}/inbox/${item_id}`, { key: owner });
      await expectSuccess(s, covered, 'PATCH', `${P(s)}/inbox/${item_id}`, { key: owner, body: { decision: 'accept', note: 'ok' } });
      await expectSuccess(s, covered, 'GET', `${P(s)}/events`, { key: owner });
      await expectSuccess(s, covered, 'GET', `${P(s)}/operation-logs`, { key: owner });
      const session = await expectSuccess(s, covered, 'POST', '/sessions', { key: owner, body: { project_id: s.project_id, title: 'Turns' } });
      const session_id = session.body.session.id as string;
      await expectSuccess(s, covered, 'GET', '/sessions', { key: owner });
      await expectSuccess(s, covered, 'GET', `/sessions/${session_id}`, { key: owner });
      const turn = await expectSuccess(s, covered, 'POST', `/sessions/${session_id}/floors`, { key: owner, body: { content: { text: 'hello' } } });
      const floor_id = turn.body.floor.id as string;
      await expectSuccess(s, covered, 'GET', `/sessions/${session_id}/floors`, { key: owner });
      await expectSuccess(s, covered, 'POST', `/sessions/${session_id}/floors/${floor_id}/pages`, { key: owner, body: { content: { text: 'again' } } });
      await expectSuccess(s, covered, 'GET', `/sessions/${session_id}/floors/${floor_id}/pages`, { key: owner });
      await expectSuccess(s, covered, 'POST', `/projects/${second}/archive`, { key: owner });
      // The Session Runtime: input starts a Run; the Live Inbox is edited while the model thinks.
      await expectSuccess(s, covered, 'GET', LI(s), { key: owner });
      await expectSuccess(s, covered, 'POST', `/v1/sessions/${s.session_id}/events`, { key: owner, body: { events: [{ type: 'user.message', content: text('start') }] } });
      const step = await s.model.next();
      const queued = await expectSuccess(s, covered, 'POST', LI(s), { key: owner, body: { content: text('first') } });
      const second_id = (await expectSuccess(s, covered, 'POST', LI(s), { key: owner, body: { content: text('second') } })).body.id as number;
      await expectSuccess(s, covered, 'PUT', `${LI(s)}/${queued.body.id}`, { key: owner, body: { content: text('first, edited') } });
      await expectSuccess(s, covered, 'PUT', `${LI(s)}/order`, { key: owner, body: { order: [second_id, queued.body.id] } });
      await expectSuccess(s, covered, 'DELETE', `${LI(s)}/${second_id}`, { key: owner });
      const window = await expectSuccess(s, covered, 'GET', LI(s), { key: owner });
      if (window.body.active !== true || window.body.messages.length !== 1 || window.body.messages[0].content[0].text !== 'first, edited') {
        fail(`GET ${LI(s)}`, window, 'the editable window does not show the edits made during the Run');
      }
      step.reply('thinking', true);
      (await s.model.next()).reply('done');
      await expectSuccess(s, covered, 'GET', `/v1/sessions/${s.session_id}/events`, { key: owner });
      // The Session resource (Managed Agents shape).
      const managed = await expectSuccess(s, covered, 'POST', '/v1/sessions', { key: owner, body: { agent: s.agent_id, environment_id: 'env_kit', title: 'Managed', metadata: { k: 'v' } } });
      const managed_id = managed.body.id as string;
      await expectSuccess(s, covered, 'GET', '/v1/sessions', { key: owner });
      await expectSuccess(s, covered, 'GET', `/v1/sessions/${managed_id}`, { key: owner });
      await expectSuccess(s, covered, 'POST', `/v1/sessions/${managed_id}`, { key: owner, body: { title: 'Renamed' } });
      await expectSuccess(s, covered, 'POST', `/v1/sessions/${managed_id}/archive`, { key: owner });
      await expectSuccess(s, covered, 'DELETE', `/v1/sessions/${managed_id}`, { key: owner });
      const agent = await expectSuccess(s, covered, 'POST', '/v1/agents', {
        key: owner, body: { name: 'Kit agent', model: 'claude-test', tools: [{ type: 'custom', name: 'lookup', description: 'client side', input_schema: { type: 'object' } }] },
      });
      const agent_id = agent.body.id as string;
      await expectSuccess(s, covered, 'GET', '/v1/agents', { key: owner });
      await expectSuccess(s, covered, 'GET', `/v1/agents/${agent_id}`, { key: owner });
      await expectSuccess(s, covered, 'POST', `/v1/agents/${agent_id}`, { key: owner, body: { description: 'v2' } });
      await expectSuccess(s, covered, 'GET', `/v1/agents/${agent_id}/versions`, { key: owner });
      await expectSuccess(s, covered, 'POST', `/v1/agents/${agent_id}/archive`, { key: owner });
      // Readiness, and the workspace administration (an admin key).
      await expectSuccess(s, covered, 'GET', '/ready');
      const admin = (s.keys as Record<string, string>).admin!;
      const account = await expectSuccess(s, covered, 'POST', '/admin/accounts', { key: admin, body: { name: 'Kit newcomer' } });
      const account_id = account.body.account.id as string;
      await expectSuccess(s, covered, 'GET', '/admin/accounts', { key: admin });
      const issued = await expectSuccess(s, covered, 'POST', `/admin/accounts/${account_id}/keys`, { key: admin, body: { kind: 'standard' } });
      const me = await send(s, 'GET', '/me', { key: issued.body.secret as string });
      if (me.status !== 200 || me.body.account.id !== account_id) fail('GET /me with an issued key', me, 'the key the administration issued must authenticate its account');
      await expectSuccess(s, covered, 'GET', `/admin/keys?account_id=${account_id}`, { key: admin });
      const rotated = await expectSuccess(s, covered, 'POST', `/admin/keys/${issued.body.key.id}/rotate`, { key: admin, body: {} });
      expectError('a rotated key (no grace period)', await send(s, 'GET', '/me', { key: issued.body.secret as string }), 401, 'invalid_credentials');
      await expectSuccess(s, covered, 'DELETE', `/admin/keys/${rotated.body.key.id}`, { key: admin });
      expectError('a revoked key', await send(s, 'GET', '/me', { key: rotated.body.secret as string }), 401, 'invalid_credentials');
      await expectSuccess(s, covered, 'POST', `/admin/accounts/${account_id}/disable`, { key: admin });
      await expectSuccess(s, covered, 'GET', '/admin/operation-logs', { key: admin });
      expectError('a standard key on the administration', await send(s, 'GET', '/admin/keys', { key: owner }), 403, 'permission_denied');
      await expectSuccess(s, covered, 'POST', '/stream-tokens', { key: owner, body: {} });
      await expectSuccess(s, covered, 'GET', `/projects/${s.project_id}/sessions`, { key: owner });
      await expectSuccess(s, covered, 'GET', `/operation-logs?project_id=${s.project_id}`, { key: owner });
      const missing = HTTP_ROUTES.filter((r) => !r.stream && !covered.has(`${r.method} ${r.path}`)).map((r) => `${r.method} ${r.path}`);
      if (missing.length > 0) throw new HttpConformanceError(`routes not served as documented: ${missing.join(', ')}`);
    },
  },
  {
    group: 'contract: authentication',
    name: 'authentication: Bearer or x-api-key; missing, unknown and revoked keys get 401; a service key acts as another account',
    async run(s) {
      const k = s.keys as Record<string, string>;
      const bearer = await send(s, 'GET', '/me', { key: k.acc_owner });
      const header = await send(s, 'GET', '/me', { headers: { 'x-api-key': k.acc_owner! } });
      if (bearer.status !== 200 || header.status !== 200 || header.body.account.id !== 'acc_owner') fail('GET /me', header, 'Bearer and x-api-key must both authenticate');
      expectError('no key', await send(s, 'GET', '/me'), 401, 'authentication_required');
      expectError('unknown key', await send(s, 'GET', '/me', { key: 'ik_not_a_key' }), 401, 'invalid_credentials');
      expectError('revoked key', await send(s, 'GET', '/me', { key: k.revoked }), 401, 'invalid_credentials');
      expectError('no key on a write', await send(s, 'POST', `${P(s)}/inbox`, { body: { type: 't' } }), 401, 'authentication_required');
      const acting = await send(s, 'GET', '/me', { key: k.service, headers: { 'x-account-id': 'acc_deriver' } });
      if (acting.status !== 200 || acting.body.account.id !== 'acc_deriver') fail('service key acting as acc_deriver', acting, 'expected acc_deriver');
      expectError('standard key acting as another account', await send(s, 'GET', '/me', { key: k.acc_owner, headers: { 'x-account-id': 'acc_deriver' } }), 403);
    },
  },
  {
    group: 'contract: roles',
    name: 'roles: owners decide, derivers file, observers see the project but not the inbox, outsiders and other tenants see nothing',
    async run(s) {
      const k = s.keys as Record<string, string>;
      const item = await send(s, 'POST', `${P(s)}/inbox`, { key: k.acc_deriver, body: { type: 'review' } });
      if (item.status !== 201) fail('deriver files an item', item, 'expected 201');
      const path = `${P(s)}/inbox/${item.body.item.id}`;
      expectError('observer files an item', await send(s, 'POST', `${P(s)}/inbox`, { key: k.acc_observer, body: { type: 'review' } }), 403);
      expectError('deriver decides', await send(s, 'PATCH', path, { key: k.acc_deriver, body: { decision: 'accept' } }), 403);
      expectError('observer decides', await send(s, 'PATCH', path, { key: k.acc_observer, body: { decision: 'accept' } }), 403);
      expectError('observer lists the inbox', await send(s, 'GET', `${P(s)}/inbox`, { key: k.acc_observer }), 403, 'project_inbox_read_denied');
      const project = await send(s, 'GET', P(s), { key: k.acc_observer });
      if (project.status !== 200 || project.body.role !== 'observer') fail('observer reads the project', project, 'expected 200 with role observer');
      for (const who of ['acc_outsider', 'acc_stranger']) {
        expectError(`${who} reads the project`, await send(s, 'GET', P(s), { key: k[who] }), 404);
        expectError(`${who} reads the item`, await send(s, 'GET', path, { key: k[who] }), 404);
        expectError(`${who} reads the Live Inbox`, await send(s, 'GET', LI(s), { key: k[who] }), 404);
      }
      expectError('member removal by a non-owner', await send(s, 'DELETE', `${P(s)}/members/acc_observer`, { key: k.acc_deriver }), 403);
      const decided = await send(s, 'PATCH', path, { key: k.acc_owner, body: { decision: 'reject' } });
      if (decided.status !== 200) fail('owner decides', decided, 'expected 200');
      expectError('deciding twice', await send(s, 'PATCH', path, { key: k.acc_owner, body: { decision: 'accept' } }), 409, 'project_inbox_invalid_transition');
    },
  },
  {
    group: 'contract: hostile input',
    name: 'hostile input is refused with 400 in the envelope and nothing is written',
    async run(s) {
      const owner = s.keys.acc_owner!;
      const inbox = `${P(s)}/inbox`;
      expectError('malformed JSON', await send(s, 'POST', inbox, { key: owner, raw: '{"type":' }), 400);
      expectError('invalid UTF-8', await send(s, 'POST', inbox, { key: owner, raw: new Uint8Array([0x7b, 0x22, 0x74, 0x79, 0x70, 0x65, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]) }), 400);
      expectError('prototype poisoning', await send(s, 'POST', inbox, { key: owner, raw: '{"type":"x","__proto__":{"admin":true}}' }), 400);
      expectError('another content type', await send(s, 'POST', inbox, { key: owner, raw: '{"type":"x"}', headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type');
      expectError('another charset', await send(s, 'POST', inbox, { key: owner, raw: '{"type":"x"}', headers: { 'content-type': 'application/json; charset=latin1' } }), 415, 'unsupported_media_type');
      expectError('an inexact number', await send(s, 'POST', inbox, { key: owner, raw: '{"type":"x","payload":{"n":12345678901234567890}}' }), 400, 'validation_error');
      expectError('unknown field', await send(s, 'POST', inbox, { key: owner, body: { type: 'x', sneaky: 1 } }), 400, 'validation_error');
      expectError('wrong type', await send(s, 'POST', inbox, { key: owner, body: { type: 42 } }), 400, 'validation_error');
      expectError('an id chosen by the caller', await send(s, 'POST', '/projects', { key: owner, body: { id: 'proj_mine', name: 'x' } }), 400, 'validation_error');
      expectError('bad query', await send(s, 'GET', `${inbox}?limit=0`, { key: owner }), 400, 'validation_error');
      expectError('bad cursor', await send(s, 'GET', `${inbox}?cursor=not-a-cursor`, { key: owner }), 400);
      expectError('non-integer message id', await send(s, 'DELETE', `${LI(s)}/abc`, { key: owner }), 400, 'validation_error');
      expectError('unknown route', await send(s, 'GET', '/no/such/route', { key: owner }), 404, 'not_found');
      const after = await send(s, 'GET', inbox, { key: owner });
      if (after.status !== 200 || after.body.items.length !== 0) fail('inbox after hostile input', after, 'nothing may have been written');
    },
  },
  {
    group: 'contract: request ids',
    name: "request ids: a safe caller id is echoed, anything else is replaced; errors carry the same id",
    async run(s) {
      const mine = await send(s, 'GET', '/me', { key: s.keys.acc_owner, headers: { 'x-request-id': 'trace-42.a:b' } });
      if (mine.headers.get('x-request-id') !== 'trace-42.a:b') fail('a safe x-request-id', mine, 'must be echoed');
      const unsafe = await send(s, 'GET', '/me', { key: s.keys.acc_owner, headers: { 'x-request-id': 'x'.repeat(200) } });
      if (!/^req_/.test(unsafe.headers.get('x-request-id') ?? '')) fail('an unsafe x-request-id', unsafe, 'must be replaced by req_…');
      const error = await send(s, 'GET', '/projects/proj_none', { key: s.keys.acc_owner, headers: { 'x-request-id': 'trace-43' } });
      expectError('error with a caller id', error, 404, 'project_not_found');
      if (error.body.error.request_id !== 'trace-43') fail('error with a caller id', error, 'error.request_id must be the caller id');
    },
  },
  {
    group: 'contract: idempotency',
    name: 'idempotency: a repeat with the same key answers the first item with Idempotent-Replayed; another body gets 409',
    async run(s) {
      const key = s.keys.acc_deriver!;
      const body = { type: 'review', title: 'Once' };
      const headers = { 'idempotency-key': 'kit-key-1' };
      const first = await send(s, 'POST', `${P(s)}/inbox`, { key, body, headers });
      const again = await send(s, 'POST', `${P(s)}/inbox`, { key, body, headers });
      if (first.status !== 201 || again.status !== 201 || again.body.item.id !== first.body.item.id) fail('replay', again, 'expected 201 with the first item');
      if (again.headers.get('idempotent-replayed') !== 'true' || first.headers.get('idempotent-replayed') !== null) fail('replay', again, 'only the replay carries Idempotent-Replayed: true');
      expectError('same key, other body', await send(s, 'POST', `${P(s)}/inbox`, { key, body: { type: 'other' }, headers }), 409, 'idempotency_key_reused');
      const list = await send(s, 'GET', `${P(s)}/inbox`, { key: s.keys.acc_owner });
      if (list.body.items.length !== 1) fail('inbox after replays', list, 'exactly one item');
    },
  },
  {
    group: 'contract: event streams',
    layer: 'both',
    name: 'SSE: retry hint, frames with id/event/data, resume after the later of ?after= and Last-Event-ID, resync past the newest, HEAD, only what the caller may see',
    async run(s) {
      const k = s.keys as Record<string, string>;
      const before = await send(s, 'GET', `${P(s)}/events?limit=500`, { key: k.acc_owner });
      if (before.status !== 200) fail('list events', before, 'expected 200');
      const base = String(before.body.next_after);
      for (const title of ['a', 'b', 'c']) {
        const res = await send(s, 'POST', `${P(s)}/inbox`, { key: k.acc_deriver, body: { type: 'review', title } });
        if (res.status !== 201) fail('seeding events', res, 'expected 201');
      }
      const path = `${P(s)}/events/stream`;
      const all = await readFrames(s, `${path}?after=${base}`, k.acc_owner!, 3);
      if (!(all.headers.get('content-type') ?? '').startsWith('text/event-stream')) fail(`GET ${path}`, undefined, 'content-type must be text/event-stream');
      if (!/^retry: \d+/m.test(all.preamble)) fail(`GET ${path}`, undefined, 'the stream must open with a retry: hint');
      const ids = all.frames.map((f) => f.id);
      if (ids.length !== 3 || !ids.every((id, i) => i === 0 || id > ids[i - 1]!)) fail(`GET ${path}`, undefined, `expected 3 ascending frames, got ${ids.join(',')}`);
      const route = routeOf('GET', path);
      for (const frame of all.frames) {
        if (!route.response.safeParse(frame.data).success || frame.event !== frame.data.type || frame.id !== frame.data.sequence) fail(`GET ${path}`, undefined, `frame ${frame.id} does not match the ProjectEvent schema`);
      }
      const resumed = await readFrames(s, path, k.acc_owner!, 1, { 'last-event-id': String(ids[0]) });
      if (resumed.frames[0]?.id !== ids[1]) fail('resume with Last-Event-ID', undefined, `expected ${ids[1]} first, got ${resumed.frames[0]?.id}`);
      const query = await readFrames(s, `${path}?after=${ids[1]}`, k.acc_owner!, 1, { 'last-event-id': String(ids[0]) });
      if (query.frames[0]?.id !== ids[2]) fail('the later of ?after= and Last-Event-ID', undefined, `expected ${ids[2]}, got ${query.frames[0]?.id}`);
      const later = await readFrames(s, `${path}?after=${ids[0]}`, k.acc_owner!, 1, { 'last-event-id': String(ids[1]) });
      if (later.frames[0]?.id !== ids[2]) fail('the later of ?after= and Last-Event-ID', undefined, `expected ${ids[2]}, got ${later.frames[0]?.id}`);
      expectError('a malformed Last-Event-ID', await send(s, 'GET', path, { key: k.acc_owner, headers: { 'last-event-id': 'abc' } }), 400, 'validation_error');
      const ahead = await readFrames(s, `${path}?after=${ids[2]! + 100}`, k.acc_owner!, 1);
      const resync = ahead.frames[0];
      if (resync?.event !== 'resync' || resync.id !== ids[2] || resync.data.latest !== ids[2] || resync.data.requested_after !== ids[2]! + 100) {
        fail('a position after the newest event', undefined, `expected one resync frame with id ${ids[2]}, got ${JSON.stringify(resync)}`);
      }
      const head = await send(s, 'HEAD', path, { key: k.acc_owner });
      if (head.status !== 200 || !(head.headers.get('content-type') ?? '').startsWith('text/event-stream') || head.text !== '') fail(`HEAD ${path}`, head, 'expected the stream headers and no body');
      const outsider = await send(s, 'GET', path, { key: k.acc_outsider });
      expectError('an outsider streams', outsider, 404);
      // Visibility: an observer may not read the inbox, so its stream skips the inbox events.
      const added = await send(s, 'POST', `${P(s)}/members`, { key: k.acc_owner, body: { account_id: 'acc_outsider', role: 'observer' } });
      if (added.status !== 201) fail('add a member', added, 'expected 201');
      const observed = await readFrames(s, `${path}?after=${base}`, k.acc_observer!, 1);
      const first = observed.frames[0];
      if (first === undefined || first.id <= ids[2]! || first.event.startsWith('project_inbox.')) fail('an observer streams', undefined, `inbox events must be skipped, got ${JSON.stringify(first)}`);
      const sessionPath = `/v1/sessions/${s.session_id}/events/stream`;
      await send(s, 'POST', `/v1/sessions/${s.session_id}/events`, { key: k.acc_owner, body: { events: [{ type: 'user.message', content: text('hi') }] } });
      (await s.model.next()).reply('hello');
      const session = await readFrames(s, sessionPath, k.acc_owner!, 1);
      if (!routeOf('GET', sessionPath).response.safeParse(session.frames[0]?.data).success) fail(`GET ${sessionPath}`, undefined, 'frame does not match the SessionEvent schema');
    },
  },
  {
    group: 'contract: Live Inbox',
    name: 'the Live Inbox refuses edits without an active native attempt (410) and from non-owners (403)',
    async run(s) {
      const k = s.keys as Record<string, string>;
      expectError('queue without a Run', await send(s, 'POST', LI(s), { key: k.acc_owner, body: { content: text('x') } }), 410, 'live_inbox_inactive');
      await send(s, 'POST', `/v1/sessions/${s.session_id}/events`, { key: k.acc_owner, body: { events: [{ type: 'user.message', content: text('go') }] } });
      const step = await s.model.next();
      expectError('observer queues', await send(s, 'POST', LI(s), { key: k.acc_observer, body: { content: text('x') } }), 403);
      expectError('unknown message', await send(s, 'DELETE', `${LI(s)}/999`, { key: k.acc_owner }), 404, 'live_inbox_message_not_found');
      expectError('stale order', await send(s, 'PUT', `${LI(s)}/order`, { key: k.acc_owner, body: { order: [999] } }), 409, 'live_inbox_order_conflict');
      expectError('empty content', await send(s, 'POST', LI(s), { key: k.acc_owner, body: { content: [] } }), 400, 'validation_error');
      step.reply('done');
    },
  },
  {
    group: 'contract: Session resource',
    name: 'the Session resource (/v1/sessions): create, retrieve, list pages, update, archive, delete, and its errors in the envelope',
    async run(s) {
      const k = s.keys as Record<string, string>;
      const created = await send(s, 'POST', '/v1/sessions', { key: k.acc_owner, body: { agent: s.agent_id, environment_id: 'env_a', title: 'A', metadata: { team: 'qa' } } });
      if (created.status !== 200 || created.body.type !== 'session' || created.body.title !== 'A' || created.body.status !== 'idle' || created.body.agent?.id !== s.agent_id
        || created.body.environment_id !== 'env_a' || created.body.metadata.team !== 'qa' || created.body.workspace_id !== 'ws_kit' || created.body.project_id !== null || created.body.archived_at !== null) {
        fail('POST /v1/sessions', created, 'expected 200 with the Session as asked for');
      }
      const id = created.body.id as string;
      const got = await send(s, 'GET', `/v1/sessions/${id}`, { key: k.acc_owner });
      if (got.status !== 200 || JSON.stringify(got.body) !== JSON.stringify(created.body)) fail(`GET /v1/sessions/${id}`, got, 'expected the Session as created');
      // In a project: members read it, only the owner changes it; other tenants see nothing.
      const inProject = await send(s, 'POST', '/v1/sessions', { key: k.acc_owner, body: { agent: { type: 'agent', id: s.agent_id, version: 1 }, environment_id: 'env_p', project_id: s.project_id } });
      if (inProject.status !== 200 || inProject.body.project_id !== s.project_id) fail('POST /v1/sessions in a project', inProject, 'expected 200 in the project');
      const observed = await send(s, 'GET', `/v1/sessions/${inProject.body.id}`, { key: k.acc_observer });
      if (observed.status !== 200) fail('an observer reads a Session of its project', observed, 'expected 200');
      expectError('an observer updates', await send(s, 'POST', `/v1/sessions/${inProject.body.id}`, { key: k.acc_observer, body: { title: 'no' } }), 403, 'permission_denied');
      expectError('an observer creates in the project', await send(s, 'POST', '/v1/sessions', { key: k.acc_observer, body: { agent: s.agent_id, environment_id: 'e', project_id: s.project_id } }), 403, 'permission_denied');
      expectError('another tenant reads', await send(s, 'GET', `/v1/sessions/${id}`, { key: k.acc_stranger }), 404, 'session_not_found');
      expectError('another tenant deletes', await send(s, 'DELETE', `/v1/sessions/${id}`, { key: k.acc_stranger }), 404, 'session_not_found');
      // Bad requests.
      expectError('an unknown agent', await send(s, 'POST', '/v1/sessions', { key: k.acc_owner, body: { agent: 'no_such_agent', environment_id: 'e' } }), 404, 'agent_not_found');
      expectError('another agent version', await send(s, 'POST', '/v1/sessions', { key: k.acc_owner, body: { agent: { type: 'agent', id: s.agent_id, version: 9 }, environment_id: 'e' } }), 404, 'agent_not_found');
      expectError('vaults', await send(s, 'POST', '/v1/sessions', { key: k.acc_owner, body: { agent: s.agent_id, environment_id: 'e', vault_ids: ['v1'] } }), 400, 'unsupported_capability');
      expectError('an unknown field', await send(s, 'POST', '/v1/sessions', { key: k.acc_owner, body: { agent: s.agent_id, environment_id: 'e', sneaky: 1 } }), 400, 'validation_error');
      expectError('no environment_id', await send(s, 'POST', '/v1/sessions', { key: k.acc_owner, body: { agent: s.agent_id } }), 400, 'validation_error');
      expectError('an agent update', await send(s, 'POST', `/v1/sessions/${id}`, { key: k.acc_owner, body: { agent: { tools: [] } } }), 400, 'unsupported_capability');
      expectError('a bad list limit', await send(s, 'GET', '/v1/sessions?limit=0', { key: k.acc_owner }), 400, 'validation_error');
      expectError('a forged page', await send(s, 'GET', '/v1/sessions?page=forged', { key: k.acc_owner }), 400, 'invalid_cursor');
      expectError('no key', await send(s, 'GET', '/v1/sessions'), 401, 'authentication_required');
      // Update: title set, metadata patched (null deletes a key).
      const updated = await send(s, 'POST', `/v1/sessions/${id}`, { key: k.acc_owner, body: { title: 'Renamed', metadata: { team: null, stage: 'beta' } } });
      if (updated.status !== 200 || updated.body.title !== 'Renamed' || JSON.stringify(updated.body.metadata) !== '{"stage":"beta"}') fail(`POST /v1/sessions/${id}`, updated, 'expected the title set and the metadata patched');
      // List: cursor pages with every Session exactly once; archived ones only on request.
      for (let i = 0; i < 3; i++) {
        const more = await send(s, 'POST', '/v1/sessions', { key: k.acc_owner, body: { agent: s.agent_id, environment_id: `env_${i}` } });
        if (more.status !== 200) fail('POST /v1/sessions', more, 'expected 200');
      }
      const seen: string[] = [];
      let page: string | null = null;
      do {
        const res: Reply = await send(s, 'GET', `/v1/sessions?limit=2&order=asc${page ? `&page=${encodeURIComponent(page)}` : ''}`, { key: k.acc_owner });
        if (res.status !== 200 || res.body.data.length > 2 || res.body.prev_page !== null) fail('GET /v1/sessions?limit=2', res, 'expected a page of at most 2');
        seen.push(...res.body.data.map((d: { id: string }) => d.id));
        page = res.body.next_page;
      } while (page !== null && seen.length < 100);
      if (new Set(seen).size !== seen.length || !seen.includes(id) || !seen.includes(inProject.body.id)) fail('GET /v1/sessions pages', undefined, `every Session once, got ${seen.join(',')}`);
      const archived = await send(s, 'POST', `/v1/sessions/${id}/archive`, { key: k.acc_owner });
      if (archived.status !== 200 || typeof archived.body.archived_at !== 'string') fail(`POST /v1/sessions/${id}/archive`, archived, 'expected archived_at set');
      const without = await send(s, 'GET', '/v1/sessions?limit=100', { key: k.acc_owner });
      const withArchived = await send(s, 'GET', '/v1/sessions?limit=100&include_archived=true', { key: k.acc_owner });
      if (without.body.data.some((d: { id: string }) => d.id === id) || !withArchived.body.data.some((d: { id: string }) => d.id === id)) fail('GET /v1/sessions', without, 'an archived Session is listed only with include_archived=true');
      expectError('a message to an archived Session', await send(s, 'POST', `/v1/sessions/${id}/events`, { key: k.acc_owner, body: { events: [{ type: 'user.message', content: text('late') }] } }), 409, 'session_archived');
      // Delete: 409 while a Run runs; then gone from every read.
      const running = await send(s, 'POST', '/v1/sessions', { key: k.acc_owner, body: { agent: s.agent_id, environment_id: 'env_run', initial_events: [{ type: 'user.message', content: text('go') }] } });
      if (running.status !== 200 || running.body.status !== 'running') fail('POST /v1/sessions with initial_events', running, 'expected 200 with status running');
      const step = await s.model.next();
      expectError('deleting a running Session', await send(s, 'DELETE', `/v1/sessions/${running.body.id}`, { key: k.acc_owner }), 409, 'session_running');
      step.reply('done');
      const deleted = await send(s, 'DELETE', `/v1/sessions/${id}`, { key: k.acc_owner });
      if (deleted.status !== 200 || deleted.body.id !== id || deleted.body.type !== 'session_deleted') fail(`DELETE /v1/sessions/${id}`, deleted, 'expected { id, type: session_deleted }');
      expectError('reading a deleted Session', await send(s, 'GET', `/v1/sessions/${id}`, { key: k.acc_owner }), 404, 'session_not_found');
      expectError('deleting it again', await send(s, 'DELETE', `/v1/sessions/${id}`, { key: k.acc_owner }), 404, 'session_not_found');
    },
  },
  {
    group: 'contract: time filters',
    name: 'time filters (created_at[gt|gte|lt|lte]) are exact: sub-ms digits compared at full precision, offsets honoured, no offset read as UTC, impossible dates 400',
    async run(s) {
      const owner = s.keys.acc_owner!;
      const created = await send(s, 'POST', '/v1/sessions', { key: owner, body: { agent: s.agent_id, environment_id: 'env_kit' } });
      if (created.status !== 200) fail('create a Session', created, 'expected 200');
      const id = created.body.id as string;
      const interrupt = await send(s, 'POST', `/v1/sessions/${id}/events`, { key: owner, body: { events: [{ type: 'user.interrupt' }] } });
      if (interrupt.status !== 200) fail('send an event', interrupt, 'expected 200');
      const at = Date.parse(created.body.created_at as string);
      const processed = Date.parse(interrupt.body.data[0].processed_at as string);
      const iso = (ms: number) => new Date(ms).toISOString();
      // The same instant with a +05:30 offset; one ten-thousandth of a ms after it; one just before it.
      const offset = (ms: number) => `${iso(ms + 330 * 60_000).slice(0, -1)}+05:30`;
      const after = (ms: number) => `${iso(ms).slice(0, -1)}0001Z`;
      const before = (ms: number) => `${iso(ms - 1).slice(0, -1)}9999Z`;
      // What the Python SDK sends for a naive `datetime` (`isoformat()`: no offset, microseconds): read as UTC.
      const naive = (ms: number) => `${iso(ms).slice(0, -1)}000`;
      const cases: Array<[string, (ms: number) => string, boolean]> = [
        ['gte', iso, true], ['gt', iso, false], ['lte', iso, true], ['lt', iso, false],
        ['gte', naive, true], ['gt', naive, false], ['lte', naive, true], ['lt', naive, false],
        ['gte', offset, true], ['gt', offset, false], ['lte', offset, true], ['lt', offset, false],
        ['gte', after, false], ['gt', after, false], ['lte', after, true], ['lt', after, true],
        ['gte', before, true], ['gt', before, true], ['lte', before, false], ['lt', before, false],
      ];
      const routes: Array<[string, number, (body: any) => boolean]> = [
        ['/v1/sessions?limit=100&', at, (body) => body.data.some((x: { id: string }) => x.id === id)],
        [`/v1/sessions/${id}/events?`, processed, (body) => body.data.some((e: { type: string }) => e.type === 'user.interrupt')],
      ];
      for (const [path, ms, holds] of routes) {
        for (const [op, bound, included] of cases) {
          const q = new URLSearchParams({ [`created_at[${op}]`]: bound(ms) });
          const res = await send(s, 'GET', `${path}${q}`, { key: owner });
          if (res.status !== 200) fail(`GET ${path}${q}`, res, 'expected 200');
          if (holds(res.body) !== included) fail(`GET ${path}${q}`, res, included ? 'the bound must select the record' : 'the bound must leave the record out');
        }
        for (const bad of ['2026-02-30T00:00:00Z', '2026-02-29T12:00:00Z', '2026-04-31T00:00:00Z', '2026-01-01T24:00:00Z', '2026-01-01T00:60:00Z',
          '2026-12-31T23:59:60Z', '2026-01-01', '2026-01-01T00:00', '2026-01-01T00:00:00+24:00', 'yesterday']) {
          const q = new URLSearchParams({ 'created_at[gte]': bad });
          expectError(`GET ${path}${q}`, await send(s, 'GET', `${path}${q}`, { key: owner }), 400, 'validation_error');
        }
      }
    },
  },
  {
    group: 'contract: clients',
    name: 'clients unchanged (the Python SDK): beta=true accepted on every /v1 route, an unknown Session 404 session_not_found on every /v1 route, every Session has an agent snapshot and an environment_id',
    async run(s) {
      const owner = s.keys.acc_owner!;
      const created = await send(s, 'POST', '/v1/sessions?beta=true', { key: owner, body: { agent: s.agent_id, environment_id: 'env_py' } });
      if (created.status !== 200) fail('POST /v1/sessions?beta=true', created, 'expected 200');
      const id = created.body.id as string;
      for (const path of ['/v1/sessions?beta=true', `/v1/sessions/${id}?beta=true`, `/v1/sessions/${id}/events?beta=true`, '/v1/agents?beta=true', `/v1/agents/${s.agent_id}?beta=true`]) {
        const res = await send(s, 'GET', path, { key: owner });
        if (res.status !== 200) fail(`GET ${path}`, res, 'expected 200: beta=true is accepted and ignored');
      }
      const streamed = await readFrames(s, `/v1/sessions/${id}/events/stream?beta=true`, owner, 0);
      if (streamed.status !== 200) fail('GET …/events/stream?beta=true', undefined, 'expected 200');
      // Every /v1 route naming a Session that does not exist: 404 session_not_found (a body the route accepts where it takes one).
      const missing = 'sess_missing';
      const cases: Array<[string, string, unknown?]> = [
        ['GET', `/v1/sessions/${missing}`], ['POST', `/v1/sessions/${missing}`, { title: 'x' }], ['DELETE', `/v1/sessions/${missing}`],
        ['POST', `/v1/sessions/${missing}/archive`], ['GET', `/v1/sessions/${missing}/events`], ['GET', `/v1/sessions/${missing}/events/stream`],
        ['POST', `/v1/sessions/${missing}/events`, { events: [{ type: 'user.message', content: text('hi') }] }],
        ['GET', `/v1/awaken/sessions/${missing}/live-inbox`], ['POST', `/v1/awaken/sessions/${missing}/live-inbox`, { content: text('hi') }],
        ['PUT', `/v1/awaken/sessions/${missing}/live-inbox/order`, { order: [1] }], ['PUT', `/v1/awaken/sessions/${missing}/live-inbox/1`, { content: text('hi') }],
        ['DELETE', `/v1/awaken/sessions/${missing}/live-inbox/1`],
      ];
      for (const [method, path, body] of cases) {
        for (const query of ['', '?beta=true']) {
          const res = await send(s, method, `${path}${query}`, { key: owner, ...(body === undefined ? {} : { body }) });
          expectError(`${method} ${path}${query}`, res, 404, 'session_not_found');
          if (res.headers.get('x-should-retry') !== 'false') fail(`${method} ${path}${query}`, res, 'a 404 carries x-should-retry: false');
        }
      }
      // A Session made through POST /sessions answers the SDK's required fields too: the Runtime's agent, environment "default".
      const plain = await send(s, 'POST', '/sessions', { key: owner, body: { title: 'plain' } });
      if (plain.status !== 201) fail('POST /sessions', plain, 'expected 201');
      const seen = await send(s, 'GET', `/v1/sessions/${plain.body.session.id}?beta=true`, { key: owner });
      if (seen.status !== 200 || seen.body.agent?.type !== 'agent' || seen.body.agent?.id !== 'runtime' || typeof seen.body.agent?.version !== 'number'
        || typeof seen.body.agent?.model?.id !== 'string' || seen.body.environment_id !== 'default') {
        fail(`GET /v1/sessions/${plain.body.session.id}`, seen, 'expected agent { type: agent, id: runtime, version, model } and environment_id "default"');
      }
      const listed = await send(s, 'GET', '/v1/sessions?limit=100&beta=true', { key: owner });
      for (const session of listed.body.data as Array<{ id: string; agent: unknown; environment_id: unknown }>) {
        if (session.agent === null || typeof session.environment_id !== 'string') fail('GET /v1/sessions', listed, `Session ${session.id} lacks agent or environment_id`);
      }
    },
  },
  {
    group: 'contract: retries',
    name: 'retries: x-should-retry false on answers a retry cannot fix (4xx: 400, 401, 403, 404, 409 session_running), absent on success',
    async run(s) {
      const owner = s.keys.acc_owner!;
      const expectRetry = (what: string, res: Reply, value: string | null) => {
        if (res.headers.get('x-should-retry') !== value) fail(what, res, `expected x-should-retry ${value ?? 'absent'}, got ${res.headers.get('x-should-retry')}`);
      };
      expectRetry('GET /me', await send(s, 'GET', '/me', { key: owner }), null);
      expectRetry('no key', await send(s, 'GET', '/me'), 'false');
      expectRetry('a bad limit', await send(s, 'GET', `${P(s)}/inbox?limit=0`, { key: owner }), 'false');
      expectRetry('an observer deciding', await send(s, 'GET', `${P(s)}/inbox`, { key: s.keys.acc_observer }), 'false');
      expectRetry('an unknown project', await send(s, 'GET', '/projects/proj_missing', { key: owner }), 'false');
      const running = await send(s, 'POST', '/v1/sessions', { key: owner, body: { agent: s.agent_id, environment_id: 'env_r', initial_events: [{ type: 'user.message', content: text('go') }] } });
      const step = await s.model.next();
      const refused = await send(s, 'DELETE', `/v1/sessions/${running.body.id}`, { key: owner });
      expectError('deleting a running Session', refused, 409, 'session_running');
      expectRetry('deleting a running Session', refused, 'false');
      step.reply('done');
    },
  },
  {
    group: 'contract: stream tokens',
    name: 'stream tokens: POST /stream-tokens (at most 15 minutes) opens the caller\'s streams as ?access_token= only; never on other routes, never an API key in a URL; revoking the key ends them',
    async run(s) {
      const owner = s.keys.acc_owner!;
      const issued = await send(s, 'POST', '/stream-tokens', { key: owner });
      if (issued.status !== 201 || typeof issued.body.token !== 'string' || typeof issued.body.expires_at !== 'number') fail('POST /stream-tokens', issued, 'expected 201 { token, expires_at }');
      const ttl = issued.body.expires_at - Date.now();
      if (ttl > MAX_STREAM_TOKEN_TTL_SECONDS * 1000 || ttl < MAX_STREAM_TOKEN_TTL_SECONDS * 1000 - 60_000) fail('POST /stream-tokens', issued, 'expires_at must be 15 minutes on by default');
      const short = await send(s, 'POST', '/stream-tokens', { key: owner, body: { ttl_seconds: 60 } });
      if (short.status !== 201 || short.body.expires_at - Date.now() > 60_000) fail('POST /stream-tokens { ttl_seconds: 60 }', short, 'expected a token for at most 60 s');
      expectError('ttl_seconds 901', await send(s, 'POST', '/stream-tokens', { key: owner, body: { ttl_seconds: 901 } }), 400, 'validation_error');
      expectError('no key', await send(s, 'POST', '/stream-tokens'), 401, 'authentication_required');
      const token = encodeURIComponent(issued.body.token as string);
      // The project stream (the seeded project's events) and the Session stream open with it, no header.
      const res = await s.fetch(`${s.url}${P(s)}/events/stream?access_token=${token}`, { headers: { accept: 'text/event-stream' } });
      if (res.status !== 200) fail('the project stream with access_token', { status: res.status, headers: res.headers, text: await res.text(), body: undefined }, 'expected 200');
      await res.body?.cancel();
      const session = await s.fetch(`${s.url}/v1/sessions/${s.session_id}/events/stream?access_token=${token}`, { headers: { accept: 'text/event-stream' } });
      if (session.status !== 200) fail('the Session stream with access_token', undefined, `expected 200, got ${session.status}`);
      await session.body?.cancel();
      // Never on another route, and never an API key in a URL.
      expectError('access_token on a JSON route', await send(s, 'GET', `${P(s)}/events?access_token=${token}`), 401, 'invalid_credentials');
      expectError('an API key as access_token', await send(s, 'GET', `${P(s)}/events/stream?access_token=${encodeURIComponent(owner)}`), 401);
      expectError('a forged token', await send(s, 'GET', `${P(s)}/events/stream?access_token=${token.slice(0, -4)}AAAA`), 401, 'invalid_credentials');
      expectError('a token of an outsider', await send(s, 'GET', `${P(s)}/events/stream?access_token=${encodeURIComponent((await send(s, 'POST', '/stream-tokens', { key: s.keys.acc_outsider })).body.token)}`), 404);
      // Revoking the key ends its tokens: the admin revokes the owner's key.
      const keys = await send(s, 'GET', '/admin/keys?limit=200', { key: s.keys.admin });
      const mine = await send(s, 'GET', '/me', { key: owner });
      const key = (keys.body.items as Array<{ id: string; account_id: string; kind: string; revoked_at: unknown }>).find((k) => k.account_id === mine.body.account.id && k.kind === 'standard' && k.revoked_at === null);
      if (key === undefined) fail('GET /admin/keys', keys, "the owner's standard key is listed");
      const revoked = await send(s, 'DELETE', `/admin/keys/${key.id}`, { key: s.keys.admin });
      if (revoked.status >= 300) fail(`DELETE /admin/keys/${key.id}`, revoked, 'expected the key revoked');
      const deadline = Date.now() + 5_000;
      let after: Reply;
      do {
        after = await send(s, 'GET', `${P(s)}/events/stream?access_token=${token}`);
        if (after.status === 401) break;
        await new Promise((r) => setTimeout(r, 100));
      } while (Date.now() < deadline);
      expectError('a token of a revoked key', after, 401, 'invalid_credentials');
    },
  },
  {
    group: 'contract: CORS',
    layer: 'both',
    name: 'CORS off by default: no Access-Control-* header for any Origin, an OPTIONS preflight is 405 with Allow',
    async run(s) {
      const res = await send(s, 'GET', '/me', { key: s.keys.acc_owner, headers: { origin: 'http://app.example' } });
      if (res.status !== 200 || res.headers.get('access-control-allow-origin') !== null) fail('GET /me with an Origin', res, 'expected no CORS header');
      const preflight = await send(s, 'OPTIONS', '/me', { headers: { origin: 'http://app.example', 'access-control-request-method': 'GET' } });
      expectError('OPTIONS /me', preflight, 405, 'method_not_allowed');
      if (preflight.headers.get('access-control-allow-origin') !== null || preflight.headers.get('allow') !== 'GET, HEAD') fail('OPTIONS /me', preflight, 'expected Allow: GET, HEAD and no CORS header');
    },
  },
  {
    group: 'contract: CORS',
    layer: 'both',
    name: 'CORS with exact origins: an allowed Origin gets its own origin back and the exposed headers; its preflight 204 on every path; other origins nothing',
    settings: { cors: { origins: ['http://app.example', 'http://localhost:5173'] } },
    async run(s) {
      const owner = s.keys.acc_owner!;
      const ok = await send(s, 'GET', '/me', { key: owner, headers: { origin: 'http://app.example' } });
      if (ok.status !== 200 || ok.headers.get('access-control-allow-origin') !== 'http://app.example') fail('GET /me from an allowed origin', ok, 'expected Access-Control-Allow-Origin: http://app.example');
      const exposed = (ok.headers.get('access-control-expose-headers') ?? '').toLowerCase().split(/\s*,\s*/);
      for (const name of ['request-id', 'x-request-id', 'retry-after', 'x-should-retry']) if (!exposed.includes(name)) fail('GET /me from an allowed origin', ok, `${name} must be exposed`);
      if (ok.headers.get('access-control-allow-credentials') !== null) fail('GET /me', ok, 'credentials are off by default');
      const error = await send(s, 'GET', '/projects/proj_missing', { key: owner, headers: { origin: 'http://app.example' } });
      if (error.status !== 404 || error.headers.get('access-control-allow-origin') !== 'http://app.example') fail('an error from an allowed origin', error, 'errors carry the CORS headers too');
      for (const path of ['/me', `${P(s)}/events/stream`, `/v1/sessions/${s.session_id}/events`]) {
        const preflight = await send(s, 'OPTIONS', path, { headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' } });
        if (preflight.status !== 204 || preflight.headers.get('access-control-allow-origin') !== 'http://localhost:5173') fail(`OPTIONS ${path}`, preflight, 'expected 204 with the origin');
        if (!(preflight.headers.get('access-control-allow-methods') ?? '').includes('POST')) fail(`OPTIONS ${path}`, preflight, 'the methods are allowed');
        if (!(preflight.headers.get('access-control-allow-headers') ?? '').toLowerCase().includes('authorization')) fail(`OPTIONS ${path}`, preflight, 'Authorization is allowed');
        if (!/^\d+$/.test(preflight.headers.get('access-control-max-age') ?? '')) fail(`OPTIONS ${path}`, preflight, 'Access-Control-Max-Age is sent');
      }
      const other = await send(s, 'GET', '/me', { key: owner, headers: { origin: 'http://evil.example' } });
      if (other.status !== 200 || other.headers.get('access-control-allow-origin') !== null) fail('GET /me from another origin', other, 'expected no CORS header');
      const otherPreflight = await send(s, 'OPTIONS', '/me', { headers: { origin: 'http://evil.example', 'access-control-request-method': 'GET' } });
      if (otherPreflight.headers.get('access-control-allow-origin') !== null) fail('OPTIONS /me from another origin', otherPreflight, 'expected no CORS header');
    },
  },
  {
    group: 'contract: readers',
    name: 'a TavernHeadless-style reader (@tavern/sdk rules: projects with role and kind, members with id/workspace_id/status, GET /projects/:id/sessions, GET /operation-logs { data, meta }) gets every record',
    async run(s) {
      // What @tavern/sdk's project calls accept, re-stated from issue 31 (its reader drops a record that fails them).
      const ROLES = ['owner', 'deriver', 'observer'];
      const isProject = (p: any) => typeof p?.id === 'string' && typeof p?.name === 'string' && ROLES.includes(p?.role) && typeof p?.kind === 'string';
      const isMember = (m: any) => typeof m?.id === 'string' && typeof m?.workspace_id === 'string' && typeof m?.account_id === 'string' && ROLES.includes(m?.role) && typeof m?.status === 'string';
      const owner = s.keys.acc_owner!;
      // projects.get: the record itself carries role and kind.
      const got = await send(s, 'GET', P(s), { key: owner });
      if (got.status !== 200 || !isProject(got.body.project) || got.body.project.role !== 'owner' || got.body.project.kind !== 'project' || got.body.role !== 'owner') fail(`GET ${P(s)}`, got, 'expected the project record with role owner and kind project');
      const observed = await send(s, 'GET', P(s), { key: s.keys.acc_observer });
      if (observed.body.project?.role !== 'observer') fail(`GET ${P(s)} as the observer`, observed, 'role observer in the record');
      // projects.list: none dropped, for the owner and for a member.
      for (const [who, key] of [['owner', owner], ['deriver', s.keys.acc_deriver!]] as const) {
        const listed = await send(s, 'GET', '/projects', { key });
        const kept = (listed.body.items as unknown[]).filter(isProject);
        if (listed.status !== 200 || kept.length === 0 || kept.length !== listed.body.items.length) fail(`GET /projects as the ${who}`, listed, 'every item must pass the reader');
        if (!kept.some((p: any) => p.id === s.project_id && p.role === who)) fail(`GET /projects as the ${who}`, listed, `the kit project with role ${who}`);
      }
      // listMembers: none dropped; ids stable and distinct.
      const members = await send(s, 'GET', `${P(s)}/members`, { key: owner });
      const keptMembers = (members.body.items as unknown[]).filter(isMember) as Array<{ id: string; workspace_id: string }>;
      if (members.status !== 200 || keptMembers.length !== 2 || keptMembers.length !== members.body.items.length || keptMembers.some((m) => m.workspace_id !== 'ws_kit')) fail(`GET ${P(s)}/members`, members, 'two members, each passing the reader');
      const again = await send(s, 'GET', `${P(s)}/members`, { key: owner });
      if (JSON.stringify(again.body.items.map((m: any) => m.id)) !== JSON.stringify(keptMembers.map((m) => m.id)) || new Set(keptMembers.map((m) => m.id)).size !== 2) fail('member ids', again, 'the same distinct ids on every read');
      const added = await send(s, 'POST', `${P(s)}/members`, { key: owner, body: { account_id: 'acc_outsider', role: 'observer' } });
      if (added.status !== 201 || !isMember(added.body.member)) fail(`POST ${P(s)}/members`, added, 'the member record');
      // listSessions: GET /projects/:id/sessions, the same page as /sessions?project_id=.
      const sessions = await send(s, 'GET', `${P(s)}/sessions`, { key: s.keys.acc_observer });
      const viaQuery = await send(s, 'GET', `/sessions?project_id=${s.project_id}`, { key: s.keys.acc_observer });
      if (sessions.status !== 200 || !sessions.body.items.some((x: any) => x.id === s.session_id) || JSON.stringify(sessions.body) !== JSON.stringify(viaQuery.body)) fail(`GET ${P(s)}/sessions`, sessions, 'the project\'s Sessions, as /sessions?project_id=');
      expectError('an unknown project\'s sessions', await send(s, 'GET', '/projects/proj_missing/sessions', { key: owner }), 404, 'project_not_found');
      expectError('another tenant\'s project sessions', await send(s, 'GET', `${P(s)}/sessions`, { key: s.keys.acc_stranger }), 404, 'project_not_found');
      // operationLogs.list: GET /operation-logs?project_id= → { data, meta }, pages by meta.next_cursor, the same rows as the project's log.
      const rows: string[] = [];
      let cursor: string | null = null;
      do {
        const res: Reply = await send(s, 'GET', `/operation-logs?project_id=${s.project_id}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { key: owner });
        if (res.status !== 200 || !Array.isArray(res.body.data) || typeof res.body.meta !== 'object' || res.body.meta.limit !== 2 || res.body.meta.has_more !== (res.body.meta.next_cursor !== null)) fail('GET /operation-logs', res, 'expected { data, meta: { next_cursor, has_more, limit } }');
        rows.push(...res.body.data.map((r: { id: string }) => r.id));
        cursor = res.body.meta.next_cursor;
      } while (cursor !== null && rows.length < 100);
      const direct = await send(s, 'GET', `${P(s)}/operation-logs?limit=200`, { key: owner });
      if (JSON.stringify(rows) !== JSON.stringify(direct.body.items.map((r: { id: string }) => r.id)) || rows.length < 3) fail('GET /operation-logs pages', direct, 'the same rows as /projects/:id/operation-logs');
      expectError('the log without project_id', await send(s, 'GET', '/operation-logs', { key: owner }), 400, 'validation_error');
      expectError('the log as an observer', await send(s, 'GET', `/operation-logs?project_id=${s.project_id}`, { key: s.keys.acc_observer }), 403, 'permission_denied');
    },
  },
];
