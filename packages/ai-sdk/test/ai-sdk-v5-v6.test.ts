/**
 * @inbox-kit/ai-sdk on `ai` 5 and 6 (test-only aliases `ai-v5`, `ai-v6`) with each one's mock
 * language model and a real tool, over a real server: no steering hook there, so `prepareStep`
 * re-inserts the drained message right after the tool results of its step on every later step,
 * and `inbox.run` re-invokes the call when a message was queued during the final step. The step
 * with tool calls is committed with its results (no hook runs between the model's response and
 * the tools on 5/6).
 */
import * as ai5 from 'ai-v5';
import { MockLanguageModelV2 } from 'ai-v5/test';
import * as ai6 from 'ai-v6';
import { MockLanguageModelV3 } from 'ai-v6/test';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { aiSdkLiveInbox } from '../src/index.js';
import { gate, steerTwoMessages, textContent as text, type RuntimeWorld as World } from '@inbox-kit/core/testing';
import { createServer } from '@inbox-kit/http-fastify/server';
import { startKyselyRuntimeWorld, type KyselyRuntimeWorldOptions } from '@inbox-kit/storage-kysely/testing';

/** The Session Runtime world of `@inbox-kit/storage-kysely/testing` on a SQLite file, served by the Fastify preset. */
const world = (options: Pick<KyselyRuntimeWorldOptions, 'executor'> = {}) => startKyselyRuntimeWorld({ ...options, server: (services) => createServer({ services, logger: false }) });

const worlds: World[] = [];
afterEach(async () => {
  await Promise.all(worlds.splice(0).map((w) => w.close()));
});

const usageV3 = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
const usageV2 = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };
const VERSIONS = [
  {
    name: 'ai 5', sdk: ai5 as any, mock: (doGenerate: any) => new MockLanguageModelV2({ doGenerate }),
    say: (t: string) => ({ content: [{ type: 'text', text: t }], finishReason: 'stop', usage: usageV2, warnings: [] }),
    callTool: (id: string, q: string) => ({ content: [{ type: 'tool-call', toolCallId: id, toolName: 'lookup', input: JSON.stringify({ q }) }], finishReason: 'tool-calls', usage: usageV2, warnings: [] }),
  },
  {
    name: 'ai 6', sdk: ai6 as any, mock: (doGenerate: any) => new MockLanguageModelV3({ doGenerate }),
    say: (t: string) => ({ content: [{ type: 'text', text: t }], finishReason: { unified: 'stop', raw: 'stop' }, usage: usageV3, warnings: [] }),
    callTool: (id: string, q: string) => ({
      content: [{ type: 'tool-call', toolCallId: id, toolName: 'lookup', input: JSON.stringify({ q }) }], finishReason: { unified: 'tool-calls', raw: 'tool_use' }, usage: usageV3, warnings: [],
    }),
  },
] as const;

/** The user-visible text of a prompt message of the mock's call. */
const line = (m: { role: string; content: unknown }) => `${m.role}:${Array.isArray(m.content)
  ? m.content.map((p: any) => (p.type === 'text' ? p.text : p.type === 'tool-result' ? `[result ${p.output?.value ?? ''}]` : p.type === 'tool-call' ? `[call ${p.toolName}]` : '')).join('')
  : String(m.content)}`;

describe.each(VERSIONS)('@inbox-kit/ai-sdk on $name (prepareStep re-insertion, re-invoke)', ({ sdk, mock, say, callTool }) => {
  it('steering edited during the first tool round follows its results on every later step; a message queued in the final step re-invokes the call', async () => {
    const w = await world();
    worlds.push(w);
    const inTool = gate();
    const toolDone = gate();
    const lastStep = gate();
    const lastQueued = gate();
    const prompts: string[][] = [];
    const answers: any[] = [callTool('c1', 'x'), callTool('c2', 'z'), 'final', say('after steering')];
    const model = mock(async (options: { prompt: any[] }) => {
      prompts.push(options.prompt.map(line));
      const next = answers.shift();
      if (next !== 'final') return next;
      lastStep.open();
      await lastQueued.wait;
      return say('first answer');
    });
    let uses = 0;
    const lookup = sdk.tool({
      description: 'Looks something up', inputSchema: z.object({ q: z.string() }),
      execute: async ({ q }: { q: string }) => {
        if (uses++ === 0) {
          inTool.open();
          await toolDone.wait;
        }
        return `found ${q}`;
      },
    });
    const run = await w.runtime.startRun(w.owner, w.session, { content: text('find x') });
    // ai 5/6 have no steering hook (the installed `ai` 7 would give one: forced off, as on 5/6).
    const inbox = aiSdkLiveInbox(run, { steering: false });
    const steering = (async () => {
      await inTool.wait;
      const replaced = await steerTwoMessages(w);
      toolDone.open();
      await lastStep.wait;
      expect((await w.inbox('POST', '', { content: text('one more thing') })).status).toBe(200);
      lastQueued.open();
      return replaced;
    })();
    let calls = 0;
    await inbox.run((options) => (calls++, sdk.generateText({ model, tools: { lookup }, stopWhen: sdk.stepCountIs(10), ...options })));
    const replaced = await steering;
    await run.finish({ status: 'completed' });

    expect(calls).toBe(2);
    expect(prompts).toHaveLength(4);
    expect(prompts[1]).toEqual(['user:find x', 'assistant:[call lookup]', 'tool:[result found x]', `user:${replaced}`]);
    // Re-inserted on the later step of the same call, still right after its tool results.
    expect(prompts[2]).toEqual(['user:find x', 'assistant:[call lookup]', 'tool:[result found x]', `user:${replaced}`, 'assistant:[call lookup]', 'tool:[result found z]']);
    // The re-invoked call: the whole history, the late message last.
    expect(prompts[3]!.slice(-2)).toEqual(['assistant:first answer', 'user:one more thing']);
    expect(prompts[3]!.slice(0, 4)).toEqual(prompts[1]);

    const history = await w.history();
    const r = run.run_id;
    expect(history.filter((e) => e.type === 'user.message').map((e) => [e.message_id, e.content[0].text])).toEqual([
      [null, 'find x'], [`${r}-inbox-0`, replaced], [`${r}-inbox-1`, 'one more thing'],
    ]);
    expect(history.map((e) => e.type)).toEqual([
      'user.message', 'session.status_running', 'agent.tool_use', 'agent.tool_result', 'user.message', 'agent.tool_use', 'agent.tool_result',
      'agent.message', 'user.message', 'agent.message', 'session.status_idle',
    ]);
    expect(history.filter((e) => e.type === 'agent.tool_use').map((e) => e.id)).toEqual([`${r}-tool-0`, `${r}-tool-1`]);
  });
});
