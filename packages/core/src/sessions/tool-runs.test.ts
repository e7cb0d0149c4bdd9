/**
 * Runs with tools through the Session Runtime and the Managed Sessions service over the in-memory
 * store (live-inbox.md "Tools and boundaries"): a client tool parks the Run (`requires_action`),
 * its result resumes the same Run; confirmations allow or deny an `always_ask` host tool; partial
 * answers re-emit `requires_action`; unknown, wrong-kind and already answered ids are refused; a
 * bare message while actions are pending is refused unless the request answers them first; an
 * answer that arrives before the Run parks; an interrupt of a parked Run; recovery of a Run left
 * mid-tool; the round limit; what the Live Inbox answers while a Run awaits.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LiveInboxHost, type ModelStepResult, type Tool, type TranscriptBlock } from '../live-inbox/index.js';
import { PlatformService } from '../platform/service.js';
import { createManualClock, createSequentialIdGenerator } from '../ports/clock.js';
import { createLocalEventBus } from '../ports/event-bus.js';
import type { SessionEvent } from '../records.js';
import { fakeModel } from '../testing/fake-model.js';
import { createMemoryStore } from '../testing/memory-store.js';
import { ctxOf, rejection, text, waitFor } from '../test-support.js';
import { managedSessionEvent, type ManagedAgentDefinition } from './managed-agents.js';
import { ManagedSessionsService } from './managed-sessions.js';
import { SessionRuntimeService } from './service.js';

const owner = ctxOf('ws_a', 'acc_owner');

/** A model whose steps the test answers one by one (`next()` → `reply(result)`). */
const gated = () => fakeModel({ then: 'hold' });

const calls = (...uses: Array<[string, Record<string, unknown>]>): ModelStepResult => ({
  content: [{ type: 'text', text: 'working' }, ...uses.map(([name, input], i) => ({ type: 'tool_use' as const, id: `m${i}`, name, input }))],
  stop_reason: 'tool_use',
});
const done = (t: string): ModelStepResult => ({ content: text(t), stop_reason: 'end_turn' });
const blockText = (b: TranscriptBlock) => (b.type === 'tool_result' ? `${b.is_error ? '!' : ''}${b.content.map((c) => (c.type === 'text' ? c.text : '')).join('')}` : b.type === 'text' ? b.text : b.type);

const open: SessionRuntimeService[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((r) => r.close()));
});

async function fixture(opts: { hold?: Promise<void>; maxToolRounds?: number } = {}) {
  const store = createMemoryStore();
  const bus = createLocalEventBus();
  const clock = createManualClock();
  const deps = { store, bus, clock, ids: createSequentialIdGenerator() };
  const platform = new PlatformService(deps);
  await platform.createWorkspace({ id: 'ws_a', name: 'A' });
  await platform.createAccount({ id: 'acc_owner', name: 'owner', workspace_ids: ['ws_a'] });
  const ran: string[] = [];
  const waitTool: Tool = {
    name: 'wait', description: 'Waits', input_schema: { type: 'object', properties: { ms: { type: 'integer' } }, required: ['ms'] },
    async execute(input) {
      ran.push(`wait ${String(input.ms)}`);
      if (opts.hold) await opts.hold;
      return `waited ${String(input.ms)} ms`;
    },
  };
  const askTool: Tool = { ...waitTool, name: 'delete_file', permission: 'always_ask', async execute(input) { ran.push(`delete ${String(input.path)}`); return 'deleted'; } };
  const agent: ManagedAgentDefinition = {
    id: 'assistant', name: 'Assistant', model: 'test', tools: [waitTool, askTool], ...(opts.maxToolRounds ? { run: { maxToolRounds: opts.maxToolRounds } } : {}),
  };
  const model = gated();
  const host = new LiveInboxHost({ hostId: 'test' });
  const runErrors: unknown[] = [];
  const runtime = new SessionRuntimeService({ ...deps, host, model, agents: [agent], onRunError: (e) => runErrors.push(e) });
  open.push(runtime);
  const sessions = new ManagedSessionsService({ ...deps, platform, runtime });
  const custom = await sessions.agents.create(owner, {
    name: 'With a client tool', model: 'claude-haiku-4-5',
    tools: [{ type: 'custom', name: 'lookup', description: 'Looks it up on the client', input_schema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } },
      { type: 'custom', name: 'fetch', description: 'Fetches on the client', input_schema: { type: 'object' } }],
  });
  const history = async (sid: string) => (await store.listSessionEvents({ session_id: sid, after: 0, limit: 1000 })).map(managedSessionEvent);
  const session = async (agentId = custom.id) => (await sessions.create(owner, { agent: agentId, environment_id: 'env' })).id;
  const send = (sid: string, ...events: unknown[]) => runtime.sendEvents(owner, sid, { events } as never);
  const lastIdle = async (sid: string) => (await history(sid)).filter((e) => e.type === 'session.status_idle').at(-1);
  return { store, runtime, sessions, model, host, ran, runErrors, history, session, send, lastIdle, custom };
}

const waitIdle = async (f: Awaited<ReturnType<typeof fixture>>, sid: string, stop: string) =>
  waitFor(async () => (await f.lastIdle(sid))?.stop_reason?.type === stop && !f.runtime.isRunning(sid), `idle with ${stop}`);

describe('Runs with tools', () => {
  it('a client tool parks the Run (requires_action); its result resumes the same Run, which then ends end_turn', async () => {
    const f = await fixture();
    const sid = await f.session();
    await f.send(sid, { type: 'user.message', content: text('look it up') });
    (await f.model.next()).reply(calls(['lookup', { q: 'x' }]));
    await waitIdle(f, sid, 'requires_action');
    const h = await f.history(sid);
    const use = h.find((e) => e.type === 'agent.custom_tool_use')!;
    expect(use).toMatchObject({ name: 'lookup', input: { q: 'x' }, run_id: expect.any(String) });
    expect(use.id).toBe(`${use.run_id}-tool-0`);
    expect(h.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'requires_action', event_ids: [use.id] }, outcome: null });
    expect(f.store.raw().runs.get(use.run_id!)?.status).toBe('awaiting');
    expect((await f.sessions.retrieve(owner, sid)).status).toBe('idle');

    // While it awaits: the Live Inbox is closed (410, saying why); a bare message is refused; unknown ids are 404.
    expect(await f.runtime.liveInboxSnapshot(owner, sid)).toEqual({ active: false, version: 0, messages: [] });
    const closed = await rejection(f.runtime.liveInboxQueue(owner, sid, { content: text('steer') }));
    expect([closed.code, closed.message]).toEqual(['live_inbox_inactive', expect.stringMatching(/awaits tool results or confirmations/)]);
    const bare = await rejection(f.send(sid, { type: 'user.message', content: text('hello?') }));
    expect([bare.code, bare.details]).toEqual(['actions_pending', [{ path: 'events.0', message: `tool use ${use.id} is pending`, code: use.id }]]);
    expect((await rejection(f.send(sid, { type: 'user.custom_tool_result', custom_tool_use_id: 'sevt_nope', content: text('?') }))).code).toBe('tool_use_not_found');
    expect((await rejection(f.send(sid, { type: 'user.tool_confirmation', tool_use_id: use.id, result: 'allow' }))).code).toBe('validation_error');
    expect((await f.history(sid)).length).toBe(h.length);

    // The result and a message in one request: the result first, then the message (a follow-up Run).
    const sent = await f.send(sid, { type: 'user.custom_tool_result', custom_tool_use_id: use.id, content: text('42') }, { type: 'user.message', content: text('and then?') });
    expect(sent.data.map((e) => e.type)).toEqual(['user.custom_tool_result', 'user.message']);
    const resumed = await f.model.next();
    const tail = resumed.transcript.slice(-2);
    expect(tail.map((m) => `${m.role}:${m.content.map(blockText).join('|')}`)).toEqual(['assistant:working|tool_use', 'user:42']);
    expect(tail[1]!.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: use.id });
    resumed.reply(done('it is 42'));
    const followUp = await f.model.next();
    // Durable input sent during a Run is in the follow-up's transcript after that Run's own messages (the new input last).
    expect(followUp.transcript.slice(-3).map((m) => m.content.map(blockText).join('|'))).toEqual(['42', 'it is 42', 'and then?']);
    followUp.reply(done('nothing more'));
    await f.runtime.whenIdle(sid);
    const types = (await f.history(sid)).map((e) => e.type);
    expect(types).toEqual([
      'user.message', 'session.status_running', 'agent.message', 'agent.custom_tool_use', 'session.status_idle', 'user.custom_tool_result', 'session.status_running',
      'user.message', 'agent.message', 'session.status_idle', 'session.status_running', 'agent.message', 'session.status_idle',
    ]);
    // Answered already (the Run is gone): 404; the ended Run's events parse as the SDK's shapes.
    expect((await rejection(f.send(sid, { type: 'user.custom_tool_result', custom_tool_use_id: use.id }))).code).toBe('tool_use_not_found');
    expect((await f.lastIdle(sid))).toMatchObject({ stop_reason: { type: 'end_turn' }, outcome: 'completed' });
  });

  it('partial answers re-emit requires_action with the rest; an answered id is 409; all answered resume the Run', async () => {
    const f = await fixture();
    const sid = await f.session();
    await f.send(sid, { type: 'user.message', content: text('both') });
    (await f.model.next()).reply(calls(['lookup', { q: 'a' }], ['fetch', {}]));
    await waitIdle(f, sid, 'requires_action');
    const [a, b] = (await f.history(sid)).filter((e) => e.type === 'agent.custom_tool_use').map((e) => e.id);
    await f.send(sid, { type: 'user.custom_tool_result', custom_tool_use_id: b, content: text('B'), is_error: true });
    expect(await f.lastIdle(sid)).toMatchObject({ stop_reason: { type: 'requires_action', event_ids: [a] } });
    expect((await rejection(f.send(sid, { type: 'user.custom_tool_result', custom_tool_use_id: b, content: text('again') }))).code).toBe('tool_use_already_resolved');
    await f.send(sid, { type: 'user.custom_tool_result', custom_tool_use_id: a, content: text('A') });
    const resumed = await f.model.next();
    expect(resumed.transcript.at(-1)!.content.map(blockText)).toEqual(['A', '!B']);
    resumed.reply(done('ok'));
    await f.runtime.whenIdle(sid);
  });

  it('always_ask: the host tool waits for user.tool_confirmation — allow runs it, deny never does (an error result with deny_message)', async () => {
    const f = await fixture();
    const sid = await f.session('assistant');
    await f.send(sid, { type: 'user.message', content: text('clean up') });
    (await f.model.next()).reply(calls(['delete_file', { ms: 1, path: 'a' }], ['delete_file', { ms: 2, path: 'b' }]));
    await waitIdle(f, sid, 'requires_action');
    const asks = (await f.history(sid)).filter((e) => e.type === 'agent.tool_use');
    expect(asks.map((e) => [e.evaluated_permission, e.evaluation])).toEqual([['ask', { type: 'always_ask' }], ['ask', { type: 'always_ask' }]]);
    expect(f.ran).toEqual([]);
    expect((await rejection(f.send(sid, { type: 'user.tool_confirmation', tool_use_id: asks[0]!.id, result: 'allow', deny_message: 'no' }))).code).toBe('validation_error');
    await f.send(sid, { type: 'user.tool_confirmation', tool_use_id: asks[0]!.id, result: 'allow' }, { type: 'user.tool_confirmation', tool_use_id: asks[1]!.id, result: 'deny', deny_message: 'keep b' });
    const resumed = await f.model.next();
    expect(f.ran).toEqual(['delete a']);
    expect(resumed.transcript.at(-1)!.content.map(blockText)).toEqual(['deleted', '!keep b']);
    resumed.reply(done('cleaned a'));
    await f.runtime.whenIdle(sid);
    const results = (await f.history(sid)).filter((e) => e.type === 'agent.tool_result');
    expect(results.map((e) => [e.tool_use_id, e.is_error])).toEqual([[asks[0]!.id, false], [asks[1]!.id, true]]);
  });

  it('an answer that arrives before the Run parks (while its host tools run) is taken: the Run never parks', async () => {
    let release!: () => void;
    const f = await fixture({ hold: new Promise<void>((r) => (release = r)) });
    // The configured agent (host tool `wait`) with a client tool of this Session only.
    const sid = (await f.sessions.create(owner, {
      agent: { type: 'agent_with_overrides', id: 'assistant', tools: [{ type: 'custom', name: 'lookup', description: 'client', input_schema: { type: 'object' } }] },
      environment_id: 'e',
    })).id;
    await f.send(sid, { type: 'user.message', content: text('mixed') });
    (await f.model.next()).reply(calls(['lookup', { q: 'early' }], ['wait', { ms: 1 }]));
    await waitFor(() => f.ran.length === 1, 'the host tool runs');
    const use = (await f.history(sid)).find((e) => e.type === 'agent.custom_tool_use')!;
    // The Run still runs (its host tool holds it): the client answers as soon as it saw the tool use.
    expect((await f.sessions.retrieve(owner, sid)).status).toBe('running');
    await f.send(sid, { type: 'user.custom_tool_result', custom_tool_use_id: use.id, content: text('early answer') });
    release();
    const next = await f.model.next();
    expect(next.transcript.at(-1)!.content.map(blockText)).toEqual(['early answer', 'waited 1 ms']);
    next.reply(done('ok'));
    await f.runtime.whenIdle(sid);
    const h = await f.history(sid);
    expect(h.some((e) => e.type === 'session.status_idle' && e.stop_reason?.type === 'requires_action')).toBe(false);
    expect(h.map((e) => e.type)).toEqual([
      'user.message', 'session.status_running', 'agent.message', 'agent.custom_tool_use', 'agent.tool_use', 'user.custom_tool_result', 'agent.tool_result',
      'agent.message', 'session.status_idle',
    ]);
  });

  it('steering queued before the Run parked is carried over, never lost: committed right after the round\'s results when the Run resumes', async () => {
    let release!: () => void;
    const f = await fixture({ hold: new Promise<void>((r) => (release = r)) });
    const sid = (await f.sessions.create(owner, {
      agent: { type: 'agent_with_overrides', id: 'assistant', tools: [{ type: 'custom', name: 'lookup', description: 'client', input_schema: { type: 'object' } }] },
      environment_id: 'e',
    })).id;
    await f.send(sid, { type: 'user.message', content: text('mixed') });
    (await f.model.next()).reply(calls(['wait', { ms: 1 }], ['lookup', {}]));
    await waitFor(() => f.ran.length === 1, 'the host tool runs');
    // Queued while the host tool runs (the Run has not parked yet): acknowledged with an id.
    expect(await f.runtime.liveInboxQueue(owner, sid, { content: text('use the cached copy') })).toEqual({ id: 1 });
    release();
    await waitIdle(f, sid, 'requires_action');
    expect(await f.runtime.liveInboxSnapshot(owner, sid)).toEqual({ active: false, version: 0, messages: [] });
    expect(f.host.pendingCarryOver(sid)).toEqual([text('use the cached copy')]);
    const use = (await f.history(sid)).find((e) => e.type === 'agent.custom_tool_use')!;
    // The host tool's result was committed with the park; the steering was not (it waits for the round's end).
    expect((await f.history(sid)).filter((e) => e.type === 'agent.tool_result').map((e) => e.content)).toEqual([text('waited 1 ms')]);
    await f.send(sid, { type: 'user.custom_tool_result', custom_tool_use_id: use.id, content: text('found') });
    const resumed = await f.model.next();
    expect(resumed.transcript.slice(-2).map((m) => `${m.id.replace(/^run_\d+/, 'run')}:${m.content.map(blockText).join('|')}`)).toEqual([
      'run-step-0-results:waited 1 ms|found', 'run-inbox-0:use the cached copy',
    ]);
    resumed.reply(done('ok'));
    await f.runtime.whenIdle(sid);
    const types = (await f.history(sid)).map((e) => e.type);
    // The resumed round's commit holds no agent.tool_result (both results are in the ledger already), then the steering.
    expect(types.slice(-6)).toEqual(['session.status_idle', 'user.custom_tool_result', 'session.status_running', 'user.message', 'agent.message', 'session.status_idle']);
  });

  it('an interrupt of a parked Run commits the steering queued before it parked ahead of itself (acknowledgement order)', async () => {
    let release!: () => void;
    const f = await fixture({ hold: new Promise<void>((r) => (release = r)) });
    const sid = (await f.sessions.create(owner, {
      agent: { type: 'agent_with_overrides', id: 'assistant', tools: [{ type: 'custom', name: 'lookup', description: 'client', input_schema: { type: 'object' } }] },
      environment_id: 'e',
    })).id;
    await f.send(sid, { type: 'user.message', content: text('mixed') });
    (await f.model.next()).reply(calls(['wait', { ms: 1 }], ['lookup', {}]));
    await waitFor(() => f.ran.length === 1, 'the host tool runs');
    await f.runtime.liveInboxQueue(owner, sid, { content: text('queued before parking') });
    release();
    await waitIdle(f, sid, 'requires_action');
    const sent = await f.send(sid, { type: 'user.interrupt' });
    expect(sent.data.map((e) => e.type)).toEqual(['user.interrupt']);
    const h = await f.history(sid);
    expect(h.map((e) => e.type).slice(-5)).toEqual(['session.status_idle', 'user.message', 'user.interrupt', 'agent.tool_result', 'session.status_idle']);
    expect(h.at(-4)).toMatchObject({ run_id: null, message_id: null, content: text('queued before parking') });
    expect(f.host.pendingCarryOver(sid)).toEqual([]);
    expect(f.host.carryOverBytes).toBe(0);
  });

  it('an interrupt of a parked Run ends it cancelled with error results for the pending tool uses; the next Run starts clean', async () => {
    const f = await fixture();
    const sid = await f.session();
    await f.send(sid, { type: 'user.message', content: text('look') });
    (await f.model.next()).reply(calls(['lookup', { q: 'x' }]));
    await waitIdle(f, sid, 'requires_action');
    const use = (await f.history(sid)).find((e) => e.type === 'agent.custom_tool_use')!;
    await f.send(sid, { type: 'user.interrupt' }, { type: 'user.message', content: text('never mind') });
    const next = await f.model.next();
    expect(next.transcript.map((m) => `${m.role}:${m.content.map(blockText).join('|')}`)).toEqual([
      'user:look', 'assistant:working|tool_use', 'user:!The Run was interrupted before this call got a result.', 'user:never mind',
    ]);
    next.reply(done('ok'));
    await f.runtime.whenIdle(sid);
    const h = await f.history(sid);
    expect(h.map((e) => e.type).slice(5)).toEqual(['user.interrupt', 'agent.tool_result', 'session.status_idle', 'user.message', 'session.status_running', 'agent.message', 'session.status_idle']);
    expect(h.find((e) => e.type === 'agent.tool_result')).toMatchObject({ tool_use_id: use.id, is_error: true });
    expect(h[7]).toMatchObject({ outcome: 'cancelled', run_id: use.run_id });
    expect(f.store.raw().runs.get(use.run_id!)?.status).toBe('idle');
  });

  it('an interrupt mid-tool aborts the tool and closes the round with error results', async () => {
    const f = await fixture({ hold: new Promise<void>(() => {}) });
    const sid = await f.session('assistant');
    await f.send(sid, { type: 'user.message', content: text('wait') });
    (await f.model.next()).reply(calls(['wait', { ms: 5000 }]));
    await waitFor(() => f.ran.length === 1, 'the tool runs');
    await f.send(sid, { type: 'user.interrupt' });
    await f.runtime.whenIdle(sid);
    const h = await f.history(sid);
    expect(h.map((e) => e.type).slice(-3)).toEqual(['user.interrupt', 'agent.tool_result', 'session.status_idle']);
    expect(h.at(-2)).toMatchObject({ is_error: true, content: text('The Run was interrupted before this call got a result.') });
    expect(h.at(-1)).toMatchObject({ outcome: 'cancelled' });
  });

  it('start-up recovery of a Run left mid-tool closes its round with error results and ends it failed', async () => {
    const f = await fixture({ hold: new Promise<void>(() => {}) });
    const sid = await f.session('assistant');
    await f.send(sid, { type: 'user.message', content: text('wait') });
    (await f.model.next()).reply(calls(['wait', { ms: 5000 }]));
    await waitFor(() => f.ran.length === 1, 'the tool runs');
    // Another instance on the same store (the first one "died"): its recovery ends the leftover.
    const later = new SessionRuntimeService({
      store: f.store, bus: createLocalEventBus(), clock: createManualClock(1_735_689_700_000), ids: createSequentialIdGenerator(), host: new LiveInboxHost(), model: gated(),
    });
    open.push(later);
    expect(await later.recoverStaleRuns()).toBe(1);
    const h = await f.history(sid);
    expect(h.map((e) => e.type).slice(-2)).toEqual(['agent.tool_result', 'session.status_idle']);
    expect(h.at(-2)).toMatchObject({ is_error: true, content: text('The Run ended before this call got a result: the process running it stopped.') });
    expect(h.at(-1)).toMatchObject({ outcome: 'failed' });
  });

  it('the round limit ends the Run with session.error tool_use_limit_reached_error and retries_exhausted', async () => {
    const f = await fixture({ maxToolRounds: 2 });
    const sid = await f.session('assistant');
    await f.send(sid, { type: 'user.message', content: text('loop') });
    (await f.model.next()).reply(calls(['wait', { ms: 1 }]));
    (await f.model.next()).reply(calls(['wait', { ms: 2 }]));
    await f.runtime.whenIdle(sid);
    const h = await f.history(sid);
    expect(h.map((e) => e.type).slice(-2)).toEqual(['session.error', 'session.status_idle']);
    expect(h.at(-2)).toMatchObject({ error: { type: 'tool_use_limit_reached_error', retry_status: { type: 'exhausted' } } });
    expect(h.at(-1)).toMatchObject({ outcome: 'failed', stop_reason: { type: 'retries_exhausted' }, error: { type: 'tool_use_limit_reached_error' } });
    expect(f.ran).toEqual(['wait 1', 'wait 2']);
  });

  it('agents: a custom tool named like a host tool, a non-custom tool and a bad schema are refused; versions and archive', async () => {
    const f = await fixture();
    const clash = await rejection(f.sessions.agents.create(owner, { name: 'x', model: 'm', tools: [{ type: 'custom', name: 'wait', description: 'd', input_schema: { type: 'object' } }] }));
    expect([clash.code, clash.details[0]?.path]).toEqual(['validation_error', 'body.tools.0.name']);
    expect((await rejection(f.sessions.agents.create(owner, { name: 'x', model: 'm', tools: [{ type: 'agent_toolset_20260401' }] as never }))).code).toBe('unsupported_capability');
    const bad = await rejection(f.sessions.agents.create(owner, { name: 'x', model: 'm', tools: [{ type: 'custom', name: 'a b', description: 'd', input_schema: { type: 'string' } }] }));
    expect(bad.details.map((d) => d.path)).toEqual(['body.tools.0.name', 'body.tools.0.input_schema']);
    const v2 = await f.sessions.agents.update(owner, f.custom.id, { version: 1, name: 'Renamed' });
    expect(v2).toMatchObject({ version: 2, name: 'Renamed' });
    expect((await rejection(f.sessions.agents.update(owner, f.custom.id, { version: 1, name: 'stale' }))).code).toBe('conflict');
    expect((await f.sessions.agents.retrieve(owner, f.custom.id, { version: 1 })).name).toBe('With a client tool');
    expect((await f.sessions.agents.listVersions(owner, f.custom.id)).data.map((a) => a.version)).toEqual([2, 1]);
    expect((await f.sessions.agents.list(owner)).data.map((a) => a.id)).toEqual([f.custom.id, 'assistant']);
    await f.sessions.agents.archive(owner, f.custom.id);
    expect((await rejection(f.sessions.create(owner, { agent: f.custom.id, environment_id: 'e' }))).code).toBe('agent_archived');
    expect((await f.sessions.agents.list(owner)).data.map((a) => a.id)).toEqual(['assistant']);
    expect((await rejection(f.sessions.agents.update(owner, 'assistant', { name: 'mine' }))).code).toBe('permission_denied');
    expect((await rejection(f.sessions.agents.retrieve(ctxOf('ws_b', 'acc_x'), f.custom.id))).code).toBe('agent_not_found');
  });

  it('a Session of the configured agent snapshots its host tools (ours) and client tools (custom)', async () => {
    const f = await fixture();
    const session = await f.sessions.create(owner, { agent: 'assistant', environment_id: 'e' });
    expect(session.agent).toMatchObject({ tools: [], host_tools: [{ type: 'host', name: 'wait' }, { type: 'host', name: 'delete_file', permission_policy: { type: 'always_ask' } }] });
    const withCustom = await f.sessions.create(owner, { agent: f.custom.id, environment_id: 'e' });
    expect((withCustom.agent as { tools: unknown[] }).tools).toHaveLength(2);
    expect(await f.history(withCustom.id)).toEqual([] as SessionEvent[]);
  });
});
