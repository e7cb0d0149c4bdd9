/** Tests of client.me and client.projects (members, inbox, events.list, operationLogs) against a fake fetch. */
import { describe, expect, it } from 'vitest';
import { createClient } from './index.js';
import { fakeFetch, json, noContent, type Step } from '../test/fake-fetch.js';

const BASE = 'http://api.test';
const setup = (...steps: Step[]) => {
  const fake = fakeFetch(...steps);
  return { ...fake, client: createClient({ baseUrl: BASE, apiKey: 'sk_test', fetch: fake.fetch }) };
};

const wireItem = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  workspace_id: 'ws_1',
  project_id: 'proj_main',
  account_id: 'acc_owner',
  sender_account_id: 'acc_deriver',
  type: 'derived_output.review',
  title: 'Candidate',
  payload: { derivedOutputId: 'dout_001', snake_key: { deep_key: true } },
  source_event_id: null,
  source_session_id: 'sess_001',
  source_floor_id: null,
  source_page_id: null,
  status: 'pending',
  decided_by_account_id: null,
  decided_at: null,
  created_at: 1000,
  updated_at: 1000,
  ...extra,
});

describe('client.me', () => {
  it('GET /me, camelCase at each record top level', async () => {
    const { client, requests } = setup(json({ account: { id: 'acc_1', name: 'A', created_at: 5 }, workspace_id: 'ws_1', key_kind: 'service' }));
    const me = await client.me();
    expect(requests[0]).toMatchObject({ method: 'GET', url: `${BASE}/me` });
    expect(me).toEqual({ account: { id: 'acc_1', name: 'A', createdAt: 5 }, workspaceId: 'ws_1', keyKind: 'service' });
  });
});

describe('client.projects', () => {
  const wireProject = { id: 'proj_1', workspace_id: 'ws_1', account_id: 'acc_owner', name: 'P', status: 'active', created_at: 1, updated_at: 2 };
  const project = { id: 'proj_1', workspaceId: 'ws_1', accountId: 'acc_owner', name: 'P', status: 'active', createdAt: 1, updatedAt: 2 };

  it('create → POST /projects { id?, name } → the project', async () => {
    const { client, requests } = setup(json({ project: wireProject }, 201));
    expect(await client.projects.create({ id: 'proj_1', name: 'P' })).toEqual(project);
    expect(requests[0]).toMatchObject({ method: 'POST', url: `${BASE}/projects`, body: { id: 'proj_1', name: 'P' } });
  });

  it('list, get, archive', async () => {
    const { client, requests } = setup(json({ items: [wireProject] }), json({ project: wireProject, role: 'owner' }), json({ project: { ...wireProject, status: 'archived' } }));
    expect(await client.projects.list()).toEqual({ items: [project] });
    expect(await client.projects.get('proj/1')).toEqual({ project, role: 'owner' });
    expect((await client.projects.archive('proj_1')).status).toBe('archived');
    expect(requests.map((r) => `${r.method} ${r.url}`)).toEqual([`GET ${BASE}/projects`, `GET ${BASE}/projects/proj%2F1`, `POST ${BASE}/projects/proj_1/archive`]);
    expect(requests[2]!.body).toBeUndefined();
  });

  it('members: add, list, remove', async () => {
    const wireMember = { project_id: 'proj_1', account_id: 'acc_2', role: 'deriver', created_at: 3 };
    const member = { projectId: 'proj_1', accountId: 'acc_2', role: 'deriver', createdAt: 3 };
    const { client, requests } = setup(json({ member: wireMember }, 201), json({ items: [wireMember] }), noContent());
    expect(await client.projects.members.add('proj_1', { accountId: 'acc_2', role: 'deriver' }, { accountId: 'acc_owner' })).toEqual(member);
    expect(await client.projects.members.list('proj_1')).toEqual({ items: [member] });
    expect(await client.projects.members.remove('proj_1', 'acc_2')).toBeUndefined();
    expect(requests[0]).toMatchObject({ method: 'POST', url: `${BASE}/projects/proj_1/members`, body: { account_id: 'acc_2', role: 'deriver' } });
    expect(requests[0]!.headers.get('x-account-id')).toBe('acc_owner');
    expect(requests[1]).toMatchObject({ method: 'GET', url: `${BASE}/projects/proj_1/members` });
    expect(requests[2]).toMatchObject({ method: 'DELETE', url: `${BASE}/projects/proj_1/members/acc_2` });
  });
});

describe('client.projects.inbox', () => {
  it('create: snake_case top level on the wire, payload untouched both ways (the seed call)', async () => {
    const { client, requests } = setup(json({ item: wireItem('pinbox_1') }, 201));
    const item = await client.projects.inbox.create(
      'proj_main',
      { type: 'derived_output.review', title: 'Candidate', payload: { derivedOutputId: 'dout_001' }, sourceSessionId: 'sess_001' },
      { accountId: 'acc_deriver', idempotencyKey: 'idem-7' },
    );
    const req = requests[0]!;
    expect(req.method).toBe('POST');
    expect(req.url).toBe(`${BASE}/projects/proj_main/inbox`);
    expect(req.body).toEqual({ type: 'derived_output.review', title: 'Candidate', payload: { derivedOutputId: 'dout_001' }, source_session_id: 'sess_001' });
    expect(req.headers.get('x-account-id')).toBe('acc_deriver');
    expect(req.headers.get('idempotency-key')).toBe('idem-7');
    expect(req.headers.get('authorization')).toBe('Bearer sk_test');
    expect(item).toEqual({
      id: 'pinbox_1',
      workspaceId: 'ws_1',
      projectId: 'proj_main',
      accountId: 'acc_owner',
      senderAccountId: 'acc_deriver',
      type: 'derived_output.review',
      title: 'Candidate',
      payload: { derivedOutputId: 'dout_001', snake_key: { deep_key: true } },
      sourceEventId: null,
      sourceSessionId: 'sess_001',
      sourceFloorId: null,
      sourcePageId: null,
      status: 'pending',
      decidedByAccountId: null,
      decidedAt: null,
      createdAt: 1000,
      updatedAt: 1000,
    });
  });

  it('create sends every source field snake_case and null title', async () => {
    const { client, requests } = setup(json({ item: wireItem('pinbox_1') }, 201));
    await client.projects.inbox.create('proj_main', { type: 't', title: null, sourceEventId: 'evt_1', sourceFloorId: 'floor_1', sourcePageId: 'page_1' });
    expect(requests[0]!.body).toEqual({ type: 't', title: null, source_event_id: 'evt_1', source_floor_id: 'floor_1', source_page_id: 'page_1' });
  });

  it('list mixes accountId with the filters (the seed call), and maps the query to snake_case', async () => {
    const { client, requests } = setup(json({ items: [wireItem('pinbox_1')], next_cursor: 'c1' }));
    const page = await client.projects.inbox.list('proj_main', {
      accountId: 'acc_deriver',
      status: 'pending',
      type: 'derived_output.review',
      senderAccountId: 'acc_deriver',
      sourceSessionId: 'sess_001',
      limit: 10,
      cursor: 'c0',
    });
    const url = new URL(requests[0]!.url);
    expect(url.pathname).toBe('/projects/proj_main/inbox');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      status: 'pending',
      type: 'derived_output.review',
      sender_account_id: 'acc_deriver',
      source_session_id: 'sess_001',
      limit: '10',
      cursor: 'c0',
    });
    expect(url.searchParams.has('account_id')).toBe(false);
    expect(requests[0]!.headers.get('x-account-id')).toBe('acc_deriver');
    expect(page.nextCursor).toBe('c1');
    expect(page.items[0]!.senderAccountId).toBe('acc_deriver');
  });

  it('list with no filters sends no query; a missing next_cursor becomes null', async () => {
    const { client, requests } = setup(json({ items: [] }));
    expect(await client.projects.inbox.list('proj_main')).toEqual({ items: [], nextCursor: null });
    expect(requests[0]!.url).toBe(`${BASE}/projects/proj_main/inbox`);
  });

  it('listAll walks 3 pages with the same filters', async () => {
    const { client, requests } = setup(
      json({ items: [wireItem('pinbox_5'), wireItem('pinbox_4')], next_cursor: 'cur_a' }),
      json({ items: [wireItem('pinbox_3'), wireItem('pinbox_2')], next_cursor: 'cur_b' }),
      json({ items: [wireItem('pinbox_1')], next_cursor: null }),
    );
    const ids: string[] = [];
    for await (const item of client.projects.inbox.listAll('proj_main', { status: 'pending', limit: 2, accountId: 'acc_owner' })) ids.push(item.id);
    expect(ids).toEqual(['pinbox_5', 'pinbox_4', 'pinbox_3', 'pinbox_2', 'pinbox_1']);
    expect(requests).toHaveLength(3);
    const queries = requests.map((r) => Object.fromEntries(new URL(r.url).searchParams));
    expect(queries).toEqual([
      { status: 'pending', limit: '2' },
      { status: 'pending', limit: '2', cursor: 'cur_a' },
      { status: 'pending', limit: '2', cursor: 'cur_b' },
    ]);
    expect(requests.every((r) => r.headers.get('x-account-id') === 'acc_owner')).toBe(true);
  });

  it('listAll stops when the consumer breaks', async () => {
    const { client, requests } = setup(json({ items: [wireItem('pinbox_2'), wireItem('pinbox_1')], next_cursor: 'cur_a' }));
    for await (const item of client.projects.inbox.listAll('proj_main')) {
      expect(item.id).toBe('pinbox_2');
      break;
    }
    expect(requests).toHaveLength(1);
  });

  it('get', async () => {
    const { client, requests } = setup(json({ item: wireItem('pinbox_1') }));
    expect((await client.projects.inbox.get('proj_main', 'pinbox_1', { accountId: 'acc_owner' })).id).toBe('pinbox_1');
    expect(requests[0]).toMatchObject({ method: 'GET', url: `${BASE}/projects/proj_main/inbox/pinbox_1` });
    expect(requests[0]!.headers.get('x-account-id')).toBe('acc_owner');
  });

  it('accept / reject / archive → PATCH { decision, note? } (the seed calls)', async () => {
    const decided = (status: string) => json({ item: wireItem('pinbox_1', { status, decided_by_account_id: 'acc_owner', decided_at: 2000 }) });
    const { client, requests } = setup(decided('accepted'), decided('rejected'), decided('archived'));
    const accepted = await client.projects.inbox.accept('proj_main', 'pinbox_1', { accountId: 'acc_owner', note: 'ok' });
    await client.projects.inbox.reject('proj_main', 'pinbox_1', { note: null });
    await client.projects.inbox.archive('proj_main', accepted.id, { accountId: 'acc_owner' });
    expect(accepted).toMatchObject({ status: 'accepted', decidedByAccountId: 'acc_owner', decidedAt: 2000 });
    expect(requests.map((r) => r.method)).toEqual(['PATCH', 'PATCH', 'PATCH']);
    expect(requests.every((r) => r.url === `${BASE}/projects/proj_main/inbox/pinbox_1`)).toBe(true);
    expect(requests.map((r) => r.body)).toEqual([{ decision: 'accept', note: 'ok' }, { decision: 'reject', note: null }, { decision: 'archive' }]);
    expect(requests[0]!.headers.get('x-account-id')).toBe('acc_owner');
    expect(requests[1]!.headers.has('x-account-id')).toBe(false);
  });
});

describe('client.projects.events and operationLogs', () => {
  const wireEvent = {
    id: 'evt_1',
    workspace_id: 'ws_1',
    project_id: 'proj_1',
    sequence: 7,
    type: 'project_inbox.item.created',
    actor_account_id: 'acc_1',
    session_id: null,
    floor_id: null,
    page_id: null,
    operation_log_id: 'oplog_1',
    correlation_id: 'req_1',
    causation_event_id: null,
    payload: { inbox_item_id: 'pinbox_1' },
    visibility: 'owner',
    source: 'runtime_job',
    created_at: 9,
  };

  it('events.list → GET ?after=&types=a,b&session_id=&limit= → { items, nextAfter, hasMore }', async () => {
    const { client, requests } = setup(json({ items: [wireEvent], next_after: 7, has_more: true }));
    const page = await client.projects.events.list('proj_1', { after: 3, types: ['a.b', 'c.d'], sessionId: 'sess_1', limit: 50 });
    const url = new URL(requests[0]!.url);
    expect(url.pathname).toBe('/projects/proj_1/events');
    expect(url.search).toBe('?after=3&types=a.b%2Cc.d&session_id=sess_1&limit=50');
    expect(page.nextAfter).toBe(7);
    expect(page.hasMore).toBe(true);
    expect(page.items[0]).toMatchObject({ sequence: 7, actorAccountId: 'acc_1', operationLogId: 'oplog_1', correlationId: 'req_1', payload: { inbox_item_id: 'pinbox_1' } });
    expect(page.items[0]?.visibility).toBe('owner');
    expect(page.items[0]?.source).toBe('runtime_job');
  });

  it('operationLogs.list → GET /projects/:id/operation-logs?limit=&cursor= → { items, nextCursor }', async () => {
    const row = { id: 'oplog_1', workspace_id: 'ws_1', project_id: 'proj_1', actor_account_id: 'acc_1', action: 'project_inbox_item.create', target_type: 'project_inbox_item', target_id: 'pinbox_1', request_id: 'req_1', metadata: { payload_byte_count: 12 }, created_at: 4 };
    const { client, requests } = setup(json({ items: [row], next_cursor: null }));
    const page = await client.projects.operationLogs.list('proj_1', { limit: 5, cursor: 'c', accountId: 'acc_owner' });
    expect(requests[0]!.url).toBe(`${BASE}/projects/proj_1/operation-logs?limit=5&cursor=c`);
    expect(page).toEqual({
      items: [{ id: 'oplog_1', workspaceId: 'ws_1', projectId: 'proj_1', actorAccountId: 'acc_1', action: 'project_inbox_item.create', targetType: 'project_inbox_item', targetId: 'pinbox_1', requestId: 'req_1', metadata: { payload_byte_count: 12 }, createdAt: 4 }],
      nextCursor: null,
    });
  });
});
