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
 * raw `node:http` (`http-suites-events.ts`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpConformanceOptions } from './http-conformance-checks.js';
import { expectError, heldModel, startHttpWorld, type HeldModel, type HttpWorld } from './http-world.js';
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

export { budgetsSuite, connectionsSuite, errorsSuite, pagingSuite, projectEventsSuite, hostileInputSuite, liveInboxSuite, projectInboxSuite, securitySuite, slowBodiesSuite, writeGateSuite };

const text = (t: string) => [{ type: 'text', text: t }];

/** Authentication, request ids, public and unknown routes over real HTTP. */
export function authenticationSuite(kit: HttpConformanceOptions): void {
  describe('authentication over HTTP', () => {
    let h: HttpWorld;
    beforeAll(async () => {
      h = await startHttpWorld(kit);
    });
    afterAll(async () => {
      await h?.close();
    });

    const routes: [string, string, unknown?][] = [
      ['GET', '/projects/proj_main/inbox'],
      ['GET', '/projects/proj_main/inbox/pinbox_whatever'],
      ['POST', '/projects/proj_main/inbox', { type: 'derived_output.review' }],
      ['PATCH', '/projects/proj_main/inbox/pinbox_whatever', { decision: 'accept' }],
      ['GET', '/projects/proj_main/events'],
      ['GET', '/me'],
    ];

    it.each(routes)('%s %s without a key → 401 authentication_required, nothing written', async (method, path, body) => {
      const before = await h.inboxRows();
      expectError(await h.request(method, path, { body }), 401, 'authentication_required');
      expectError(await h.request(method, path, { body, headers: { 'x-api-key': '' } }), 401, 'authentication_required');
      expectError(await h.request(method, path, { body, headers: { authorization: 'Bearer ' } }), 401, 'authentication_required');
      expect(await h.inboxRows()).toEqual(before);
    });

    it.each(routes)('%s %s with an unknown or revoked key → 401 invalid_credentials, nothing written', async (method, path, body) => {
      const before = await h.inboxRows();
      expectError(await h.request(method, path, { body, as: 'ik_not_a_real_key' }), 401, 'invalid_credentials');
      expectError(await h.request(method, path, { body, as: 'ik_not_a_real_key', via: 'x-api-key' }), 401, 'invalid_credentials');
      expectError(await h.request(method, path, { body, as: 'revoked' }), 401, 'invalid_credentials');
      expectError(await h.request(method, path, { body, as: 'revoked', via: 'x-api-key' }), 401, 'invalid_credentials');
      expect(await h.inboxRows()).toEqual(before);
    });

    it('unknown and revoked keys get identical bodies (except request_id)', async () => {
      const strip = (b: { error: Record<string, unknown> }) => ({ ...b, error: { ...b.error, request_id: undefined } });
      const unknown = expectError(await h.request('GET', '/me', { as: 'ik_nope' }), 401, 'invalid_credentials');
      const revoked = expectError(await h.request('GET', '/me', { as: 'revoked' }), 401, 'invalid_credentials');
      expect(strip(unknown)).toEqual(strip(revoked));
    });

    it('a key authenticates as Bearer (any case of the scheme) and as x-api-key', async () => {
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
    });

    it('an Authorization header of another scheme is not a credential (401)', async () => {
      const res = await h.request('GET', '/me', { headers: { authorization: `Basic ${btoa('a:b')}` } });
      expect(['authentication_required', 'invalid_credentials']).toContain(expectError(res, 401).error.code);
    });

    it('the service key acts as any ws_demo account through x-account-id', async () => {
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
    });

    it('the service key without x-account-id acts as its own account', async () => {
      const me = await h.request('GET', '/me', { as: 'service' });
      expect(me.status).toBe(200);
      expect(me.body.account.id).toBe('acc_owner');
      expect(me.body.key_kind).toBe('service');
    });

    it('the service key cannot act as an account of another workspace; nothing written', async () => {
      const before = await h.inboxRows();
      for (const accountId of ['acc_stranger', 'acc_nobody']) {
        const res = await h.request('POST', '/projects/proj_main/inbox', { as: 'service', accountId, body: { type: 't' } });
        expect([403, 404]).toContain(res.status);
        expectError(res, res.status);
      }
      expect(await h.inboxRows()).toEqual(before);
    });

    it('an ordinary key naming another account in x-account-id → 403; its own account is fine', async () => {
      const before = await h.inboxRows();
      for (const accountId of ['acc_owner', 'acc_deriver2', 'acc_stranger']) {
        expectError(await h.request('POST', '/projects/proj_main/inbox', { as: 'acc_deriver', accountId, body: { type: 't' } }), 403, 'permission_denied');
        expectError(await h.request('GET', '/projects/proj_main/inbox', { as: 'acc_deriver', accountId }), 403, 'permission_denied');
      }
      expect(await h.inboxRows()).toEqual(before);
      const own = await h.request('GET', '/me', { as: 'acc_deriver', accountId: 'acc_deriver' });
      expect(own.status).toBe(200);
      expect(own.body.account.id).toBe('acc_deriver');
    });

    it('GET /health is public: 200 without a key (and with a bad one)', async () => {
      for (const opts of [{}, { as: 'ik_nope' }, { as: 'revoked' }]) {
        const res = await h.request('GET', '/health', opts);
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ status: 'ok' });
        expect(res.headers.get('x-request-id')).toMatch(/^req_/);
      }
    });

    it('unknown routes answer 404 in the envelope, with or without a key; x-should-retry: false', async () => {
      for (const [method, path] of [['GET', '/nope'], ['GET', '/projects/proj_main/inbox/x/y'], ['POST', '/v2/projects'], ['OPTIONS', '/nope']]) {
        for (const res of [await h.request(method!, path!), await h.request(method!, path!, { as: 'acc_owner' })]) {
          expectError(res, 404, 'not_found');
          expect(res.headers.get('x-should-retry')).toBe('false');
        }
      }
    });

    it('a known path under an undeclared method answers 405 method_not_allowed with Allow, with or without a key; nothing written', async () => {
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
    });

    it('every response carries x-request-id; a safe caller id is used, an unsafe one replaced', async () => {
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
    });
  });
}

/**
 * Live Inbox bounds: past the per-inbox message count or content bytes, `POST …/live-inbox` and
 * `PUT …/live-inbox/:id` answer 409 `live_inbox_full` in the envelope and the inbox is unchanged;
 * a withdraw gives the room back; the OpenAPI document lists the answer.
 */
export function liveInboxLimitsSuite(kit: HttpConformanceOptions): void {
  describe('Live Inbox limits over HTTP', () => {
    let h: HttpWorld;
    let model: HeldModel;
    beforeAll(async () => {
      model = heldModel();
      h = await startHttpWorld(kit, { model, liveInboxLimits: { maxMessages: 3, maxBytes: 2_000 } });
    });
    afterAll(async () => {
      model?.release();
      await h?.close();
    });

    it('past maxMessages or maxBytes → 409 live_inbox_full (queue and replace), nothing changes; a withdraw gives room back', async () => {
      const { session_id } = await h.newProject();
      const li = `/v1/awaken/sessions/${session_id}/live-inbox`;
      const sent = await h.request('POST', `/v1/sessions/${session_id}/events`, { as: 'acc_owner', body: { events: [{ type: 'user.message', content: text('task') }] } });
      expect(sent.status, sent.text).toBe(200);
      await model.waiting();

      const ids: number[] = [];
      for (const t of ['a', 'b', 'c']) {
        const res = await h.request('POST', li, { as: 'acc_owner', body: { content: text(t) } });
        expect(res.status, res.text).toBe(200);
        ids.push(res.body.id);
      }
      const before = (await h.request('GET', li, { as: 'acc_owner' })).body;
      const count = expectError(await h.request('POST', li, { as: 'acc_owner', body: { content: text('d') } }), 409, 'live_inbox_full');
      expect(count.error.details).toEqual([expect.objectContaining({ path: 'content', code: 'max_messages' })]);

      const big = expectError(await h.request('PUT', `${li}/${ids[0]}`, { as: 'acc_owner', body: { content: text('x'.repeat(2_000)) } }), 409, 'live_inbox_full');
      expect(big.error.details).toEqual([expect.objectContaining({ code: 'max_bytes' })]);
      expect((await h.request('GET', li, { as: 'acc_owner' })).body).toEqual(before);

      expect((await h.request('DELETE', `${li}/${ids[1]}`, { as: 'acc_owner' })).status).toBe(204);
      expectError(await h.request('POST', li, { as: 'acc_owner', body: { content: text('y'.repeat(2_000)) } }), 409, 'live_inbox_full');
      expect((await h.request('POST', li, { as: 'acc_owner', body: { content: text('d') } })).status).toBe(200);
    });

    it('the OpenAPI document lists 409 live_inbox_full on queue and replace, not on order (live_inbox_order_conflict there)', async () => {
      const doc = (await h.request('GET', '/openapi.json')).body;
      const path = Object.keys(doc.paths).find((p) => p.endsWith('/live-inbox'))!;
      const codes409 = (op: any): string[] => op.responses['409'].content['application/json'].schema.allOf[1].properties.error.properties.code.enum;
      expect(codes409(doc.paths[path].post)).toContain('live_inbox_full');
      expect(codes409(doc.paths[`${path}/{message_id}`].put)).toContain('live_inbox_full');
      expect(codes409(doc.paths[`${path}/order`].put)).toContain('live_inbox_order_conflict');
      expect(codes409(doc.paths[`${path}/order`].put)).not.toContain('live_inbox_full');
    });
  });
}

/** An event stream held open by the suite: its status, headers, the body of a refusal, and `destroy()` to drop it. */
interface HeldStream {
  status: number;
  headers: Record<string, string>;
  /** The whole body when the answer is not a stream (read to its end), else ''. */
  body: string;
  destroy(): void;
}

async function holdStream(h: HttpWorld, path: string, key: string): Promise<HeldStream> {
  const abort = new AbortController();
  const res = await fetch(h.url + path, { headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' }, signal: abort.signal });
  const headers: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const body = res.status === 200 ? '' : await res.text();
  return { status: res.status, headers, body, destroy: () => abort.abort() };
}

/**
 * The cap on event streams one caller holds open: past `maxStreamsPerCaller` a new event stream
 * (on any project) answers 429 `too_many_streams` in the envelope; other keys are unaffected;
 * closing a stream gives its slot back.
 */
export function streamsPerCallerSuite(kit: HttpConformanceOptions): void {
  describe('event streams per caller', () => {
    let h: HttpWorld;
    beforeAll(async () => {
      h = await startHttpWorld(kit, { settings: { streamTiming: { heartbeatMs: 60_000, maxStreamsPerCaller: 2 } } });
    });
    afterAll(async () => {
      await h?.close();
    });

    it('past the cap → 429 too_many_streams; other callers unaffected; a closed stream gives its slot back', async () => {
      const { project_id } = await h.newProject();
      const second = await h.newProject();
      const path = `/projects/${project_id}/events/stream`;
      const open: HeldStream[] = [];
      open.push(await holdStream(h, path, h.keys.acc_owner!));
      open.push(await holdStream(h, `/projects/${second.project_id}/events/stream`, h.keys.acc_owner!));
      expect(open.map((s) => s.status)).toEqual([200, 200]);

      const refused = await holdStream(h, path, h.keys.acc_owner!);
      expect(refused.status).toBe(429);
      expect(refused.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(refused.body)).toMatchObject({ type: 'error', error: { type: 'rate_limit_error', code: 'too_many_streams' } });

      const other = await holdStream(h, path, h.keys.acc_observer!);
      expect(other.status).toBe(200);
      open.push(other);

      open[0]!.destroy();
      let again: HeldStream | undefined;
      for (let i = 0; i < 100; i++) {
        again = await holdStream(h, path, h.keys.acc_owner!);
        if (again.status === 200) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(again!.status).toBe(200);
      open.push(again!);
      for (const s of open) s.destroy();
    });
  });
}

/**
 * `Idempotency-Key` on `POST /projects/:id/inbox`: a repeat with the same key and body answers 201
 * with the same item and `Idempotent-Replayed: true` and writes nothing; another body → 409
 * `idempotency_key_reused`; a bad key → 400; keys are per workspace and acting account; a failed
 * write records nothing; 10 concurrent requests with one key make one item, one Operation Log row
 * and one Project Event.
 */
export function idempotencySuite(kit: HttpConformanceOptions): void {
  describe('Idempotency-Key on POST /projects/:id/inbox', () => {
    let h: HttpWorld;
    beforeAll(async () => {
      h = await startHttpWorld(kit);
    });
    afterAll(async () => {
      await h?.close();
    });

    const create = (key: string | undefined, body: unknown, opts: { as?: string; accountId?: string; project?: string } = {}) =>
      h.request('POST', `/projects/${opts.project ?? 'proj_main'}/inbox`, {
        as: opts.as ?? 'acc_deriver', body, headers: key === undefined ? {} : { 'idempotency-key': key },
        ...(opts.accountId ? { accountId: opts.accountId } : {}),
      });

    /** Items, create log rows and created events of a project (read through the Store port); what was published. */
    async function rows(project_id: string) {
      const logs = await h.store.listOperationLogs({ project_id, limit: 1000 });
      return {
        items: (await h.store.listInboxItems({ project_id, limit: 1000 })).length,
        logs: logs.filter((l) => l.action === 'project_inbox_item.create').length,
        events: (await h.store.listProjectEvents({ project_id, after: 0, types: ['project_inbox.item.created'], limit: 1000 })).length,
        published: h.published.filter((e) => e.project_id === project_id && e.type === 'project_inbox.item.created').length,
      };
    }
    /** Idempotency records with this key, over every account of ws_demo (read through the Store port). */
    const records = async (key: string) => {
      let n = 0;
      for (const account_id of ['acc_owner', 'acc_deriver', 'acc_deriver2', 'acc_observer', 'acc_outsider']) {
        if (await h.store.findIdempotencyRecord({ workspace_id: 'ws_demo', account_id, key })) n++;
      }
      return n;
    };
    /** Every stored Project Event sequence of a project, ascending (read through the Store port). */
    const sequences = async (project_id: string) => (await h.store.listProjectEvents({ project_id, after: 0, limit: 1000 })).map((e) => e.sequence);

    it('the same key and body → 201 with the same item and Idempotent-Replayed: true; nothing written or published again', async () => {
      const { project_id } = await h.newProject();
      const body = { type: 'derived_output.review', title: '候选摘要待确认', payload: { derived_output_id: 'dout_001', n: [1, 2] } };
      const first = await create('idem-same-1', body, { project: project_id });
      expect(first.status, first.text).toBe(201);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      const after = await rows(project_id);
      expect(after).toEqual({ items: 1, logs: 1, events: 1, published: 1 });

      const second = await create('idem-same-1', body, { project: project_id });
      expect(second.status).toBe(201);
      expect(second.headers.get('idempotent-replayed')).toBe('true');
      expect(second.body).toEqual(first.body);
      // The same request with the body's keys in another order and blank-padded strings is the same request.
      const reordered = await create('idem-same-1', { payload: { n: [1, 2], derived_output_id: 'dout_001' }, title: ' 候选摘要待确认 ', type: 'derived_output.review' }, { project: project_id });
      expect(reordered.status).toBe(201);
      expect(reordered.body.item.id).toBe(first.body.item.id);
      expect(await rows(project_id)).toEqual(after);
      expect(await records('idem-same-1')).toBe(1);
      // Without a key, the same body is a new item.
      expect((await create(undefined, body, { project: project_id })).status).toBe(201);
      expect((await rows(project_id)).items).toBe(2);
    });

    it('a replay answers the item as it is now', async () => {
      const { project_id } = await h.newProject();
      const first = await create('idem-now', { type: 't' }, { project: project_id });
      const decided = await h.request('PATCH', `/projects/${project_id}/inbox/${first.body.item.id}`, { as: 'acc_owner', body: { decision: 'reject' } });
      expect(decided.status).toBe(200);
      const replay = await create('idem-now', { type: 't' }, { project: project_id });
      expect(replay.status).toBe(201);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.body).toEqual(decided.body);
    });

    it('a replay answers only what the caller may see now: demoted → 403, removed → 404, archived → 409, as a fresh request', async () => {
      const { project_id } = await h.newProject();
      const first = await create('idem-access', { type: 't' }, { project: project_id });
      expect(first.status, first.text).toBe(201);
      expect((await h.request('PATCH', `/projects/${project_id}/inbox/${first.body.item.id}`, { as: 'acc_owner', body: { decision: 'accept' } })).status).toBe(200);
      const member = (role: string) => h.request('POST', `/projects/${project_id}/members`, { as: 'acc_owner', body: { account_id: 'acc_deriver', role } });
      expect((await member('observer')).status).toBe(201);
      expectError(await create('idem-access', { type: 't' }, { project: project_id }), 403, 'project_inbox_write_denied');
      expect((await h.request('DELETE', `/projects/${project_id}/members/acc_deriver`, { as: 'acc_owner' })).status).toBe(204);
      const removed = await create('idem-access', { type: 't' }, { project: project_id });
      expectError(removed, 404, 'project_not_found');
      expect(removed.text).not.toContain(first.body.item.id);
      expect((await member('deriver')).status).toBe(201);
      expect((await h.request('POST', `/projects/${project_id}/archive`, { as: 'acc_owner' })).status).toBe(200);
      expectError(await create('idem-access', { type: 't' }, { project: project_id }), 409, 'project_archived');
      expect(await rows(project_id)).toMatchObject({ items: 1 });
      expect(await records('idem-access')).toBe(1);
    });

    it('the same key with another body or project → 409 idempotency_key_reused; nothing written', async () => {
      const { project_id } = await h.newProject();
      expect((await create('idem-reused', { type: 't', payload: { n: 1 } }, { project: project_id })).status).toBe(201);
      const before = await rows(project_id);
      const beforeMain = await rows('proj_main');
      for (const [project, body] of [
        [project_id, { type: 't', payload: { n: 2 } }],
        [project_id, { type: 'other', payload: { n: 1 } }],
        [project_id, { type: 't', title: 'with a title', payload: { n: 1 } }],
        [project_id, { type: 't', payload: { n: 1 }, source_session_id: `sess_${project_id}` }],
        ['proj_main', { type: 't', payload: { n: 1 } }],
      ] as const) {
        const env = expectError(await create('idem-reused', body, { project }), 409, 'idempotency_key_reused');
        expect(env.error.message).toMatch(/Idempotency-Key/);
      }
      expect(await rows(project_id)).toEqual(before);
      expect(await rows('proj_main')).toEqual(beforeMain);
      expect(await records('idem-reused')).toBe(1);
    });

    it('a key that is not 1–255 printable ASCII → 400 validation_error naming the header; nothing written', async () => {
      const before = await rows('proj_main');
      for (const key of ['', 'x'.repeat(256), 'caf\u00e9']) {
        const env = expectError(await create(key, { type: 't' }), 400, 'validation_error');
        expect(env.error.details.map((d) => d.path), JSON.stringify(key)).toContain('headers.idempotency-key');
      }
      expect(await rows('proj_main')).toEqual(before);
      for (const key of ['x'.repeat(255), ' !"#$%&\'()*+,-./09:;<=>?@AZ[\\]^_`az{|}~', 'k']) {
        expect((await create(key, { type: 't' })).status, key).toBe(201);
      }
    });

    it('keys are per workspace and acting account: another account gets its own item; a service key acting as the account replays it', async () => {
      const { project_id } = await h.newProject();
      const body = { type: 't' };
      const deriver = await create('idem-scope', body, { project: project_id, as: 'acc_deriver' });
      const deriver2 = await create('idem-scope', body, { project: project_id, as: 'acc_deriver2' });
      const owner = await create('idem-scope', body, { project: project_id, as: 'acc_owner' });
      expect([deriver, deriver2, owner].map((r) => r.status)).toEqual([201, 201, 201]);
      expect(new Set([deriver, deriver2, owner].map((r) => r.body.item.id)).size).toBe(3);
      const viaService = await create('idem-scope', body, { project: project_id, as: 'service', accountId: 'acc_deriver' });
      expect(viaService.status).toBe(201);
      expect(viaService.headers.get('idempotent-replayed')).toBe('true');
      expect(viaService.body.item.id).toBe(deriver.body.item.id);
      expect(await records('idem-scope')).toBe(3);
    });

    it('a write that fails inside the transaction records nothing: a retry with the key creates the item', async () => {
      const { project_id } = await h.newProject();
      for (const method of ['insertInboxItem', 'appendOperationLog', 'appendProjectEvent'] as const) {
        h.failure.method = method;
        try {
          expectError(await create(`idem-fail-${method}`, { type: 't' }, { project: project_id }), 500, 'internal_error');
        } finally {
          h.failure.method = null;
        }
        expect(await records(`idem-fail-${method}`)).toBe(0);
        const retry = await create(`idem-fail-${method}`, { type: 't' }, { project: project_id });
        expect(retry.status).toBe(201);
        expect(retry.headers.get('idempotent-replayed')).toBeNull();
      }
      expect(await rows(project_id)).toEqual({ items: 3, logs: 3, events: 3, published: 3 });
    });

    it('a failed check (403, 404, 409) records nothing either', async () => {
      const { project_id } = await h.newProject();
      expectError(await create('idem-check', { type: 't' }, { project: project_id, as: 'acc_observer' }), 403, 'project_inbox_write_denied');
      expectError(await create('idem-check', { type: 't', source_page_id: h.pages.F1.id }, { project: project_id }), 404, 'page_not_found');
      expectError(await create('idem-check', { type: 't', source_session_id: 'sess_001' }, { project: project_id }), 409, 'project_inbox_source_scope_mismatch');
      expect(await records('idem-check')).toBe(0);
      expect((await create('idem-check', { type: 't' }, { project: project_id })).status).toBe(201);
    });

    it('10 concurrent creates with one key → one item, one log row, one event, gap-free sequences; all answer that item', async () => {
      const { project_id } = await h.newProject();
      const seqBefore = (await sequences(project_id)).length;
      const body = { type: 'race', title: 'one of ten', payload: { n: 10 } };
      const answers = await Promise.all(Array.from({ length: 10 }, () => create('idem-race', body, { project: project_id })));
      expect(answers.map((a) => a.status)).toEqual(Array(10).fill(201));
      expect(new Set(answers.map((a) => a.body.item.id)).size).toBe(1);
      expect(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(9);
      expect(await rows(project_id)).toEqual({ items: 1, logs: 1, events: 1, published: 1 });
      expect(await records('idem-race')).toBe(1);
      expect(await sequences(project_id)).toEqual(Array.from({ length: Number(seqBefore) + 1 }, (_, i) => i + 1));
    });

    it('10 concurrent creates with one key and different bodies → one 201, nine 409 idempotency_key_reused', async () => {
      const { project_id } = await h.newProject();
      const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => create('idem-race-bodies', { type: 'race', payload: { i } }, { project: project_id })));
      expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
      for (const a of answers.filter((x) => x.status !== 201)) expectError(a, 409, 'idempotency_key_reused');
      expect(await rows(project_id)).toEqual({ items: 1, logs: 1, events: 1, published: 1 });
    });

    it('the OpenAPI document describes the Idempotency-Key header of the create', async () => {
      const doc = (await h.request('GET', '/openapi.json')).body;
      const op = doc.paths['/projects/{id}/inbox'].post;
      const header = (op.parameters as Array<{ in: string; name: string; required?: boolean; schema?: { pattern?: string } }>).find((p) => p.in === 'header' && p.name === 'idempotency-key');
      expect(header).toBeDefined();
      expect(header?.required ?? false).toBe(false);
      expect(op.description).toMatch(/Idempotent-Replayed: true/);
    });
  });
}

// — input rules (issue 15 items 2–4) —

const IR_SESSION = 'sess_001';
const IR_LI = `/v1/awaken/sessions/${IR_SESSION}/live-inbox`;
const b64 = (bytes: number[]) => btoa(String.fromCharCode(...bytes));
const PNG = b64([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
const json = { 'content-type': 'application/json' };

/** The poisoned content, and the path (under `content`) each must be refused at. */
const POISON: [string, unknown[], string][] = [
  ['empty text', text(''), '0.text'],
  ['spaces', text('   '), '0.text'],
  ['newline and tab', text('\n\t'), '0.text'],
  ['a blank block after a good one', [...text('ok'), ...text(' ')], '1.text'],
  ['an image of media type text/html', [{ type: 'image', source: { type: 'base64', media_type: 'text/html', data: PNG } }], '0.source.media_type'],
  ['image data that is not base64', [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: '%%%not base64%%%' } }], '0.source.data'],
  ['empty image data', [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: '' } }], '0.source.data'],
  ['image bytes of another type', [{ type: 'image', source: { type: 'base64', media_type: 'image/gif', data: PNG } }], '0.source.data'],
  ['a file: URL', [{ type: 'image', source: { type: 'url', url: 'file:///etc/passwd' } }], '0.source.url'],
  ['a javascript: URL', [{ type: 'image', source: { type: 'url', url: 'javascript:alert(1)' } }], '0.source.url'],
  ['the cloud metadata URL', [{ type: 'image', source: { type: 'url', url: 'http://169.254.169.254/latest/meta-data/' } }], '0.source.url'],
  ['a loopback URL', [{ type: 'image', source: { type: 'url', url: 'http://127.0.0.1:5432/' } }], '0.source.url'],
  ['a relative URL', [{ type: 'image', source: { type: 'url', url: '/a.png' } }], '0.source.url'],
];


/**
 * Input rules over real HTTP: content blocks a Messages-API model would refuse are 400 with the
 * field path on every path that takes content (Live Inbox queue and replace, durable
 * `user.message`), with nothing queued or committed (live-inbox.md "Content blocks"); JSON numbers
 * a double cannot hold are 400 naming the path, and accepted numbers come back as sent
 * (platform.md "JSON numbers"); bodies that are not `application/json` in UTF-8 are 415
 * `unsupported_media_type` in the one envelope (platform.md "Errors").
 */
export function inputRulesSuite(kit: HttpConformanceOptions): void {
  describe('input rules over HTTP', () => {
    let h: HttpWorld;
    let model: HeldModel;
    let queued: number;

    beforeAll(async () => {
      model = heldModel();
      h = await startHttpWorld(kit, { model });
      const started = await h.request('POST', `/v1/sessions/${IR_SESSION}/events`, { as: 'acc_owner', body: { events: [{ type: 'user.message', content: text('start') }] } });
      expect(started.status, started.text).toBe(200);
      await model.waiting();
      const q = await h.request('POST', IR_LI, { as: 'acc_owner', body: { content: text('kept') } });
      expect(q.status, q.text).toBe(200);
      queued = q.body.id;
    });
    afterAll(async () => {
      model?.release();
      await h?.close();
    });

    /** Sends the request and checks: 400 validation_error naming `path`, and nothing written or queued anywhere. */
    async function refused(method: string, url: string, body: unknown, path: string) {
      const before = await h.worldState(IR_LI);
      const res = await h.request(method, url, { as: 'acc_owner', body });
      const env = expectError(res, 400, 'validation_error');
      expect(env.error.details.map((d) => d.path), `${method} ${url} ${JSON.stringify(body).slice(0, 120)}`).toContain(path);
      expect(await h.worldState(IR_LI)).toEqual(before);
    }

    it.each(POISON)('content with %s → 400 with the field path on every path, nothing queued or committed', async (_what, content, path) => {
      await refused('POST', IR_LI, { content }, `body.content.${path}`);
      await refused('PUT', `${IR_LI}/${queued}`, { content }, `body.content.${path}`);
      await refused('POST', `/v1/sessions/${IR_SESSION}/events`, { events: [{ type: 'user.message', content }] }, `body.events.0.content.${path}`);
      // The queued message is unchanged.
      const view = await h.request('GET', IR_LI, { as: 'acc_owner' });
      expect(view.body.messages).toEqual([{ id: queued, content: text('kept') }]);
    });

    it('content a model accepts still passes on every path: text, each image type, public https URLs', async () => {
      const good = [
        ...text(' padded '),
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
        { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
      ];
      const q = await h.request('POST', IR_LI, { as: 'acc_owner', body: { content: good } });
      expect(q.status, q.text).toBe(200);
      const replaced = await h.request('PUT', `${IR_LI}/${q.body.id}`, { as: 'acc_owner', body: { content: good.slice(1) } });
      expect(replaced.status, replaced.text).toBe(204);
      expect((await h.request('DELETE', `${IR_LI}/${q.body.id}`, { as: 'acc_owner' })).status).toBe(204);
    });

    it('a number a double cannot hold → 400 naming its path, nothing written; in payloads, turn content and the reorder list', async () => {
      const { project_id, session_id } = await h.newProject();
      const cases: [string, string, string, string][] = [
        ['POST', `/projects/${project_id}/inbox`, '{"type":"t","payload":{"n":9007199254740993}}', 'body.payload.n'],
        ['POST', `/projects/${project_id}/inbox`, '{"type":"t","payload":{"list":[1,2,{"id":-12345678901234567890}]}}', 'body.payload.list.2.id'],
        ['POST', `/projects/${project_id}/inbox`, '{"type":"t","payload":{"pi":3.14159265358979323846}}', 'body.payload.pi'],
        ['POST', `/projects/${project_id}/inbox`, '{"type":"t","payload":{"tiny":1e-400}}', 'body.payload.tiny'],
        ['POST', `/projects/${project_id}/inbox`, '{"type":"t","payload":{"huge":1e400}}', 'body.payload.huge'],
        ['POST', `/projects/${project_id}/inbox`, '{"type":"t","payload":9007199254740993}', 'body.payload'],
        ['POST', `/sessions/${session_id}/floors`, '{"content":{"tokens":18446744073709551615}}', 'body.content.tokens'],
        ['PUT', `${IR_LI}/order`, `{"order":[${queued},9007199254740993]}`, 'body.order.1'],
      ];
      for (const [method, url, raw, path] of cases) {
        const before = await h.worldState(IR_LI);
        const res = await h.request(method, url, { as: 'acc_owner', raw, headers: json });
        const env = expectError(res, 400, 'validation_error');
        expect(env.error.details, raw).toEqual([expect.objectContaining({ path, code: 'inexact_number' })]);
        expect(await h.worldState(IR_LI), raw).toEqual(before);
      }
    });

    it('numbers a double holds come back exactly as sent (by value), from the database of this engine', async () => {
      const { project_id, session_id } = await h.newProject();
      const raw = '{"type":"t","payload":{"max":9007199254740991,"min":-9007199254740991,"p53":9007199254740992,"f":0.1,"g":0.30000000000000004,"big":1e300,"tiny":5e-324,"one":1.0,"neg0":-0,"list":[1.5,-2.25e-5]}}';
      const created = await h.request('POST', `/projects/${project_id}/inbox`, { as: 'acc_owner', raw, headers: json });
      expect(created.status, created.text).toBe(201);
      const got = await h.request('GET', `/projects/${project_id}/inbox/${created.body.item.id}`, { as: 'acc_owner' });
      expect(got.text).toContain('"max":9007199254740991,"min":-9007199254740991,"p53":9007199254740992,"f":0.1,"g":0.30000000000000004,"big":1e+300,"tiny":5e-324,"one":1,"neg0":0,"list":[1.5,-0.0000225]');
      const turn = await h.request('POST', `/sessions/${session_id}/floors`, { as: 'acc_owner', raw: '{"content":{"n":9007199254740991}}', headers: json });
      expect(turn.status, turn.text).toBe(201);
      const pages = await h.request('GET', `/sessions/${session_id}/floors/${turn.body.floor.id}/pages`, { as: 'acc_owner' });
      expect(pages.text).toContain('"n":9007199254740991');
    });

    it.each<[string, Record<string, string>, number]>([
      ['text/plain (the issue)', { 'content-type': 'text/plain' }, 415],
      ['text/plain; charset=utf-8', { 'content-type': 'text/plain; charset=utf-8' }, 415],
      ['application/x-www-form-urlencoded', { 'content-type': 'application/x-www-form-urlencoded' }, 415],
      ['application/json; charset=latin1', { 'content-type': 'application/json; charset=latin1' }, 415],
      ['no Content-Type', {}, 415],
      ['application/json', { 'content-type': 'application/json' }, 201],
      ['application/json; charset=utf-8', { 'content-type': 'application/json; charset=utf-8' }, 201],
      ['application/json;charset="UTF-8"', { 'content-type': 'application/json;charset="UTF-8"' }, 201],
      ['Application/JSON', { 'content-type': 'Application/JSON' }, 201],
    ])('POST inbox with %s and a JSON text → %i', async (_what, headers, status) => {
      const before = await h.inboxRows();
      const res = await h.request('POST', '/projects/proj_main/inbox', { as: 'acc_owner', raw: '{"type":"t"}', headers });
      if (status === 201) {
        expect(res.status, res.text).toBe(201);
        return;
      }
      const env = expectError(res, 415, 'unsupported_media_type');
      expect(env.error.type).toBe('invalid_request_error');
      expect(res.headers.get('x-request-id')).toBe(env.error.request_id);
      expect(await h.inboxRows()).toEqual(before);
    });
  });
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
