/**
 * The HTTP kit's contract checks, part one (`httpConformanceChecks` lists them in order): every
 * route's documented status and schema, authentication, roles, hostile input, request ids,
 * idempotency, event streams, the Live Inbox.
 */
import { HTTP_ROUTES } from '../http/routes.js';
import type { HttpConformanceCheck } from './http-conformance-checks.js';
import { expectError, expectSuccess, fail, HttpConformanceError, LI, P, readFrames, routeOf, send, text } from './http-checks-support.js';

/** The checks of part one, in order. */
export const contractChecks: HttpConformanceCheck[] = [
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
      const last = await expectSuccess(s, covered, 'POST', `/admin/accounts/${account_id}/keys`, { key: admin, body: { kind: 'standard' } });
      await expectSuccess(s, covered, 'POST', `/admin/accounts/${account_id}/disable`, { key: admin });
      const enabled = await expectSuccess(s, covered, 'POST', `/admin/accounts/${account_id}/enable`, { key: admin });
      if (enabled.body.account?.disabled_at !== null) fail('POST /admin/accounts/{id}/enable', enabled, 'an enabled account answers disabled_at null');
      expectError('a key its disabling revoked, after enabling', await send(s, 'GET', '/me', { key: last.body.secret as string }), 401, 'invalid_credentials');
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
      if (all.retry === undefined) fail(`GET ${path}`, undefined, 'the stream must open with a retry: hint');
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
];
