/** The scripted fake model of @inbox-kit/core/testing: scripts, function answers, held steps, release and abort. */
import { describe, expect, it } from 'vitest';
import type { ModelStepContext, TranscriptMessage } from '../live-inbox/agent-loop.js';
import { endTurn, fakeModel, toolUse } from './fake-model.js';

const user = (text: string): TranscriptMessage => ({ role: 'user', content: [{ type: 'text', text }] }) as TranscriptMessage;
const context = (tools: string[]): ModelStepContext => ({
  tools: tools.map((name) => ({ name, description: name, input_schema: { type: 'object' } })), session_id: 's', run_id: 'r',
});
const live = () => new AbortController().signal;

describe('fakeModel', () => {
  it('plays its script, then its `then` answer (default: end the turn with "done"), and records every step', async () => {
    const model = fakeModel([toolUse('lookup', { q: 'x' }, { id: 'toolu_1', text: 'Looking.' }), (step) => endTurn(`saw ${step.transcript.length}`)]);
    const transcript = [user('hi')];
    expect(await model.step(transcript, live(), context(['lookup']))).toEqual({
      content: [{ type: 'text', text: 'Looking.' }, { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'x' } }], stop_reason: 'tool_use',
    });
    transcript.push(user('more'));
    expect(await model.step(transcript, live())).toEqual(endTurn('saw 2'));
    expect(await model.step(transcript, live())).toEqual(endTurn('done'));
    expect(model.steps.map((s) => [s.index, s.transcript.length, s.tools])).toEqual([[0, 1, ['lookup']], [1, 2, []], [2, 2, []]]);
  });

  it('holds steps until the test replies to each through next(), in order', async () => {
    const model = fakeModel({ then: 'hold' });
    let waited = false;
    void model.waiting().then(() => (waited = true));
    const first = model.step([user('a')], live());
    const second = model.step([user('b')], live());
    await model.waiting();
    expect(waited).toBe(true);
    const a = await model.next();
    const b = await model.next();
    expect([a.index, b.index]).toEqual([0, 1]);
    b.reply('second', true);
    a.reply(endTurn('first'));
    expect(await first).toEqual(endTurn('first'));
    expect(await second).toEqual({ content: [{ type: 'text', text: 'second' }], continue: true });
  });

  it('release() answers every held step and every later one at once', async () => {
    const model = fakeModel({ then: 'hold', released: { content: [{ type: 'text', text: 'done' }], continue: false } });
    const held = model.step([user('a')], live());
    model.release();
    expect(await held).toEqual({ content: [{ type: 'text', text: 'done' }], continue: false });
    expect(await model.step([user('b')], live())).toEqual({ content: [{ type: 'text', text: 'done' }], continue: false });
  });

  it('answerHeld() answers the steps held now; a later step holds again', async () => {
    const model = fakeModel({ then: 'hold' });
    const first = model.step([user('a')], live());
    model.answerHeld(endTurn('one'));
    expect(await first).toEqual(endTurn('one'));
    const second = model.step([user('b')], live());
    expect((await model.next()).index).toBe(1);
    model.answerHeld();
    expect(await second).toEqual(endTurn('done'));
  });

  it('a held step rejects with the abort reason when its Run is aborted, and is not handed out by next()', async () => {
    const model = fakeModel({ then: 'hold' });
    const abort = new AbortController();
    const step = model.step([user('a')], abort.signal);
    abort.abort(new Error('cancelled'));
    await expect(step).rejects.toThrow('cancelled');
    const aborted = new AbortController();
    aborted.abort(new Error('already'));
    await expect(model.step([user('b')], aborted.signal)).rejects.toThrow('already');
    const third = model.step([user('c')], live());
    expect((await model.next()).index).toBe(2);
    model.release();
    await third;
  });
});
