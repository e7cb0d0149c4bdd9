/**
 * Long-lived streams of the demo, on SQLite and on PostgreSQL, over real HTTP: a standard
 * reconnecting EventSource (`eventsource` on npm) resumes with `Last-Event-ID` and gets no event
 * twice; the Session event stream resumes after the later of `?after=` and `Last-Event-ID`,
 * answers a position past its newest event with a `resync` frame, refuses a malformed header and
 * answers `HEAD` at once; and every delivery is authorised as of now (removal, key revocation in
 * storage end open streams; a demotion to observer keeps the Session stream, as a fresh request
 * would). Spec: platform.md "Project Events" ("Resume", "Authorised as of now"), live-inbox.md.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashApiKey } from '@inbox-kit/core';
import { createClient, type StreamResync } from '@inbox-kit/sdk';
import { EventSource } from 'eventsource';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDemo, loadConfig, type Demo } from '../src/index.js';
import { PG_ADMIN_URL, freshPostgresDatabase, openEventStream, waitUntil } from './demo-process.js';
import { closeDemo, listen } from './listen.js';

const engines = PG_ADMIN_URL ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const);

describe.each(engines)('demo streams (%s)', (engine) => {
  let demo: Demo;
  let url: string;
  let dataDir: string;
  let database: { url: string; drop(): Promise<void> } | undefined;
  let keys: Record<'acc_owner' | 'acc_deriver' | 'acc_observer' | 'acc_stranger', string>;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'inbox-kit-streams-'));
    database = engine === 'postgres' ? await freshPostgresDatabase('inbox_kit_streams') : undefined;
    demo = await buildDemo(loadConfig({
      DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent', DEMO_MODEL_STEP_MS: '10', DEMO_MODEL_STEPS: '2',
      ...(database ? { DATABASE_URL: database.url } : {}),
    }));
    url = await listen(demo);
    const key = (account: string): string => {
      const secret = demo.credentials[account];
      if (secret === undefined) throw new Error(`the demo seeded no key for ${account}`);
      return secret;
    };
    keys = { acc_owner: key('acc_owner'), acc_deriver: key('acc_deriver'), acc_observer: key('acc_observer'), acc_stranger: key('acc_stranger') };
  });

  afterAll(async () => {
    await closeDemo(demo);
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const call = async (method: string, path: string, key: string | undefined, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(url + path, {
      method,
      headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, body: text && (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : undefined };
  };
  const sessionEvents = async (): Promise<Array<{ seq: number; type: string }>> => (await call('GET', '/v1/sessions/sess_001/events?limit=1000', keys.acc_owner)).body.data;
  const lastSeq = async () => (await sessionEvents()).at(-1)?.seq ?? 0;
  /** Posts a user.message as the owner and waits until its Run has ended (a new `session.status_idle`). */
  const runOnce = async (text: string) => {
    const idleBefore = (await sessionEvents()).filter((e) => e.type === 'session.status_idle').length;
    const sent = await call('POST', '/v1/sessions/sess_001/events', keys.acc_owner, { events: [{ type: 'user.message', content: [{ type: 'text', text }] }] });
    expect(sent.status).toBe(200);
    await waitUntil(async () => (await sessionEvents()).filter((e) => e.type === 'session.status_idle').length > idleBefore, `the Run on "${text}" to end`);
  };
  const sessionStream = (key: string, query = '', headers: Record<string, string> = {}) => openEventStream(`${url}/v1/sessions/sess_001/events/stream${query}`, key, headers);

  it('a standard EventSource that drops and reconnects by itself (same URL plus Last-Event-ID) gets no event twice', async () => {
    for (let i = 0; i < 2; i++) expect((await call('POST', '/projects/proj_main/inbox', keys.acc_owner, { type: 'probe' })).status).toBe(201);
    const listed = (await call('GET', '/projects/proj_main/events?limit=200', keys.acc_owner)).body.items as Array<{ sequence: number }>;
    const latest = listed.at(-1)!.sequence;
    const requests: Array<{ url: string; lastEventId: string | null }> = [];
    const source = new EventSource(`${url}/projects/proj_main/events/stream?after=${latest - 1}`, {
      fetch: (input, init) => {
        const headers = new Headers(init?.headers as HeadersInit | undefined);
        requests.push({ url: String(input), lastEventId: headers.get('last-event-id') });
        headers.set('authorization', `Bearer ${keys.acc_owner}`);
        return fetch(input, { ...init, headers });
      },
    });
    const received: number[] = [];
    source.addEventListener('project_inbox.item.created', (e) => received.push(Number(e.lastEventId)));
    try {
      await waitUntil(() => received.length === 1, 'the first event');
      expect(received).toEqual([latest]);
      demo.app.server.closeAllConnections(); // the connection drops; the EventSource reconnects on its own
      await waitUntil(() => requests.length === 2 && source.readyState === EventSource.OPEN, 'the reconnection');
      expect(requests[1]).toEqual({ url: `${url}/projects/proj_main/events/stream?after=${latest - 1}`, lastEventId: String(latest) });
      expect((await call('POST', '/projects/proj_main/inbox', keys.acc_owner, { type: 'probe' })).status).toBe(201);
      await waitUntil(() => received.length >= 2, 'the event after the reconnection');
      expect(received).toEqual([latest, latest + 1]);
    } finally {
      source.close();
    }
  });

  it('the Session stream resumes after the later of ?after= and Last-Event-ID; a position past the newest gets resync; a malformed header is 400', async () => {
    await runOnce('first task');
    const latest = await lastSeq();
    expect(latest).toBeGreaterThanOrEqual(4);
    const queryLater = await sessionStream(keys.acc_owner, '?after=3', { 'last-event-id': '1' });
    const headerLater = await sessionStream(keys.acc_owner, '?after=1', { 'last-event-id': '3' });
    try {
      await queryLater.waitForId(latest);
      await headerLater.waitForId(latest);
      expect(queryLater.ids()[0]).toBe(4);
      expect(headerLater.ids()[0]).toBe(4);
      expect(headerLater.ids()).toEqual(Array.from({ length: latest - 3 }, (_, i) => i + 4));
    } finally {
      queryLater.close();
      headerLater.close();
    }

    const ahead = await sessionStream(keys.acc_owner, '', { 'last-event-id': String(latest + 100) });
    try {
      await waitUntil(() => ahead.events.length >= 1, 'the resync frame');
      expect(ahead.events[0]).toEqual({ id: latest, type: 'resync', data: { type: 'resync', reason: 'ahead_of_latest', requested_after: latest + 100, latest } });
      await runOnce('second task');
      await ahead.waitForId(latest + 1);
      expect(ahead.ids()[1]).toBe(latest + 1);
      expect(ahead.events[1]!.type).toBe('user.message');
    } finally {
      ahead.close();
    }

    for (const bad of ['-1', 'abc', '1.0', '99999999999999999999']) {
      const refused = await call('GET', '/v1/sessions/sess_001/events/stream', keys.acc_owner, undefined, { 'last-event-id': bad });
      expect(refused.status, bad).toBe(400);
      expect(refused.body.error).toMatchObject({ code: 'validation_error', details: [{ path: 'Last-Event-ID', code: 'invalid_resume_position' }] });
    }
    expect((await call('GET', '/v1/sessions/sess_001/events/stream?after=-1', keys.acc_owner)).status).toBe(400);
  });

  it('the Session stream keeps the Managed Agents wire: event_deltas[] with Last-Event-ID resume, RFC 3339 processed_at, request-id; a deleted Session streams 404', async () => {
    await runOnce('wire task');
    const latest = await lastSeq();
    const rfc3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
    const resumed = await sessionStream(keys.acc_owner, '?event_deltas[]=agent.message&after=1', { 'last-event-id': String(latest - 2) });
    try {
      await resumed.waitForId(latest);
      expect(resumed.ids()).toEqual([latest - 1, latest]);
      for (const e of resumed.events) expect((e.data as { processed_at: unknown }).processed_at).toMatch(rfc3339);
      const idle = resumed.events.find((e) => e.type === 'session.status_idle');
      expect(idle?.data).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
    } finally {
      resumed.close();
    }
    // The stream's answer carries request-id (what @anthropic-ai/sdk reads), as HEAD's does.
    const controller = new AbortController();
    const res = await fetch(`${url}/v1/sessions/sess_001/events/stream?event_deltas[]=agent.thinking&after=${latest}`, {
      headers: { authorization: `Bearer ${keys.acc_owner}` }, signal: controller.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('request-id')).toMatch(/\S/);
    expect(res.headers.get('request-id')).toBe(res.headers.get('x-request-id'));
    controller.abort();
    const head = await call('HEAD', '/v1/sessions/sess_001/events/stream?event_deltas[]=agent.message', keys.acc_owner);
    expect(head.status).toBe(200);
    expect(head.headers.get('request-id')).toBe(head.headers.get('x-request-id'));
    expect((await call('GET', '/v1/sessions/sess_001/events/stream?event_deltas[]=bogus', keys.acc_owner)).status).toBe(400);

    const created = await call('POST', '/v1/sessions', keys.acc_owner, { agent: 'assistant', environment_id: 'env_streams' });
    expect(created.status).toBe(200);
    expect((await call('DELETE', `/v1/sessions/${created.body.id}`, keys.acc_owner)).status).toBe(200);
    for (const method of ['GET', 'HEAD']) {
      expect((await call(method, `/v1/sessions/${created.body.id}/events/stream`, keys.acc_owner)).status, method).toBe(404);
    }
  });

  it('our SDK reports a resync (onResync) and then yields the next event, with visibility and source', async () => {
    const client = createClient({ baseUrl: url, apiKey: keys.acc_owner });
    const listed = await client.projects.events.list('proj_main', { limit: 200 });
    const latest = listed.items.at(-1)!.sequence;
    const resyncs: StreamResync[] = [];
    const controller = new AbortController();
    const iterator = client.projects.events.stream('proj_main', { after: latest + 50, onResync: (r) => resyncs.push(r), signal: controller.signal });
    const first = iterator.next();
    await waitUntil(() => resyncs.length === 1, 'the resync');
    expect(resyncs).toEqual([{ type: 'resync', reason: 'ahead_of_latest', requestedAfter: latest + 50, latest }]);
    await client.projects.inbox.create('proj_main', { type: 'probe' });
    const { value } = await first;
    expect(value).toMatchObject({ sequence: latest + 1, type: 'project_inbox.item.created', visibility: 'owner', source: 'api' });
    controller.abort();
    await iterator.return(undefined);
  });

  it('HEAD on both stream routes answers at once with headers and no body', async () => {
    for (const path of ['/v1/sessions/sess_001/events/stream', '/projects/proj_main/events/stream']) {
      const head = await call('HEAD', path, keys.acc_observer);
      expect(head.status, path).toBe(200);
      expect(head.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(head.text).toBe('');
      expect((await call('HEAD', path, keys.acc_stranger)).status).toBe(404);
      expect((await call('HEAD', path, undefined)).status).toBe(401);
    }
  });

  it('open streams follow the grant: demotion keeps the Session stream, key revocation in storage and removal end every stream', async () => {
    // Demotion of a deriver to observer: observers read Sessions, so its Session stream goes on.
    const demoted = await sessionStream(keys.acc_deriver, `?after=${await lastSeq()}`);
    expect((await call('POST', '/projects/proj_main/members', keys.acc_owner, { account_id: 'acc_deriver', role: 'observer' })).status).toBe(201);
    await runOnce('after the demotion');
    await waitUntil(() => demoted.events.some((e) => e.type === 'session.status_idle'), 'the Run on the demoted member\'s stream');
    expect(demoted.ended()).toBe(false);
    demoted.close();
    expect((await call('POST', '/projects/proj_main/members', keys.acc_owner, { account_id: 'acc_deriver', role: 'deriver' })).status).toBe(201);

    // The deriver's key revoked directly in storage (not through the service): refused as a fresh request is.
    const session = await sessionStream(keys.acc_deriver, `?after=${await lastSeq()}`);
    const project = await openEventStream(`${url}/projects/proj_main/events/stream?after=1000000`, keys.acc_deriver);
    await waitUntil(() => project.events.length >= 1, 'the project stream\'s resync frame');
    const key = await demo.store.findApiKeyByHash(await hashApiKey(keys.acc_deriver));
    await demo.store.revokeApiKey(key!.id, Date.now());
    await waitUntil(async () => (await call('GET', '/me', keys.acc_deriver)).status === 401, 'GET /me refusing the revoked key');
    await runOnce('secret after the revocation');
    expect((await call('POST', '/sessions', keys.acc_owner, { project_id: 'proj_main', title: 'after the revocation' })).status).toBe(201);
    await waitUntil(() => session.ended() && project.ended(), 'both streams of the revoked key to end');
    expect(session.events).toEqual([]);
    expect(project.events.map((e) => e.type)).toEqual(['resync']);

    // The observer removed from the project: its open streams end before the next Run's first frame.
    const removedSession = await sessionStream(keys.acc_observer, `?after=${await lastSeq()}`);
    const removedProject = await openEventStream(`${url}/projects/proj_main/events/stream?after=1000000`, keys.acc_observer);
    await waitUntil(() => removedProject.events.length >= 1, 'the project stream\'s resync frame');
    expect((await call('DELETE', '/projects/proj_main/members/acc_observer', keys.acc_owner)).status).toBe(204);
    expect((await call('GET', '/v1/sessions/sess_001/events', keys.acc_observer)).status).toBe(404);
    await runOnce('secret after the removal');
    await waitUntil(() => removedSession.ended() && removedProject.ended(), 'both streams of the removed member to end');
    expect(removedSession.events).toEqual([]);
    expect(removedSession.text()).not.toContain('secret after the removal');
    expect(removedProject.events.map((e) => e.type)).toEqual(['resync']);
    const again = await call('GET', '/v1/sessions/sess_001/events/stream', keys.acc_observer, undefined, { 'last-event-id': '1' });
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('session_not_found');
  });
});
