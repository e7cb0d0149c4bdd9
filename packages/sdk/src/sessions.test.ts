/** Tests of client.sessions (floors, pages, Live Inbox, durable Session events) against a fake fetch. */
import { describe, expect, it } from 'vitest';
import { createClient, InboxKitApiError, LiveInboxInactiveError, type ContentBlock } from './index.js';
import { apiError, fakeFetch, json, noContent, type Step } from '../test/fake-fetch.js';

const BASE = 'http://api.test';
const setup = (...steps: Step[]) => {
  const fake = fakeFetch(...steps);
  return { ...fake, client: createClient({ baseUrl: BASE, apiKey: 'sk_test', fetch: fake.fetch, retry: { retries: 2, baseDelayMs: 1 } }) };
};
const LIVE = `${BASE}/v1/awaken/sessions/sess_1/live-inbox`;
const inactive = () => apiError(410, 'live_inbox_inactive', 'invalid_request_error', 'No native attempt accepts live input');
const content: ContentBlock[] = [
  { type: 'text', text: 'hello' },
  { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
  { type: 'image', source: { type: 'url', url: 'https://x.test/a.png' } },
];

describe('client.sessions', () => {
  const wireSession = {
    id: 'sess_1', workspace_id: 'ws_1', project_id: 'proj_1', title: 'T', created_by_account_id: 'acc_1', created_at: 1,
    agent: null, environment_id: null, metadata: { k: 'v' }, updated_at: 2, archived_at: null,
  };
  const session = {
    id: 'sess_1', workspaceId: 'ws_1', projectId: 'proj_1', title: 'T', createdByAccountId: 'acc_1', createdAt: 1,
    agent: null, environmentId: null, metadata: { k: 'v' }, updatedAt: 2, archivedAt: null,
  };

  it('create → POST /sessions { id?, project_id?, title? } → the session', async () => {
    const { client, requests } = setup(json({ session: wireSession }, 201));
    expect(await client.sessions.create({ id: 'sess_1', projectId: 'proj_1', title: 'T' }, { idempotencyKey: 'k1' })).toEqual(session);
    expect(requests[0]).toMatchObject({ method: 'POST', url: `${BASE}/sessions`, body: { id: 'sess_1', project_id: 'proj_1', title: 'T' } });
    expect(requests[0]!.headers.get('idempotency-key')).toBe('k1');
  });

  it('list (project filter) and get', async () => {
    const { client, requests } = setup(json({ items: [wireSession] }), json({ session: wireSession }));
    expect(await client.sessions.list({ projectId: 'proj_1', accountId: 'acc_1' })).toEqual({ items: [session] });
    expect(await client.sessions.get('sess_1')).toEqual(session);
    expect(requests[0]!.url).toBe(`${BASE}/sessions?project_id=proj_1`);
    expect(requests[0]!.headers.get('x-account-id')).toBe('acc_1');
    expect(requests[1]).toMatchObject({ method: 'GET', url: `${BASE}/sessions/sess_1` });
  });

  it('floors.list, floors.commit, pages.list, pages.add — content untouched', async () => {
    const wireFloor = { id: 'floor_1', workspace_id: 'ws_1', session_id: 'sess_1', number: 1, branch: 'main', state: 'committed', created_at: 2 };
    const wirePage = { id: 'page_1', workspace_id: 'ws_1', session_id: 'sess_1', floor_id: 'floor_1', version: 1, content: { role_name: 'agent', text_body: 'x' }, created_at: 2 };
    const { client, requests } = setup(
      json({ items: [wireFloor] }),
      json({ floor: wireFloor, page: wirePage }, 201),
      json({ items: [wirePage] }),
      json({ page: { ...wirePage, id: 'page_2', version: 2 } }, 201),
    );
    const floors = await client.sessions.floors.list('sess_1');
    expect(floors.items[0]).toEqual({ id: 'floor_1', workspaceId: 'ws_1', sessionId: 'sess_1', number: 1, branch: 'main', state: 'committed', createdAt: 2 });
    const committed = await client.sessions.floors.commit('sess_1', { content: { role_name: 'agent', text_body: 'x' }, branch: 'main' });
    expect(committed.floor.sessionId).toBe('sess_1');
    expect(committed.page).toMatchObject({ floorId: 'floor_1', content: { role_name: 'agent', text_body: 'x' } });
    expect((await client.sessions.pages.list('sess_1', 'floor_1')).items[0]!.floorId).toBe('floor_1');
    expect((await client.sessions.pages.add('sess_1', 'floor_1', { content: ['v2'] })).version).toBe(2);
    expect(requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      `GET ${BASE}/sessions/sess_1/floors`,
      `POST ${BASE}/sessions/sess_1/floors`,
      `GET ${BASE}/sessions/sess_1/floors/floor_1/pages`,
      `POST ${BASE}/sessions/sess_1/floors/floor_1/pages`,
    ]);
    expect(requests[1]!.body).toEqual({ content: { role_name: 'agent', text_body: 'x' }, branch: 'main' });
    expect(requests[3]!.body).toEqual({ content: ['v2'] });
  });
});

describe('client.sessions.liveInbox', () => {
  it('get → { active, version, messages }', async () => {
    const { client, requests } = setup(json({ active: true, version: 3, messages: [{ id: 1, content }] }));
    expect(await client.sessions.liveInbox.get('sess_1')).toEqual({ active: true, version: 3, messages: [{ id: 1, content }] });
    expect(requests[0]).toMatchObject({ method: 'GET', url: LIVE });
  });

  it('queue → POST { content } (blocks untouched) → the number id', async () => {
    const { client, requests } = setup(json({ id: 4 }));
    const id = await client.sessions.liveInbox.queue('sess_1', content, { accountId: 'acc_app' });
    expect(id).toBe(4);
    expect(requests[0]).toMatchObject({ method: 'POST', url: LIVE, body: { content } });
    expect(requests[0]!.headers.get('content-type')).toBe('application/json');
    expect(requests[0]!.headers.get('x-account-id')).toBe('acc_app');
  });

  it('replace, withdraw, reorder', async () => {
    const { client, requests } = setup(noContent(), noContent(), noContent());
    await client.sessions.liveInbox.replace('sess_1', 2, [{ type: 'text', text: 'edited' }]);
    await client.sessions.liveInbox.withdraw('sess_1', 3);
    await client.sessions.liveInbox.reorder('sess_1', [5, 4]);
    expect(requests.map((r) => `${r.method} ${r.url}`)).toEqual([`PUT ${LIVE}/2`, `DELETE ${LIVE}/3`, `PUT ${LIVE}/order`]);
    expect(requests.map((r) => r.body)).toEqual([{ content: [{ type: 'text', text: 'edited' }] }, undefined, { order: [5, 4] }]);
  });

  it('a 410 on a mutation throws LiveInboxInactiveError (not retried)', async () => {
    const { client, requests } = setup(inactive());
    const err = await client.sessions.liveInbox.withdraw('sess_1', 1).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LiveInboxInactiveError);
    expect(err).toBeInstanceOf(InboxKitApiError);
    expect((err as LiveInboxInactiveError).message).toContain('client.sessions.events.send');
    expect(requests).toHaveLength(1);
  });

  it('queueOrSend delivers live when the queue accepts', async () => {
    const { client, requests } = setup(json({ id: 1 }));
    expect(await client.sessions.liveInbox.queueOrSend('sess_1', content)).toEqual({ delivery: 'live', id: 1 });
    expect(requests).toHaveLength(1);
  });

  it('queueOrSend falls back to a durable user.message on 410', async () => {
    const { client, requests } = setup(inactive(), json({ data: [{ id: 'sevt_1', type: 'user.message', processed_at: '2026-01-01T00:00:00.077Z' }] }));
    const result = await client.sessions.liveInbox.queueOrSend('sess_1', content, { accountId: 'acc_app' });
    expect(result).toEqual({ delivery: 'durable', events: [{ id: 'sevt_1', type: 'user.message', processedAt: '2026-01-01T00:00:00.077Z' }] });
    expect(requests[1]).toMatchObject({ method: 'POST', url: `${BASE}/v1/sessions/sess_1/events`, body: { events: [{ type: 'user.message', content }] } });
    expect(requests[1]!.headers.get('x-account-id')).toBe('acc_app');
  });

  it('queueOrSend rethrows any other error', async () => {
    const { client, requests } = setup(apiError(404, 'session_not_found', 'not_found_error', 'Session not found'));
    await expect(client.sessions.liveInbox.queueOrSend('sess_1', content)).rejects.toMatchObject({ status: 404, code: 'session_not_found' });
    expect(requests).toHaveLength(1);
  });
});

describe('client.sessions.events', () => {
  it('send → POST /v1/sessions/:id/events { events } → data camelCase', async () => {
    const { client, requests } = setup(json({ data: [{ id: 'sevt_1', type: 'user.message', processed_at: '2026-01-01T00:00:00.005Z' }] }));
    const acks = await client.sessions.events.send('sess_1', [{ type: 'user.message', content }], { idempotencyKey: 'k' });
    expect(acks).toEqual([{ id: 'sevt_1', type: 'user.message', processedAt: '2026-01-01T00:00:00.005Z' }]);
    expect(requests[0]).toMatchObject({ method: 'POST', url: `${BASE}/v1/sessions/sess_1/events`, body: { events: [{ type: 'user.message', content }] } });
    expect(requests[0]!.headers.get('idempotency-key')).toBe('k');
  });

  it('interrupt sends one user.interrupt event', async () => {
    const { client, requests } = setup(json({ data: [{ id: 'sevt_2', type: 'user.interrupt', processed_at: '2026-01-01T00:00:00.005Z' }] }));
    expect(await client.sessions.events.interrupt('sess_1')).toEqual([{ id: 'sevt_2', type: 'user.interrupt', processedAt: '2026-01-01T00:00:00.005Z' }]);
    expect(requests[0]!.body).toEqual({ events: [{ type: 'user.interrupt' }] });
  });

  it('list → GET ?page=&limit=&order= → { data, nextPage, hasMore }', async () => {
    const wire = { id: 'sevt_1', session_id: 'sess_1', seq: 1, type: 'user.message', run_id: 'run_1', message_id: 'run_1-inbox-0', content, floor_id: 'floor_1', page_id: 'page_1', processed_at: '2026-01-01T00:00:00.005Z' };
    const { client, requests } = setup(json({ data: [wire], next_page: 'np_1', has_more: true }), json({ data: [], next_page: null, has_more: false }));
    const page = await client.sessions.events.list('sess_1', { limit: 1 });
    expect(page).toEqual({
      data: [{ id: 'sevt_1', sessionId: 'sess_1', seq: 1, type: 'user.message', runId: 'run_1', messageId: 'run_1-inbox-0', content, floorId: 'floor_1', pageId: 'page_1', processedAt: '2026-01-01T00:00:00.005Z' }],
      nextPage: 'np_1',
      hasMore: true,
    });
    expect(await client.sessions.events.list('sess_1', { page: page.nextPage ?? undefined, limit: 1, order: 'desc' })).toEqual({ data: [], nextPage: null, hasMore: false });
    expect(requests.map((r) => r.url)).toEqual([`${BASE}/v1/sessions/sess_1/events?limit=1`, `${BASE}/v1/sessions/sess_1/events?page=np_1&limit=1&order=desc`]);
  });
});
