/**
 * The demo's models: the Messages API adapter when DEMO_MODEL=anthropic ({@link createDemoModel}),
 * else the scripted model: deterministic, no network. It works `steps` steps of `stepMs`
 * milliseconds on every durable user message and acknowledges, in its output, each Live Inbox
 * (steering) message it received since its previous step — so a person or a test can watch
 * steering happen. A real model provider implements the same `Model` port.
 */
import type { ContentBlock, Model, ModelStepResult, TranscriptMessage } from '@inbox-kit/core';
import type { AnthropicModelOptions } from '@inbox-kit/model-anthropic';
import type { DemoConfig } from './config.js';

/** What the demo's Messages API model is told about its situation. */
export const DEMO_SYSTEM_PROMPT =
  'You are the agent of the inbox-kit demo. Work on the user\'s task and answer briefly, in a few sentences. ' +
  'User messages that arrive after your previous answer are steering from the user while you work: follow them, and say what you changed.';

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

/** The text of content blocks (images as `[image]`), at most `max` code points. */
function textOf(content: readonly ContentBlock[], max = 80): string {
  const joined = content.map((b) => (b.type === 'text' ? b.text : '[image]')).join(' ').replace(/\s+/g, ' ').trim();
  const chars = [...joined];
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : joined;
}

/**
 * A scripted {@link Model}. Given the transcript, step `i` (1-based, counted from the last durable
 * user message) answers `Step i of N on "<task>".`, followed by `Steering received: "<text>".`
 * for every steering message that arrived after its previous step. `continue` is true while
 * `i < N`; a step past N (the Run kept alive by late steering) answers `Extra step …` and stops.
 * Output depends only on the transcript. Rejects with `signal.reason` as soon as `signal` aborts.
 */
export function createScriptedModel(options: ScriptedModelOptions): Model {
  const steps = Math.max(1, Math.floor(options.steps));
  const stepMs = Math.max(0, options.stepMs);
  return {
    async step(transcript, signal): Promise<ModelStepResult> {
      await sleep(stepMs, signal);
      let taskIndex = -1;
      for (let i = transcript.length - 1; i >= 0; i--) {
        const m = transcript[i];
        if (m !== undefined && m.role === 'user' && !isSteering(m)) {
          taskIndex = i;
          break;
        }
      }
      const task = taskIndex >= 0 ? textOf(transcript[taskIndex]!.content) : '';
      const since = transcript.slice(taskIndex + 1);
      const done = since.filter((m) => m.role === 'assistant').length;
      let lastAssistant = -1;
      since.forEach((m, i) => {
        if (m.role === 'assistant') lastAssistant = i;
      });
      const steering = since.slice(lastAssistant + 1).filter(isSteering);
      const n = done + 1;
      const head = n <= steps ? `Step ${n} of ${steps} on "${task}".` : `Extra step ${n} on "${task}" (steering arrived after the last step).`;
      const acks = steering.map((m) => ` Steering received: "${textOf(m.content, 200)}".`).join('');
      return { content: [{ type: 'text', text: head + acks }], continue: n < steps };
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
