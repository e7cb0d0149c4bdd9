/**
 * Contract tests of the Managed Agents compatibility surface (live-inbox.md "Managed Agents
 * compatibility"), driven by the official `@anthropic-ai/sdk` (pinned 1.10.0) against the demo
 * server over real HTTP: sessions create / retrieve / list / update / archive / delete; events
 * send, stream (a whole steered Run, with the five Live Inbox calls made through the SDK's
 * generic `client.get/post/put/delete` during it), list with auto-paging and filters; errors with
 * `requestID`. On SQLite and, with INBOX_KIT_TEST_PG_URL, PostgreSQL, served by the Fastify adapter;
 * and on SQLite served by the Hono adapter (`HTTP_ADAPTER=hono`: `@inbox-kit/http-hono` on the
 * demo's services), since both serve the same route table.
 *
 * The model is gated: each step waits until the test releases it, so the Live Inbox edits happen
 * while the Run is at a known point (no timing assumptions).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { serveInboxKit, type InboxKitHonoServer } from '@inbox-kit/http-hono';
import { fakeModel } from '@inbox-kit/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDemo, loadConfig, type Demo } from '../src/index.js';
import { PG_ADMIN_URL, freshPostgresDatabase } from './demo-process.js';
import { closeDemo, listen } from './listen.js';

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const text = (t: string) => [{ type: 'text' as const, text: t }];
const textOf = (content: unknown): string => (Array.isArray(content) ? content.map((b: { text?: string }) => b.text ?? '').join('') : '');

/** A model whose steps the test releases one at a time (`next()` hands out the held step; `reply(text, more)` answers it). */
const gatedModel = () => fakeModel({ then: 'hold' });

const backends: { name: string; adapter?: 'hono'; env: () => Promise<{ env: Record<string, string>; drop(): Promise<void> }> }[] = [
  { name: 'SQLite', env: async () => ({ env: {}, drop: async () => {} }) },
  { name: 'SQLite on hono', adapter: 'hono', env: async () => ({ env: {}, drop: async () => {} }) },
];
if (PG_ADMIN_URL) {
  backends.push({
    name: 'PostgreSQL',
    env: async () => {
      const db = await freshPostgresDatabase('inbox_kit_sdk');
      return { env: { DATABASE_URL: db.url }, drop: db.drop };
    },
  });
} else {
  describe('Anthropic SDK contract on PostgreSQL', () => {
    it('INBOX_KIT_TEST_PG_URL is available', () => {
      const why = 'INBOX_KIT_TEST_PG_URL is not set: the SDK contract on PostgreSQL was not tested. '
        + 'Start a server with `node scripts/postgres.mjs` and export the URL it prints.';
      if (process.env.CI) expect.fail(why);
      console.warn(`[demo] ${why}`);
    });
  });
}

describe.each(backends)('Anthropic SDK contract on $name', (backend) => {
  let demo: Demo;
  let base: string;
  let dataDir: string;
  let drop: () => Promise<void>;
  let model: ReturnType<typeof gatedModel>;
  let client: Anthropic;
  let hono: InboxKitHonoServer | undefined;
  const clientAs = (apiKey: string) => new Anthropic({ apiKey, baseURL: base, maxRetries: 0 });

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'inbox-kit-sdk-'));
    const db = await backend.env();
    drop = db.drop;
    model = gatedModel();
    demo = await buildDemo(loadConfig({ DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent', ...db.env }), { model });
    if (backend.adapter === 'hono') {
      hono = await serveInboxKit({ ...demo.http, hostname: '127.0.0.1', port: 0 });
      base = hono.url;
    } else {
      base = await listen(demo);
    }
    client = clientAs(demo.credentials.acc_owner!);
  });

  afterAll(async () => {
    await hono?.close();
    await closeDemo(demo);
    await drop?.();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('sessions: create, retrieve, update, archive, list (auto-paging, filters), delete', async () => {
    const created = await client.beta.sessions.create({ agent: 'assistant', environment_id: 'env_contract', metadata: { team: 'qa', 'empty': '' }, title: 'Contract' });
    expect(created).toMatchObject({
      type: 'session', id: expect.stringMatching(/^sess_/), environment_id: 'env_contract', metadata: { team: 'qa', empty: '' }, title: 'Contract',
      status: 'idle', archived_at: null, workspace_id: 'ws_demo', project_id: null, vault_ids: [], resources: [], outcome_evaluations: [],
      agent: { type: 'agent', id: 'assistant', version: 1, name: 'Assistant', model: { id: 'inbox-kit-demo-scripted' }, tools: [] },
    });
    expect(created.created_at).toMatch(RFC3339);
    expect(created.updated_at).toBe(created.created_at);
    expect(await client.beta.sessions.retrieve(created.id)).toEqual(created);

    // In a project when the request names one (our extra body field passes through the SDK).
    const inProject = await client.beta.sessions.create({ agent: { type: 'agent', id: 'assistant', version: 1 }, environment_id: 'env_p', project_id: 'proj_main' } as Anthropic.Beta.Sessions.SessionCreateParams);
    expect((inProject as unknown as { project_id: string }).project_id).toBe('proj_main');
    // The observer of proj_main may read it but not change it.
    const observer = clientAs(demo.credentials.acc_observer!);
    expect((await observer.beta.sessions.retrieve(inProject.id)).id).toBe(inProject.id);
    await expect(observer.beta.sessions.update(inProject.id, { title: 'no' })).rejects.toBeInstanceOf(Anthropic.PermissionDeniedError);
    // A stranger of another workspace sees nothing.
    await expect(clientAs(demo.credentials.acc_stranger!).beta.sessions.retrieve(created.id)).rejects.toBeInstanceOf(Anthropic.NotFoundError);

    const updated = await client.beta.sessions.update(created.id, { title: 'Renamed', metadata: { team: null, stage: 'beta' } });
    expect(updated).toMatchObject({ id: created.id, title: 'Renamed', metadata: { empty: '', stage: 'beta' } });
    expect(updated.metadata).not.toHaveProperty('team');
    expect(Date.parse(updated.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.updated_at));

    const more: string[] = [];
    for (let i = 0; i < 3; i++) more.push((await client.beta.sessions.create({ agent: 'assistant', environment_id: `env_${i}` })).id);
    const listed: string[] = [];
    for await (const s of client.beta.sessions.list({ limit: 2 })) listed.push(s.id);
    expect(listed).toEqual(expect.arrayContaining([created.id, inProject.id, ...more]));
    expect(new Set(listed).size).toBe(listed.length);
    const page1 = await client.beta.sessions.list({ limit: 2, order: 'asc' });
    expect(page1.data).toHaveLength(2);
    expect(page1.hasNextPage()).toBe(true);
    const page2 = await page1.getNextPage();
    expect(page2.data.map((s) => s.id)).not.toEqual(expect.arrayContaining(page1.data.map((s) => s.id)));
    const newest = (await client.beta.sessions.list({ limit: 1 })).data[0]!;
    expect(newest.id).toBe(more[2]);
    expect((await client.beta.sessions.list({ 'created_at[gte]': newest.created_at, limit: 100 })).data.map((s) => s.id)).toContain(more[2]);
    expect((await client.beta.sessions.list({ 'created_at[gt]': newest.created_at })).data).toEqual([]);
    expect((await client.beta.sessions.list({ agent_id: 'nobody' })).data).toEqual([]);

    const archived = await client.beta.sessions.archive(more[0]!);
    expect(archived.archived_at).toMatch(RFC3339);
    const visible = async (params: Anthropic.Beta.Sessions.SessionListParams) => {
      const ids: string[] = [];
      for await (const s of client.beta.sessions.list({ limit: 100, ...params })) ids.push(s.id);
      return ids;
    };
    expect(await visible({})).not.toContain(more[0]);
    expect(await visible({ include_archived: true })).toContain(more[0]);
    await expect(client.beta.sessions.events.send(more[0]!, { events: [{ type: 'user.message', content: text('late') }] }))
      .rejects.toMatchObject({ status: 409, error: { error: { code: 'session_archived', type: 'invalid_request_error' } } });

    expect(await client.beta.sessions.delete(more[1]!)).toEqual({ id: more[1], type: 'session_deleted' });
    await expect(client.beta.sessions.retrieve(more[1]!)).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    expect(await visible({ include_archived: true })).not.toContain(more[1]);
  }, 60_000);

  it('events: send, stream a whole steered Run (Live Inbox used during it), list with auto-paging and filters', async () => {
    const session = await client.beta.sessions.create({ agent: 'assistant', environment_id: 'env_run', title: 'Steered' });
    const { data: stream, response: streamResponse } = await client.beta.sessions.events.stream(session.id, { event_deltas: ['agent.message'] }).withResponse();
    expect(streamResponse.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(streamResponse.headers.get('request-id')).toMatch(/^req_/);
    expect(streamResponse.headers.get('request-id')).toBe(streamResponse.headers.get('x-request-id'));
    const streamed: Anthropic.Beta.Sessions.BetaManagedAgentsStreamSessionEvents[] = [];
    const reading = (async () => {
      for await (const event of stream) {
        streamed.push(event);
        if (event.type === 'session.status_idle') break;
      }
    })();

    const sent = await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: text('Plan the trip') }] });
    expect(sent.data).toEqual([expect.objectContaining({ type: 'user.message', id: expect.stringMatching(/^sevt_/), content: text('Plan the trip') })]);
    expect((sent.data![0] as { processed_at: string }).processed_at).toMatch(RFC3339);
    expect((await client.beta.sessions.retrieve(session.id)).status).toBe('running');

    // The Run is inside its first model step: the five Live Inbox calls.
    const first = await model.next();
    const li = `/v1/awaken/sessions/${session.id}/live-inbox`;
    expect(await client.get(li)).toEqual({ active: true, version: 0, messages: [] });
    const a = await client.post<{ id: number }>(li, { body: { content: text('Prefer trains') } });
    const b = await client.post<{ id: number }>(li, { body: { content: text('Budget 500') } });
    const c = await client.post<{ id: number }>(li, { body: { content: text('scratch that') } });
    expect([a.id, b.id, c.id]).toEqual([1, 2, 3]);
    await client.put(`${li}/${b.id}`, { body: { content: text('Budget 800') } });
    await client.delete(`${li}/${c.id}`);
    await client.put(`${li}/order`, { body: { order: [b.id, a.id] } });
    expect(await client.get(li)).toEqual({ active: true, version: 6, messages: [{ id: b.id, content: text('Budget 800') }, { id: a.id, content: text('Prefer trains') }] });
    // A stale order is a 409 in our envelope, read by the SDK as an APIError with requestID.
    const conflict = await client.put(`${li}/order`, { body: { order: [a.id] } }).catch((e: unknown) => e);
    expect(conflict).toBeInstanceOf(Anthropic.ConflictError);
    expect((conflict as InstanceType<typeof Anthropic.APIError>).requestID).toMatch(/^req_/);

    first.reply('Looking at options', true);
    const second = await model.next();
    // The drained messages joined the transcript in queue order before the next model call.
    expect(second.transcript.slice(-2).map((m) => textOf(m.content))).toEqual(['Budget 800', 'Prefer trains']);
    expect(await client.get(li)).toEqual({ active: true, version: 6, messages: [] });
    second.reply('Booked trains within 800', false);
    await reading;

    const types = streamed.map((e) => e.type);
    expect(types).toEqual(['user.message', 'session.status_running', 'agent.message', 'user.message', 'user.message', 'agent.message', 'session.status_idle']);
    for (const e of streamed) expect((e as { processed_at: string }).processed_at).toMatch(RFC3339);
    const idle = streamed.at(-1) as Anthropic.Beta.Sessions.BetaManagedAgentsSessionStatusIdleEvent;
    expect(idle).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' }, stop_details: null });
    const drained = streamed.filter((e) => e.type === 'user.message').slice(1) as unknown as Array<{ content: unknown; message_id: string; run_id: string }>;
    expect(drained.map((e) => [textOf(e.content), e.message_id])).toEqual([['Budget 800', `${drained[0]!.run_id}-inbox-0`], ['Prefer trains', `${drained[0]!.run_id}-inbox-1`]]);
    await demo.runtime.whenIdle(session.id);
    expect((await client.beta.sessions.retrieve(session.id)).status).toBe('idle');
    expect(await client.get(li)).toEqual({ active: false, version: 0, messages: [] });

    // events.list: auto-paging over several pages gives exactly the committed history.
    const all: Anthropic.Beta.Sessions.BetaManagedAgentsSessionEvent[] = [];
    for await (const e of client.beta.sessions.events.list(session.id, { limit: 2 })) all.push(e);
    expect(all.map((e) => e.id)).toEqual(streamed.map((e) => (e as { id: string }).id));
    const p1 = await client.beta.sessions.events.list(session.id, { limit: 3 });
    expect(p1.data).toHaveLength(3);
    const p2 = await p1.getNextPage();
    const p3 = await p2.getNextPage();
    expect([...p1.data, ...p2.data, ...p3.data].map((e) => e.id)).toEqual(all.map((e) => e.id));
    expect(p3.hasNextPage()).toBe(false);

    const collect = async (params: Anthropic.Beta.Sessions.EventListParams) => {
      const out: string[] = [];
      for await (const e of client.beta.sessions.events.list(session.id, { limit: 2, ...params })) out.push(e.type);
      return out;
    };
    expect(await collect({ order: 'desc' })).toEqual([...types].reverse());
    expect(await collect({ types: ['agent.message', 'session.status_idle'] })).toEqual(['agent.message', 'agent.message', 'session.status_idle']);
    const start = (all[0] as { processed_at: string }).processed_at;
    const end = (all.at(-1) as { processed_at: string }).processed_at;
    expect(await collect({ 'created_at[gte]': start, 'created_at[lte]': end })).toEqual(types);
    expect(await collect({ 'created_at[gt]': end })).toEqual([]);
    expect(await collect({ 'created_at[lt]': start })).toEqual([]);
  }, 60_000);

  it('errors: 404, 401, 400 in the envelope, with requestID equal to the request-id and x-request-id headers', async () => {
    const notFound = await client.beta.sessions.retrieve('sess_missing').catch((e: unknown) => e);
    expect(notFound).toBeInstanceOf(Anthropic.NotFoundError);
    const nf = notFound as InstanceType<typeof Anthropic.APIError>;
    expect(nf.requestID).toMatch(/^req_/);
    expect(nf.headers?.get('request-id')).toBe(nf.requestID);
    expect(nf.headers?.get('x-request-id')).toBe(nf.requestID);
    expect(nf.error).toMatchObject({ type: 'error', error: { type: 'not_found_error', code: 'session_not_found', request_id: nf.requestID } });

    const unauthorized = await clientAs('sk-not-a-key').beta.sessions.list().catch((e: unknown) => e);
    expect(unauthorized).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((unauthorized as InstanceType<typeof Anthropic.APIError>).requestID).toMatch(/^req_/);
    expect((unauthorized as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ error: { type: 'authentication_error', code: 'invalid_credentials' } });

    const badOrder = await client.beta.sessions.events.list('sess_001', { order: 'sideways' as 'asc' }).catch((e: unknown) => e);
    expect(badOrder).toBeInstanceOf(Anthropic.BadRequestError);
    expect((badOrder as InstanceType<typeof Anthropic.APIError>).requestID).toMatch(/^req_/);
    expect((badOrder as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ error: { type: 'invalid_request_error', code: 'validation_error' } });
    await expect(client.beta.sessions.events.list('sess_001', { 'created_at[gt]': 'yesterday' })).rejects.toBeInstanceOf(Anthropic.BadRequestError);

    // What this runtime cannot do: an unknown agent (404), tool kinds it does not host (400).
    const before = (await client.beta.sessions.list({ include_archived: true, limit: 100 })).data.length;
    const unknownAgent = await client.beta.sessions.create({ agent: 'agent_elsewhere', environment_id: 'e' }).catch((e: unknown) => e);
    expect(unknownAgent).toBeInstanceOf(Anthropic.NotFoundError);
    expect((unknownAgent as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ error: { type: 'not_found_error', code: 'agent_not_found' } });
    const tools = await client.beta.sessions.create({
      agent: { type: 'agent_with_overrides', id: 'assistant', tools: [{ type: 'agent_toolset_20260401' }] }, environment_id: 'e',
    }).catch((e: unknown) => e);
    expect(tools).toBeInstanceOf(Anthropic.BadRequestError);
    expect((tools as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ error: { type: 'invalid_request_error', code: 'unsupported_capability' } });
    expect((await client.beta.sessions.list({ include_archived: true, limit: 100 })).data.length).toBe(before);
    // Client-run agent toolsets (`user.tool_result`) are not hosted here: host tools run on the server.
    const toolResult = await client.beta.sessions.events.send('sess_001', {
      events: [{ type: 'user.tool_result', tool_use_id: 'sevt_x', content: [{ type: 'text', text: '42' }] }],
    }).catch((e: unknown) => e);
    expect(toolResult).toBeInstanceOf(Anthropic.BadRequestError);
    expect((toolResult as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ error: { type: 'invalid_request_error', code: 'unsupported_capability' } });

    // The SDK's workspace_id (anthropic-workspace-id) must be the key's workspace.
    expect((await client.beta.sessions.retrieve('sess_001', { workspace_id: 'ws_demo' })).id).toBe('sess_001');
    const otherWorkspace = await client.beta.sessions.retrieve('sess_001', { workspace_id: 'ws_other' }).catch((e: unknown) => e);
    expect(otherWorkspace).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect((otherWorkspace as InstanceType<typeof Anthropic.APIError>).requestID).toMatch(/^req_/);

    // Success answers carry the same id in both headers too.
    const { response, request_id } = await client.beta.sessions.retrieve('sess_001').withResponse();
    expect(response.headers.get('request-id')).toBe(response.headers.get('x-request-id'));
    expect(request_id).toBe(response.headers.get('request-id'));
  }, 60_000);
});
