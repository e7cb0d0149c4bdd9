/**
 * Hostile HTTP input on every route the server serves (the list comes from the server itself:
 * its OpenAPI document, checked by the adapter's own tests against its router): wrong, missing and odd
 * Content-Type values, empty and non-object bodies, bodies over the limit (accurate, lying and
 * absent Content-Length — chunked), deeply nested JSON, prototype-poisoning keys, integers beyond
 * 2^53, non-finite numbers, lone surrogates, U+0000, emoji at every length limit, non-integer and
 * huge path ids, paths whose percent-encoding does not decode, hostile query strings and cursors,
 * and requests Node's parser refuses. Each gets a
 * deliberate 4xx in the envelope with no stack or SQL, nothing is written (row counts of every
 * table through the kit's raw reader, else the Store port's `worldState`; Project Events published
 * and the Live Inbox window; checked around every request), and
 * the process stays up: afterwards `/health` is 200, valid requests work, and every message the
 * Live Inbox acknowledged reaches the Session ledger.
 *
 * The Live Inbox routes run against a real active queue: the world's Session Runtime holds a
 * Run of `sess_001` open (its model waits) for the whole suite. Moved here from `@inbox-kit/http-fastify`'s
 * `hostile-input.test.ts`; Node only (`node:http`, `node:net`, `node:zlib`).
 *
 * The whole matrix runs in-process once per store (`runHttpBehaviour`: the pipeline parses,
 * validates and answers for every adapter) and over sockets for a third party's
 * `runHttpConformance`; an adapter's thin wire run (`runHttpWire`) keeps over its sockets a sample
 * of what the framework itself touches — raw path bytes and percent-encoding, Content-Type and
 * body reading, chunked and over-limit bodies, a few hostile queries, on a few routes each
 * ({@link THIN_ROUTES}) — and the requests Node's parser refuses (sockets only).
 */
import { expect } from 'vitest';
import { rawSender, registerSuite, type HttpSuiteBase, type HttpSuiteGroup } from './http-suites-kit.js';
import type { HttpConformanceOptions } from './http-conformance-checks.js';
import { expect4xx, keyOf, routeInventory, type ParamValues, type RawRequest, type RouteInfo } from './http-raw.js';
import { heldModel, startHttpWorld, type HeldModel, type HttpWorld, type WorldResponse } from './http-world.js';
import { hostileBodyChecks } from './http-suites-hostile-bodies.js';
import { hostileFieldChecks } from './http-suites-hostile-fields.js';

export const SESSION = 'sess_001';
export const LI = `/v1/awaken/sessions/${SESSION}/live-inbox`;
export const text = (t: string) => [{ type: 'text', text: t }];
export const MiB = 1_048_576;
export const json = { 'content-type': 'application/json' };

/** Valid bodies by route; `order` is computed from the queue at the time (every current id, reversed). */
export type BodyTable = Record<string, unknown>;

/** The routes an adapter's wire run sends each hostile variant on (`METHOD /template`): a body route of each kind, path ids of each kind, a list with a query, a stream. */
export const THIN_ROUTES: ReadonlySet<string> = new Set([
  'POST /projects/{id}/inbox', 'PATCH /projects/{id}/inbox/{item_id}', 'PUT /v1/awaken/sessions/{session_id}/live-inbox/{message_id}',
  'GET /projects/{id}/inbox', 'GET /projects/{id}/events/stream',
]);

/** What the hostile-input checks share: one world with a Run held open on `sess_001`. */
export interface HostileCtx extends HttpSuiteBase {
  h: HttpWorld;
  model: HeldModel;
  routes: RouteInfo[];
  values: ParamValues;
  secrets: string[];
  /** Ids the Live Inbox acknowledged (200 { id }); each must reach the ledger in the end. */
  acknowledged: string[];
  /** One raw request (`http-raw.ts`): over a fresh connection, or in-process to the world's handler. */
  send(r: RawRequest): Promise<WorldResponse>;
  /** What a refused request must leave as it was. */
  worldState(): Promise<unknown>;
  bodies(): Promise<BodyTable>;
  bodyRoutes(): RouteInfo[];
  writeRoutes(): RouteInfo[];
  /** Sends `r` as the owner (unless it says otherwise) and checks: a 4xx envelope, no leak, nothing written. */
  hostile(what: string, r: RawRequest, opts?: { allow2xx?: boolean; as?: string }): Promise<WorldResponse>;
  /** `routes` of {@link THIN_ROUTES} in a wire run, else all of them. */
  few(routes: RouteInfo[]): RouteInfo[];
  /** The first of `routes` in a wire run, else all of them. */
  one(routes: RouteInfo[]): RouteInfo[];
}

/** The valid body of every body route, now (the reorder names the queue's current ids). */
async function bodyTable(h: HttpWorld): Promise<BodyTable> {
  const snap = (await h.request('GET', LI, { as: 'acc_owner' })).body as { messages: { id: number }[] };
  return {
    'POST /projects': { name: 'Hostile test project' },
    'POST /projects/{id}/members': { account_id: 'acc_observer', role: 'observer' },
    'POST /sessions': { project_id: 'proj_main', title: 'hostile' },
    'POST /sessions/{id}/floors': { content: { text: 'turn' } },
    'POST /sessions/{id}/floors/{floor_id}/pages': { content: { text: 'again' } },
    'POST /projects/{id}/inbox': { type: 'hostile.probe', title: 'probe', payload: { a: 1 } },
    'PATCH /projects/{id}/inbox/{item_id}': { decision: 'archive', note: 'n' },
    'POST /v1/sessions/{session_id}/events': { events: [{ type: 'user.message', content: text('durable') }] },
    'POST /v1/awaken/sessions/{session_id}/live-inbox': { content: text('queued') },
    'PUT /v1/awaken/sessions/{session_id}/live-inbox/order': { order: snap.messages.map((m) => m.id).reverse() },
    'PUT /v1/awaken/sessions/{session_id}/live-inbox/{message_id}': { content: text('edited') },
    'POST /admin/accounts': { name: 'Hostile probe' },
    'POST /admin/accounts/{id}/keys': { kind: 'standard' },
    'POST /admin/keys/{id}/rotate': { grace_ms: 0 },
    'POST /stream-tokens': { ttl_seconds: 60 },
  };
}

/** The key a route is sent with: the owner's, or for an administration route the admin key (so the route's own rules answer, not the key's kind). */
const keyFor = (path: string) => (path.startsWith('/admin/') ? 'admin' : 'acc_owner');

/** Starts the world, holds a Run of `sess_001` open with two queued messages, files an item, and binds the helpers. */
async function openHostile(base: HttpSuiteBase): Promise<HostileCtx> {
  const model = heldModel();
  const h = await startHttpWorld(base.kit, { model });
  const send = rawSender(base, h);
  const routes = await routeInventory(h.url, h.fetch);
  const secrets = Object.values(h.keys);
  const acknowledged: string[] = [];
  const started = await h.request('POST', `/v1/sessions/${SESSION}/events`, { as: 'acc_owner', body: { events: [{ type: 'user.message', content: text('start') }] } });
  expect(started.status, started.text).toBe(200);
  await model.waiting();
  for (const t of ['first', 'second']) {
    const q = await h.request('POST', LI, { as: 'acc_owner', body: { content: text(t) } });
    expect(q.status, q.text).toBe(200);
    acknowledged.push(t);
  }
  const item = await h.request('POST', '/projects/proj_main/inbox', { as: 'acc_deriver', body: { type: 'probe' } });
  expect(item.status).toBe(201);
  const values: ParamValues = {
    projects: 'proj_main', sessions: SESSION, inbox: item.body.item.id, members: 'acc_observer', floors: h.floors.A.id, 'live-inbox': '1',
    accounts: 'acc_probe', keys: h.keyIds.probe!,
  };
  const worldState = async (): Promise<unknown> => {
    const rows = await h.rowCounts();
    if (rows === null) return h.worldState(LI);
    return { counts: rows, published: h.published.length, liveInbox: (await h.request('GET', LI, { as: 'acc_owner' })).body };
  };
  const hostile = async (what: string, r: RawRequest, opts: { allow2xx?: boolean; as?: string } = {}): Promise<WorldResponse> => {
    const before = await worldState();
    const res = await send({ ...r, headers: { authorization: `Bearer ${h.keys[opts.as ?? keyFor(r.path)]}`, ...r.headers } });
    if (opts.allow2xx && res.status < 300) expect(res.status, what).toBeGreaterThanOrEqual(200);
    else expect4xx(res, what, secrets);
    expect(await worldState(), `${what} wrote something`).toEqual(before);
    return res;
  };
  const wire = base.mode === 'wire';
  return {
    ...base, h, model, routes, values, secrets, acknowledged, send, worldState, hostile,
    bodies: () => bodyTable(h),
    bodyRoutes: () => routes.filter((r) => r.body !== undefined),
    writeRoutes: () => routes.filter((r) => r.method !== 'GET' && !r.public),
    few: (list) => (wire ? list.filter((r) => THIN_ROUTES.has(keyOf(r))) : list),
    one: (list) => (wire ? list.filter((r) => keyOf(r) === 'POST /projects/{id}/inbox') : list),
  };
}

/** Hostile input on every route the adapter documents in its `/openapi.json` (see the file comment), as data. */
export const hostileInputGroup: HttpSuiteGroup<HostileCtx> = {
  name: 'hostile input on every route',
  layer: 'both',
  open: openHostile,
  async close(ctx) {
    ctx?.model.release();
    await ctx?.h.close();
  },
  // Each check sends hundreds of requests, reading every table's row count around each (PostgreSQL on a loaded machine: minutes).
  checks: [...hostileBodyChecks, ...hostileFieldChecks].map((check) => ({ timeout: 180_000, ...check })),
};

/**
 * Registers the hostile-input checks (see the file comment). "Nothing written" is read through the
 * `rowCounts` reader `openStore` gives (every table of the database), else through the Store port
 * (`worldState`), plus the Project Events published and the Live Inbox window.
 */
export function hostileInputSuite(kit: HttpConformanceOptions): void {
  registerSuite(kit, hostileInputGroup);
}
