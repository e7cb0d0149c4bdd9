/**
 * The Messages API `Model`: one streamed `messages.create` per agent-loop step, the loop driven by
 * `stop_reason`, interrupts abort the request in flight, provider errors retried with backoff.
 */
import Anthropic, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from '@anthropic-ai/sdk';
import { ModelError, type Model, type ModelStepContext, type ModelStepResult, type ModelStopReason, type TranscriptBlock, type TranscriptMessage } from '@inbox-kit/core';
import { toMessageParams } from './messages.js';

/** A content block of the answer being streamed: text, or a tool use whose input JSON arrives in pieces. */
type StreamedBlock = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; json: string; input?: Record<string, unknown> };

/** The input of a streamed tool use: its JSON parsed (empty → `{}`); not a JSON object → `{}` (the loop's input check answers it). */
function toolInputOf(json: string, seed: unknown): Record<string, unknown> {
  if (json.trim() === '') return seed !== null && typeof seed === 'object' && !Array.isArray(seed) ? (seed as Record<string, unknown>) : {};
  try {
    const value: unknown = JSON.parse(json);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The Messages API's `stop_reason` as the loop's: `stop_sequence` and none end the turn like `end_turn`. */
function stopReasonOf(reason: string | null): ModelStopReason {
  return reason === 'tool_use' || reason === 'max_tokens' || reason === 'pause_turn' || reason === 'refusal' ? reason : 'end_turn';
}

/** Options of {@link createAnthropicModel}. Times are in milliseconds. */
export interface AnthropicModelOptions {
  /** The API key (e.g. from ANTHROPIC_API_KEY), sent as the SDK sends it (`Authorization: Bearer` in 1.10.0). Required unless `client` is given. */
  apiKey?: string;
  /** Model name, e.g. `claude-haiku-4-5`. Required. */
  model: string;
  /** `max_tokens` of every request: the most output tokens one step may produce. Default 1024. */
  maxTokens?: number;
  /** System prompt sent with every request (`system`); none when absent. */
  system?: string;
  /** API base URL, e.g. `https://api.anthropic.com` (the SDK's default) or a proxy/stub. */
  baseURL?: string;
  /**
   * Retries of one step after a retryable failure (429, 408, 409, 5xx, 529 overloaded, a connection
   * error, a timeout, a stream error event or a stream that ended before `message_stop`), so a step
   * makes at most `1 + maxRetries` requests. Default 2; 0 turns retrying off.
   */
  maxRetries?: number;
  /** Backoff before retry `r` (1-based) when the provider names no wait: `retryDelayMs · 2^(r-1)`, minus up to 25 % jitter. Default 500. */
  retryDelayMs?: number;
  /** Cap of that computed backoff. Default 8000. */
  maxRetryDelayMs?: number;
  /**
   * The longest provider-requested wait (`retry-after-ms`, or `retry-after` in seconds or as an
   * HTTP date) the adapter sits out; a longer one fails the step at once. Default 60000.
   */
  maxRetryAfterMs?: number;
  /** Time to wait for a response's headers, per request (the SDK's `timeout`). Default 600000 (10 min). */
  timeoutMs?: number;
  /** Longest silence between two events of a response stream before the request counts as timed out (retryable). Default 60000. */
  idleTimeoutMs?: number;
  /** Told before each retry: the 1-based retry number, the wait (ms) and the failure being retried. */
  onRetry?: (info: { retry: number; delayMs: number; error: ModelError }) => void;
  /** A preconfigured SDK client to use instead of building one (then `apiKey`, `baseURL` are ignored). */
  client?: Anthropic;
}

/** Resolved numeric defaults of {@link AnthropicModelOptions}. */
export const ANTHROPIC_MODEL_DEFAULTS = Object.freeze({
  maxTokens: 1024,
  maxRetries: 2,
  retryDelayMs: 500,
  maxRetryDelayMs: 8_000,
  maxRetryAfterMs: 60_000,
  timeoutMs: 600_000,
  idleTimeoutMs: 60_000,
});

/** A classified failure of one request. */
interface Failure {
  error: ModelError;
  retryable: boolean;
  /** The wait the provider asked for (ms), when it named one. */
  retryAfterMs: number | undefined;
}

/** The stream ended (connection closed) before `message_stop`. */
class StreamCutError extends Error {
  override readonly name = 'StreamCutError';
}

/** No stream event for `idleTimeoutMs`. */
class StreamIdleError extends Error {
  override readonly name = 'StreamIdleError';
}

/**
 * A {@link Model} on the Anthropic Messages API. Spec: live-inbox.md "Drain, commit, carry-over".
 *
 * Each `step` sends the whole transcript ({@link toMessageParams}: drained Live Inbox messages are
 * user turns in order; a tool round is the assistant's `tool_use` blocks and, first in the next
 * user turn, their `tool_result` blocks; Run-scoped ids stay in the ledger) as one streamed
 * `messages.create` request, with the step's `tools` (name, description, `input_schema`) and the
 * agent's system prompt when it has one (else `system`), and returns the answer's text and
 * `tool_use` blocks (their input streamed as `input_json_delta`, parsed at the block's end) with
 * its `stop_reason`: `tool_use` (the loop runs a tool round), `pause_turn` (the model is called
 * again), `end_turn` / `stop_sequence`, `max_tokens`, `refusal` (the turn ends — a boundary at
 * which the agent loop commits whatever the Live Inbox holds and calls the model again, or ends
 * the Run `completed` when it holds nothing).
 *
 * Aborting `signal` (an interrupt) aborts the request in flight; `step` then rejects with
 * `signal.reason`. Retryable failures are retried up to `maxRetries` times, waiting what the
 * provider asks for (`retry-after-ms` / `retry-after`, up to `maxRetryAfterMs`) or an exponential
 * backoff; the SDK's own retries are off so one policy covers errors before and during a stream.
 *
 * @throws ModelError (from `step`) when the step cannot be completed: `type` is the provider's
 *   error type (`rate_limit_error`, `overloaded_error`, `api_error`, `authentication_error`,
 *   `invalid_request_error`, …) or `timeout_error` / `connection_error`; `status` the HTTP status
 *   when there was one; `attempts` the requests made. The Runtime ends the Run `failed` and records
 *   `{ type, message }`.
 * @throws Error (from this function) when `model` is empty, neither `apiKey` nor `client` is given,
 *   or a numeric option is not a whole number in its range (`maxTokens`, `timeoutMs`,
 *   `idleTimeoutMs` ≥ 1; the others ≥ 0; all ≤ 2^31 − 1).
 */
export function createAnthropicModel(options: AnthropicModelOptions): Model {
  if (typeof options.model !== 'string' || options.model === '') throw new Error('createAnthropicModel: `model` is required (e.g. "claude-haiku-4-5")');
  const o = { ...ANTHROPIC_MODEL_DEFAULTS, ...definedOnly(options), model: options.model };
  checkInteger('maxTokens', o.maxTokens, 1);
  checkInteger('maxRetries', o.maxRetries, 0);
  checkInteger('retryDelayMs', o.retryDelayMs, 0);
  checkInteger('maxRetryDelayMs', o.maxRetryDelayMs, 0);
  checkInteger('maxRetryAfterMs', o.maxRetryAfterMs, 0);
  checkInteger('timeoutMs', o.timeoutMs, 1);
  checkInteger('idleTimeoutMs', o.idleTimeoutMs, 1);
  const client = options.client ?? makeClient(options, o.timeoutMs);

  async function once(transcript: readonly TranscriptMessage[], signal: AbortSignal, context: ModelStepContext | undefined): Promise<ModelStepResult> {
    const controller = new AbortController();
    const forward = () => controller.abort(signal.reason);
    if (signal.aborted) forward();
    signal.addEventListener('abort', forward, { once: true });
    let idle: ReturnType<typeof setTimeout> | undefined;
    let idleFired = false;
    const armIdle = () => {
      clearTimeout(idle);
      idle = setTimeout(() => {
        idleFired = true;
        controller.abort(new StreamIdleError(`no stream event for ${o.idleTimeoutMs} ms`));
      }, o.idleTimeoutMs);
    };
    const system = context?.system ?? o.system;
    const tools = context?.tools ?? [];
    try {
      const stream = await client.messages.create(
        {
          model: o.model,
          max_tokens: o.maxTokens,
          ...(system !== undefined ? { system } : {}),
          ...(tools.length > 0 ? { tools: tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.input_schema as Anthropic.Tool.InputSchema })) } : {}),
          messages: toMessageParams(transcript) as Anthropic.MessageParam[],
          stream: true,
        },
        { signal: controller.signal, maxRetries: 0, timeout: o.timeoutMs },
      );
      armIdle();
      const blocks: StreamedBlock[] = [];
      let stopReason: string | null = null;
      let stopped = false;
      for await (const event of stream) {
        armIdle();
        switch (event.type) {
          case 'content_block_start':
            if (event.content_block.type === 'text') blocks[event.index] = { type: 'text', text: event.content_block.text };
            else if (event.content_block.type === 'tool_use') {
              const b = event.content_block;
              blocks[event.index] = { type: 'tool_use', id: b.id, name: b.name, json: '', input: b.input as Record<string, unknown> };
            }
            break;
          case 'content_block_delta': {
            const block = blocks[event.index];
            if (event.delta.type === 'text_delta' && block?.type === 'text') block.text += event.delta.text;
            else if (event.delta.type === 'input_json_delta' && block?.type === 'tool_use') block.json += event.delta.partial_json;
            break;
          }
          case 'message_delta':
            stopReason = event.delta.stop_reason ?? stopReason;
            break;
          case 'message_stop':
            stopped = true;
            break;
          default:
            break;
        }
      }
      // The SDK ends the iteration quietly when the request is aborted: tell the three ends apart.
      if (signal.aborted) throw signal.reason;
      if (idleFired) throw new StreamIdleError(`no stream event for ${o.idleTimeoutMs} ms`);
      if (!stopped) throw new StreamCutError('the response stream ended before message_stop');
      const content: TranscriptBlock[] = [];
      for (const b of blocks) {
        if (b === undefined) continue;
        if (b.type === 'text') {
          if (b.text !== '') content.push({ type: 'text', text: b.text });
        } else content.push({ type: 'tool_use', id: b.id, name: b.name, input: toolInputOf(b.json, b.input) });
      }
      const stop_reason = stopReasonOf(stopReason);
      return { content, stop_reason, continue: stop_reason === 'pause_turn' };
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (idleFired && !(error instanceof StreamIdleError)) throw new StreamIdleError(`no stream event for ${o.idleTimeoutMs} ms`);
      throw error;
    } finally {
      clearTimeout(idle);
      signal.removeEventListener('abort', forward);
    }
  }

  return {
    async step(transcript, signal, context): Promise<ModelStepResult> {
      for (let attempt = 1; ; attempt++) {
        if (signal.aborted) throw signal.reason;
        try {
          return await once(transcript, signal, context);
        } catch (error) {
          if (signal.aborted) throw signal.reason;
          const failure = classify(error, attempt);
          if (!failure.retryable || attempt > o.maxRetries) throw withAttempts(failure.error, attempt, failure.retryable);
          const backoff = Math.min(o.retryDelayMs * 2 ** (attempt - 1), o.maxRetryDelayMs) * (1 - Math.random() * 0.25);
          const delayMs = failure.retryAfterMs ?? Math.round(backoff);
          if (delayMs > o.maxRetryAfterMs) {
            throw new ModelError(
              failure.error.type,
              `${failure.error.message} The provider asked to retry after ${delayMs} ms, longer than maxRetryAfterMs (${o.maxRetryAfterMs} ms); gave up after ${attempt} attempt${attempt === 1 ? '' : 's'}.`,
              { status: failure.error.status, attempts: attempt, cause: failure.error.cause },
            );
          }
          o.onRetry?.({ retry: attempt, delayMs, error: failure.error });
          await sleep(delayMs, signal);
        }
      }
    },
  };
}

function makeClient(options: AnthropicModelOptions, timeoutMs: number): Anthropic {
  if (typeof options.apiKey !== 'string' || options.apiKey === '') throw new Error('createAnthropicModel: `apiKey` is required (e.g. from ANTHROPIC_API_KEY)');
  return new Anthropic({
    apiKey: options.apiKey,
    ...(options.baseURL !== undefined ? { baseURL: options.baseURL } : {}),
    maxRetries: 0,
    timeout: timeoutMs,
  });
}

/** Timers hold at most 2^31 − 1 ms; every numeric option is a whole number in [min, that]. */
function checkInteger(name: string, value: unknown, min: number): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > 2 ** 31 - 1) {
    throw new Error(`createAnthropicModel: \`${name}\` must be an integer from ${min} to ${2 ** 31 - 1}, got ${String(value)}`);
  }
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

const RETRYABLE_TYPES = new Set(['rate_limit_error', 'overloaded_error', 'api_error', 'timeout_error']);

/** Sorts a request's failure into a {@link ModelError}, retryable or not, with the provider's requested wait. */
function classify(error: unknown, attempt: number): Failure {
  if (error instanceof StreamIdleError) {
    return { error: new ModelError('timeout_error', `The model's response stream stalled (${error.message}).`, { cause: error }), retryable: true, retryAfterMs: undefined };
  }
  if (error instanceof StreamCutError) {
    return { error: new ModelError('connection_error', `The model's response stream was cut: ${error.message}.`, { cause: error }), retryable: true, retryAfterMs: undefined };
  }
  if (error instanceof APIConnectionTimeoutError) {
    return { error: new ModelError('timeout_error', 'The model request timed out before the provider answered.', { cause: error }), retryable: true, retryAfterMs: undefined };
  }
  if (error instanceof APIUserAbortError) {
    return { error: new ModelError('connection_error', 'The model request was aborted.', { cause: error }), retryable: false, retryAfterMs: undefined };
  }
  if (error instanceof APIConnectionError) {
    return { error: new ModelError('connection_error', 'The model provider could not be reached.', { cause: error }), retryable: true, retryAfterMs: undefined };
  }
  if (error instanceof APIError) {
    const status = typeof error.status === 'number' ? error.status : undefined;
    const type = error.type ?? typeFromStatus(status);
    const said = error.apiMessage ?? undefined;
    const where = status === undefined ? 'in its response stream' : `with HTTP ${status}`;
    const message = `The model provider answered ${where}: ${type}${said ? ` (${said})` : ''}.`;
    const shouldRetry = error.headers?.get('x-should-retry');
    const retryable = shouldRetry === 'true' ? true : shouldRetry === 'false' ? false
      : status === undefined ? RETRYABLE_TYPES.has(type)
        : status === 408 || status === 409 || status === 429 || status >= 500;
    return { error: new ModelError(type, message, { ...(status !== undefined ? { status } : {}), attempts: attempt, cause: error }), retryable, retryAfterMs: retryAfterOf(error.headers) };
  }
  // fetch's own failures mid-body (e.g. undici "terminated" when the socket closes) are connection errors.
  if (error instanceof TypeError) {
    return { error: new ModelError('connection_error', 'The connection to the model provider failed.', { cause: error }), retryable: true, retryAfterMs: undefined };
  }
  return { error: new ModelError('api_error', 'The model request failed unexpectedly.', { cause: error }), retryable: false, retryAfterMs: undefined };
}

function typeFromStatus(status: number | undefined): string {
  if (status === 400) return 'invalid_request_error';
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 408) return 'timeout_error';
  if (status === 413) return 'request_too_large';
  if (status === 429) return 'rate_limit_error';
  if (status === 529) return 'overloaded_error';
  return 'api_error';
}

/** The wait the provider asked for: `retry-after-ms`, else `retry-after` (seconds or an HTTP date); undefined when absent or unusable. */
export function retryAfterOf(headers: Headers | undefined, now: number = Date.now()): number | undefined {
  const ms = headers?.get('retry-after-ms');
  if (ms) {
    const value = Number.parseFloat(ms);
    if (Number.isFinite(value) && value >= 0) return Math.round(value);
  }
  const after = headers?.get('retry-after');
  if (after) {
    const seconds = Number(after.trim());
    if (after.trim() !== '' && Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1000);
    const date = Date.parse(after);
    if (Number.isFinite(date)) return Math.max(0, date - now);
  }
  return undefined;
}

/** The final error of a step: the message says how many requests it made. */
function withAttempts(error: ModelError, attempts: number, retried: boolean): ModelError {
  const tail = retried && attempts > 1 ? ` Gave up after ${attempts} attempts.` : '';
  return new ModelError(error.type, `${error.message}${tail}`, {
    ...(error.status !== undefined ? { status: error.status } : {}),
    attempts,
    cause: error.cause,
  });
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
