/**
 * The Project Inbox against the started demo (SQLite under a temp DATA_DIR), exactly as the seed
 * page shows it: the two curl calls with credentials added, then the SDK snippet. Also: the
 * credentials file, the public health route, and a restart on the same DATA_DIR.
 * Spec: ../../shared/seeds/project-inbox.zh.txt, project-inbox.md, platform.md.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, InboxKitApiError } from '@inbox-kit/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDemo, loadConfig, type Demo } from '../src/index.js';
import { closeDemo, listen } from './listen.js';

// The seed page's curl bodies, verbatim.
const CURL_CREATE_BODY = `{
    "type": "derived_output.review",
    "title": "候选摘要待确认",
    "payload": {
      "derived_output_id": "dout_001",
      "suggested_action": "review"
    },
    "source_session_id": "sess_001"
  }`;
const CURL_ACCEPT_BODY = `{
    "decision": "accept",
    "note": "已记录。稍后由应用层决定是否写入主会话。"
  }`;

let dataDir: string;
let demo: Demo;
let base: string;

async function start(): Promise<void> {
  demo = await buildDemo(loadConfig({ DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent' }));
  base = await listen(demo);
}

async function stop(): Promise<void> {
  await closeDemo(demo);
}

/** What `curl -X <method> <url> -H 'Content-Type: application/json' -d '<body>'` sends, plus the key. */
async function curl(method: string, path: string, body: string | undefined, key: string | undefined) {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (key !== undefined) headers.authorization = `Bearer ${key}`;
  const res = await fetch(base + path, { method, headers, body, signal: AbortSignal.timeout(20_000) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text === '' ? undefined : JSON.parse(text) };
}

/** Every stored row of sess_001: the session, its floors and their pages. */
async function sessionSnapshot(): Promise<string> {
  const session = await demo.store.getSession('ws_demo', 'sess_001');
  const floors = await demo.store.listFloors('sess_001');
  const pages = await Promise.all(floors.map((f) => demo.store.listPages(f.id)));
  return JSON.stringify({ session, floors, pages });
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'inbox-kit-project-inbox-'));
  await start();
});

afterAll(async () => {
  await stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('the started demo', () => {
  it('seeded a fresh database and wrote credentials.json in the documented shape', () => {
    expect(demo.seeded).toBe(true);
    expect(demo.dialect).toBe('sqlite');
    const file = join(dataDir, 'credentials.json');
    const credentials = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    expect(Object.keys(credentials).sort()).toEqual(['acc_deriver', 'acc_observer', 'acc_outsider', 'acc_owner', 'acc_stranger', 'admin', 'service']);
    for (const secret of Object.values(credentials)) expect(secret).toMatch(/^ik_[A-Za-z0-9_-]{40}$/);
    expect(new Set(Object.values(credentials)).size).toBe(7);
    expect(credentials).toEqual(demo.credentials);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('GET /health answers 200 without credentials', async () => {
    const res = await curl('GET', '/health', undefined, undefined);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('the inbox routes require credentials', async () => {
    const res = await curl('POST', '/projects/proj_main/inbox', CURL_CREATE_BODY, undefined);
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('authentication_required');
    expect(res.body.error.type).toBe('authentication_error');
    expect(res.headers.get('x-request-id')).toBe(res.body.error.request_id);
  });

  it('the seed keys authenticate as documented, and the service key acts as any ws_demo account', async () => {
    for (const account of ['acc_owner', 'acc_deriver', 'acc_observer', 'acc_outsider']) {
      const me = await curl('GET', '/me', undefined, demo.credentials[account]);
      expect(me.status).toBe(200);
      expect(me.body.account.id).toBe(account);
      expect(me.body.workspace_id).toBe('ws_demo');
    }
    const stranger = await curl('GET', '/me', undefined, demo.credentials.acc_stranger);
    expect(stranger.body.workspace_id).toBe('ws_other');
    const asDeriver = await fetch(`${base}/me`, { headers: { authorization: `Bearer ${demo.credentials.service}`, 'x-account-id': 'acc_deriver' } });
    expect((await asDeriver.json()).account.id).toBe('acc_deriver');
  });
});

describe('the seed page curl flow', () => {
  let itemId: string;

  it('curl #1: the deriver creates the item → 201 { item } with the seed fields', async () => {
    const res = await curl('POST', '/projects/proj_main/inbox', CURL_CREATE_BODY, demo.credentials.acc_deriver);
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(['item']);
    const item = res.body.item;
    expect(item).toEqual({
      id: expect.stringMatching(/^pinbox_[A-Za-z0-9_-]{21}$/),
      workspace_id: 'ws_demo',
      project_id: 'proj_main',
      account_id: 'acc_owner',
      sender_account_id: 'acc_deriver',
      type: 'derived_output.review',
      title: '候选摘要待确认',
      payload: { derived_output_id: 'dout_001', suggested_action: 'review' },
      source_event_id: null,
      source_session_id: 'sess_001',
      source_floor_id: null,
      source_page_id: null,
      status: 'pending',
      decided_by_account_id: null,
      decided_at: null,
      created_at: expect.any(Number),
      updated_at: item.created_at,
    });
    expect(Number.isInteger(item.created_at)).toBe(true);
    expect(Math.abs(item.created_at - Date.now())).toBeLessThan(3_600_000);
    itemId = item.id;

    const list = await curl('GET', '/projects/proj_main/inbox?status=pending', undefined, demo.credentials.acc_deriver);
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ items: [item], next_cursor: null });
  });

  it('curl #2: the owner accepts with the seed note → pending becomes accepted; the session is untouched', async () => {
    const sessionBefore = await sessionSnapshot();
    const httpSessionBefore = await curl('GET', '/sessions/sess_001', undefined, demo.credentials.acc_owner);
    const before = (await curl('GET', `/projects/proj_main/inbox/${itemId}`, undefined, demo.credentials.acc_owner)).body.item;
    expect(before.status).toBe('pending');

    const res = await curl('PATCH', `/projects/proj_main/inbox/${itemId}`, CURL_ACCEPT_BODY, demo.credentials.acc_owner);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['item']);
    expect(res.body.item).toEqual({
      ...before,
      status: 'accepted',
      decided_by_account_id: 'acc_owner',
      decided_at: expect.any(Number),
      updated_at: res.body.item.decided_at,
    });
    expect(res.body.item.decided_at).toBeGreaterThanOrEqual(before.created_at);
    expect(res.body.item).not.toHaveProperty('note');

    expect(await sessionSnapshot()).toBe(sessionBefore);
    expect(await curl('GET', '/sessions/sess_001', undefined, demo.credentials.acc_owner)).toMatchObject({ status: 200, body: httpSessionBefore.body });

    // the note went to the Operation Log only; the decision produced its event
    const logs = await curl('GET', '/projects/proj_main/operation-logs', undefined, demo.credentials.acc_owner);
    const decideLog = logs.body.items.find((l: { target_id: string; action: string }) => l.target_id === itemId && l.action === 'project_inbox_item.decide');
    expect(decideLog.metadata).toEqual({ decision: 'accept', note: '已记录。稍后由应用层决定是否写入主会话。' });
    expect(decideLog.request_id).toBe(res.headers.get('x-request-id'));
    const events = await curl('GET', '/projects/proj_main/events', undefined, demo.credentials.acc_owner);
    const inbox = events.body.items.filter((e: { payload: { inbox_item_id?: string } }) => e.payload.inbox_item_id === itemId);
    expect(inbox.map((e: { type: string }) => e.type)).toEqual(['project_inbox.item.created', 'project_inbox.item.accepted']);
    expect(JSON.stringify(inbox)).not.toContain('已记录');
    expect(JSON.stringify(inbox)).not.toContain('suggested_action');
    expect(events.body.items.map((e: { sequence: number }) => e.sequence)).toEqual(events.body.items.map((_: unknown, i: number) => i + 1));
  });

  it('curl #2 again: accepting an accepted item is 409 project_inbox_invalid_transition', async () => {
    const res = await curl('PATCH', `/projects/proj_main/inbox/${itemId}`, CURL_ACCEPT_BODY, demo.credentials.acc_owner);
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'project_inbox_invalid_transition' });
  });

  it('the other seed roles: observer 403, outsider and stranger 404, deriver may not decide', async () => {
    expect((await curl('POST', '/projects/proj_main/inbox', CURL_CREATE_BODY, demo.credentials.acc_observer)).body.error.code).toBe('project_inbox_write_denied');
    expect((await curl('GET', '/projects/proj_main/inbox', undefined, demo.credentials.acc_observer)).body.error.code).toBe('project_inbox_read_denied');
    const outsider = await curl('POST', '/projects/proj_main/inbox', CURL_CREATE_BODY, demo.credentials.acc_outsider);
    const stranger = await curl('POST', '/projects/proj_main/inbox', CURL_CREATE_BODY, demo.credentials.acc_stranger);
    for (const r of [outsider, stranger]) {
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe('project_not_found');
    }
    expect({ ...outsider.body.error, request_id: '' }).toEqual({ ...stranger.body.error, request_id: '' });
    const deriver = await curl('PATCH', `/projects/proj_main/inbox/${itemId}`, '{"decision":"archive"}', demo.credentials.acc_deriver);
    expect(deriver.status).toBe(403);
    expect(deriver.body.error.code).toBe('project_inbox_decide_denied');
  });

  it('a restart on the same DATA_DIR keeps the data and the keys', async () => {
    const credentials = { ...demo.credentials };
    const item = (await curl('GET', `/projects/proj_main/inbox/${itemId}`, undefined, credentials.acc_owner)).body.item;
    await stop();
    await start();
    expect(demo.seeded).toBe(false);
    expect(demo.credentials).toEqual(credentials);
    expect(JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8'))).toEqual(credentials);
    const again = await curl('GET', `/projects/proj_main/inbox/${itemId}`, undefined, credentials.acc_owner);
    expect(again.status).toBe(200);
    expect(again.body.item).toEqual(item);
    expect((await curl('GET', `/projects/proj_main/inbox/${itemId}`, undefined, credentials.acc_deriver)).status).toBe(200);
    const asService = await fetch(`${base}/projects/proj_main/inbox/${itemId}`, { headers: { 'x-api-key': credentials.service!, 'x-account-id': 'acc_owner' } });
    expect(asService.status).toBe(200);
    // the event sequence continues after the restart
    const archived = await curl('PATCH', `/projects/proj_main/inbox/${itemId}`, '{"decision":"archive"}', credentials.acc_owner);
    expect(archived.status).toBe(200);
    const events = await curl('GET', '/projects/proj_main/events?limit=500', undefined, credentials.acc_owner);
    const seqs = events.body.items.map((e: { sequence: number }) => e.sequence);
    expect(seqs).toEqual(seqs.map((_: unknown, i: number) => i + 1));
    expect(events.body.items.at(-1).type).toBe('project_inbox.item.archived');
  });
});

describe('the seed page SDK snippet', () => {
  it('create / list / accept / archive with { accountId } on the service key give the documented results', async () => {
    const client = createClient({ baseUrl: base, apiKey: demo.credentials.service! });

    const item = await client.projects.inbox.create(
      'proj_main',
      {
        type: 'derived_output.review',
        title: '候选摘要待确认',
        payload: { derivedOutputId: 'dout_001' },
        sourceSessionId: 'sess_001',
      },
      { accountId: 'acc_deriver' },
    );
    expect(item).toEqual({
      id: expect.stringMatching(/^pinbox_[A-Za-z0-9_-]{21}$/),
      workspaceId: 'ws_demo',
      projectId: 'proj_main',
      accountId: 'acc_owner',
      senderAccountId: 'acc_deriver',
      type: 'derived_output.review',
      title: '候选摘要待确认',
      payload: { derivedOutputId: 'dout_001' },
      sourceEventId: null,
      sourceSessionId: 'sess_001',
      sourceFloorId: null,
      sourcePageId: null,
      status: 'pending',
      decidedByAccountId: null,
      decidedAt: null,
      createdAt: expect.any(Number),
      updatedAt: item.createdAt,
    });
    // top-level fields are snake_case on the wire; the payload passed through untouched
    const wire = await curl('GET', `/projects/proj_main/inbox/${item.id}`, undefined, demo.credentials.acc_owner);
    expect(wire.body.item.payload).toEqual({ derivedOutputId: 'dout_001' });
    expect(wire.body.item.sender_account_id).toBe('acc_deriver');

    const ownInbox = await client.projects.inbox.list('proj_main', {
      accountId: 'acc_deriver',
      status: 'pending',
    });
    expect(ownInbox.items.map((i) => i.id)).toContain(item.id);
    for (const i of ownInbox.items) {
      expect(i.senderAccountId).toBe('acc_deriver');
      expect(i.status).toBe('pending');
    }

    const sessionBefore = await sessionSnapshot();
    const accepted = await client.projects.inbox.accept('proj_main', item.id, {
      accountId: 'acc_owner',
      note: '已确认。',
    });
    expect(accepted).toEqual({ ...item, status: 'accepted', decidedByAccountId: 'acc_owner', decidedAt: expect.any(Number), updatedAt: accepted.decidedAt });
    expect(await sessionSnapshot()).toBe(sessionBefore);

    const archived = await client.projects.inbox.archive('proj_main', accepted.id, {
      accountId: 'acc_owner',
    });
    expect(archived).toMatchObject({ id: item.id, status: 'archived', decidedByAccountId: 'acc_owner' });

    expect((await client.projects.inbox.get('proj_main', item.id, { accountId: 'acc_deriver' })).status).toBe('archived');
    const stillPending = await client.projects.inbox.list('proj_main', { accountId: 'acc_deriver', status: 'pending' });
    expect(stillPending.items.map((i) => i.id)).not.toContain(item.id);
  });

  it('errors surface as InboxKitApiError with the envelope code', async () => {
    const client = createClient({ baseUrl: base, apiKey: demo.credentials.service! });
    const item = await client.projects.inbox.create('proj_main', { type: 'sdk.errors' }, { accountId: 'acc_deriver' });
    const err = await client.projects.inbox.accept('proj_main', item.id, { accountId: 'acc_deriver' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InboxKitApiError);
    expect(err).toMatchObject({ status: 403, code: 'project_inbox_decide_denied', type: 'permission_error' });
    expect((err as InboxKitApiError).requestId).toMatch(/^req_/);
    const rejected = await client.projects.inbox.reject('proj_main', item.id, { accountId: 'acc_owner' });
    expect(rejected.status).toBe('rejected');
    const again = await client.projects.inbox.accept('proj_main', item.id, { accountId: 'acc_owner' }).catch((e: unknown) => e);
    expect(again).toMatchObject({ status: 409, code: 'project_inbox_invalid_transition' });
  });
});
