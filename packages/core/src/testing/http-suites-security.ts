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
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect} from 'vitest';
import { kitIt, layerRuns } from './http-kit.js';
import type { HttpConformanceOptions } from './http-conformance-checks.js';
import { expectNoLeak, fill, isAdminRoute, keyOf, rawRequest, routeInventory, validBody, type ParamValues, type RouteInfo } from './http-raw.js';
import { expectError, heldModel, startHttpWorld, type HeldModel, type HttpWorld, type WorldEnvelope, type WorldResponse } from './http-world.js';
import type { StoreTx } from '../ports/store.js';

const SESSION = 'sess_001';
const LI = `/v1/awaken/sessions/${SESSION}/live-inbox`;
const text = (t: string) => [{ type: 'text', text: t }];
const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
/** The envelope without its request id, for "indistinguishable" comparisons. */
const strip = (res: WorldResponse) => JSON.stringify({ ...(res.body as WorldEnvelope), error: { ...(res.body as WorldEnvelope).error, request_id: '' } });

/** A valid body for each route that takes one (ids of the caller's own workspace where it matters). */
const BODIES: Record<string, unknown> = {
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

const MISSING: ParamValues = {
  projects: 'proj_missing', sessions: 'sess_missing', inbox: 'pinbox_missing', members: 'acc_missing', floors: 'floor_missing', 'live-inbox': '1',
  accounts: 'acc_missing', keys: 'key_missing',
};

/** Authentication and tenancy on every route, and no internals in any error (see the file comment). */
export function securitySuite(kit: HttpConformanceOptions): void {
  if (!layerRuns(kit.mode ?? 'sockets', 'wire')) return;
  const it = kitIt(kit, 'security review of auth and tenancy', 'wire');
  describe('security review of auth and tenancy', () => {
    let h: HttpWorld;
    let model: HeldModel;
    let routes: RouteInfo[];
    let secrets: string[];
    /** ws_demo resources (owned by acc_owner) and ws_other resources (owned by acc_stranger). */
    let demo: ParamValues;
    let other: ParamValues;

    beforeAll(async () => {
      model = heldModel();
      h = await startHttpWorld(kit, { model });
      routes = await routeInventory(h.url);
      secrets = Object.values(h.keys);
      expect((await h.request('POST', `/v1/sessions/${SESSION}/events`, { as: 'acc_owner', body: { events: [{ type: 'user.message', content: text('start') }] } })).status).toBe(200);
      await model.waiting();
      for (const t of ['one', 'two']) expect((await h.request('POST', LI, { as: 'acc_owner', body: { content: text(t) } })).status).toBe(200);
      const item = await h.request('POST', '/projects/proj_main/inbox', { as: 'acc_deriver', body: { type: 'probe' } });
      const foreignItem = await h.request('POST', '/projects/proj_foreign/inbox', { as: 'acc_stranger', body: { type: 'foreign.probe' } });
      expect([item.status, foreignItem.status]).toEqual([201, 201]);
      demo = {
        projects: 'proj_main', sessions: SESSION, inbox: item.body.item.id, members: 'acc_deriver', floors: h.floors.A.id, 'live-inbox': '1',
        accounts: 'acc_probe', keys: h.keyIds.probe!,
      };
      other = {
        projects: 'proj_foreign', sessions: 'sess_foreign', inbox: foreignItem.body.item.id, members: 'acc_stranger', floors: h.floors.F.id, 'live-inbox': '1',
        accounts: 'acc_stranger', keys: h.keyIds.acc_stranger!,
      };
    });
    afterAll(async () => {
      model?.release();
      await h?.close();
    });

    const resourceRoutes = () => routes.filter((r) => r.params.length > 0);
    const privateRoutes = () => routes.filter((r) => !r.public);

    /** Sends `route` (valid body, filled path) with `headers`; for GET routes also as HEAD. */
    async function call(route: RouteInfo, values: ParamValues, headers: Record<string, string>, method = route.method): Promise<WorldResponse> {
      return rawRequest(h.url, {
        method,
        path: fill(route, values),
        headers: { ...headers, ...(route.body ? { 'content-type': 'application/json' } : {}) },
        ...(route.body ? { body: JSON.stringify(validBody(route, BODIES)) } : {}),
        headOnly: route.stream,
      });
    }

    /**
     * Runs `fn`, then checks the world (Store-port counts, the published events, the Live Inbox
     * window) and every row of every table (`dumpRows`, when there is a reader) are as before.
     */
    async function nothingWritten(fn: () => Promise<void>): Promise<void> {
      const before = await h.worldState(LI);
      const dump = await h.dumpRows();
      await fn();
      expect(await h.worldState(LI)).toEqual(before);
      expect(await h.dumpRows()).toEqual(dump);
    }

    it('GET /me shows the key\'s kind, never its secret nor its SHA-256 (what the store keeps)', async () => {
      for (const secret of secrets) expect(secret).toMatch(/^ik_[A-Za-z0-9_-]{40}$/); // 240 random bits
      for (const as of ['acc_owner', 'service']) {
        const me = await h.request('GET', '/me', { as });
        expect(me.status).toBe(200);
        expectNoLeak(me.text, secrets, 'GET /me');
        for (const secret of secrets) expect(me.text.includes(sha256(secret)), 'GET /me shows a key hash').toBe(false);
      }
    });

    it('near misses of a real key are refused exactly like an unknown key (401 invalid_credentials), also as x-api-key', async () => {
      const key = h.keys.acc_owner!;
      const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
      const nearMisses = [
        flip(key, 3), flip(key, 20), flip(key, key.length - 1), key.slice(0, -1), `${key}A`, key.toUpperCase(), key.slice(3), `${key}\u200b`,
        sha256(key), `ik_${'A'.repeat(40)}`, 'ik_', key.repeat(2),
      ];
      const reference = strip(await rawRequest(h.url, { method: 'GET', path: '/me', headers: { authorization: 'Bearer ik_unknown' } }));
      await nothingWritten(async () => {
        for (const guess of nearMisses) {
          const sendable = encodeURI(guess); // a header value is Latin-1: the zero-width space goes percent-encoded
          for (const headers of [{ authorization: `Bearer ${sendable}` }, { 'x-api-key': sendable }] as Record<string, string>[]) {
            const res = await rawRequest(h.url, { method: 'GET', path: '/me', headers });
            expectError(res, 401, 'invalid_credentials');
            expect(strip(res)).toBe(reference);
            expectNoLeak(res.text, secrets, 'near miss');
          }
        }
      });
    });

    it('every non-public route refuses a missing, empty, malformed, unknown or revoked credential (401); nothing written', async () => {
      const cases: [string, Record<string, string>, string][] = [
        ['no credential', {}, 'authentication_required'],
        ['an empty bearer', { authorization: 'Bearer ' }, 'authentication_required'],
        ['an empty x-api-key', { 'x-api-key': '' }, 'authentication_required'],
        ['another scheme', { authorization: `Basic ${Buffer.from(`acc_owner:${h.keys.acc_owner}`).toString('base64')}` }, ''],
        ['the key without a scheme', { authorization: h.keys.acc_owner! }, ''],
        ['an unknown key', { authorization: 'Bearer ik_not_a_real_key' }, 'invalid_credentials'],
        ['a revoked key', { authorization: `Bearer ${h.keys.revoked}` }, 'invalid_credentials'],
        ['a revoked key as x-api-key', { 'x-api-key': h.keys.revoked! }, 'invalid_credentials'],
        ['an unknown key with an account to act as', { authorization: 'Bearer ik_nope', 'x-account-id': 'acc_owner' }, 'invalid_credentials'],
      ];
      await nothingWritten(async () => {
        for (const route of privateRoutes()) {
          for (const [what, headers, code] of cases) {
            const values = route.params.length ? demo : {};
            const res = await call(route, values, headers);
            const env = expectError(res, 401, code || undefined);
            expect(['authentication_required', 'invalid_credentials']).toContain(env.error.code);
            expectNoLeak(res.text, secrets, `${keyOf(route)} with ${what}`);
            if (route.method === 'GET') expect((await call(route, values, headers, 'HEAD')).status, `HEAD ${route.template} with ${what}`).toBe(401);
          }
        }
      });
      // The public routes stay public.
      for (const route of routes.filter((r) => r.public)) expect((await call(route, {}, {})).status, keyOf(route)).toBe(200);
    });

    it('no cross-workspace access through any route, in either direction: 404 identical to a missing resource, nothing written', async () => {
      // The administration routes need an admin key: each walk that crosses workspaces sends one of its own workspace there.
      const walks: { who: string; headers: Record<string, string>; admin?: Record<string, string>; theirs: ParamValues }[] = [
        { who: 'acc_stranger (ws_other) on ws_demo', headers: { authorization: `Bearer ${h.keys.acc_stranger}` }, admin: { authorization: `Bearer ${h.keys.admin_other}` }, theirs: demo },
        { who: 'acc_owner (ws_demo) on ws_other', headers: { authorization: `Bearer ${h.keys.acc_owner}` }, admin: { authorization: `Bearer ${h.keys.admin}` }, theirs: other },
        { who: 'the ws_demo service key acting as acc_owner on ws_other', headers: { authorization: `Bearer ${h.keys.service}`, 'x-account-id': 'acc_owner' }, theirs: other },
        { who: 'acc_outsider (ws_demo, no role) on proj_main', headers: { authorization: `Bearer ${h.keys.acc_outsider}` }, theirs: demo },
      ];
      await nothingWritten(async () => {
        for (const { admin, ...base } of walks) {
          for (const route of resourceRoutes()) {
            if (isAdminRoute(route) && admin === undefined) continue;
            const walk = isAdminRoute(route) ? { ...base, headers: admin! } : base;
            const res = await call(route, walk.theirs, walk.headers);
            const what = `${walk.who}: ${route.method} ${fill(route, walk.theirs)}`;
            expect(res.status, `${what} → ${res.text.slice(0, 200)}`).toBe(404);
            expectError(res, 404);
            expectNoLeak(res.text, secrets, what);
            for (const id of Object.values(walk.theirs).filter((v) => v.length > 2)) expect(res.text.includes(id), `${what} echoes ${id}`).toBe(false);
            // Indistinguishable from a resource that does not exist at all.
            const missing = await call(route, MISSING, walk.headers);
            expect(strip(res), `${what} differs from a missing resource`).toBe(strip(missing));
            if (route.method === 'GET') expect((await call(route, walk.theirs, walk.headers, 'HEAD')).status, `HEAD ${what}`).toBe(404);
          }
        }
      });
    });

    it('collection routes show nothing of another workspace, and refuse to reach into it', async () => {
      const demoIds = ['ws_demo', 'proj_main', 'proj_side', SESSION, 'sess_002', 'sess_side', 'sess_loose', 'acc_owner', 'acc_deriver', demo.inbox!, h.floors.A.id];
      const stranger = { authorization: `Bearer ${h.keys.acc_stranger}` };
      // `GET /operation-logs` names its project in the query: checked below, as a resource of another workspace.
      const collections = routes.filter((r) => r.params.length === 0 && !r.public && r.method === 'GET' && keyOf(r) !== 'GET /operation-logs');
      expect(collections.map(keyOf).sort()).toEqual(['GET /admin/accounts', 'GET /admin/keys', 'GET /admin/operation-logs', 'GET /me', 'GET /projects', 'GET /sessions']);
      const foreignLog = await h.request('GET', '/operation-logs?project_id=proj_main', { headers: stranger });
      const missingLog = await h.request('GET', '/operation-logs?project_id=proj_missing', { headers: stranger });
      expect(foreignLog.status).toBe(404);
      expect(strip(foreignLog)).toBe(strip(missingLog));
      for (const route of collections) {
        const res = await call(route, {}, isAdminRoute(route) ? { authorization: `Bearer ${h.keys.admin_other}` } : stranger);
        expect(res.status, keyOf(route)).toBe(200);
        for (const id of demoIds) expect(res.text.includes(id), `${keyOf(route)} shows ${id} to another workspace`).toBe(false);
      }
      await nothingWritten(async () => {
        expectError(await h.request('GET', '/sessions?project_id=proj_main', { as: 'acc_stranger' }), 404, 'project_not_found');
        expectError(await h.request('POST', '/sessions', { as: 'acc_stranger', body: { project_id: 'proj_main', title: 'x' } }), 404, 'project_not_found');
        expectError(await h.request('POST', '/projects/proj_foreign/inbox', { as: 'acc_stranger', body: { type: 't', source_session_id: SESSION } }), 404, 'session_not_found');
        expectError(await h.request('POST', '/projects/proj_foreign/inbox', { as: 'acc_stranger', body: { type: 't', source_floor_id: h.floors.A.id } }), 404, 'floor_not_found');
        expectError(await h.request('POST', '/projects/proj_foreign/inbox', { as: 'acc_stranger', body: { type: 't', source_page_id: h.pages.A1.id } }), 404, 'page_not_found');
        expectError(await h.request('POST', '/projects/proj_foreign/members', { as: 'acc_stranger', body: { account_id: 'acc_owner', role: 'deriver' } }), 404, 'account_not_found');
        // Ids are generated, never chosen over HTTP: an id another workspace holds and an unused one
        // get the same 400 (the answer tells nothing about other workspaces), and nothing is written.
        for (const [path, taken, unused] of [
          ['/projects', { id: 'proj_main', name: 'mine now' }, { id: 'proj_unused_x', name: 'mine now' }],
          ['/sessions', { id: SESSION }, { id: 'sess_unused_x' }],
          ['/sessions', { id: SESSION, project_id: 'proj_foreign' }, { id: 'sess_unused_x', project_id: 'proj_foreign' }],
        ] as const) {
          const answers = [];
          for (const body of [taken, unused]) {
            const res = await h.request('POST', path, { as: 'acc_stranger', body });
            const env = expectError(res, 400, 'validation_error');
            expectNoLeak(res.text, secrets, `POST ${path} ${JSON.stringify(body)}`);
            answers.push({ ...env.error, request_id: undefined });
          }
          expect(answers[0]).toEqual(answers[1]);
        }
      });
      // The owner's own resources are intact and still answer.
      expect((await h.request('GET', '/projects/proj_main', { as: 'acc_owner' })).body.project.name).toBe('Main project');
      expect((await h.request('GET', `/sessions/${SESSION}`, { as: 'acc_owner' })).body.session.workspace_id).toBe('ws_demo');
    });

    it('impersonation: a standard key naming another account → 403, a service key naming an account outside its workspace → 404, on every route; nothing written', async () => {
      await nothingWritten(async () => {
        for (const route of privateRoutes()) {
          const values = route.params.length ? demo : {};
          for (const as of ['acc_owner', 'acc_stranger', 'acc_missing']) {
            const res = await call(route, values, { authorization: `Bearer ${h.keys.acc_deriver}`, 'x-account-id': as });
            expectError(res, 403, 'permission_denied');
            expectNoLeak(res.text, secrets, `${keyOf(route)} as ${as}`);
          }
          for (const as of ['acc_stranger', 'acc_missing', 'acc_owner, acc_stranger']) {
            const res = await call(route, values, { authorization: `Bearer ${h.keys.service}`, 'x-account-id': as });
            expectError(res, 404, 'account_not_found');
            expectNoLeak(res.text, secrets, `${keyOf(route)} via the service key as ${as}`);
          }
        }
      });
    });

    it('the running Run and its Live Inbox were untouched by all of it', async () => {
      const window = (await h.request('GET', LI, { as: 'acc_owner' })).body;
      expect(window).toMatchObject({ active: true, version: 2, messages: [{ id: 1, content: text('one') }, { id: 2, content: text('two') }] });
      model.release();
      await h.runtime!.whenIdle(SESSION);
      const history = (await h.request('GET', `/v1/sessions/${SESSION}/events?limit=1000`, { as: 'acc_owner' })).body.data as { type: string; content: { text?: string }[] }[];
      expect(history.filter((e) => e.type === 'user.message').map((e) => e.content[0]!.text)).toEqual(['start', 'one', 'two']);
    });
  });

  describe('no stack, SQL or internals in any error', () => {
    let h: HttpWorld;
    let routes: RouteInfo[];
    let values: ParamValues;

    beforeAll(async () => {
      const quick = heldModel();
      quick.release();
      h = await startHttpWorld(kit, { model: quick });
      routes = await routeInventory(h.url);
      const item = await h.request('POST', '/projects/proj_main/inbox', { as: 'acc_deriver', body: { type: 'probe' } });
      values = {
        projects: 'proj_main', sessions: SESSION, inbox: item.body.item.id, members: 'acc_deriver', floors: h.floors.A.id, 'live-inbox': '1',
        accounts: 'acc_probe', keys: h.keyIds.probe!,
      };
    });
    afterAll(async () => {
      if (h) Object.assign(h.failure, { method: null, everything: false });
      await h?.close();
    });

    const send = (route: RouteInfo, at: ParamValues = values, bodies = BODIES) => rawRequest(h.url, {
      method: route.method,
      path: fill(route, at),
      headers: { authorization: `Bearer ${h.keys[isAdminRoute(route) ? 'admin' : 'acc_owner']}`, ...(route.body ? { 'content-type': 'application/json' } : {}) },
      ...(route.body ? { body: JSON.stringify(validBody(route, bodies)) } : {}),
      headOnly: route.stream,
    });

    it('a store failing on every call: every route answers the envelope (500 api_error) with nothing of the failure in it', async () => {
      h.failure.everything = true;
      let fivehundreds = 0;
      try {
        for (const route of routes.filter((r) => !r.public)) {
          const res = await send(route);
          if (res.status < 300) continue; // /me reads only what authentication read
          const env = expectError(res, res.status);
          expectNoLeak(res.text, Object.values(h.keys), keyOf(route));
          expect(res.text).not.toContain('SELCT');
          expect(res.text).not.toContain('deadbeef');
          if (res.status === 500) {
            fivehundreds++;
            expect(env.error.type).toBe('api_error');
            expect(env.error.message).toBe('Internal server error');
            expect(env.error.details).toEqual([]);
          }
        }
      } finally {
        h.failure.everything = false;
      }
      expect(fivehundreds).toBeGreaterThanOrEqual(routes.filter((r) => !r.public).length - 2);
      expect((await h.request('GET', '/health')).status).toBe(200);
      expect((await h.request('GET', '/projects/proj_main/inbox', { as: 'acc_owner' })).status).toBe(200);
    });

    it('real database errors (a write that violates a key) on every write route: 500 envelope without SQL, nothing partial left', async () => {
      /** Every row (`dumpRows`), else the world's Store-port counts. */
      const rows = async () => (await h.dumpRows()) ?? (await h.worldState()).counts;
      const txMethods = ['insertProject', 'upsertMembership', 'insertSession', 'insertFloor', 'insertPage', 'insertInboxItem', 'decideInboxItem', 'appendProjectEvent', 'appendOperationLog', 'appendSessionEvents', 'insertRun'] as const;
      // Destructive routes last, so every route meets each failure on live resources.
      const last = ['POST /admin/keys/{id}/rotate', 'DELETE /admin/keys/{id}', 'POST /admin/accounts/{id}/disable', 'DELETE /projects/{id}/members/{account_id}', 'POST /projects/{id}/archive'];
      const writes = routes.filter((r) => r.method !== 'GET' && !r.public).sort((a, b) => last.indexOf(keyOf(a)) - last.indexOf(keyOf(b)));
      const bodies = { ...BODIES, 'POST /projects/{id}/inbox': { type: 'security.probe' } };
      const failed = new Set<string>();
      for (const method of txMethods) {
        // Fresh resources for each failure: a project with members, a session, an item and a floor.
        const { project_id, session_id } = await h.newProject();
        const item = await h.request('POST', `/projects/${project_id}/inbox`, { as: 'acc_deriver', body: { type: 'probe' } });
        const turn = await h.request('POST', `/sessions/${session_id}/floors`, { as: 'acc_owner', body: { content: 'turn' } });
        // And for the administration: an account with a key.
        const account = await h.request('POST', '/admin/accounts', { as: 'admin', body: { name: 'fresh' } });
        const key = await h.request('POST', `/admin/accounts/${account.body.account.id}/keys`, { as: 'admin', body: {} });
        const fresh: ParamValues = {
          projects: project_id, sessions: session_id, inbox: item.body.item.id, members: 'acc_deriver', floors: turn.body.floor.id, 'live-inbox': '1',
          accounts: account.body.account.id, keys: key.body.key.id,
        };
        for (const route of writes) {
          const before = await rows();
          h.failure.method = method as keyof StoreTx;
          const res = await send(route, fresh, bodies).finally(() => { h.failure.method = null; });
          await h.runtime!.whenIdle(SESSION); // a Run the request started writes in the background: let it finish
          if (res.status >= 400) {
            expectError(res, res.status);
            expectNoLeak(res.text, Object.values(h.keys), `${keyOf(route)} with ${method} failing`);
            // A failed write leaves no partial rows behind.
            if (res.status >= 500) {
              failed.add(keyOf(route));
              expect(await rows(), `${keyOf(route)} with ${method} failing left rows`).toEqual(before);
            }
          }
        }
      }
      // Every route that writes through a transaction met a real failure at least once.
      // (A stream token is signed, not stored: its route writes nothing.)
      expect([...failed].sort()).toEqual(writes.filter((r) => !r.template.includes('live-inbox') && keyOf(r) !== 'POST /stream-tokens').map(keyOf).sort());
      await h.runtime!.whenIdle(SESSION);
      expect((await h.request('GET', '/health')).status).toBe(200);
    });
  });
}
