/**
 * @inbox-kit/langgraph on the real langchain `createAgent` (LangGraph.js underneath) with
 * LangChain's fake chat model (`fakeModel` of `@langchain/core/testing`) and a real tool, over a
 * real server (SQLite, Fastify, history read over HTTP): steering queued over HTTP
 * during the first tool round — reordered, one replaced, the other withdrawn — reaches the next
 * model call after the tool result with its inbox id as message id, and is committed as
 * `{run_id}-inbox-{n}`; a message queued during the last step keeps the agent going; a hand-built
 * StateGraph with the node does the same.
 */
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { tool } from '@langchain/core/tools';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { createAgent, createMiddleware } from 'langchain';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { liveInboxMiddleware, liveInboxNode, toLangChainMessages } from '../src/index.js';
import { gate, steerTwoMessages, textContent as text, type RuntimeWorld as World } from '@inbox-kit/core/testing';
import { createServer } from '@inbox-kit/http-fastify/server';
import { startKyselyRuntimeWorld, type KyselyRuntimeWorldOptions } from '@inbox-kit/storage-kysely/testing';

/** The Session Runtime world of `@inbox-kit/storage-kysely/testing` on a SQLite file, served by the Fastify preset. */
const world = (options: Pick<KyselyRuntimeWorldOptions, 'executor'> = {}) => startKyselyRuntimeWorld({ ...options, server: (services) => createServer({ services, logger: false }) });

const worlds: World[] = [];
afterEach(async () => {
  await Promise.all(worlds.splice(0).map((w) => w.close()));
});

const line = (m: BaseMessage) => {
  const content = typeof m.content === 'string' ? m.content : m.content.map((c: any) => c.text ?? '').join('');
  const calls = m.getType() === 'ai' ? ((m as AIMessage).tool_calls ?? []).map((c) => `[call ${c.name}]`).join('') : '';
  return `${m.getType()}:${content}${calls}`;
};

describe('@inbox-kit/langgraph', () => {
  it('createAgent middleware: steering edited during a tool round reaches the next call after the result; a message queued in the last step keeps it going', async () => {
    const w = await world();
    worlds.push(w);
    const inTool = gate();
    const toolDone = gate();
    const lastStep = gate();
    const lastQueued = gate();
    const model = fakeModel()
      .respondWithTools([{ name: 'lookup', args: { q: 'x' }, id: 'call_1' }])
      .respond(new AIMessage('first answer'))
      .respond(new AIMessage('after steering'));
    const lookup = tool(async ({ q }) => {
      inTool.open();
      await toolDone.wait;
      return `found ${q}`;
    }, { name: 'lookup', description: 'Looks something up', schema: z.object({ q: z.string() }) });
    let calls = 0;
    // Holds the second model call (the final step) until the test has queued a message over HTTP.
    const holdFinalStep = createMiddleware({
      name: 'HoldFinalStep',
      wrapModelCall: async (request, handler) => {
        if (calls++ === 1) {
          lastStep.open();
          await lastQueued.wait;
        }
        return handler(request);
      },
    });

    const run = await w.runtime.startRun(w.owner, w.session, { content: text('find x') });
    const agent = createAgent({ model, tools: [lookup], middleware: [liveInboxMiddleware(run), holdFinalStep] });
    let whileTool: string[] = [];
    const steering = (async () => {
      await inTool.wait;
      // The native order: the assistant turn (its tool use) is committed before the tool runs.
      whileTool = (await w.history()).map((e) => e.type);
      const replaced = await steerTwoMessages(w);
      toolDone.open();
      await lastStep.wait;
      expect((await w.inbox('POST', '', { content: text('one more thing') })).status).toBe(200);
      lastQueued.open();
      return replaced;
    })();
    const result = await agent.invoke({ messages: toLangChainMessages(run.transcript) }, { signal: run.signal! });
    const replaced = await steering;
    await run.finish({ status: 'completed' });

    const r = run.run_id;
    expect(whileTool).toEqual(['user.message', 'session.status_running', 'agent.message', 'agent.tool_use']);
    expect(model.calls).toHaveLength(3);
    expect(model.calls[1]!.messages.map(line)).toEqual(['human:find x', 'ai:find x[call lookup]', 'tool:found x', `human:${replaced}`]);
    expect(model.calls[1]!.messages.at(-1)!.id).toBe(`${r}-inbox-0`);
    expect(model.calls[2]!.messages.map(line).slice(-2)).toEqual(['ai:first answer', 'human:one more thing']);
    expect(result.messages.map(line).at(-1)).toBe('ai:after steering');

    const history = await w.history();
    expect(history.filter((e) => e.type === 'user.message').map((e) => [e.message_id, e.content[0].text])).toEqual([
      [null, 'find x'], [`${r}-inbox-0`, replaced], [`${r}-inbox-1`, 'one more thing'],
    ]);
    expect(history.map((e) => e.type)).toEqual([
      // (the fake model's tool-call step repeats the input as its text)
      'user.message', 'session.status_running', 'agent.message', 'agent.tool_use', 'agent.tool_result', 'user.message', 'agent.message', 'user.message',
      'agent.message', 'session.status_idle',
    ]);
    expect(history.find((e) => e.type === 'agent.tool_result')).toMatchObject({ tool_use_id: `${r}-tool-0`, is_error: false });
  });

  it('a hand-built StateGraph with the node: drained after the tools, committed, routed back to the model', async () => {
    const w = await world();
    worlds.push(w);
    const inTool = gate();
    const toolDone = gate();
    const model = fakeModel().respondWithTools([{ name: 'lookup', args: { q: 'y' }, id: 'call_9' }]).respond(new AIMessage('done'));
    const lookup = tool(async () => (inTool.open(), await toolDone.wait, 'ok'), { name: 'lookup', description: 'Looks up', schema: z.object({ q: z.string() }) });
    const bound = model.bindTools([lookup]);
    const run = await w.runtime.startRun(w.owner, w.session, { content: text('go') });
    const inbox = liveInboxNode(run);
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('model', async (state) => ({ messages: [await bound.invoke(state.messages)] }))
      .addNode('tools', async (state) => {
        const last = state.messages.at(-1) as AIMessage;
        const out = [];
        for (const call of last.tool_calls ?? []) out.push(await lookup.invoke(call));
        return { messages: out };
      })
      .addNode('live_inbox', inbox)
      .addEdge(START, 'model')
      .addEdge('model', 'live_inbox')
      .addEdge('tools', 'live_inbox')
      .addConditionalEdges('live_inbox', (state) => {
        const last = state.messages.at(-1)!;
        if (last.getType() === 'ai' && ((last as AIMessage).tool_calls ?? []).length > 0) return 'tools';
        return inbox.more() || last.getType() === 'tool' ? 'model' : END;
      })
      .compile();
    let whileTool: string[] = [];
    const steering = (async () => {
      await inTool.wait;
      whileTool = (await w.history()).map((e) => e.type);
      await w.inbox('POST', '', { content: text('steer the graph') });
      toolDone.open();
    })();
    await graph.invoke({ messages: toLangChainMessages(run.transcript) });
    await steering;
    await run.finish({ status: 'completed' });
    expect(whileTool).toEqual(['user.message', 'session.status_running', 'agent.message', 'agent.tool_use']);
    expect(model.calls[1]!.messages.map(line)).toEqual(['human:go', 'ai:go[call lookup]', 'tool:ok', 'human:steer the graph']);
    const history = await w.history();
    expect(history.map((e) => `${e.type}${e.message_id ? `:${e.message_id.slice(run.run_id.length)}` : ''}`)).toEqual([
      'user.message', 'session.status_running', 'agent.message:-step-0', 'agent.tool_use:-step-0', 'agent.tool_result:-step-0-results', 'user.message:-inbox-0',
      'agent.message:-step-1', 'session.status_idle',
    ]);
  });
});
