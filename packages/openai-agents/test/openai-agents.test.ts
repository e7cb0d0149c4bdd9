/**
 * @inbox-kit/openai-agents on the real `@openai/agents` (0.20) with a Model stub (the SDK's `Model`
 * interface, no network) and a real function tool, over a real server (SQLite, Fastify, the
 * history read over HTTP): steering queued over HTTP during the first tool call —
 * reordered, one replaced, the other withdrawn — reaches the next model call after the tool result
 * and is committed as `{run_id}-inbox-{n}`; it is re-inserted on every later turn; a message queued
 * during the final turn keeps the Run going; a run stopped for a tool approval and resumed keeps it.
 */
import { Agent, Usage, run as runAgent, setTracingDisabled, tool, type Model, type ModelRequest, type ModelResponse } from '@openai/agents';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openAIAgentsLiveInbox } from '../src/index.js';
import { gate, steerTwoMessages, textContent as text, type RuntimeWorld as World } from '@inbox-kit/core/testing';
import { createServer } from '@inbox-kit/http-fastify/server';
import { startKyselyRuntimeWorld, type KyselyRuntimeWorldOptions } from '@inbox-kit/storage-kysely/testing';

/** The Session Runtime world of `@inbox-kit/storage-kysely/testing` on a SQLite file, served by the Fastify preset. */
const world = (options: Pick<KyselyRuntimeWorldOptions, 'executor'> = {}) => startKyselyRuntimeWorld({ ...options, server: (services) => createServer({ services, logger: false }) });

beforeAll(() => setTracingDisabled(true));
const worlds: World[] = [];
afterEach(async () => {
  await Promise.all(worlds.splice(0).map((w) => w.close()));
});

type Output = ModelResponse['output'];
const say = (t: string): Output => [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: t }] } as any];
const call = (id: string, input: unknown): Output => [{ type: 'function_call', callId: id, name: 'lookup', arguments: JSON.stringify(input), status: 'completed' } as any];

/** A Model stub: answers from a script (an answer, or a function of the request), records every request's input. */
function stubModel(script: Array<Output | ((request: ModelRequest) => Promise<Output>)>): Model & { inputs: any[][] } {
  const inputs: any[][] = [];
  return {
    inputs,
    async getResponse(request) {
      inputs.push(structuredClone(request.input as any[]));
      const next = script.shift();
      if (next === undefined) throw new Error('no scripted answer left');
      return { usage: new Usage(), output: typeof next === 'function' ? await next(request) : next, responseId: `resp_${inputs.length}` };
    },
    getStreamedResponse() {
      throw new Error('the stub answers run() without stream');
    },
  };
}

const line = (item: any): string => {
  if (item.type === 'function_call') return `call:${item.name}`;
  if (item.type === 'function_call_result') return `result:${item.output?.text ?? item.output}`;
  const content = typeof item.content === 'string' ? item.content : (item.content ?? []).map((c: any) => c.text ?? '').join('');
  return `${item.role}:${content}`;
};

describe('@inbox-kit/openai-agents', () => {
  it('steering edited during a tool call reaches the next call after the result and every later turn; a message queued in the final turn keeps the Run going', async () => {
    const w = await world();
    worlds.push(w);
    const inTool = gate();
    const toolDone = gate();
    const lastTurn = gate();
    const lastQueued = gate();
    const model = stubModel([
      call('call_1', { q: 'x' }),
      call('call_2', { q: 'z' }),
      async () => {
        lastTurn.open();
        await lastQueued.wait;
        return say('first answer');
      },
      say('after steering'),
    ]);
    let uses = 0;
    const lookup = tool({
      name: 'lookup', description: 'Looks something up', parameters: z.object({ q: z.string() }),
      execute: async ({ q }) => {
        if (uses++ === 0) {
          inTool.open();
          await toolDone.wait;
        }
        return `found ${q}`;
      },
    });
    const run = await w.runtime.startRun(w.owner, w.session, { content: text('find x') });
    const inbox = openAIAgentsLiveInbox(run);
    const agent = new Agent({ name: 'assistant', instructions: 'Help.', model: inbox.model(model), tools: [lookup] });
    let whileTool: string[] = [];
    const steering = (async () => {
      await inTool.wait;
      // The native order: the response's tool use is committed before the tool runs.
      whileTool = (await w.history()).map((e) => e.type);
      const replaced = await steerTwoMessages(w);
      toolDone.open();
      await lastTurn.wait;
      expect((await w.inbox('POST', '', { content: text('one more thing') })).status).toBe(200);
      lastQueued.open();
      return replaced;
    })();
    await inbox.run((input, options) => runAgent(agent, input as any, options as any));
    const replaced = await steering;
    await run.finish({ status: 'completed' });

    expect(whileTool).toEqual(['user.message', 'session.status_running', 'agent.tool_use']);
    expect(model.inputs).toHaveLength(4);
    expect(model.inputs[1]!.map(line)).toEqual(['user:find x', 'call:lookup', 'result:found x', `user:${replaced}`]);
    // Re-inserted on the later turn, still right after its tool result.
    expect(model.inputs[2]!.map(line)).toEqual(['user:find x', 'call:lookup', 'result:found x', `user:${replaced}`, 'call:lookup', 'result:found z']);
    expect(model.inputs[3]!.map(line).slice(-2)).toEqual(['assistant:first answer', 'user:one more thing']);

    const history = await w.history();
    const r = run.run_id;
    expect(history.filter((e) => e.type === 'user.message').map((e) => [e.message_id, e.content[0].text])).toEqual([
      [null, 'find x'], [`${r}-inbox-0`, replaced], [`${r}-inbox-1`, 'one more thing'],
    ]);
    expect(history.map((e) => e.type)).toEqual([
      'user.message', 'session.status_running', 'agent.tool_use', 'agent.tool_result', 'user.message', 'agent.tool_use', 'agent.tool_result',
      'agent.message', 'user.message', 'agent.message', 'session.status_idle',
    ]);
    expect(history.find((e) => e.type === 'agent.tool_result')).toMatchObject({ tool_use_id: `${r}-tool-0`, is_error: false });
  });

  it('a run stopped for a tool approval and resumed: the drained message is re-inserted, what was queued meanwhile is staged for its first call', async () => {
    const w = await world();
    worlds.push(w);
    const model = stubModel([call('call_1', { q: 'a' }), say('thanks'), say('after approval')]);
    const lookup = tool({ name: 'lookup', description: 'Looks up', parameters: z.object({ q: z.string() }), needsApproval: true, execute: async ({ q }) => `found ${q}` });
    const agent = new Agent({ name: 'assistant', instructions: 'Help.', model, tools: [lookup] });
    const run = await w.runtime.startRun(w.owner, w.session, { content: text('go') });
    const inbox = openAIAgentsLiveInbox(run);
    let result = await runAgent(agent, inbox.input as any, { callModelInputFilter: inbox.callModelInputFilter as any });
    expect(result.interruptions).toHaveLength(1);
    expect(await inbox.finish(result as any)).toEqual({ pending: false });
    // Queued while the run waits for the approval: staged for the resumed run's first model call.
    expect((await w.inbox('POST', '', { content: text('while waiting') })).status).toBe(200);
    result.state.approve(result.interruptions[0]!);
    result = await runAgent(agent, result.state, { callModelInputFilter: inbox.callModelInputFilter as any });
    expect(await inbox.finish(result as any)).toEqual({ pending: false });
    await run.finish({ status: 'completed' });
    expect(model.inputs[1]!.map(line)).toEqual(['user:go', 'call:lookup', 'result:found a', 'user:while waiting']);
    const history = await w.history();
    expect(history.filter((e) => e.type === 'user.message').map((e) => [e.message_id, e.content[0].text])).toEqual([
      [null, 'go'], [`${run.run_id}-inbox-0`, 'while waiting'],
    ]);
  });
});
