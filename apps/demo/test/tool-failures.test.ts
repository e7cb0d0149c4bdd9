/**
 * The failure kinds of a tool round (live-inbox.md "Tools and boundaries"), over real HTTP on the
 * demo (its `assistant` agent with `wait` plus two test tools: `explode` throws, `stall` outlives
 * its 50 ms timeout; at most 2 tool rounds per Run), on SQLite and (with INBOX_KIT_TEST_PG_URL)
 * PostgreSQL: invalid input, a throwing tool, a tool timeout, an interrupt mid-tool and the round
 * limit. Each ends as the spec says and leaves a transcript the next Run's model can use. (Unknown
 * and answered result ids and a bare message while actions are pending are in
 * anthropic-sdk-tools.contract.test.ts; kill -9 mid-tool in stale-run-recovery.test.ts.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import type { ModelStepResult, Tool, TranscriptBlock } from '@inbox-kit/core';
import { fakeModel } from '@inbox-kit/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDemo, loadConfig, type Demo } from '../src/index.js';
import { PG_ADMIN_URL, freshPostgresDatabase, waitUntil } from './demo-process.js';
import { closeDemo, listen } from './listen.js';

type Event = Anthropic.Beta.Sessions.BetaManagedAgentsSessionEvent & Record<string, any>;
const text = (t: string) => [{ type: 'text' as const, text: t }];
const textOf = (blocks: readonly TranscriptBlock[]): string =>
  blocks.map((b) => (b.type === 'text' ? b.text : b.type === 'tool_result' ? `${b.is_error ? '!' : ''}${textOf(b.content)}` : '')).join(' ');

/** On "use <tool> <json>" it calls the tool; on "loop" it calls wait every step; after a round it reports the results. */
function model() {
  return fakeModel({
    then: ({ transcript }): ModelStepResult => {
      const task = [...transcript].reverse().find((m) => m.role === 'user' && !m.content.some((b) => b.type === 'tool_result'));
      const last = transcript.at(-1)!;
      const said = textOf(task?.content ?? []);
      if (/^loop/.test(said)) return { content: [{ type: 'tool_use', id: 't', name: 'wait', input: { ms: 1 } }], stop_reason: 'tool_use' };
      if (last.content.some((b) => b.type === 'tool_result')) return { content: text(`Tool said: ${textOf(last.content)}`), stop_reason: 'end_turn' };
      const use = /^use (\w+) (.*)$/.exec(said);
      if (use) return { content: [{ type: 'tool_use', id: 't', name: use[1]!, input: JSON.parse(use[2]!) as Record<string, unknown> }], stop_reason: 'tool_use' };
      return { content: text('Nothing to do.'), stop_reason: 'end_turn' };
    },
  });
}

const explode: Tool = { name: 'explode', description: 'Throws', input_schema: { type: 'object' }, execute: () => { throw new Error('boom: disk full'); } };
const stalled: string[] = [];
const stall: Tool = {
  name: 'stall', description: 'Never answers in time', input_schema: { type: 'object' }, timeoutMs: 50,
  execute: (_input, { signal }) => new Promise((resolve) => signal.addEventListener('abort', () => {
    stalled.push(String((signal.reason as Error)?.message));
    resolve('too late');
  })),
};

const backends: { name: string; env: () => Promise<{ env: Record<string, string>; drop(): Promise<void> }> }[] = [
  { name: 'SQLite', env: async () => ({ env: {}, drop: async () => {} }) },
];
if (PG_ADMIN_URL) {
  backends.push({
    name: 'PostgreSQL',
    env: async () => {
      const db = await freshPostgresDatabase('inbox_kit_tool_failures');
      return { env: { DATABASE_URL: db.url }, drop: db.drop };
    },
  });
} else {
  describe('tool failures on PostgreSQL', () => {
    it('INBOX_KIT_TEST_PG_URL is available', (ctx) => {
      const why = 'INBOX_KIT_TEST_PG_URL is not set: tool failures on PostgreSQL were not tested.';
      if (process.env.CI) expect.fail(why);
      ctx.skip(why);
    });
  });
}

describe.each(backends)('tool failures over HTTP on $name', (backend) => {
  let demo: Demo;
  let dataDir: string;
  let drop: () => Promise<void>;
  let client: Anthropic;
  const m = model();

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'inbox-kit-tool-failures-'));
    const db = await backend.env();
    drop = db.drop;
    demo = await buildDemo(loadConfig({ DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent', ...db.env }), { model: m, tools: [explode, stall], run: { maxToolRounds: 2 } });
    client = new Anthropic({ apiKey: demo.credentials.acc_owner!, baseURL: await listen(demo), maxRetries: 0 });
  });
  afterAll(async () => {
    await closeDemo(demo);
    await drop?.();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const history = async (sid: string): Promise<Event[]> => {
    const out: Event[] = [];
    for await (const e of client.beta.sessions.events.list(sid, { limit: 100 })) out.push(e as Event);
    return out;
  };
  /** Runs one message in a new Session of `assistant` to the end; returns the Run's events. */
  async function runOf(message: string): Promise<{ sid: string; events: Event[] }> {
    const { id } = await client.beta.sessions.create({ agent: 'assistant', environment_id: 'env' });
    await client.beta.sessions.events.send(id, { events: [{ type: 'user.message', content: text(message) }] });
    await waitUntil(async () => (await history(id)).at(-1)?.type === 'session.status_idle' && !demo.runtime.isRunning(id), 'the Run ends');
    return { sid: id, events: await history(id) };
  }
  const resultOf = (events: Event[]) => events.find((e) => e.type === 'agent.tool_result')!;

  it('invalid input: refused before it runs (evaluated_permission deny), an error result; the model reads it and answers', async () => {
    const { events } = await runOf('use wait {"ms":20000}');
    expect(events.map((e) => e.type)).toEqual(['user.message', 'session.status_running', 'agent.tool_use', 'agent.tool_result', 'agent.message', 'session.status_idle']);
    expect(events[2]).toMatchObject({ name: 'wait', input: { ms: 20000 }, evaluated_permission: 'deny' });
    expect(resultOf(events)).toMatchObject({ tool_use_id: events[2]!.id, is_error: true, content: [{ text: expect.stringMatching(/^The input of wait is not valid: ms: /) }] });
    expect(JSON.stringify(events)).not.toContain('waited');
    expect(events.at(-1)).toMatchObject({ outcome: 'completed', stop_reason: { type: 'end_turn' } });
  });

  it('a throwing tool: is_error with its message', async () => {
    const { events } = await runOf('use explode {}');
    expect(resultOf(events)).toMatchObject({ is_error: true, content: text('boom: disk full') });
    expect(events.at(-2)).toMatchObject({ type: 'agent.message', content: text('Tool said: !boom: disk full') });
  });

  it('a tool past its timeout: an error result, its signal aborted', async () => {
    const { events } = await runOf('use stall {}');
    expect(resultOf(events)).toMatchObject({ is_error: true, content: text('The tool stall timed out after 50 ms.') });
    await waitUntil(() => stalled.length > 0, 'the tool saw its abort');
    expect(stalled.at(-1)).toBe('The tool timed out after 50 ms');
  });

  it('an interrupt mid-tool: the tool is aborted, its use gets an error result, the Run ends cancelled; the next Run goes on from a valid transcript', async () => {
    const { id: sid } = await client.beta.sessions.create({ agent: 'assistant', environment_id: 'env' });
    await client.beta.sessions.events.send(sid, { events: [{ type: 'user.message', content: text('use wait {"ms":10000}') }] });
    await waitUntil(async () => (await history(sid)).some((e) => e.type === 'agent.tool_use'), 'the tool runs');
    const started = Date.now();
    await client.beta.sessions.events.send(sid, { events: [{ type: 'user.interrupt' }] });
    await waitUntil(async () => (await history(sid)).at(-1)?.type === 'session.status_idle', 'the Run ends');
    expect(Date.now() - started).toBeLessThan(8_000);
    const events = await history(sid);
    expect(events.map((e) => e.type).slice(-3)).toEqual(['user.interrupt', 'agent.tool_result', 'session.status_idle']);
    expect(events.at(-2)).toMatchObject({ is_error: true, content: text('The Run was interrupted before this call got a result.') });
    expect(events.at(-1)).toMatchObject({ outcome: 'cancelled' });
    await client.beta.sessions.events.send(sid, { events: [{ type: 'user.message', content: text('hello again') }] });
    await waitUntil(async () => (await history(sid)).filter((e) => e.type === 'session.status_idle').length === 2 && !demo.runtime.isRunning(sid), 'the next Run ends');
    const seen = m.steps.at(-1)!.transcript.map((x) => `${x.role}:${textOf(x.content)}`);
    expect(seen).toEqual(['user:use wait {"ms":10000}', 'assistant:', 'user:!The Run was interrupted before this call got a result.', 'user:hello again']);
  });

  it('the round limit: session.error tool_use_limit_reached_error, then idle retries_exhausted', async () => {
    const { events } = await runOf('loop');
    expect(events.filter((e) => e.type === 'agent.tool_use')).toHaveLength(2);
    expect(events.map((e) => e.type).slice(-2)).toEqual(['session.error', 'session.status_idle']);
    expect(events.at(-2)).toMatchObject({ error: { type: 'tool_use_limit_reached_error', retry_status: { type: 'exhausted' } } });
    expect(events.at(-1)).toMatchObject({ outcome: 'failed', stop_reason: { type: 'retries_exhausted' }, error: { type: 'tool_use_limit_reached_error' } });
  });
});
