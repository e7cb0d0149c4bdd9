/**
 * @inbox-kit/ai-sdk on the real `ai` (7) with its mock language model (`ai/test`) and a real tool,
 * over a real server (SQLite, Fastify, history read over HTTP): steering queued over
 * HTTP during the first tool round — reordered, one replaced, the other withdrawn — reaches the
 * next model call after the tool results and is committed as `{run_id}-inbox-{n}`; a message queued
 * during the last step keeps the Run going; what a stop condition left undelivered is carried over;
 * durable input during the Run never starts a native attempt.
 */
import { generateText, isStepCount, streamText, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { aiSdkLiveInbox, toAiSdkMessages } from '../src/index.js';
import { gate, steerTwoMessages, textContent as text, type RuntimeWorld as World } from '@inbox-kit/core/testing';
import { createServer } from '@inbox-kit/http-fastify/server';
import { startKyselyRuntimeWorld, type KyselyRuntimeWorldOptions } from '@inbox-kit/storage-kysely/testing';

/** The Session Runtime world of `@inbox-kit/storage-kysely/testing` on a SQLite file, served by the Fastify preset. */
const world = (options: Pick<KyselyRuntimeWorldOptions, 'executor'> = {}) => startKyselyRuntimeWorld({ ...options, server: (services) => createServer({ services, logger: false }) });

const worlds: World[] = [];
afterEach(async () => {
  await Promise.all(worlds.splice(0).map((w) => w.close()));
});

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
const say = (t: string) => ({ content: [{ type: 'text' as const, text: t }], finishReason: { unified: 'stop' as const, raw: 'stop' }, usage, warnings: [] });
const callTool = (id: string, input: unknown) => ({
  content: [{ type: 'tool-call' as const, toolCallId: id, toolName: 'lookup', input: JSON.stringify(input) }],
  finishReason: { unified: 'tool-calls' as const, raw: 'tool_use' }, usage, warnings: [],
});
/** The user-visible text of a prompt message of the mock's call. */
const promptText = (m: { role: string; content: unknown }) =>
  Array.isArray(m.content) ? m.content.map((p: any) => (p.type === 'text' ? p.text : p.type === 'tool-result' ? `[result ${JSON.stringify(p.output)}]` : p.type === 'tool-call' ? `[call ${p.toolName}]` : '')).join('') : String(m.content);

describe('@inbox-kit/ai-sdk', () => {
  for (const mode of ['generateText', 'streamText'] as const) {
    it(`${mode}: steering edited during a tool round reaches the next call after the results; a message queued in the last step keeps the Run going`, async () => {
      const w = await world();
      worlds.push(w);
      const inTool = gate();
      const toolDone = gate();
      const lastStep = gate();
      const lastQueued = gate();
      const prompts: Array<Array<{ role: string; content: unknown }>> = [];
      const answers: any[] = [callTool('c1', { q: 'x' }), 'final', say('after steering')];
      const model = new MockLanguageModelV4({
        doGenerate: async (options) => {
          prompts.push(options.prompt as any);
          const next = answers.shift()!;
          if (next === 'final') {
            lastStep.open();
            await lastQueued.wait;
            return say('first answer');
          }
          return next;
        },
        doStream: async (options) => {
          prompts.push(options.prompt as any);
          let next = answers.shift()!;
          if (next === 'final') {
            lastStep.open();
            await lastQueued.wait;
            next = say('first answer');
          }
          const parts: any[] = [{ type: 'stream-start', warnings: [] }];
          for (const c of next.content) {
            if (c.type === 'text') parts.push({ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: c.text }, { type: 'text-end', id: 't' });
            else parts.push(c);
          }
          parts.push({ type: 'finish', finishReason: next.finishReason, usage });
          return { stream: new ReadableStream({ start(ctl) { for (const p of parts) ctl.enqueue(p); ctl.close(); } }) };
        },
      });
      const lookup = tool({
        description: 'Looks something up',
        inputSchema: z.object({ q: z.string() }),
        execute: async ({ q }) => {
          inTool.open();
          await toolDone.wait;
          return `found ${q}`;
        },
      });

      const run = await w.runtime.startRun(w.owner, w.session, { content: text('find x') });
      const inbox = aiSdkLiveInbox(run);
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
      const result = await inbox.run(async (options) => {
        if (mode === 'generateText') return generateText({ model, tools: { lookup }, stopWhen: isStepCount(10), ...options });
        const stream = streamText({ model, tools: { lookup }, stopWhen: isStepCount(10), ...options });
        await stream.consumeStream();
        return { steps: await stream.steps };
      });
      const replaced = await steering;
      await run.finish({ status: 'completed' });
      expect(result.steps.length).toBeGreaterThan(0);
      expect(whileTool).toEqual(['user.message', 'session.status_running', 'agent.tool_use']);

      // Exactly the replaced message reached the second call, right after the tool result.
      expect(prompts).toHaveLength(3);
      const second = prompts[1]!.map((m) => `${m.role}:${promptText(m)}`);
      expect(second).toEqual(['user:find x', 'assistant:[call lookup]', 'tool:[result {"type":"text","value":"found x"}]', `user:${replaced}`]);
      // The message queued during the last step kept the Run going: a third call saw it last.
      expect(prompts[2]!.map((m) => `${m.role}:${promptText(m)}`).slice(-2)).toEqual(['assistant:first answer', 'user:one more thing']);

      // Committed, with Run-scoped ids, visible in the Session's events (GET /v1/sessions/{id}/events).
      const history = await w.history();
      const r = run.run_id;
      expect(history.filter((e) => e.type === 'user.message').map((e) => [e.message_id, e.content[0].text])).toEqual([
        [null, 'find x'], [`${r}-inbox-0`, replaced], [`${r}-inbox-1`, 'one more thing'],
      ]);
      expect(history.map((e) => e.type)).toEqual([
        'user.message', 'session.status_running', 'agent.tool_use', 'agent.tool_result', 'user.message', 'agent.message', 'user.message',
        'agent.message', 'session.status_idle',
      ]);
      expect(history.find((e) => e.type === 'agent.tool_result')).toMatchObject({ tool_use_id: `${r}-tool-0`, is_error: false });
      expect(history.at(-1)).toMatchObject({ outcome: 'completed' });
    });
  }

  it('a stop condition that ends the loop before the drained message is shown: nothing committed, it is carried over', async () => {
    const w = await world();
    worlds.push(w);
    const inTool = gate();
    const toolDone = gate();
    const model = new MockLanguageModelV4({ doGenerate: [callTool('c1', { q: 'y' })] });
    const lookup = tool({ inputSchema: z.object({ q: z.string() }), execute: async () => (inTool.open(), await toolDone.wait, 'ok') });
    const run = await w.runtime.startRun(w.owner, w.session, { content: text('go') });
    const inbox = aiSdkLiveInbox(run);
    const steering = (async () => {
      await inTool.wait;
      await w.inbox('POST', '', { content: text('late steering') });
      toolDone.open();
    })();
    const result = await generateText({ model, tools: { lookup }, stopWhen: isStepCount(1), ...inbox });
    await steering;
    expect(result.steps).toHaveLength(1);
    expect(await inbox.finish(result)).toEqual({ pending: true });
    await run.finish({ status: 'completed' });
    const history = await w.history();
    expect(history.filter((e) => e.type === 'user.message').map((e) => e.content[0].text)).toEqual(['go']);
    // Carried over (no executor here, so no follow-up Run): the next attempt of the Session gets it first.
    expect(w.host.pendingCarryOver(w.session)).toEqual([text('late steering')]);
    const next = await w.runtime.startRun(w.owner, w.session, { content: text('again') });
    expect(next.transcript.at(-1)).toMatchObject({ id: `${next.run_id}-inbox-0`, content: text('late steering') });
    await next.finish({ status: 'completed' });
  });

  it('as the Runtime\'s executor: durable input during its Run is a follow-up Run on the AI SDK, never a native attempt', async () => {
    const prompts: string[][] = [];
    const model = new MockLanguageModelV4({
      doGenerate: async (options) => {
        prompts.push((options.prompt as any[]).map((m) => `${m.role}:${promptText(m)}`));
        return say(`answer ${prompts.length}`);
      },
    });
    const first = gate();
    let calls = 0;
    const w = await world({
      executor: {
        kind: 'ai-sdk',
        async execute(attempt) {
          if (calls++ === 0) await first.wait;
          const inbox = aiSdkLiveInbox(attempt);
          await inbox.run((options) => generateText({ model, ...options }));
          return { status: 'completed' };
        },
      },
    });
    worlds.push(w);
    expect((await w.send([{ type: 'user.message', content: text('one') }])).status).toBe(200);
    await expect.poll(async () => (await w.inbox('GET')).body.active).toBe(true);
    expect((await w.send([{ type: 'user.message', content: text('two') }])).status).toBe(200);
    first.open();
    await expect.poll(async () => (await w.history()).filter((e) => e.type === 'session.status_idle').length).toBe(2);
    await w.runtime.whenIdle(w.session);
    expect(prompts).toEqual([['user:one'], ['user:one', 'assistant:answer 1', 'user:two']]);
    const history = await w.history();
    expect(history.filter((e) => e.type === 'session.status_idle').map((e) => e.outcome)).toEqual(['completed', 'completed']);
  });

  it('maps a transcript with a tool round to AI SDK messages (results right after their calls)', () => {
    const messages = toAiSdkMessages([
      { id: 'm', role: 'user', content: text('hi') },
      { id: 'r-step-0', role: 'assistant', content: [{ type: 'text', text: 'calling' }, { type: 'tool_use', id: 'r-tool-0', name: 'lookup', input: { q: 1 } }] },
      { id: 'r-step-0-results', role: 'user', content: [{ type: 'tool_result', tool_use_id: 'r-tool-0', content: text('ok'), is_error: false }] },
      { id: 'r-inbox-0', role: 'user', content: text('steer') },
    ], 'be brief');
    expect(messages).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: [{ type: 'text', text: 'hi' }], providerOptions: { inboxKit: { id: 'm' } } },
      { role: 'assistant', content: [{ type: 'text', text: 'calling' }, { type: 'tool-call', toolCallId: 'r-tool-0', toolName: 'lookup', input: { q: 1 } }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'r-tool-0', toolName: 'lookup', output: { type: 'text', value: 'ok' } }] },
      { role: 'user', content: [{ type: 'text', text: 'steer' }], providerOptions: { inboxKit: { id: 'r-inbox-0' } } },
    ]);
  });
});
