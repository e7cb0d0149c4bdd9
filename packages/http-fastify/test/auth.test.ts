/**
 * Authentication, request ids, public and unknown routes over real HTTP (platform.md "Identity
 * and credentials", "Errors").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines, expectError, startHarness, type Harness } from './harness.js';

describe.each(engines)('authentication over HTTP (%s)', (engine) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(engine);
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
    const res = await h.request('GET', '/me', { headers: { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` } });
    expect(['authentication_required', 'invalid_credentials']).toContain(expectError(res, 401).error.code);
  });

  it('the service key acts as any ws_demo account through x-account-id', async () => {
    const me = await h.request('GET', '/me', { as: 'service', accountId: 'acc_deriver' });
    expect(me.status).toBe(200);
    expect(me.body.account.id).toBe('acc_deriver');

    const created = await h.request('POST', '/projects/proj_main/inbox', { as: 'service', accountId: 'acc_deriver', body: { type: 'via.service' } });
    expect(created.status).toBe(201);
    expect(created.body.item.sender_account_id).toBe('acc_deriver');
    const [log] = await h.raw<{ actor_account_id: string }>(`SELECT actor_account_id FROM operation_logs WHERE target_id = '${created.body.item.id}'`);
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

  it('unknown routes answer 404 in the envelope, with or without a key', async () => {
    for (const [method, path] of [['GET', '/nope'], ['GET', '/projects/proj_main/inbox/x/y'], ['DELETE', '/projects/proj_main/inbox'], ['PUT', '/projects/proj_main/inbox/pinbox_1'], ['POST', '/v2/projects']]) {
      expectError(await h.request(method!, path!), 404);
      expectError(await h.request(method!, path!, { as: 'acc_owner' }), 404);
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
