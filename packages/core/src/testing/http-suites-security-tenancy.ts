/**
 * The tenancy walks of the security review (`http-suites-security.ts`): keys shown and refused,
 * credentials on every route, no cross-workspace access, collections, impersonation, and the
 * running Run untouched. Data: each `run(ctx)` gets {@link TenancyCtx}.
 */
import { expect } from 'vitest';
import { expectNoLeak, fill, isAdminRoute, keyOf, type ParamValues } from './http-raw.js';
import { expectError } from './http-world.js';
import type { HttpSuiteCheck } from './http-suites-kit.js';
import { LI, MISSING, SESSION, sha256, strip, text, type TenancyCtx } from './http-suites-security.js';

export const tenancyChecks: HttpSuiteCheck<TenancyCtx>[] = [
  {
    name: 'GET /me shows the key\'s kind, never its secret nor its SHA-256 (what the store keeps)',
    async run(c) {
      const { h, secrets } = c;
      for (const secret of secrets) expect(secret).toMatch(/^ik_[A-Za-z0-9_-]{40}$/); // 240 random bits
      for (const as of ['acc_owner', 'service']) {
        const me = await h.request('GET', '/me', { as });
        expect(me.status).toBe(200);
        expectNoLeak(me.text, secrets, 'GET /me');
        for (const secret of secrets) expect(me.text.includes(sha256(secret)), 'GET /me shows a key hash').toBe(false);
      }
    },
  },

  {
    name: 'near misses of a real key are refused exactly like an unknown key (401 invalid_credentials), also as x-api-key',
    async run(c) {
      const { h, secrets, nothingWritten, raw } = c;
      const key = h.keys.acc_owner!;
      const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
      const nearMisses = [
        flip(key, 3), flip(key, 20), flip(key, key.length - 1), key.slice(0, -1), `${key}A`, key.toUpperCase(), key.slice(3), `${key}\u200b`,
        sha256(key), `ik_${'A'.repeat(40)}`, 'ik_', key.repeat(2),
      ];
      const reference = strip(await raw({ method: 'GET', path: '/me', headers: { authorization: 'Bearer ik_unknown' } }));
      await nothingWritten(async () => {
        for (const guess of nearMisses) {
          const sendable = encodeURI(guess); // a header value is Latin-1: the zero-width space goes percent-encoded
          for (const headers of [{ authorization: `Bearer ${sendable}` }, { 'x-api-key': sendable }] as Record<string, string>[]) {
            const res = await raw({ method: 'GET', path: '/me', headers });
            expectError(res, 401, 'invalid_credentials');
            expect(strip(res)).toBe(reference);
            expectNoLeak(res.text, secrets, 'near miss');
          }
        }
      });
    },
  },

  {
    name: 'every non-public route refuses a missing, empty, malformed, unknown or revoked credential (401); nothing written',
    async run(c) {
      const { h, routes, secrets, demo, privateRoutes, call, nothingWritten } = c;
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
    },
  },

  {
    name: 'no cross-workspace access through any route, in either direction: 404 identical to a missing resource, nothing written',
    async run(c) {
      const { h, routes, secrets, demo, other, resourceRoutes, call, nothingWritten } = c;
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
    },
  },

  {
    name: 'collection routes show nothing of another workspace, and refuse to reach into it',
    async run(c) {
      const { h, routes, secrets, demo, other, call, nothingWritten } = c;
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
    },
  },

  {
    name: 'impersonation: a standard key naming another account → 403, a service key naming an account outside its workspace → 404, on every route; nothing written',
    async run(c) {
      const { h, secrets, demo, privateRoutes, call, nothingWritten } = c;
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
    },
  },

  {
    name: 'the running Run and its Live Inbox were untouched by all of it',
    async run(c) {
      const { h, model } = c;
      const window = (await h.request('GET', LI, { as: 'acc_owner' })).body;
      expect(window).toMatchObject({ active: true, version: 2, messages: [{ id: 1, content: text('one') }, { id: 2, content: text('two') }] });
      model.release();
      await h.runtime!.whenIdle(SESSION);
      const history = (await h.request('GET', `/v1/sessions/${SESSION}/events?limit=1000`, { as: 'acc_owner' })).body.data as { type: string; content: { text?: string }[] }[];
      expect(history.filter((e) => e.type === 'user.message').map((e) => e.content[0]!.text)).toEqual(['start', 'one', 'two']);
    },
  },
];
