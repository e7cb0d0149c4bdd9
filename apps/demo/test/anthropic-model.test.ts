/**
 * DEMO_MODEL=anthropic: the configuration it reads, the start-up error without a key, and the built
 * demo started as a real process on the Messages API adapter against the local stub
 * (`@inbox-kit/model-anthropic/testing`), a Run driven and steered over HTTP — on SQLite, and on
 * PostgreSQL when INBOX_KIT_TEST_PG_URL is set. The process cases (each its own stub, process and
 * database) run concurrently. Needs the build (`pnpm exec turbo run build`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMessagesStub, type MessagesStub, type StubAnswer } from '@inbox-kit/model-anthropic/testing';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/index.js';
import { DEMO_SYSTEM_PROMPT } from '../src/model.js';
import {
  PG_ADMIN_URL, credentialsOf, freshPostgresDatabase, startDemoProcess, stopDemoProcess, waitUntil, type DemoProcess,
} from './demo-process.js';

type Json = any;
const text = (t: string) => [{ type: 'text', text: t }];

describe('DEMO_MODEL configuration', () => {
  it('is the scripted model by default', () => {
    expect(loadConfig({}).model).toEqual({ kind: 'scripted' });
    expect(loadConfig({ DEMO_MODEL: 'scripted', ANTHROPIC_API_KEY: 'sk-x' }).model).toEqual({ kind: 'scripted' });
  });

  it('anthropic: the key, an optional base URL (trailing slash dropped) and model name, claude-haiku-4-5 by default', () => {
    expect(loadConfig({ DEMO_MODEL: 'anthropic', ANTHROPIC_API_KEY: 'sk-x' }).model).toEqual({ kind: 'anthropic', apiKey: 'sk-x', baseURL: undefined, model: 'claude-haiku-4-5' });
    expect(loadConfig({ DEMO_MODEL: 'anthropic', ANTHROPIC_API_KEY: 'sk-x', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9/', ANTHROPIC_MODEL: 'claude-sonnet-4-5' }).model)
      .toEqual({ kind: 'anthropic', apiKey: 'sk-x', baseURL: 'http://127.0.0.1:9', model: 'claude-sonnet-4-5' });
  });

  it('refuses a missing key, an unknown model kind and a base URL that is not http(s), with messages that say what to set', () => {
    expect(() => loadConfig({ DEMO_MODEL: 'anthropic' })).toThrow(/DEMO_MODEL=anthropic needs ANTHROPIC_API_KEY/);
    expect(() => loadConfig({ DEMO_MODEL: 'anthropic', ANTHROPIC_API_KEY: '  ' })).toThrow(/needs ANTHROPIC_API_KEY/);
    expect(() => loadConfig({ DEMO_MODEL: 'gpt' })).toThrow('DEMO_MODEL must be scripted or anthropic, got "gpt"');
    expect(() => loadConfig({ DEMO_MODEL: 'anthropic', ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: 'ftp://x' })).toThrow(/ANTHROPIC_BASE_URL must be an http\(s\) URL/);
    for (const env of [{ DEMO_MODEL: 'anthropic' }, { DEMO_MODEL: 'gpt' }]) {
      expect(() => loadConfig(env)).toThrow(expect.objectContaining({ name: 'ConfigError' }));
    }
  });
});

const engines = PG_ADMIN_URL ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const);
/** Registers a clean-up step of the running test (its context's `onTestFinished`: the cases run concurrently). */
type Finally = (step: () => Promise<void> | void) => void;

/** The demo on the stub, for one test; `onFinished` is that test's context's `onTestFinished` (steps run last registered first). */
async function demoOnStub(onFinished: Finally, engine: 'sqlite' | 'postgres', answers: StubAnswer[], extraEnv: Record<string, string> = {}) {
  const steps: Array<() => Promise<void> | void> = [];
  onFinished(async () => {
    for (const step of steps.reverse()) await step();
  });
  const stub: MessagesStub = await startMessagesStub({ answers });
  steps.push(() => stub.close());
  const dataDir = mkdtempSync(join(tmpdir(), 'inbox-kit-anthropic-demo-'));
  steps.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const env: Record<string, string> = {
    DATA_DIR: dataDir, DEMO_MODEL: 'anthropic', ANTHROPIC_API_KEY: 'sk-demo-secret-key', ANTHROPIC_BASE_URL: stub.url, ANTHROPIC_MODEL: 'claude-test', ...extraEnv,
  };
  if (engine === 'postgres') {
    const db = await freshPostgresDatabase('inbox_kit_anthropic');
    steps.push(() => db.drop());
    env.DATABASE_URL = db.url;
  }
  const demo: DemoProcess = await startDemoProcess(env);
  steps.push(() => stopDemoProcess(demo));
  const key = credentialsOf(dataDir).acc_owner!;
  const api = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> => {
    const res = await fetch(demo.url + path, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const raw = await res.text();
    return { status: res.status, body: raw === '' ? undefined : JSON.parse(raw) };
  };
  const history = async (): Promise<Json[]> => (await api('GET', '/v1/sessions/sess_001/events?limit=100')).body.data;
  const idleCount = async () => (await history()).filter((e) => e.type === 'session.status_idle').length;
  return { stub, demo, api, history, idleCount };
}

describe.concurrent.each(engines)('the demo on the Messages API adapter (%s)', (engine) => {
  it('starts on the adapter and a Run is steered over HTTP: queued input reaches the next call in order, a withdrawn one never does', async ({ onTestFinished }) => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const { stub, demo, api, history, idleCount } = await demoOnStub(onTestFinished, engine, [
      { text: ['Reading ', 'the inbox.'], gate },
      { text: 'Done; the billing items come first.' },
    ]);
    expect(demo.output()).toContain(`Model: anthropic claude-test at ${stub.url}`);
    expect(demo.output()).not.toContain('sk-demo-secret-key');

    expect((await api('POST', '/v1/sessions/sess_001/events', { events: [{ type: 'user.message', content: text('Triage the inbox.') }] })).status).toBe(200);
    await stub.request(1);
    const LI = '/v1/awaken/sessions/sess_001/live-inbox';
    const first = await api('POST', LI, { content: text('Billing first.') });
    const second = await api('POST', LI, { content: text('Never mind this.') });
    expect([first.status, second.status]).toEqual([200, 200]);
    expect((await api('DELETE', `${LI}/${second.body.id}`)).status).toBe(204);
    expect((await api('GET', LI)).body).toMatchObject({ active: true, messages: [{ id: first.body.id, content: text('Billing first.') }] });
    open();
    await waitUntil(async () => (await idleCount()) === 1, 'the Run to end');

    expect(stub.requests).toHaveLength(2);
    expect(stub.requests[0]!.body).toMatchObject({ model: 'claude-test', max_tokens: 512, system: DEMO_SYSTEM_PROMPT, stream: true });
    expect(stub.requests[1]!.body.messages).toEqual([
      { role: 'user', content: text('Triage the inbox.') },
      { role: 'assistant', content: text('Reading the inbox.') },
      { role: 'user', content: text('Billing first.') },
    ]);
    expect(JSON.stringify(stub.requests.map((r) => r.body))).not.toContain('Never mind this.');
    const events = await history();
    expect(events.map((e) => e.type)).toEqual(['user.message', 'session.status_running', 'agent.message', 'user.message', 'agent.message', 'session.status_idle']);
    expect(events[4].content).toEqual(text('Done; the billing items come first.'));
    // The Managed Agents wire (live-inbox.md "Managed Agents compatibility"): the outcome on the idle event itself.
    expect(events.at(-1)).toMatchObject({ type: 'session.status_idle', outcome: 'completed', stop_reason: { type: 'end_turn' }, stop_details: null });
    expect(events.at(-1)).not.toHaveProperty('content');
    expect(events.at(-1)).not.toHaveProperty('error');
  });

  it('a tool round on the real adapter: the model calls wait, steering queued while it runs is committed right after the result and is in the next request', async ({ onTestFinished }) => {
    const { stub, api, history, idleCount } = await demoOnStub(onTestFinished, engine, [
      { tool_use: [{ name: 'wait', input: { ms: 3000 } }], text: 'Waiting first.' },
      { text: 'Done waiting; keeping it short.' },
    ]);
    expect((await api('POST', '/v1/sessions/sess_001/events', { events: [{ type: 'user.message', content: text('Wait 3000 ms, then answer.') }] })).status).toBe(200);
    // The step that called the tool is committed before the tool runs: queue steering as soon as it
    // is there (the tool's 3 s leave room for a loaded machine).
    await waitUntil(async () => (await history()).some((e) => e.type === 'agent.tool_use'), 'the tool use is committed');
    const queued = await api('POST', '/v1/awaken/sessions/sess_001/live-inbox', { content: text('Keep it short.') });
    expect(queued.status).toBe(200);
    await waitUntil(async () => (await idleCount()) === 1, 'the Run to end');

    expect(stub.requests).toHaveLength(2);
    const tools = stub.requests[0]!.body.tools as Json[];
    expect(tools).toEqual([{ name: 'wait', description: expect.stringContaining('Waits'), input_schema: expect.objectContaining({ type: 'object', required: ['ms'] }) }]);
    const events = await history();
    expect(events.map((e) => e.type)).toEqual([
      'user.message', 'session.status_running', 'agent.message', 'agent.tool_use', 'agent.tool_result', 'user.message', 'agent.message', 'session.status_idle',
    ]);
    const use = events[3];
    expect(use).toMatchObject({ name: 'wait', input: { ms: 3000 }, evaluated_permission: 'allow' });
    expect(events[4]).toMatchObject({ tool_use_id: use.id, is_error: false, content: text('waited 3000 ms') });
    // The tool's result and the steering are one commit (adjacent), the result first.
    expect(events[5]).toMatchObject({ message_id: `${use.run_id}-inbox-0`, content: text('Keep it short.') });
    expect(events[5].seq).toBe(events[4].seq + 1);
    // The next request: the tool use, then ONE user turn with the result first and the steering after it.
    expect(stub.requests[1]!.body.messages).toEqual([
      { role: 'user', content: text('Wait 3000 ms, then answer.') },
      { role: 'assistant', content: [{ type: 'text', text: 'Waiting first.' }, { type: 'tool_use', id: use.id, name: 'wait', input: { ms: 3000 } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: text('waited 3000 ms') }, { type: 'text', text: 'Keep it short.' }] },
    ]);
    expect(events.at(-1)).toMatchObject({ outcome: 'completed', stop_reason: { type: 'end_turn' } });
  });

  it('a provider that stays overloaded ends the Run failed after the retries (logged), with the error in the history', async ({ onTestFinished }) => {
    const overloaded: StubAnswer = { status: 529, error: { type: 'overloaded_error', message: 'Overloaded' } };
    const { stub, demo, api, history, idleCount } = await demoOnStub(onTestFinished, engine, [overloaded, overloaded, overloaded], { LOG_LEVEL: 'warn' });
    await api('POST', '/v1/sessions/sess_001/events', { events: [{ type: 'user.message', content: text('Go.') }] });
    await waitUntil(async () => (await idleCount()) === 1, 'the Run to end', 30_000);
    expect(stub.requests).toHaveLength(3);
    expect((await history()).at(-1)).toMatchObject({
      type: 'session.status_idle',
      outcome: 'failed',
      stop_reason: { type: 'retries_exhausted' },
      error: { type: 'overloaded_error', message: 'The model provider answered with HTTP 529: overloaded_error (Overloaded). Gave up after 3 attempts.' },
    });
    expect((await api('GET', '/v1/awaken/sessions/sess_001/live-inbox')).body).toEqual({ active: false, version: 0, messages: [] });
    await waitUntil(() => demo.output().includes('"msg":"run failed"'), 'the failure in the log');
    expect(demo.output().match(/model request failed, retrying/g)).toHaveLength(2);
    expect(demo.output()).not.toContain('sk-demo-secret-key');
  });
});

describe.concurrent('the demo with DEMO_MODEL=anthropic and no key', () => {
  it('does not start: one clear line, exit 1, no stack', async ({ onTestFinished }) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'inbox-kit-anthropic-nokey-'));
    onTestFinished(() => rmSync(dataDir, { recursive: true, force: true }));
    const env: Record<string, string> = { DATA_DIR: dataDir, DEMO_MODEL: 'anthropic', ANTHROPIC_API_KEY: '' };
    const error = await startDemoProcess(env).then(() => undefined, (e: unknown) => e as Error);
    expect(error?.message).toContain('exited with 1 before listening');
    expect(error?.message).toContain('inbox-kit demo: could not start: DEMO_MODEL=anthropic needs ANTHROPIC_API_KEY');
    expect(error?.message).not.toMatch(/\n\s+at /);
  });
});

/** The user blocks of a Messages request after its last assistant turn, in order (turns flattened). */
const blocksAfterLastAssistant = (messages: Json[]): Json[] => {
  const last = messages.map((m) => m.role).lastIndexOf('assistant');
  return messages.slice(last + 1).flatMap((m) => (typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content));
};
const resultText = (block: Json): string => (typeof block.content === 'string' ? block.content : (block.content ?? []).map((c: Json) => c.text ?? '').join(''));

describe.concurrent.each(['ai-sdk', 'langgraph', 'openai-agents'] as const)('DEMO_RUNTIME=%s with DEMO_MODEL=anthropic (the Messages API stub)', (runtime) => {
  it('a tool round through the framework\'s Anthropic model: steering queued while the tool runs is committed right after the result and is in the next request', async ({ onTestFinished }) => {
    const { stub, api, history, idleCount } = await demoOnStub(onTestFinished, 'sqlite', [
      { tool_use: [{ name: 'wait', input: { ms: 600 } }], text: 'Waiting first.' },
      { text: 'Done waiting; keeping it short.' },
    ], { DEMO_RUNTIME: runtime });
    expect((await api('POST', '/v1/sessions/sess_001/events', { events: [{ type: 'user.message', content: text('Wait 600 ms, then answer.') }] })).status).toBe(200);
    // The step that called the tool is committed before the tool runs (the native order).
    await waitUntil(async () => (await history()).some((e) => e.type === 'agent.tool_use'), 'the tool use is committed');
    expect((await history()).map((e) => e.type)).not.toContain('agent.tool_result');
    expect((await api('POST', '/v1/awaken/sessions/sess_001/live-inbox', { content: text('Keep it short.') })).status).toBe(200);
    await waitUntil(async () => (await idleCount()) === 1, 'the Run to end');

    expect(stub.requests).toHaveLength(2);
    expect(stub.requests[0]!.body.model).toBe('claude-test');
    expect((stub.requests[0]!.body.tools as Json[]).map((t) => t.name)).toEqual(['wait']);
    const events = await history();
    expect(events.map((e) => e.type)).toEqual([
      'user.message', 'session.status_running', 'agent.message', 'agent.tool_use', 'agent.tool_result', 'user.message', 'agent.message', 'session.status_idle',
    ]);
    const use = events[3];
    expect(use).toMatchObject({ id: `${use.run_id}-tool-0`, name: 'wait', input: { ms: 600 }, evaluated_permission: 'allow' });
    expect(events[4]).toMatchObject({ tool_use_id: use.id, is_error: false, content: text('waited 600 ms') });
    expect(events[5]).toMatchObject({ message_id: `${use.run_id}-inbox-0`, content: text('Keep it short.') });
    expect(events[5].seq).toBe(events[4].seq + 1);
    expect(events[6].content).toEqual(text('Done waiting; keeping it short.'));
    // The next request: the tool use, then the result and — right after it — the steering.
    const messages = stub.requests[1]!.body.messages as Json[];
    const assistant = messages.findLast((m) => m.role === 'assistant');
    const call = (assistant.content as Json[]).find((b) => b.type === 'tool_use');
    expect(call).toMatchObject({ name: 'wait', input: { ms: 600 } });
    const after = blocksAfterLastAssistant(messages);
    expect(after.map((b) => b.type)).toEqual(['tool_result', 'text']);
    expect(after[0]).toMatchObject({ tool_use_id: call.id });
    expect(resultText(after[0])).toBe('waited 600 ms');
    expect(after[1]).toMatchObject({ type: 'text', text: 'Keep it short.' });
    expect(events.at(-1)).toMatchObject({ outcome: 'completed' });
  });
});
