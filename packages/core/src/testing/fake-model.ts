/**
 * A scripted fake {@link Model} for tests of the agent loop and the Session Runtime: each step is
 * answered by the next entry of a script — a fixed result, a function of the step, or `'hold'`
 * (the step waits until the test answers it through `next()` or `release()`). Every step is
 * recorded (a copy of its transcript, the names of the tools it was offered, its context), and a
 * held step rejects with the abort reason when its Run is aborted, as a real provider call does.
 * Spec: live-inbox.md "Drain, commit, carry-over" (the model is called at each boundary).
 */
import type { Model, ModelStepContext, ModelStepResult, TranscriptMessage } from '../live-inbox/agent-loop.js';
import type { TranscriptBlock } from '../live-inbox/tools.js';

/** One step the model was asked to take. */
export interface FakeModelStep {
  /** 0 for the Run's (or the model's) first step, then 1, 2, … across every step this model took. */
  index: number;
  /** A copy of the transcript the step was given. */
  transcript: TranscriptMessage[];
  /** The names of the tools the step was offered (empty when none). */
  tools: string[];
  context: ModelStepContext | undefined;
  signal: AbortSignal;
}

/** How a step is answered: a fixed result, a function of the step, or `'hold'` until the test answers it. */
export type FakeModelAnswer = ModelStepResult | ((step: FakeModelStep) => ModelStepResult | Promise<ModelStepResult>) | 'hold';

/** A held step: the test answers it with `reply` (a result, or a text and whether the model wants another step) or `fail`. */
export interface HeldModelStep extends FakeModelStep {
  reply(result: ModelStepResult | string, more?: boolean): void;
  fail(error: unknown): void;
}

/** Options of {@link fakeModel}. */
export interface FakeModelOptions {
  /** The answers of the first steps, in order. */
  script?: FakeModelAnswer[];
  /** The answer of every step after the script (default: {@link endTurn}`('done')`). */
  then?: FakeModelAnswer;
  /** What `release()` answers held steps with (default: {@link endTurn}`('done')`). */
  released?: ModelStepResult;
}

/** A scripted fake model: a {@link Model} plus what the test reads and the controls of held steps. */
export interface FakeModel extends Model {
  /** Every step taken, in order. */
  readonly steps: FakeModelStep[];
  /** The next held step (resolves once one is held; each held step is handed out once). */
  next(): Promise<HeldModelStep>;
  /** Resolves once a step has been held (at once when one already was). */
  waiting(): Promise<void>;
  /** Answers every held step with the `released` result, and from now on answers `'hold'` at once. */
  release(): void;
  /** Answers the steps held now with `result` (default: the `released` result); later `'hold'` steps hold again. */
  answerHeld(result?: ModelStepResult): void;
}

/** A final text answer: `{ content: [text], stop_reason: 'end_turn' }`. */
export const endTurn = (text: string): ModelStepResult => ({ content: textBlocks(text), stop_reason: 'end_turn' });

/** A step that calls one tool: `{ content: [text?, tool_use], stop_reason: 'tool_use' }`. */
export const toolUse = (name: string, input: Record<string, unknown>, options: { id?: string; text?: string } = {}): ModelStepResult => ({
  content: [...(options.text ? textBlocks(options.text) : []), { type: 'tool_use', id: options.id ?? `toolu_${name}`, name, input }],
  stop_reason: 'tool_use',
});

const textBlocks = (text: string): TranscriptBlock[] => [{ type: 'text', text }];

/**
 * A {@link FakeModel}. `fakeModel()` ends every Run at once with "done"; `fakeModel({ then: 'hold' })`
 * holds every step (a Run stays in its first step, its Live Inbox active, until the test answers it
 * or calls `release()`); `fakeModel({ script: [toolUse('lookup', { q: 'x' }), endTurn('found')] })`
 * plays a script; a function answer reads the step (its transcript, tools) to decide.
 */
export function fakeModel(options: FakeModelOptions | FakeModelAnswer[] = {}): FakeModel {
  const { script = [], then = endTurn('done'), released: releasedWith = endTurn('done') } = Array.isArray(options) ? { script: options } : options;
  const steps: FakeModelStep[] = [];
  const held: HeldModelStep[] = [];
  const pending = new Set<HeldModelStep>();
  let takers: Array<(step: HeldModelStep) => void> = [];
  let watchers: Array<() => void> = [];
  let everHeld = false;
  let released = false;

  const settle = (entry: HeldModelStep) => {
    pending.delete(entry);
    const queued = held.indexOf(entry);
    if (queued >= 0) held.splice(queued, 1);
  };
  const hold = (step: FakeModelStep) => new Promise<ModelStepResult>((resolve, reject) => {
    if (step.signal.aborted) return reject(step.signal.reason);
    const entry: HeldModelStep = {
      ...step,
      reply: (result, more = false) => {
        settle(entry);
        resolve(typeof result === 'string' ? { content: textBlocks(result), continue: more } : result);
      },
      fail: (error) => {
        settle(entry);
        reject(error);
      },
    };
    step.signal.addEventListener('abort', () => entry.fail(step.signal.reason), { once: true });
    pending.add(entry);
    everHeld = true;
    for (const w of watchers.splice(0)) w();
    const taker = takers.shift();
    if (taker) taker(entry);
    else held.push(entry);
  });

  return {
    steps,
    async step(transcript, signal, context) {
      const step: FakeModelStep = { index: steps.length, transcript: [...transcript], tools: (context?.tools ?? []).map((t) => t.name), context, signal };
      steps.push(step);
      const answer = script[step.index] ?? then;
      if (answer === 'hold') return released ? releasedWith : hold(step);
      return typeof answer === 'function' ? answer(step) : answer;
    },
    next() {
      const ready = held.shift();
      return ready ? Promise.resolve(ready) : new Promise((resolve) => takers.push(resolve));
    },
    waiting() {
      return everHeld ? Promise.resolve() : new Promise((resolve) => watchers.push(resolve));
    },
    release() {
      released = true;
      for (const entry of [...pending]) entry.reply(releasedWith);
      takers = [];
    },
    answerHeld(result = releasedWith) {
      for (const entry of [...pending]) entry.reply(result);
    },
  };
}
