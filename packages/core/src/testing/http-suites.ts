/**
 * The HTTP conformance kit's vitest suites (registered by `runHttpConformance`), each over its own
 * seeded world (`http-world.ts`) and driving the adapter with `fetch` only. Moved here from
 * `@inbox-kit/http-fastify`'s tests so every adapter runs them: authentication and request ids
 * (platform.md "Identity and credentials", "Errors"), safe retries with `Idempotency-Key`
 * (project-inbox.md), editing the Live Inbox during a Run and the Session event routes
 * (`http-suites-live-inbox.ts`), Live Inbox bounds (live-inbox.md "Limits"),
 * the per-caller cap on event streams (platform.md "Per-caller bounds"), slow and refused
 * request bodies over raw sockets (`http-suites-slow-bodies.ts`, platform.md "Connections and
 * request bodies"), hostile input on every route (`http-suites-hostile.ts`), the security review of
 * authentication and tenancy on every route (`http-suites-security.ts`), and Project Events over
 * raw `node:http` (`http-suites-events.ts`). Each suite is data (`http-suites-kit.ts`): groups of
 * named checks, registered by {@link httpSuites}.
 */
import { expect } from 'vitest';
import type { HttpConformanceOptions } from './http-conformance-checks.js';
import { expectError, heldModel, startHttpWorld, type HeldModel, type HttpWorld } from './http-world.js';
import { registerSuite, type HttpSuiteBase, type HttpSuiteCheck, type HttpSuiteGroup } from './http-suites-kit.js';
import { errorsSuite } from './http-suites-errors.js';
import { projectInboxSuite } from './http-suites-inbox.js';
import { liveInboxSuite } from './http-suites-live-inbox.js';
import { projectEventsSuite } from './http-suites-events.js';
import { hostileInputSuite } from './http-suites-hostile.js';
import { securitySuite } from './http-suites-security.js';
import { slowBodiesSuite } from './http-suites-slow-bodies.js';
import { writeGateSuite } from './http-suites-write-gate.js';
import { budgetsSuite } from './http-suites-budgets.js';
import { pagingSuite } from './http-suites-paging.js';
import { connectionsSuite } from './http-suites-connections.js';
import { idempotencySuite } from './http-suites-idempotency.js';
import { inputRulesSuite } from './http-suites-input-rules.js';
import { liveInboxLimitsSuite, streamsPerCallerSuite } from './http-suites-limits.js';

export { budgetsSuite, connectionsSuite, errorsSuite, pagingSuite, projectEventsSuite, hostileInputSuite, liveInboxSuite, projectInboxSuite, securitySuite, slowBodiesSuite, writeGateSuite };
export { idempotencySuite, inputRulesSuite, liveInboxLimitsSuite, streamsPerCallerSuite };

/** The routes the credential checks walk: `[method, path, body?]`. */
const routes: [string, string, unknown?][] = [
  ['GET', '/projects/proj_main/inbox'],
  ['GET', '/projects/proj_main/inbox/pinbox_whatever'],
  ['POST', '/projects/proj_main/inbox', { type: 'derived_output.review' }],
  ['PATCH', '/projects/proj_main/inbox/pinbox_whatever', { decision: 'accept' }],
  ['GET', '/projects/proj_main/events'],
  ['GET', '/me'],
];

/** What the authentication checks share: one world. */
export interface WorldCtx extends HttpSuiteBase {
  h: HttpWorld;
}

const authenticationChecks: HttpSuiteCheck<WorldCtx>[] = [
  {
    name: '%s %s without a key → 401 authentication_required, nothing written', each: routes,
    async run(c, method, path, body) {
      const { h } = c;
      const before = await h.inboxRows();
      expectError(await h.request(method, path, { body }), 401, 'authentication_required');
      expectError(await h.request(method, path, { body, headers: { 'x-api-key': '' } }), 401, 'authentication_required');
      expectError(await h.request(method, path, { body, headers: { authorization: 'Bearer ' } }), 401, 'authentication_required');
      expect(await h.inboxRows()).toEqual(before);
    },
  },

  {
    name: '%s %s with an unknown or revoked key → 401 invalid_credentials, nothing written', each: routes,
    async run(c, method, path, body) {
      const { h } = c;
      const before = await h.inboxRows();
      expectError(await h.request(method, path, { body, as: 'ik_not_a_real_key' }), 401, 'invalid_credentials');
      expectError(await h.request(method, path, { body, as: 'ik_not_a_real_key', via: 'x-api-key' }), 401, 'invalid_credentials');
      expectError(await h.request(method, path, { body, as: 'revoked' }), 401, 'invalid_credentials');
      expectError(await h.request(method, path, { body, as: 'revoked', via: 'x-api-key' }), 401, 'invalid_credentials');
      expect(await h.inboxRows()).toEqual(before);
    },
  },

  {
    name: 'unknown and revoked keys get identical bodies (except request_id)',
    async run(c) {
      const { h } = c;
      const strip = (b: { error: Record<string, unknown> }) => ({ ...b, error: { ...b.error, request_id: undefined } });
      const unknown = expectError(await h.request('GET', '/me', { as: 'ik_nope' }), 401, 'invalid_credentials');
      const revoked = expectError(await h.request('GET', '/me', { as: 'revoked' }), 401, 'invalid_credentials');
      expect(strip(unknown)).toEqual(strip(revoked));
    },
  },

  {
    name: 'a key authenticates as Bearer (any case of the scheme) and as x-api-key',
    async run(c) {
      const { h } = c;
      const headerSets: Record<string, string>[] = [
        { authorization: `Bearer ${h.keys.acc_deriver}` },
        { authorization: `bearer ${h.keys.acc_deriver}` },
        { authorization: `BEARER  ${h.keys.acc_deriver}` },
        { 'x-api-key': h.keys.acc_deriver! },
      ];
      for (const headers of headerSets) {
        const res = await h.request('GET', '/me', { headers });
        expect(res.status, JSON.stringify(headers)).toBe(200);
        expect(res.body.account.id).toBe('acc_deriver');
        expect(res.body.workspace_id).toBe('ws_demo');
      }
      const res = await h.request('GET', '/projects/proj_main/inbox', { as: 'acc_owner', via: 'x-api-key' });
      expect(res.status).toBe(200);
    },
  },

  {
    name: 'an Authorization header of another scheme is not a credential (401)',
    async run(c) {
      const { h } = c;
      const res = await h.request('GET', '/me', { headers: { authorization: `Basic ${btoa('a:b')}` } });
      expect(['authentication_required', 'invalid_credentials']).toContain(expectError(res, 401).error.code);
    },
  },

  {
    name: 'the service key acts as any ws_demo account through x-account-id',
    async run(c) {
      const { h } = c;
      const me = await h.request('GET', '/me', { as: 'service', accountId: 'acc_deriver' });
      expect(me.status).toBe(200);
      expect(me.body.account.id).toBe('acc_deriver');

      const created = await h.request('POST', '/projects/proj_main/inbox', { as: 'service', accountId: 'acc_deriver', body: { type: 'via.service' } });
      expect(created.status).toBe(201);
      expect(created.body.item.sender_account_id).toBe('acc_deriver');
      // Read through the store, not the adapter under test.
      const log = (await h.store.listOperationLogs({ project_id: 'proj_main', limit: 1000 })).find((l) => l.target_id === created.body.item.id);
      expect(log!.actor_account_id).toBe('acc_deriver');

      // acting as the deriver, the service key has exactly the deriver's rights
      expectError(await h.request('PATCH', `/projects/proj_main/inbox/${created.body.item.id}`, { as: 'service', accountId: 'acc_deriver', body: { decision: 'accept' } }), 403, 'project_inbox_decide_denied');
      expectError(await h.request('GET', '/projects/proj_main/inbox', { as: 'service', accountId: 'acc_observer' }), 403, 'project_inbox_read_denied');
      expectError(await h.request('GET', '/projects/proj_main/inbox', { as: 'service', accountId: 'acc_outsider' }), 404, 'project_not_found');

      const accepted = await h.request('PATCH', `/projects/proj_main/inbox/${created.body.item.id}`, { as: 'service', accountId: 'acc_owner', body: { decision: 'accept' } });
      expect(accepted.status).toBe(200);
      expect(accepted.body.item.decided_by_account_id).toBe('acc_owner');
    },
  },

  {
    name: 'the service key without x-account-id acts as its own account',
    async run(c) {
      const { h } = c;
      const me = await h.request('GET', '/me', { as: 'service' });
      expect(me.status).toBe(200);
      expect(me.body.account.id).toBe('acc_owner');
      expect(me.body.key_kind).toBe('service');
    },
  },

  {
    name: 'the service key cannot act as an account of another workspace; nothing written',
    async run(c) {
      const { h } = c;
      const before = await h.inboxRows();
      for (const accountId of ['acc_stranger', 'acc_nobody']) {
        const res = await h.request('POST', '/projects/proj_main/inbox', { as: 'service', accountId, body: { type: 't' } });
        expect([403, 404]).toContain(res.status);
        expectError(res, res.status);
      }
      expect(await h.inboxRows()).toEqual(before);
    },
  },

  {
    name: 'an ordinary key naming another account in x-account-id → 403; its own account is fine',
    async run(c) {
      const { h } = c;
      const before = await h.inboxRows();
      for (const accountId of ['acc_owner', 'acc_deriver2', 'acc_stranger']) {
        expectError(await h.request('POST', '/projects/proj_main/inbox', { as: 'acc_deriver', accountId, body: { type: 't' } }), 403, 'permission_denied');
        expectError(await h.request('GET', '/projects/proj_main/inbox', { as: 'acc_deriver', accountId }), 403, 'permission_denied');
      }
      expect(await h.inboxRows()).toEqual(before);
      const own = await h.request('GET', '/me', { as: 'acc_deriver', accountId: 'acc_deriver' });
      expect(own.status).toBe(200);
      expect(own.body.account.id).toBe('acc_deriver');
    },
  },

  {
    name: 'GET /health is public: 200 without a key (and with a bad one)',
    async run(c) {
      const { h } = c;
      for (const opts of [{}, { as: 'ik_nope' }, { as: 'revoked' }]) {
        const res = await h.request('GET', '/health', opts);
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ status: 'ok' });
        expect(res.headers.get('x-request-id')).toMatch(/^req_/);
      }
    },
  },

  {
    name: 'unknown routes answer 404 in the envelope, with or without a key; x-should-retry: false', layer: 'both',
    async run(c) {
      const { h } = c;
      for (const [method, path] of [['GET', '/nope'], ['GET', '/projects/proj_main/inbox/x/y'], ['POST', '/v2/projects'], ['OPTIONS', '/nope']]) {
        for (const res of [await h.request(method!, path!), await h.request(method!, path!, { as: 'acc_owner' })]) {
          expectError(res, 404, 'not_found');
          expect(res.headers.get('x-should-retry')).toBe('false');
        }
      }
    },
  },

  {
    name: 'a known path under an undeclared method answers 405 method_not_allowed with Allow, with or without a key; nothing written', layer: 'both',
    async run(c) {
      const { h } = c;
      const cases: Array<[string, string, string]> = [
        ['DELETE', '/projects/proj_main/inbox', 'GET, HEAD, POST'], ['PUT', '/projects/proj_main/inbox/pinbox_1', 'GET, HEAD, PATCH'],
        ['PATCH', '/projects', 'GET, HEAD, POST'], ['OPTIONS', '/projects/proj_main', 'GET, HEAD'], ['POST', '/health', 'GET, HEAD'],
      ];
      for (const [method, path, allow] of cases) {
        for (const res of [await h.request(method, path), await h.request(method, path, { as: 'acc_owner' })]) {
          const body = expectError(res, 405, 'method_not_allowed');
          expect(body.error.type).toBe('invalid_request_error');
          expect(res.headers.get('allow'), `${method} ${path}`).toBe(allow);
          expect(res.headers.get('x-should-retry')).toBe('false');
        }
      }
    },
  },

  {
    name: 'every response carries x-request-id; a safe caller id is used, an unsafe one replaced', layer: 'both',
    async run(c) {
      const { h } = c;
      const ok = await h.request('GET', '/projects/proj_main/inbox', { as: 'acc_owner' });
      expect(ok.headers.get('x-request-id')).toMatch(/^req_[A-Za-z0-9_-]{21}$/);
      expect(ok.headers.get('request-id')).toBe(ok.headers.get('x-request-id'));
      const mine = await h.request('GET', '/projects/proj_main/inbox', { as: 'acc_owner', headers: { 'x-request-id': 'client-req.42:a' } });
      expect(mine.headers.get('x-request-id')).toBe('client-req.42:a');
      expect(mine.headers.get('request-id')).toBe('client-req.42:a');
      const err = await h.request('GET', '/projects/nope/inbox', { as: 'acc_owner', headers: { 'x-request-id': 'client-err-1' } });
      expect(expectError(err, 404, 'project_not_found').error.request_id).toBe('client-err-1');
      const unsafe = await h.request('GET', '/projects/proj_main/inbox', { as: 'acc_owner', headers: { 'x-request-id': 'has spaces and <script>' } });
      expect(unsafe.headers.get('x-request-id')).toMatch(/^req_/);
      const unauth = await h.request('GET', '/projects/proj_main/inbox', { headers: { 'x-request-id': 'anon-1' } });
      expect(expectError(unauth, 401).error.request_id).toBe('anon-1');
    },
  },
];

/** Authentication, request ids, public and unknown routes over real HTTP, as data. */
export const authenticationGroup: HttpSuiteGroup<WorldCtx> = {
  name: 'authentication over HTTP',
  open: async (base) => ({ ...base, h: await startHttpWorld(base.kit) }),
  async close(ctx) {
    await ctx?.h.close();
  },
  checks: authenticationChecks,
};

/** Authentication, request ids, public and unknown routes over real HTTP. */
export function authenticationSuite(kit: HttpConformanceOptions): void {
  registerSuite(kit, authenticationGroup);
}

/** Every suite, in order. */
export function httpSuites(kit: HttpConformanceOptions): void {
  authenticationSuite(kit);
  projectInboxSuite(kit);
  idempotencySuite(kit);
  errorsSuite(kit);
  liveInboxSuite(kit);
  liveInboxLimitsSuite(kit);
  inputRulesSuite(kit);
  streamsPerCallerSuite(kit);
  slowBodiesSuite(kit);
  hostileInputSuite(kit);
  securitySuite(kit);
  projectEventsSuite(kit);
  writeGateSuite(kit);
  budgetsSuite(kit);
  pagingSuite(kit);
  connectionsSuite(kit);
}
