/**
 * Attempt routing over real HTTP (live-inbox.md "Scale"): two servers ("processes" A and B) on one
 * in-memory store, each with its own attempt host and `createHttpAttemptForwarder`. A request that
 * lands on B while A hosts the attempt is forwarded to A and A's answer relayed unchanged; forward
 * headers are trusted only with the secret, and only on forwardable routes.
 */
import {
  LiveInboxHost, PlatformService, ProjectInboxService, SessionRuntimeService, createLocalEventBus, createSequentialIdGenerator,
  systemClock, type AttemptRoutingErrorInfo, type AttemptRoutingOptions, type ContentBlock,
} from '@inbox-kit/core';
import { createMemoryStore, type FakeModel, fakeModel, type MemoryStore } from '@inbox-kit/core/testing';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from './wait.js';
import { FORWARD_HEADERS, createHttpAttemptForwarder } from '../src/index.js';
import { createServer } from '../src/entry-server.js';

const SECRET = 'test-forward-secret';
const text = (t: string): ContentBlock[] => [{ type: 'text', text: t }];

interface Proc {
  name: string;
  url: string;
  app: FastifyInstance;
  runtime: SessionRuntimeService;
  host: LiveInboxHost;
  model: FakeModel;
  routingErrors: AttemptRoutingErrorInfo[];
}

const running: Proc[] = [];
afterEach(async () => {
  for (const p of running.splice(0)) {
    await p.runtime.close();
    await p.app.close();
  }
});

async function world() {
  const store: MemoryStore = createMemoryStore();
  const deps = { store, bus: createLocalEventBus(), clock: systemClock, ids: createSequentialIdGenerator() };
  const platform = new PlatformService(deps);
  await platform.createWorkspace({ id: 'ws_demo', name: 'Demo' });
  const keys: Record<string, string> = {};
  for (const id of ['acc_owner', 'acc_deriver']) {
    await platform.createAccount({ id, name: id, workspace_ids: ['ws_demo'] });
    keys[id] = (await platform.issueApiKey({ workspace_id: 'ws_demo', account_id: id })).secret;
  }
  const owner = { principal: await platform.authenticate(keys.acc_owner), request_id: 'req_seed' };
  await platform.createProject(owner, { id: 'proj_main', name: 'Main' });
  await platform.addMember(owner, 'proj_main', { account_id: 'acc_deriver', role: 'deriver' });
  await platform.createSession(owner, { id: 'sess_001', project_id: 'proj_main', title: 'First' });

  const start = async (name: string): Promise<Proc> => {
    const host = new LiveInboxHost({ hostId: name });
    // Every step holds until the Run is aborted: the attempt stays active on its process.
    const model = fakeModel({ then: 'hold' });
    const routingErrors: AttemptRoutingErrorInfo[] = [];
    const routing: AttemptRoutingOptions = {
      host_id: `host_${name}`, host_url: '', forwarder: createHttpAttemptForwarder({ secret: SECRET, timeoutMs: 1_000 }),
      onRoutingError: (_error, info) => routingErrors.push(info),
    };
    const runtime = new SessionRuntimeService({ ...deps, host, model, routing });
    const app = await createServer({ services: { platform, projectInbox: new ProjectInboxService(deps), runtime }, forwarding: { secret: SECRET } });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    routing.host_url = url;
    const p: Proc = { name, url, app, runtime, host, model, routingErrors };
    running.push(p);
    return p;
  };
  const a = await start('a');
  const b = await start('b');

  const call = async (p: Proc, method: string, path: string, opts: { key?: string; body?: unknown; headers?: Record<string, string> } = {}) => {
    const res = await fetch(p.url + path, {
      method,
      headers: {
        ...(opts.key ? { authorization: `Bearer ${opts.key}` } : {}),
        ...(opts.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...opts.headers,
      },
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    });
    const raw = await res.text();
    return { status: res.status, body: raw === '' ? undefined : JSON.parse(raw), headers: res.headers };
  };
  const startRunOnA = async () => {
    expect((await call(a, 'POST', EV, { key: keys.acc_owner, body: { events: [{ type: 'user.message', content: text('task') }] } })).status).toBe(200);
    await waitFor(() => a.host.liveInbox('sess_001'), 'the attempt on A');
    await waitFor(() => store.raw().attemptOwners.get('sess_001'), 'the lease of A');
  };
  return { store, keys, a, b, call, startRunOnA };
}

const LI = '/v1/awaken/sessions/sess_001/live-inbox';
const EV = '/v1/sessions/sess_001/events';
const forwardHeaders = (secret: string, account = 'acc_owner') => ({
  [FORWARD_HEADERS.secret]: secret, [FORWARD_HEADERS.workspaceId]: 'ws_demo', [FORWARD_HEADERS.accountId]: account,
  [FORWARD_HEADERS.keyId]: 'key_x', [FORWARD_HEADERS.keyKind]: 'standard',
});

describe('attempt routing over HTTP', () => {
  it('B forwards every Live Inbox route to A and relays A\'s status and body (error envelope included)', async () => {
    const w = await world();
    await w.startRunOnA();
    const owner = w.keys.acc_owner!;
    expect(await w.call(w.b, 'POST', LI, { key: owner, body: { content: text('one') } })).toMatchObject({ status: 200, body: { id: 1 } });
    expect(await w.call(w.b, 'POST', LI, { key: owner, body: { content: text('two') } })).toMatchObject({ status: 200, body: { id: 2 } });
    expect((await w.call(w.b, 'PUT', `${LI}/1`, { key: owner, body: { content: text('one, edited') } })).status).toBe(204);
    expect((await w.call(w.b, 'PUT', `${LI}/order`, { key: owner, body: { order: [2, 1] } })).status).toBe(204);
    expect((await w.call(w.b, 'DELETE', `${LI}/2`, { key: owner })).status).toBe(204);
    const missing = await w.call(w.b, 'DELETE', `${LI}/2`, { key: owner, headers: { 'x-request-id': 'req_routed_1' } });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({
      type: 'error',
      error: { type: 'not_found_error', code: 'live_inbox_message_not_found', message: expect.any(String), details: [], request_id: 'req_routed_1' },
    });
    expect(missing.headers.get('x-request-id')).toBe('req_routed_1');
    // The owner's retry hint is relayed with its answer (platform.md "Errors" → "Retries"; B adds none of its own to a relayed answer).
    expect(missing.headers.get('x-should-retry')).toBe('false');
    const viaB = await w.call(w.b, 'GET', LI, { key: owner });
    const viaA = await w.call(w.a, 'GET', LI, { key: owner });
    expect(viaB.status).toBe(200);
    expect(viaB.body).toEqual(viaA.body);
    expect(viaB.body).toMatchObject({ active: true, messages: [{ id: 1, content: text('one, edited') }] });
    expect(w.b.host.liveInbox('sess_001')).toBeUndefined();
    // Local checks come first: a deriver may read through B but not steer.
    expect((await w.call(w.b, 'GET', LI, { key: w.keys.acc_deriver })).status).toBe(200);
    expect((await w.call(w.b, 'POST', LI, { key: w.keys.acc_deriver, body: { content: text('x') } })).body.error.code).toBe('permission_denied');
  });

  it('forward headers are trusted only with the secret, and only on forwardable routes', async () => {
    const w = await world();
    await w.startRunOnA();
    // Wrong or missing secret: an ordinary request (no key → 401; a deriver's key → the deriver).
    expect((await w.call(w.b, 'POST', LI, { body: { content: text('x') }, headers: forwardHeaders('wrong') })).status).toBe(401);
    expect((await w.call(w.a, 'POST', LI, { body: { content: text('x') }, headers: forwardHeaders('') })).status).toBe(401);
    const forged = await w.call(w.b, 'POST', LI, { key: w.keys.acc_deriver, body: { content: text('x') }, headers: forwardHeaders('wrong') });
    expect([forged.status, forged.body.error.code]).toEqual([403, 'permission_denied']);
    // The right secret on the owner: the request acts as the forwarded principal.
    expect(await w.call(w.a, 'POST', LI, { body: { content: text('x') }, headers: forwardHeaders(SECRET) })).toMatchObject({ status: 200, body: { id: 1 } });
    // …but not on a route that is never forwarded.
    expect((await w.call(w.a, 'GET', EV, { headers: forwardHeaders(SECRET) })).status).toBe(401);
    // A request accepted as forwarded is answered where it lands: B has no attempt → 410, no second hop.
    const hop = await w.call(w.b, 'POST', LI, { body: { content: text('x') }, headers: forwardHeaders(SECRET) });
    expect([hop.status, hop.body.error.code]).toEqual([410, 'live_inbox_inactive']);
  });

  it('an unreachable owner: 410 for a mutation, an inactive window for GET, and the error is reported', async () => {
    const w = await world();
    await w.store.claimAttemptOwnership({
      session_id: 'sess_001', run_id: 'run_gone', host_id: 'host_gone', host_url: 'http://127.0.0.1:9', lease_expires_at: Date.now() + 60_000,
    }, Date.now());
    const queued = await w.call(w.b, 'POST', LI, { key: w.keys.acc_owner, body: { content: text('x') } });
    expect([queued.status, queued.body.error.code]).toEqual([410, 'live_inbox_inactive']);
    expect(await w.call(w.b, 'GET', LI, { key: w.keys.acc_owner })).toMatchObject({ status: 200, body: { active: false, version: 0, messages: [] } });
    expect(w.b.routingErrors.map((e) => [e.action, e.owner?.host_id])).toEqual([['forward', 'host_gone'], ['forward', 'host_gone']]);
  });

  it('a user.interrupt sent to B stops the Run on A; then B answers 410', async () => {
    const w = await world();
    await w.startRunOnA();
    const sent = await w.call(w.b, 'POST', EV, { key: w.keys.acc_owner, body: { events: [{ type: 'user.interrupt' }] } });
    expect(sent.status).toBe(200);
    expect(sent.body.data.map((r: { type: string }) => r.type)).toEqual(['user.interrupt']);
    await w.a.runtime.whenIdle('sess_001');
    const events = await w.store.listSessionEvents({ session_id: 'sess_001', after: 0, limit: 100 });
    expect(events.filter((e) => e.type === 'session.status_idle').map((e) => e.content)).toEqual([{ outcome: 'cancelled' }]);
    const late = await w.call(w.b, 'POST', LI, { key: w.keys.acc_owner, body: { content: text('late') } });
    expect([late.status, late.body.error.code]).toEqual([410, 'live_inbox_inactive']);
    expect(w.b.routingErrors).toEqual([]);
  });
});
