/**
 * Tool rounds of the native loop (live-inbox.md "Tools and boundaries") against an in-memory
 * ledger: the step with tool uses is committed alone, every result follows in one user turn in
 * tool-use order, then the drained Live Inbox input; invalid input, unknown tools, throwing and
 * slow tools become error results; bounded concurrency; interrupt mid-tool; the round limit; the
 * natural-end drain policy; parking on client tools and confirmations, and resuming a round.
 */
import { describe, expect, it } from 'vitest';
import {
  LiveInboxHost, runNativeAttempt, toolUseId, type ContentBlock, type Model, type ModelStepResult, type RunLedger, type RunLedgerParkOutcome,
  type Tool, type ToolResultBlock, type TranscriptBlock, type TranscriptMessage,
} from './index.js';
import { fakeModel } from '../testing/fake-model.js';

const SESSION = 'sess_t';
const RUN = 'run_t';
const text = (t: string): ContentBlock[] => [{ type: 'text', text: t }];
const start: TranscriptMessage[] = [{ id: 'sevt_1', role: 'user', content: text('go') }];
const brief = (b: TranscriptBlock): string => {
  if (b.type === 'text') return b.text;
  if (b.type === 'tool_use') return `use:${b.name}:${JSON.stringify(b.input)}`;
  if (b.type === 'tool_result') return `result${b.is_error ? '!' : ''}:${b.content.map((c) => (c.type === 'text' ? c.text : '<image>')).join('')}`;
  return '<image>';
};
const shape = (messages: readonly TranscriptMessage[]) => messages.map((m) => `${m.role}:${m.id}:${m.content.map(brief).join('|')}`);

/** A ledger that records every commit; `park` answers with `parkWith` (default: parked). */
function ledger(parkWith?: (pending: readonly string[]) => RunLedgerParkOutcome) {
  const commits: TranscriptMessage[][] = [];
  const extras: unknown[] = [];
  const parks: { pending: readonly string[]; results: TranscriptMessage }[] = [];
  const l: RunLedger = {
    async commit(input) {
      await Promise.resolve();
      commits.push(input.messages);
      extras.push({ tool_uses: input.tool_uses, recorded_results: input.recorded_results });
    },
    async park(input) {
      parks.push({ pending: input.pending, results: input.results });
      return parkWith ? parkWith(input.pending) : { parked: true };
    },
  };
  return { l, commits, extras, parks };
}

/** A model playing `script` in order (every step recorded in `steps`: transcript, offered tools); a step past it throws. */
const scripted = (script: Array<(t: readonly TranscriptMessage[]) => ModelStepResult>) => fakeModel({
  script: script.map((answer) => ({ transcript }) => answer(transcript)),
  then: () => {
    throw new Error('no more steps');
  },
});

const use = (name: string, input: Record<string, unknown>, id = 'toolu_x'): ModelStepResult => ({
  content: [{ type: 'text', text: `calling ${name}` }, { type: 'tool_use', id, name, input }], stop_reason: 'tool_use',
});
const done = (t: string): ModelStepResult => ({ content: text(t), stop_reason: 'end_turn' });
const schema = { type: 'object' as const, properties: { ms: { type: 'integer', minimum: 0, maximum: 100 } }, required: ['ms'], additionalProperties: false };

function sleepTool(name = 'sleep', over: Partial<Tool> = {}): Tool & { calls: number; signals: AbortSignal[] } {
  const t: Tool & { calls: number; signals: AbortSignal[] } = {
    name, description: 'Sleeps', input_schema: schema, calls: 0, signals: [],
    async execute(input, ctx) {
      t.calls++;
      t.signals.push(ctx.signal);
      await new Promise((r) => setTimeout(r, Number(input.ms)));
      return `slept ${String(input.ms)} ms`;
    },
    ...over,
  };
  return t;
}

const run = (opts: Partial<Parameters<typeof runNativeAttempt>[0]> & { model: Model; ledger: RunLedger; host: LiveInboxHost }) =>
  runNativeAttempt({ session_id: SESSION, run_id: RUN, transcript: start, ...opts });

describe('tool rounds of the native loop', () => {
  it('commits the step alone, then ONE user turn: the results, then the Live Inbox input drained at that boundary', async () => {
    const host = new LiveInboxHost();
    const tool = sleepTool('sleep', {
      async execute() {
        host.liveInbox(SESSION)!.queue(text('stop searching, use this file'));
        return 'slept';
      },
    });
    const { l, commits, extras } = ledger();
    const model = scripted([() => use('sleep', { ms: 1 }), () => done('ok')]);
    const result = await run({ host, ledger: l, model, tools: [tool] });
    expect(result.status).toBe('completed');
    const id = toolUseId(RUN, 0);
    expect(commits.map(shape)).toEqual([
      [`assistant:${RUN}-step-0:calling sleep|use:sleep:{"ms":1}`],
      [`user:${RUN}-step-0-results:result:slept`, `user:${RUN}-inbox-0:stop searching, use this file`],
      [`assistant:${RUN}-step-1:ok`],
    ]);
    expect(extras[0]).toMatchObject({ tool_uses: { [id]: { kind: 'host', permission: 'allow' } } });
    // The next model request: the tool use, directly its result, then the steering, in one user turn.
    expect(shape(model.steps[1]!.transcript).slice(1)).toEqual([
      `assistant:${RUN}-step-0:calling sleep|use:sleep:{"ms":1}`,
      `user:${RUN}-step-0-results:result:slept`,
      `user:${RUN}-inbox-0:stop searching, use this file`,
    ]);
    expect(model.steps[0]!.tools).toEqual(['sleep']);
  });

  it('invalid input and unknown tools are error results, never executed; a throwing tool is is_error with its message', async () => {
    const host = new LiveInboxHost();
    const tool = sleepTool();
    const boom: Tool = { name: 'boom', description: 'Throws', input_schema: { type: 'object' }, execute: () => { throw new Error('disk on fire'); } };
    const { l, commits, extras } = ledger();
    const model = scripted([
      () => ({ content: [
        { type: 'tool_use', id: 'a', name: 'sleep', input: { ms: 'soon' } },
        { type: 'tool_use', id: 'b', name: 'nope', input: {} },
        { type: 'tool_use', id: 'c', name: 'boom', input: {} },
      ], stop_reason: 'tool_use' }),
      () => done('fine'),
    ]);
    expect((await run({ host, ledger: l, model, tools: [tool, boom] })).status).toBe('completed');
    expect(tool.calls).toBe(0);
    const results = commits[1]![0]!.content as ToolResultBlock[];
    expect(results.map((r) => [r.tool_use_id, r.is_error])).toEqual([[toolUseId(RUN, 0), true], [toolUseId(RUN, 1), true], [toolUseId(RUN, 2), true]]);
    expect(brief(results[0]!)).toMatch(/The input of sleep is not valid: ms/);
    expect(brief(results[1]!)).toMatch(/no tool named "nope"; the tools are: sleep, boom/);
    expect(brief(results[2]!)).toBe('result!:disk on fire');
    expect(extras[0]).toMatchObject({ tool_uses: { [toolUseId(RUN, 0)]: { kind: 'refused' }, [toolUseId(RUN, 1)]: { kind: 'refused' }, [toolUseId(RUN, 2)]: { kind: 'host' } } });
  });

  it('a tool past its timeout is an error result and its signal is aborted', async () => {
    const host = new LiveInboxHost();
    const tool = sleepTool('sleep', { timeoutMs: 20 });
    const { l, commits } = ledger();
    const model = scripted([() => use('sleep', { ms: 100 }), () => done('fine')]);
    expect((await run({ host, ledger: l, model, tools: [tool] })).status).toBe('completed');
    expect(brief(commits[1]![0]!.content[0]!)).toBe('result!:The tool sleep timed out after 20 ms.');
    expect(tool.signals[0]!.aborted).toBe(true);
  });

  it('parallel tool uses run at most toolConcurrency at once; results are committed in tool-use order', async () => {
    const host = new LiveInboxHost();
    let inFlight = 0;
    let most = 0;
    const tool = sleepTool('sleep', {
      async execute(input) {
        inFlight++;
        most = Math.max(most, inFlight);
        await new Promise((r) => setTimeout(r, Number(input.ms)));
        inFlight--;
        return `slept ${String(input.ms)}`;
      },
    });
    const { l, commits } = ledger();
    const model = scripted([
      () => ({ content: [40, 5, 30, 1, 20].map((ms, i) => ({ type: 'tool_use' as const, id: `t${i}`, name: 'sleep', input: { ms } })), stop_reason: 'tool_use' }),
      () => done('fine'),
    ]);
    expect((await run({ host, ledger: l, model, tools: [tool], toolConcurrency: 2 })).status).toBe('completed');
    expect(most).toBe(2);
    expect(commits[1]![0]!.content.map(brief)).toEqual(['result:slept 40', 'result:slept 5', 'result:slept 30', 'result:slept 1', 'result:slept 20']);
  });

  it('an interrupt mid-tool aborts the tool and cancels the attempt without committing the round', async () => {
    const host = new LiveInboxHost();
    const controller = new AbortController();
    const tool = sleepTool('sleep', {
      execute: (_input, ctx) => new Promise((_, reject) => {
        tool.signals.push(ctx.signal);
        setTimeout(() => controller.abort(new Error('interrupted')), 5);
        ctx.signal.addEventListener('abort', () => reject(new Error('aborted')));
      }),
    });
    const { l, commits } = ledger();
    const model = scripted([() => use('sleep', { ms: 1 })]);
    const result = await run({ host, ledger: l, model, tools: [tool], signal: controller.signal });
    expect(result.status).toBe('cancelled');
    expect(tool.signals[0]!.aborted).toBe(true);
    expect(commits.map(shape)).toEqual([[`assistant:${RUN}-step-0:calling sleep|use:sleep:{"ms":1}`]]);
  });

  it('the round limit fails the Run with ToolUseLimitError after the last round committed its results', async () => {
    const host = new LiveInboxHost();
    const { l, commits } = ledger();
    const model = scripted([() => use('sleep', { ms: 1 }), () => use('sleep', { ms: 1 }), () => done('never')]);
    const result = await run({ host, ledger: l, model, tools: [sleepTool()], maxToolRounds: 2 });
    expect(result.status).toBe('failed');
    expect(result.error).toMatchObject({ name: 'ToolUseLimitError', type: 'tool_use_limit_reached_error', rounds: 2 });
    expect(commits).toHaveLength(4);
    expect(model.steps).toHaveLength(2);
  });

  it('drain: natural_end keeps steering queued through the tool rounds and drains it after a step without tool uses', async () => {
    const host = new LiveInboxHost();
    const tool = sleepTool('sleep', {
      async execute() {
        host.liveInbox(SESSION)!.queue(text('steer'));
        return 'ok';
      },
    });
    const { l, commits } = ledger();
    const model = scripted([() => use('sleep', { ms: 1 }), () => done('answer'), () => done('after steering')]);
    expect((await run({ host, ledger: l, model, tools: [tool], drain: 'natural_end' })).status).toBe('completed');
    expect(commits.map(shape)).toEqual([
      [`assistant:${RUN}-step-0:calling sleep|use:sleep:{"ms":1}`],
      [`user:${RUN}-step-0-results:result:ok`],
      [`assistant:${RUN}-step-1:answer`, `user:${RUN}-inbox-0:steer`],
      [`assistant:${RUN}-step-2:after steering`],
    ]);
  });

  it('a client tool and an always_ask tool park the Run: ready results go with the park, pending ids in tool-use order', async () => {
    const host = new LiveInboxHost();
    const lookup: Tool = { name: 'lookup', description: 'client side', input_schema: { type: 'object' } };
    const ask = sleepTool('ask', { permission: 'always_ask' });
    const free = sleepTool('free');
    const { l, commits, parks, extras } = ledger();
    const model = scripted([() => ({ content: [
      { type: 'tool_use', id: 'x', name: 'lookup', input: { q: 1 } },
      { type: 'tool_use', id: 'y', name: 'ask', input: { ms: 1 } },
      { type: 'tool_use', id: 'z', name: 'free', input: { ms: 1 } },
    ], stop_reason: 'tool_use' })]);
    const result = await run({ host, ledger: l, model, tools: [lookup, ask, free] });
    expect(result.status).toBe('awaiting');
    expect(ask.calls).toBe(0);
    expect(free.calls).toBe(1);
    expect(parks).toEqual([{ pending: [toolUseId(RUN, 0), toolUseId(RUN, 1)], results: { id: `${RUN}-step-0-results`, role: 'user', content: [expect.objectContaining({ tool_use_id: toolUseId(RUN, 2), is_error: false })] } }]);
    expect(commits).toHaveLength(1);
    expect(extras[0]).toMatchObject({ tool_uses: { [toolUseId(RUN, 0)]: { kind: 'custom' }, [toolUseId(RUN, 1)]: { kind: 'host', permission: 'ask' } } });
    expect(host.liveInbox(SESSION)).toBeUndefined();
  });

  it('answers already in the ledger when it would park: the loop goes on with them (allow runs, the custom result is recorded)', async () => {
    const host = new LiveInboxHost();
    const lookup: Tool = { name: 'lookup', description: 'client side', input_schema: { type: 'object' } };
    const ask = sleepTool('ask', { permission: 'always_ask' });
    const { l, commits, extras } = ledger((pending) => ({
      parked: false,
      resolutions: {
        [pending[0]!]: { type: 'custom_result', content: text('42'), is_error: false },
        [pending[1]!]: { type: 'confirmation', result: 'allow', deny_message: null },
      },
    }));
    const model = scripted([() => ({ content: [
      { type: 'tool_use', id: 'x', name: 'lookup', input: {} },
      { type: 'tool_use', id: 'y', name: 'ask', input: { ms: 1 } },
    ], stop_reason: 'tool_use' }), () => done('done')]);
    expect((await run({ host, ledger: l, model, tools: [lookup, ask] })).status).toBe('completed');
    expect(ask.calls).toBe(1);
    expect(commits[1]![0]!.content.map(brief)).toEqual(['result:42', 'result:slept 1 ms']);
    expect(extras[1]).toMatchObject({ recorded_results: [toolUseId(RUN, 0)] });
  });

  it('resumes a parked round: a denial becomes an error result with deny_message, an allow runs, committed results are not recorded again', async () => {
    const host = new LiveInboxHost();
    const ask = sleepTool('ask', { permission: 'always_ask' });
    const step: TranscriptMessage = {
      id: `${RUN}-step-0`, role: 'assistant', content: [
        { type: 'tool_use', id: toolUseId(RUN, 0), name: 'ask', input: { ms: 1 } },
        { type: 'tool_use', id: toolUseId(RUN, 1), name: 'ask', input: { ms: 2 } },
        { type: 'tool_use', id: toolUseId(RUN, 2), name: 'lookup', input: {} },
      ],
    };
    // Queued while the Run was running, before it parked: carried over to the attempt that resumes it.
    const parked = host.openAttempt({ session_id: SESSION, run_id: RUN, executor: 'native' });
    parked.inbox!.queue(text('queued before it parked'));
    host.closeAttempt(parked);
    const { l, commits, extras } = ledger();
    const model = scripted([() => done('resumed')]);
    const result = await run({
      host, ledger: l, model, tools: [ask, { name: 'lookup', description: 'client', input_schema: { type: 'object' } }], transcript: [...start, step],
      resume: {
        step_id: step.id,
        tool_uses: [
          { block: step.content[0] as never, disposition: { kind: 'host', permission: 'ask' }, resolution: { type: 'confirmation', result: 'deny', deny_message: 'not now' } },
          { block: step.content[1] as never, disposition: { kind: 'host', permission: 'ask' }, resolution: { type: 'confirmation', result: 'allow', deny_message: null } },
          {
            block: step.content[2] as never, disposition: { kind: 'custom' },
            result: { type: 'tool_result', tool_use_id: toolUseId(RUN, 2), content: text('found'), is_error: false },
          },
        ],
      },
    });
    expect(result.status).toBe('completed');
    expect(ask.calls).toBe(1);
    expect(shape(commits[0]!)).toEqual([`user:${RUN}-step-0-results:result!:not now|result:slept 2 ms|result:found`, `user:${RUN}-inbox-0:queued before it parked`]);
    expect(extras[0]).toMatchObject({ recorded_results: [toolUseId(RUN, 2)] });
    // Counters continue from the transcript: the next step is step 1.
    expect(shape(commits[1]!)).toEqual([`assistant:${RUN}-step-1:resumed`]);
  });

  it('a text-only model of the earlier port ({ content, continue }) still runs', async () => {
    const host = new LiveInboxHost();
    const { l, commits } = ledger();
    let n = 0;
    const model: Model = { step: async () => ({ content: text(`step ${n}`), continue: n++ < 1 }) };
    expect((await run({ host, ledger: l, model })).status).toBe('completed');
    expect(commits.map(shape)).toEqual([[`assistant:${RUN}-step-0:step 0`], [`assistant:${RUN}-step-1:step 1`]]);
  });

  it('a bad tool definition fails the attempt before any model call', async () => {
    const host = new LiveInboxHost();
    const { l } = ledger();
    const model = scripted([]);
    const result = await run({ host, ledger: l, model, tools: [{ name: 'bad name', description: '', input_schema: { type: 'object' } }] });
    expect(result).toMatchObject({ status: 'failed' });
    expect(String((result.error as Error).message)).toMatch(/name must be 1–128 characters/);
    expect(model.steps).toHaveLength(0);
  });
});
