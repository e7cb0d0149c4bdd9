/**
 * The demo's models: the Messages API adapter when DEMO_MODEL=anthropic ({@link createDemoModel}),
 * else the scripted model: deterministic, no network. It works `steps` steps of `stepMs`
 * milliseconds on every durable user message and acknowledges, in its output, each Live Inbox
 * (steering) message it received since its previous step — so a person or a test can watch
 * steering happen. A real model provider implements the same `Model` port.
 */
import type { Model, ModelStepResult, TranscriptBlock, TranscriptMessage } from '@inbox-kit/core';
import type { AnthropicModelOptions } from '@inbox-kit/model-anthropic';
import type { DemoConfig } from './config.js';

/** What the demo's Messages API model is told about its situation. */
export const DEMO_SYSTEM_PROMPT =
  'You are the agent of the inbox-kit demo. Work on the user\'s task and answer briefly, in a few sentences. ' +
  'User messages that arrive after your previous answer are steering from the user while you work: follow them, and say what you changed. ' +
  'When the user asks you to wait, call the wait tool with the number of milliseconds asked for.';

/**
 * The model of config `model` (DEMO_MODEL): the scripted one (DEMO_MODEL_STEP_MS, DEMO_MODEL_STEPS),
 * or the Messages API adapter with the demo's system prompt, 512 output tokens a step and the
 * adapter's default retries (2, honouring `retry-after`), each retry told to `hooks.onRetry`.
 * The adapter (and the Anthropic SDK) is loaded only then: the scripted demo does not carry it.
 */
export async function createDemoModel(config: DemoConfig, hooks: { onRetry?: AnthropicModelOptions['onRetry'] } = {}): Promise<Model> {
  if (config.model.kind === 'anthropic') {
    const { apiKey, baseURL, model } = config.model;
    const { createAnthropicModel } = await import('@inbox-kit/model-anthropic');
    return createAnthropicModel({
      apiKey, model, maxTokens: 512, system: DEMO_SYSTEM_PROMPT, ...(baseURL ? { baseURL } : {}), ...(hooks.onRetry ? { onRetry: hooks.onRetry } : {}),
    });
  }
  return createScriptedModel({ stepMs: config.modelStepMs, steps: config.modelSteps });
}

/** One line naming the model in use (never the API key), e.g. `anthropic claude-haiku-4-5`. */
export function describeModel(config: DemoConfig): string {
  if (config.model.kind === 'anthropic') return `anthropic ${config.model.model}${config.model.baseURL ? ` at ${config.model.baseURL}` : ''}`;
  return `scripted (${config.modelSteps} steps of ${config.modelStepMs} ms per message)`;
}

/** Options of {@link createScriptedModel}. */
export interface ScriptedModelOptions {
  /** Time one step takes, in ms (DEMO_MODEL_STEP_MS, default 1500). 0 answers on the next timer tick. */
  stepMs: number;
  /** Steps per durable user message (DEMO_MODEL_STEPS, default 3); at least 1. */
  steps: number;
}

/** Drained Live Inbox input has a Run-scoped id `{run_id}-inbox-{n}` (live-inbox.md "Drain, commit, carry-over"). */
const isSteering = (m: TranscriptMessage): boolean => m.role === 'user' && /-inbox-\d+$/.test(m.id);
/** A tool round's results: a user message `{step}-results` of `tool_result` blocks. */
const isResults = (m: TranscriptMessage): boolean => m.role === 'user' && m.content.some((b) => b.type === 'tool_result');
/** An assistant step that called a tool. */
const callsTool = (m: TranscriptMessage): boolean => m.role === 'assistant' && m.content.some((b) => b.type === 'tool_use');

/** The text of content blocks (images as `[image]`, tool results as their text), at most `max` code points. */
function textOf(content: readonly TranscriptBlock[], max = 80): string {
  const joined = content.map((b) => (b.type === 'text' ? b.text : b.type === 'tool_result' ? textOf(b.content, max) : b.type === 'image' ? '[image]' : ''))
    .join(' ').replace(/\s+/g, ' ').trim();
  const chars = [...joined];
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : joined;
}

/** What the scripted model asks the `wait` tool for: `wait <n>` in the task, e.g. "wait 3000 then answer". */
const WAIT_REQUEST = /\bwait\s+(\d{1,9})\b/i;

/**
 * A scripted {@link Model}. Given the transcript, step `i` (1-based, counted from the last durable
 * user message) answers `Step i of N on "<task>".`, followed by `Steering received: "<text>".`
 * for every steering message that arrived after its previous step. `continue` is true while
 * `i < N`; a step past N (the Run kept alive by late steering) answers `Extra step …` and stops.
 *
 * Tools: when the task contains `wait <n>` (e.g. "wait 3000 then answer") and the step is offered
 * a `wait` tool, the first step after the task calls it — `Calling wait(<n>) first.` and a
 * `tool_use` of `wait` with `{ ms: n }` (`stop_reason: 'tool_use'`); that call is not one of the N
 * steps. The step after the tool round says what the tool answered (`wait said: "<result>".`, or
 * `wait failed: …` for an error result) before its steering acknowledgements — steering queued
 * while the tool ran arrives right after the result.
 *
 * Output depends only on the transcript. Rejects with `signal.reason` as soon as `signal` aborts.
 */
export function createScriptedModel(options: ScriptedModelOptions): Model {
  const steps = Math.max(1, Math.floor(options.steps));
  const stepMs = Math.max(0, options.stepMs);
  return {
    async step(transcript, signal, context): Promise<ModelStepResult> {
      await sleep(stepMs, signal);
      let taskIndex = -1;
      for (let i = transcript.length - 1; i >= 0; i--) {
        const m = transcript[i];
        if (m !== undefined && m.role === 'user' && !isSteering(m) && !isResults(m)) {
          taskIndex = i;
          break;
        }
      }
      const task = taskIndex >= 0 ? textOf(transcript[taskIndex]!.content) : '';
      const since = transcript.slice(taskIndex + 1);
      const wait = taskIndex >= 0 ? WAIT_REQUEST.exec(textOf(transcript[taskIndex]!.content, 10_000)) : null;
      if (wait !== null && (context?.tools ?? []).some((t) => t.name === 'wait') && !since.some(callsTool)) {
        const ms = Number(wait[1]);
        return {
          content: [{ type: 'text', text: `Calling wait(${ms}) first.` }, { type: 'tool_use', id: 'toolu_scripted_wait', name: 'wait', input: { ms } }],
          stop_reason: 'tool_use',
        };
      }
      const done = since.filter((m) => m.role === 'assistant' && !callsTool(m)).length;
      let lastAssistant = -1;
      since.forEach((m, i) => {
        if (m.role === 'assistant') lastAssistant = i;
      });
      const after = since.slice(lastAssistant + 1);
      const results = after.filter(isResults).flatMap((m) => m.content.filter((b) => b.type === 'tool_result'));
      const steering = after.filter(isSteering);
      const n = done + 1;
      const head = n <= steps ? `Step ${n} of ${steps} on "${task}".` : `Extra step ${n} on "${task}" (steering arrived after the last step).`;
      const said = results.map((r) => (r.type === 'tool_result' && r.is_error ? ` wait failed: "${textOf(r.content, 200)}".` : ` wait said: "${textOf([r], 200)}".`)).join('');
      const acks = steering.map((m) => ` Steering received: "${textOf(m.content, 200)}".`).join('');
      return { content: [{ type: 'text', text: head + said + acks }], continue: n < steps };
    },
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
