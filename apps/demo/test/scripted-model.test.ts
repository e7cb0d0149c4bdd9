/** The demo's scripted model: deterministic output, steering acknowledgements, abort. */
import type { TranscriptMessage } from '@inbox-kit/core';
import { describe, expect, it } from 'vitest';
import { createScriptedModel } from '../src/model.js';

const user = (id: string, t: string): TranscriptMessage => ({ id, role: 'user', content: [{ type: 'text', text: t }] });
const agent = (id: string, t: string): TranscriptMessage => ({ id, role: 'assistant', content: [{ type: 'text', text: t }] });
const textOf = (r: { content: { type: string; text?: string }[] }) => r.content.map((b) => b.text ?? '').join('');
const live = () => new AbortController().signal;

describe('createScriptedModel', () => {
  it('works N steps per durable user message and acknowledges each steering message once', async () => {
    const model = createScriptedModel({ stepMs: 0, steps: 3 });
    const t: TranscriptMessage[] = [user('sevt_1', 'plan a trip')];
    const s1 = await model.step(t, live());
    expect(s1).toEqual({ content: [{ type: 'text', text: 'Step 1 of 3 on "plan a trip".' }], continue: true });
    t.push(agent('run_a-step-0', textOf(s1)), user('run_a-inbox-0', 'prefer trains'), user('run_a-inbox-1', 'cheap'));
    const s2 = await model.step(t, live());
    expect(textOf(s2)).toBe('Step 2 of 3 on "plan a trip". Steering received: "prefer trains". Steering received: "cheap".');
    t.push(agent('run_a-step-1', textOf(s2)));
    const s3 = await model.step(t, live());
    expect(s3).toEqual({ content: [{ type: 'text', text: 'Step 3 of 3 on "plan a trip".' }], continue: false });
    t.push(agent('run_a-step-2', textOf(s3)), user('run_a-inbox-2', 'one more'));
    const extra = await model.step(t, live());
    expect(extra.continue).toBe(false);
    expect(textOf(extra)).toContain('Steering received: "one more"');
    // Deterministic: the same transcript gives the same answer.
    expect(await model.step(t, live())).toEqual(extra);
  });

  it('counts steps from the last durable user message; carried-over steering before the first step is acknowledged', async () => {
    const model = createScriptedModel({ stepMs: 0, steps: 2 });
    const t = [user('sevt_1', 'old'), agent('run_a-step-0', 'x'), user('sevt_2', 'new task'), user('run_b-inbox-0', 'carried')];
    expect(textOf(await model.step(t, live()))).toBe('Step 1 of 2 on "new task". Steering received: "carried".');
  });

  it('rejects with the abort reason as soon as the signal aborts', async () => {
    const model = createScriptedModel({ stepMs: 60_000, steps: 3 });
    const controller = new AbortController();
    const step = model.step([user('sevt_1', 'x')], controller.signal);
    const reason = new Error('stop');
    controller.abort(reason);
    await expect(step).rejects.toBe(reason);
  });
});

describe('createScriptedModel with the wait tool', () => {
  const tools = [{ name: 'wait', description: 'Waits', input_schema: { type: 'object' as const } }];
  const ctx = { tools, session_id: 's', run_id: 'run_a' };

  it('calls wait for "wait <n>" when offered the tool, then says what it answered and acknowledges steering queued meanwhile', async () => {
    const model = createScriptedModel({ stepMs: 0, steps: 2 });
    const t: TranscriptMessage[] = [user('sevt_1', 'wait 3000 then answer')];
    const call = await model.step(t, live(), ctx);
    expect(call).toEqual({
      content: [{ type: 'text', text: 'Calling wait(3000) first.' }, { type: 'tool_use', id: 'toolu_scripted_wait', name: 'wait', input: { ms: 3000 } }],
      stop_reason: 'tool_use',
    });
    t.push(
      { id: 'run_a-step-0', role: 'assistant', content: [{ type: 'text', text: 'Calling wait(3000) first.' }, { type: 'tool_use', id: 'run_a-tool-0', name: 'wait', input: { ms: 3000 } }] },
      { id: 'run_a-step-0-results', role: 'user', content: [{ type: 'tool_result', tool_use_id: 'run_a-tool-0', content: [{ type: 'text', text: 'waited 3000 ms' }], is_error: false }] },
      user('run_a-inbox-0', 'use bullet points'),
    );
    const after = await model.step(t, live(), ctx);
    expect(textOf(after)).toBe('Step 1 of 2 on "wait 3000 then answer". wait said: "waited 3000 ms". Steering received: "use bullet points".');
    expect(after.continue).toBe(true);
  });

  it('does not call a tool it is not offered, and reports an error result as a failure', async () => {
    const model = createScriptedModel({ stepMs: 0, steps: 1 });
    expect(textOf(await model.step([user('sevt_1', 'wait 5 please')], live()))).toBe('Step 1 of 1 on "wait 5 please".');
    const t: TranscriptMessage[] = [
      user('sevt_1', 'wait 20000'),
      { id: 'run_a-step-0', role: 'assistant', content: [{ type: 'tool_use', id: 'run_a-tool-0', name: 'wait', input: { ms: 20000 } }] },
      { id: 'run_a-step-0-results', role: 'user', content: [{ type: 'tool_result', tool_use_id: 'run_a-tool-0', content: [{ type: 'text', text: 'The input of wait is not valid' }], is_error: true }] },
    ];
    expect(textOf(await model.step(t, live(), ctx))).toBe('Step 1 of 1 on "wait 20000". wait failed: "The input of wait is not valid".');
  });
});
