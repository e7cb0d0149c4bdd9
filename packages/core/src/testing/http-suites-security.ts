/**
 * Security review of authentication and tenancy over real HTTP, walking every route the adapter
 * lists in its `/openapi.json` (so a new route is covered at once). Moved here from
 * `@inbox-kit/http-fastify`'s `security-auth.test.ts` (which keeps the storage checks: keys stored
 * only as SHA-256, `constantTimeEqual`):
 * - `GET /me` shows neither a key's secret nor its hash; near misses of a real key are refused
 *   exactly like unknown keys;
 * - every non-public route refuses missing, malformed, unknown and revoked credentials (401);
 * - no cross-workspace reads or writes through any route, in either direction: a key of another
 *   workspace gets 404 on every route that names a resource, byte-identical (but for request_id)
 *   to the answer for a resource that does not exist; nothing is written (every row, through the
 *   kit's `dumpRows` reader or the in-memory store's rows), the running Run and its Live Inbox are
 *   untouched; collection routes show nothing of the other tenant;
 * - impersonation: a standard key naming another account gets 403 on every route, a service key
 *   naming an account outside its workspace 404;
 * - no stack, SQL or internals in any error, also when the store fails on every call (injected
 *   failures, `failure.everything`) and on real database errors (`failure.method`), on every route.
 *
 * Data (`http-suites-kit.ts`): the walks run in-process once per store (the pipeline authenticates
 * and answers for every adapter) and over sockets for a third party's `runHttpConformance`; an
 * adapter's wire run walks the thin routes (`THIN_ROUTES` of `http-suites-hostile.ts`) only.
 */
import { createHash } from 'node:crypto';
import { expect } from 'vitest';
import type { HttpConformanceOptions } from './http-conformance-checks.js';
import { fill, isAdminRoute, keyOf, routeInventory, validBody, type ParamValues, type RawRequest, type RouteInfo } from './http-raw.js';
import { heldModel, startHttpWorld, type HeldModel, type HttpWorld, type WorldEnvelope, type WorldResponse } from './http-world.js';
import { rawSender, registerSuite, type HttpSuiteBase, type HttpSuiteGroup } from './http-suites-kit.js';
import { THIN_ROUTES } from './http-suites-hostile.js';
import { tenancyChecks } from './http-suites-security-tenancy.js';
import { internalsChecks } from './http-suites-security-internals.js';

export const SESSION = 'sess_001';
export const LI = `/v1/awaken/sessions/${SESSION}/live-inbox`;
export const text = (t: string) => [{ type: 'text', text: t }];
export const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
/** The envelope without its request id, for "indistinguishable" comparisons. */
export const strip = (res: WorldResponse) => JSON.stringify({ ...(res.body as WorldEnvelope), error: { ...(res.body as WorldEnvelope).error, request_id: '' } });

/**
 * Every row of every table (`h.dumpRows()`), with each key's `last_used_at` masked: authentication
 * records a key's use in the background when the stored one is older than its resolution
 * (informational, never awaited), which may land between two snapshots of a check.
 */
export async function dumpWrittenRows(h: HttpWorld): Promise<Record<string, string[]> | null> {
  const dump = await h.dumpRows();
  if (dump === null) return null;
  return Object.fromEntries(Object.entries(dump).map(([table, rows]) => [table, rows.map((row) => row.replace(/"last_used_at":(?:\d+|null)/g, '"last_used_at":"…"'))]));
}

/** A valid body for each route that takes one (ids of the caller's own workspace where it matters). */
export const BODIES: Record<string, unknown> = {
  'POST /projects': { name: 'Security test project' },
  'POST /projects/{id}/members': { account_id: 'acc_observer', role: 'observer' },
  'POST /sessions': { project_id: 'proj_main', title: 'security' },
  'POST /sessions/{id}/floors': { content: { text: 'turn' } },
  'POST /sessions/{id}/floors/{floor_id}/pages': { content: { text: 'again' } },
  'POST /projects/{id}/inbox': { type: 'security.probe', source_session_id: 'sess_001' },
  'PATCH /projects/{id}/inbox/{item_id}': { decision: 'accept' },
  'POST /v1/sessions/{session_id}/events': { events: [{ type: 'user.message', content: text('durable') }] },
  'POST /v1/awaken/sessions/{session_id}/live-inbox': { content: text('queued') },
  'PUT /v1/awaken/sessions/{session_id}/live-inbox/order': { order: [2, 1] },
  'PUT /v1/awaken/sessions/{session_id}/live-inbox/{message_id}': { content: text('edited') },
  'POST /admin/accounts': { name: 'Security probe' },
  'POST /admin/accounts/{id}/keys': { kind: 'standard' },
  'POST /admin/keys/{id}/rotate': { grace_ms: 0 },
  'POST /stream-tokens': { ttl_seconds: 60 },
};

export const MISSING: ParamValues = {
  projects: 'proj_missing', sessions: 'sess_missing', inbox: 'pinbox_missing', members: 'acc_missing', floors: 'floor_missing', 'live-inbox': '1',
  accounts: 'acc_missing', keys: 'key_missing',
};

/** What the tenancy walks share: a world with a Run held open on `sess_001` and a resource of each kind in both workspaces. */
export interface TenancyCtx extends HttpSuiteBase {
  h: HttpWorld;
  model: HeldModel;
  routes: RouteInfo[];
  secrets: string[];
  /** ws_demo resources (owned by acc_owner) and ws_other resources (owned by acc_stranger). */
  demo: ParamValues;
  other: ParamValues;
  raw(r: RawRequest): Promise<WorldResponse>;
  /** Routes that name a resource (the thin ones in an adapter's wire run). */
  resourceRoutes(): RouteInfo[];
  /** Routes that need a credential (the thin ones in an adapter's wire run). */
  privateRoutes(): RouteInfo[];
  /** Sends `route` (valid body, filled path) with `headers`, as `method` (default the route's). */
  call(route: RouteInfo, values: ParamValues, headers: Record<string, string>, method?: string): Promise<WorldResponse>;
  /**
   * Runs `fn`, then checks the world (Store-port counts, the published events, the Live Inbox
   * window) and every row of every table (`dumpRows`, when there is a reader) are as before.
   */
  nothingWritten(fn: () => Promise<void>): Promise<void>;
}

async function openTenancy(base: HttpSuiteBase): Promise<TenancyCtx> {
  const model = heldModel();
  const h = await startHttpWorld(base.kit, { model });
  const raw = rawSender(base, h);
  const routes = await routeInventory(h.url, h.fetch);
  const secrets = Object.values(h.keys);
  expect((await h.request('POST', `/v1/sessions/${SESSION}/events`, { as: 'acc_owner', body: { events: [{ type: 'user.message', content: text('start') }] } })).status).toBe(200);
  await model.waiting();
  for (const t of ['one', 'two']) expect((await h.request('POST', LI, { as: 'acc_owner', body: { content: text(t) } })).status).toBe(200);
  const item = await h.request('POST', '/projects/proj_main/inbox', { as: 'acc_deriver', body: { type: 'probe' } });
  const foreignItem = await h.request('POST', '/projects/proj_foreign/inbox', { as: 'acc_stranger', body: { type: 'foreign.probe' } });
  expect([item.status, foreignItem.status]).toEqual([201, 201]);
  const demo: ParamValues = {
    projects: 'proj_main', sessions: SESSION, inbox: item.body.item.id, members: 'acc_deriver', floors: h.floors.A.id, 'live-inbox': '1',
    accounts: 'acc_probe', keys: h.keyIds.probe!,
  };
  const other: ParamValues = {
    projects: 'proj_foreign', sessions: 'sess_foreign', inbox: foreignItem.body.item.id, members: 'acc_stranger', floors: h.floors.F.id, 'live-inbox': '1',
    accounts: 'acc_stranger', keys: h.keyIds.acc_stranger!,
  };
  const thin = (list: RouteInfo[]) => (base.mode === 'wire' ? list.filter((r) => THIN_ROUTES.has(keyOf(r))) : list);
  return {
    ...base, h, model, routes, secrets, demo, other, raw,
    resourceRoutes: () => thin(routes.filter((r) => r.params.length > 0)),
    privateRoutes: () => thin(routes.filter((r) => !r.public)),
    call: (route, values, headers, method = route.method) => raw({
      method,
      path: fill(route, values),
      headers: { ...headers, ...(route.body ? { 'content-type': 'application/json' } : {}) },
      ...(route.body ? { body: JSON.stringify(validBody(route, BODIES)) } : {}),
      headOnly: route.stream,
    }),
    async nothingWritten(fn) {
      const before = await h.worldState(LI);
      const dump = await dumpWrittenRows(h);
      await fn();
      expect(await h.worldState(LI)).toEqual(before);
      expect(await dumpWrittenRows(h)).toEqual(dump);
    },
  };
}

/** What the failing-store checks share: a world whose store fails on demand (`h.failure`). */
export interface InternalsCtx extends HttpSuiteBase {
  h: HttpWorld;
  routes: RouteInfo[];
  values: ParamValues;
  /** Sends `route` as the owner (the admin key on administration routes) with a valid body, filled from `at`. */
  send(route: RouteInfo, at?: ParamValues, bodies?: Record<string, unknown>): Promise<WorldResponse>;
}

async function openInternals(base: HttpSuiteBase): Promise<InternalsCtx> {
  const quick = heldModel();
  quick.release();
  const h = await startHttpWorld(base.kit, { model: quick });
  const raw = rawSender(base, h);
  const routes = await routeInventory(h.url, h.fetch);
  const item = await h.request('POST', '/projects/proj_main/inbox', { as: 'acc_deriver', body: { type: 'probe' } });
  const values: ParamValues = {
    projects: 'proj_main', sessions: SESSION, inbox: item.body.item.id, members: 'acc_deriver', floors: h.floors.A.id, 'live-inbox': '1',
    accounts: 'acc_probe', keys: h.keyIds.probe!,
  };
  return {
    ...base, h, routes, values,
    send: (route, at = values, bodies = BODIES) => raw({
      method: route.method,
      path: fill(route, at),
      headers: { authorization: `Bearer ${h.keys[isAdminRoute(route) ? 'admin' : 'acc_owner']}`, ...(route.body ? { 'content-type': 'application/json' } : {}) },
      ...(route.body ? { body: JSON.stringify(validBody(route, bodies)) } : {}),
      headOnly: route.stream,
    }),
  };
}

/** Authentication and tenancy on every route, and no internals in any error (see the file comment), as data. */
export const securityGroup: HttpSuiteGroup<TenancyCtx> = {
  name: 'security review of auth and tenancy',
  layer: 'both',
  open: openTenancy,
  async close(ctx) {
    ctx?.model.release();
    await ctx?.h.close();
  },
  checks: tenancyChecks.map((check) => ({ timeout: 120_000, ...check })),
};

/** No stack, SQL or internals in any error, as data. */
export const internalsGroup: HttpSuiteGroup<InternalsCtx> = {
  name: 'no stack, SQL or internals in any error',
  layer: 'both',
  open: openInternals,
  async close(ctx) {
    if (ctx) Object.assign(ctx.h.failure, { method: null, everything: false });
    await ctx?.h.close();
  },
  checks: internalsChecks.map((check) => ({ timeout: 180_000, ...check })),
};

/** Registers the security review: authentication and tenancy on every route, and no internals in any error. */
export function securitySuite(kit: HttpConformanceOptions): void {
  registerSuite(kit, securityGroup);
  registerSuite(kit, internalsGroup);
}
