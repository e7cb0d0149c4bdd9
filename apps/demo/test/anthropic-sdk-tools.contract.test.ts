/**
 * Contract tests of tools on the Managed Agents compatibility surface (live-inbox.md "Tools and
 * boundaries", "Agents"), driven by the official `@anthropic-ai/sdk` (pinned 1.10.0), unchanged,
 * against the demo over real HTTP on SQLite and (with INBOX_KIT_TEST_PG_URL) PostgreSQL:
 *
 * - `beta.agents.create` with a custom tool, retrieve / list (auto-paging) / update (a new
 *   version) / versions / archive;
 * - `beta.sessions.create({ agent })` → `events.send` → the SDK's own
 *   `events.toolRunner(sessionId, { tools })` executes the custom tool and posts its result → the
 *   Session ends `end_turn`;
 * - the demo's `assistant` agent with DEMO_TOOL_POLICY=always_ask: its host tool `wait` is held
 *   until `user.tool_confirmation` — allow runs it, deny never does — while the tool runner, given
 *   only the client's tools, never executes it;
 * - the refusals the SDK sees as its error classes: an unknown tool-use id (404), an answered one
 *   (409), a bare message while actions are pending (400 `actions_pending`).
 *
 * The model is the test's: it calls the tool the user names and then answers with the result.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { betaTool } from '@anthropic-ai/sdk/helpers/beta/json-schema';
import type { ModelStepResult, TranscriptBlock } from '@inbox-kit/core';
import { fakeModel } from '@inbox-kit/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDemo, loadConfig, type Demo } from '../src/index.js';
import { PG_ADMIN_URL, freshPostgresDatabase, waitUntil } from './demo-process.js';
import { closeDemo, listen } from './listen.js';

type Event = Anthropic.Beta.Sessions.BetaManagedAgentsSessionEvent;
const text = (t: string) => [{ type: 'text' as const, text: t }];
const textOf = (blocks: readonly TranscriptBlock[]): string =>
  blocks.map((b) => (b.type === 'text' ? b.text : b.type === 'tool_result' ? textOf(b.content) : '')).join(' ');

/**
 * The test's model: on a user message "use <tool> <arg>" it calls that tool (`lookup`: `{ q }`,
 * `wait`: `{ ms }`) when the step offers it; after a tool round it answers `Result: <results>`;
 * otherwise it says it is done.
 */
function toolModel() {
  return fakeModel({
    then: ({ transcript, context }): ModelStepResult => {
      const last = transcript.at(-1);
      if (last?.role === 'user' && last.content.some((b) => b.type === 'tool_result')) return { content: text(`Result: ${textOf(last.content)}`), stop_reason: 'end_turn' };
      const ask = /use (\w+) (\S+)/.exec(last ? textOf(last.content) : '');
      if (ask && (context?.tools ?? []).some((t) => t.name === ask[1])) {
        const input = ask[1] === 'wait' ? { ms: Number(ask[2]) } : { q: ask[2] };
        return { content: [{ type: 'text', text: `Using ${ask[1]}.` }, { type: 'tool_use', id: 'toolu_1', name: ask[1]!, input }], stop_reason: 'tool_use' };
      }
      return { content: text('Done.'), stop_reason: 'end_turn' };
    },
  });
}

const backends: { name: string; env: () => Promise<{ env: Record<string, string>; drop(): Promise<void> }> }[] = [
  { name: 'SQLite', env: async () => ({ env: {}, drop: async () => {} }) },
];
if (PG_ADMIN_URL) {
  backends.push({
    name: 'PostgreSQL',
    env: async () => {
      const db = await freshPostgresDatabase('inbox_kit_sdk_tools');
      return { env: { DATABASE_URL: db.url }, drop: db.drop };
    },
  });
} else {
  describe('Anthropic SDK tools contract on PostgreSQL', () => {
    it('INBOX_KIT_TEST_PG_URL is available', (ctx) => {
      const why = 'INBOX_KIT_TEST_PG_URL is not set: the SDK tools contract on PostgreSQL was not tested. '
        + 'Start a server with `node scripts/postgres.mjs` and export the URL it prints.';
      if (process.env.CI) expect.fail(why);
      ctx.skip(why);
    });
  });
}

describe.each(backends)('Anthropic SDK tools contract on $name', (backend) => {
  let demo: Demo;
  let dataDir: string;
  let drop: () => Promise<void>;
  let client: Anthropic;
  const model = toolModel();

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'inbox-kit-sdk-tools-'));
    const db = await backend.env();
    drop = db.drop;
    demo = await buildDemo(loadConfig({ DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent', DEMO_TOOL_POLICY: 'always_ask', ...db.env }), { model });
    const base = await listen(demo);
    client = new Anthropic({ apiKey: demo.credentials.acc_owner!, baseURL: base, maxRetries: 0 });
  });

  afterAll(async () => {
    await closeDemo(demo);
    await drop?.();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const history = async (sid: string): Promise<Event[]> => {
    const out: Event[] = [];
    for await (const e of client.beta.sessions.events.list(sid, { limit: 100 })) out.push(e);
    return out;
  };
  const lastIdle = async (sid: string) => (await history(sid)).filter((e) => e.type === 'session.status_idle').at(-1) as Anthropic.Beta.Sessions.BetaManagedAgentsSessionStatusIdleEvent | undefined;
  const lookupSchema = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'], additionalProperties: false } as const;
  /** The same schema as the agents API takes it (mutable lists). */
  const lookupInput = { ...lookupSchema, required: [...lookupSchema.required] };

  it('agents: create with a custom tool, retrieve, list (auto-paging), update (a new version), versions, archive', async () => {
    const agent = await client.beta.agents.create({
      name: 'Weather', model: 'claude-haiku-4-5', description: 'Looks things up on the client', metadata: { team: 'qa' },
      tools: [{ type: 'custom', name: 'lookup', description: 'Looks a word up on the client', input_schema: lookupInput }],
    });
    expect(agent).toMatchObject({
      type: 'agent', id: expect.stringMatching(/^agent_/), version: 1, name: 'Weather', model: { id: 'claude-haiku-4-5' }, archived_at: null, metadata: { team: 'qa' },
      tools: [{ type: 'custom', name: 'lookup', description: 'Looks a word up on the client', input_schema: lookupSchema }], mcp_servers: [], skills: [],
      execution_identity: { type: 'service_account' },
    });
    expect(await client.beta.agents.retrieve(agent.id)).toEqual(agent);
    const listed: string[] = [];
    for await (const a of client.beta.agents.list({ limit: 1 })) listed.push(a.id);
    expect(listed).toEqual(expect.arrayContaining([agent.id, 'assistant']));
    const assistant = await client.beta.agents.retrieve('assistant');
    expect(assistant).toMatchObject({ id: 'assistant', tools: [], host_tools: [{ name: 'wait', permission_policy: { type: 'always_ask' } }] });

    const v2 = await client.beta.agents.update(agent.id, { version: 1, description: 'v2', metadata: { team: null, stage: 'beta' } });
    expect(v2).toMatchObject({ version: 2, description: 'v2', metadata: { stage: 'beta' } });
    expect((await client.beta.agents.retrieve(agent.id, { version: 1 })).description).toBe('Looks things up on the client');
    const versions: number[] = [];
    for await (const a of client.beta.agents.versions.list(agent.id)) versions.push(a.version);
    expect(versions).toEqual([2, 1]);
    await expect(client.beta.agents.update(agent.id, { version: 1, name: 'stale' })).rejects.toBeInstanceOf(Anthropic.ConflictError);
    const invalid = await client.beta.agents.create({ name: 'x', model: 'm', tools: [{ type: 'custom', name: 'bad name', description: 'd', input_schema: { type: 'object' } }] }).catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(Anthropic.BadRequestError);
    expect((invalid as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ error: { code: 'validation_error', details: [{ path: 'body.tools.0.name' }] } });
    const mcp = await client.beta.agents.create({ name: 'x', model: 'm', tools: [{ type: 'mcp_toolset', mcp_server_name: 'gh' }] }).catch((e: unknown) => e);
    expect((mcp as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ error: { code: 'unsupported_capability' } });

    const archived = await client.beta.agents.archive(v2.id);
    expect(archived.archived_at).toEqual(expect.any(String));
    const refused = await client.beta.sessions.create({ agent: agent.id, environment_id: 'e' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Anthropic.ConflictError);
    expect((refused as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ error: { code: 'agent_archived' } });
    const other = new Anthropic({ apiKey: demo.credentials.acc_stranger!, baseURL: client.baseURL, maxRetries: 0 });
    await expect(other.beta.agents.retrieve(agent.id)).rejects.toBeInstanceOf(Anthropic.NotFoundError);
  }, 60_000);

  it('a custom tool: the SDK\'s own tool runner executes it and posts its result; the Session ends end_turn', async () => {
    const agent = await client.beta.agents.create({
      name: 'Client tools', model: 'claude-haiku-4-5', tools: [{ type: 'custom', name: 'lookup', description: 'Looks a word up on the client', input_schema: lookupInput }],
    });
    const session = await client.beta.sessions.create({ agent: agent.id, environment_id: 'env_tools' });
    expect(session.agent.tools).toEqual([{ type: 'custom', name: 'lookup', description: 'Looks a word up on the client', input_schema: lookupSchema }]);
    const executed: string[] = [];
    const lookup = betaTool({
      name: 'lookup', description: 'Looks a word up on the client', inputSchema: lookupSchema,
      run: async ({ q }) => {
        executed.push(q);
        return `sunny in ${q}`;
      },
    });
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: text('use lookup Lisbon') }] });
    const calls: Array<{ name: string; posted: boolean; isError: boolean; confirmation: unknown }> = [];
    for await (const call of client.beta.sessions.events.toolRunner(session.id, { tools: [lookup], maxIdleMs: 300 })) {
      calls.push({ name: call.name, posted: call.posted, isError: call.isError, confirmation: call.confirmation });
    }
    expect(executed).toEqual(['Lisbon']);
    expect(calls).toEqual([{ name: 'lookup', posted: true, isError: false, confirmation: undefined }]);
    await demo.runtime.whenIdle(session.id);
    const events = await history(session.id);
    // The runner answers on the tool-use event: when the answer is committed before the Run parks,
    // nothing is parked and the round goes on (live-inbox.md "requires_action"); otherwise the
    // Session reads idle requires_action in between and the answer resumes the same Run.
    const parked = events[4]?.type === 'session.status_idle';
    expect(events.map((e) => e.type)).toEqual([
      'user.message', 'session.status_running', 'agent.message', 'agent.custom_tool_use',
      ...(parked ? ['session.status_idle', 'user.custom_tool_result', 'session.status_running'] : ['user.custom_tool_result']),
      'agent.message', 'session.status_idle',
    ]);
    const use = events[3] as Anthropic.Beta.Sessions.BetaManagedAgentsAgentCustomToolUseEvent;
    expect(use).toMatchObject({ name: 'lookup', input: { q: 'Lisbon' } });
    if (parked) expect(events[4]).toMatchObject({ stop_reason: { type: 'requires_action', event_ids: [use.id] } });
    const [result, reply, idle] = events.slice(parked ? 5 : 4).filter((e) => e.type !== 'session.status_running');
    expect(result).toMatchObject({ type: 'user.custom_tool_result', custom_tool_use_id: use.id, is_error: false, content: text('sunny in Lisbon') });
    expect(reply).toMatchObject({ type: 'agent.message', content: text('Result: sunny in Lisbon') });
    expect(idle).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' }, outcome: 'completed' });
    expect((await client.beta.sessions.retrieve(session.id)).status).toBe('idle');
    // Answered already, unknown: the SDK's error classes.
    await expect(client.beta.sessions.events.send(session.id, { events: [{ type: 'user.custom_tool_result', custom_tool_use_id: use.id, content: text('again') }] }))
      .rejects.toBeInstanceOf(Anthropic.NotFoundError);
  }, 60_000);

  it('refusals while a custom tool is pending: a bare message (400 actions_pending), an unknown id (404), an answered id (409)', async () => {
    const agent = await client.beta.agents.create({
      name: 'Two lookups', model: 'claude-haiku-4-5', tools: [{ type: 'custom', name: 'lookup', description: 'd', input_schema: lookupInput }],
    });
    const session = await client.beta.sessions.create({ agent: agent.id, environment_id: 'env' });
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: text('use lookup Porto') }] });
    await waitUntil(async () => (await lastIdle(session.id))?.stop_reason.type === 'requires_action', 'requires_action');
    const pending = ((await lastIdle(session.id))!.stop_reason as Anthropic.Beta.Sessions.BetaManagedAgentsSessionRequiresAction).event_ids;
    const bare = await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: text('hello?') }] }).catch((e: unknown) => e);
    expect(bare).toBeInstanceOf(Anthropic.BadRequestError);
    expect((bare as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ error: { type: 'invalid_request_error', code: 'actions_pending', details: [{ code: pending[0] }] } });
    const unknown = await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.custom_tool_result', custom_tool_use_id: 'sevt_unknown' }] }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(Anthropic.NotFoundError);
    expect((unknown as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ error: { code: 'tool_use_not_found' } });
    // The Live Inbox says why it is closed.
    const li = await client.post(`/v1/awaken/sessions/${session.id}/live-inbox`, { body: { content: text('steer') } }).catch((e: unknown) => e);
    expect((li as InstanceType<typeof Anthropic.APIError>).status).toBe(410);
    // One request: the result first, then the message (a follow-up); the same id twice in it: 409, nothing written.
    const twice = await client.beta.sessions.events.send(session.id, { events: [
      { type: 'user.custom_tool_result', custom_tool_use_id: pending[0]!, content: text('rainy') },
      { type: 'user.custom_tool_result', custom_tool_use_id: pending[0]!, content: text('again') },
    ] }).catch((e: unknown) => e);
    expect(twice).toBeInstanceOf(Anthropic.ConflictError);
    expect((twice as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ error: { code: 'tool_use_already_resolved' } });
    expect((await lastIdle(session.id))?.stop_reason.type).toBe('requires_action');
    const sent = await client.beta.sessions.events.send(session.id, { events: [
      { type: 'user.custom_tool_result', custom_tool_use_id: pending[0]!, content: text('rainy') }, { type: 'user.message', content: text('thanks') },
    ] });
    expect(sent.data!.map((e) => e.type)).toEqual(['user.custom_tool_result', 'user.message']);
    await waitUntil(async () => (await lastIdle(session.id))?.stop_reason.type === 'end_turn' && !demo.runtime.isRunning(session.id), 'the Run and its follow-up end');
  }, 60_000);

  it.each(['allow', 'deny'] as const)('always_ask host tool: held until user.tool_confirmation (%s); the tool runner, given only client tools, never runs it', async (verdict) => {
    const session = await client.beta.sessions.create({ agent: 'assistant', environment_id: 'env_ask' });
    const clientRan: string[] = [];
    const lookup = betaTool({ name: 'lookup', description: 'client', inputSchema: lookupSchema, run: ({ q }) => { clientRan.push(q); return 'x'; } });
    const controller = new AbortController();
    const calls: Array<{ name: string; posted: boolean; confirmation: unknown }> = [];
    const running = (async () => {
      for await (const call of client.beta.sessions.events.toolRunner(session.id, { tools: [lookup], maxIdleMs: 300, signal: controller.signal })) {
        calls.push({ name: call.name, posted: call.posted, confirmation: call.confirmation });
      }
    })();
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: text('use wait 30') }] });
    await waitUntil(async () => (await lastIdle(session.id))?.stop_reason.type === 'requires_action', 'requires_action');
    const use = (await history(session.id)).find((e) => e.type === 'agent.tool_use') as Anthropic.Beta.Sessions.BetaManagedAgentsAgentToolUseEvent;
    expect(use).toMatchObject({ name: 'wait', input: { ms: 30 }, evaluated_permission: 'ask', evaluation: { type: 'always_ask' } });
    expect((await lastIdle(session.id))!.stop_reason).toEqual({ type: 'requires_action', event_ids: [use.id] });
    // A confirmation names an agent.tool_use; a custom result for it is the wrong kind (400).
    await expect(client.beta.sessions.events.send(session.id, { events: [{ type: 'user.custom_tool_result', custom_tool_use_id: use.id }] }))
      .rejects.toBeInstanceOf(Anthropic.BadRequestError);
    await client.beta.sessions.events.send(session.id, {
      events: [verdict === 'allow' ? { type: 'user.tool_confirmation', tool_use_id: use.id, result: 'allow' } : { type: 'user.tool_confirmation', tool_use_id: use.id, result: 'deny', deny_message: 'Not now.' }],
    });
    await waitUntil(async () => (await lastIdle(session.id))?.stop_reason.type === 'end_turn', 'the Run ends');
    await running;
    const events = await history(session.id);
    const result = events.find((e) => e.type === 'agent.tool_result') as Anthropic.Beta.Sessions.BetaManagedAgentsAgentToolResultEvent;
    expect(events.map((e) => e.type)).toEqual([
      'user.message', 'session.status_running', 'agent.message', 'agent.tool_use', 'session.status_idle', 'user.tool_confirmation',
      'session.status_running', 'agent.tool_result', 'agent.message', 'session.status_idle',
    ]);
    if (verdict === 'allow') {
      expect(result).toMatchObject({ tool_use_id: use.id, is_error: false, content: text('waited 30 ms') });
    } else {
      expect(result).toMatchObject({ tool_use_id: use.id, is_error: true, content: text('Not now.') });
      expect(JSON.stringify(events)).not.toContain('waited 30 ms');
    }
    expect(clientRan).toEqual([]);
    // The runner saw the host call (its name is not one of the client's tools): it posted nothing for it.
    expect(calls).toEqual([{ name: 'wait', posted: false, confirmation: verdict }]);
    expect(events.some((e) => e.type === 'user.tool_result')).toBe(false);
    controller.abort();
  }, 60_000);
});
