/**
 * The adapter alone against the local Messages API stub (real HTTP on 127.0.0.1, the real SDK):
 * the request it sends, stop_reason → continue, retries (429 with retry-after, 500, 529, a stream
 * error event, a cut stream, a stalled stream), errors it does not retry, and aborts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { isModelError, type ModelError, type TranscriptMessage } from '@inbox-kit/core';
import { createAnthropicModel, retryAfterOf, type AnthropicModelOptions } from '../src/index.js';
import { startMessagesStub, type MessagesStub, type StubAnswer } from '../src/testing/index.js';

const stubs: MessagesStub[] = [];
afterEach(async () => {
  await Promise.all(stubs.splice(0).map((s) => s.close()));
});

async function setup(answers: StubAnswer[], options: Partial<AnthropicModelOptions> = {}) {
  const stub = await startMessagesStub({ answers });
  stubs.push(stub);
  const retries: Array<{ retry: number; delayMs: number; type: string }> = [];
  const model = createAnthropicModel({
    apiKey: 'sk-test', baseURL: stub.url, model: 'claude-test', retryDelayMs: 1, maxRetryDelayMs: 5,
    onRetry: ({ retry, delayMs, error }) => retries.push({ retry, delayMs, type: error.type }),
    ...options,
  });
  return { stub, model, retries };
}

const task: TranscriptMessage[] = [{ id: 'sevt_1', role: 'user', content: [{ type: 'text', text: 'Summarise the inbox.' }] }];
const failure = async (p: Promise<unknown>): Promise<ModelError> => {
  const e = await p.then(() => undefined, (error: unknown) => error);
  if (!isModelError(e)) throw new Error(`expected a ModelError, got ${String(e)}`);
  return e;
};

describe('createAnthropicModel', () => {
  it('sends one streamed messages.create with the options and returns the streamed text', async () => {
    const { stub, model } = await setup([{ text: ['Hello', ', ', 'world.'] }], { system: 'Be brief.', maxTokens: 321 });
    const result = await model.step(task, new AbortController().signal);
    expect(result).toEqual({ content: [{ type: 'text', text: 'Hello, world.' }], stop_reason: 'end_turn', continue: false });
    expect(stub.requests).toHaveLength(1);
    const [req] = stub.requests;
    expect(req!.path).toBe('/v1/messages');
    // The SDK (1.10.0) sends the key as a bearer token.
    expect(req!.headers.authorization).toBe('Bearer sk-test');
    expect(req!.headers['anthropic-version']).toEqual(expect.any(String));
    expect(req!.body).toEqual({
      model: 'claude-test', max_tokens: 321, system: 'Be brief.', stream: true,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Summarise the inbox.' }] }],
    });
  });

  it('sends the step\'s tools and the agent\'s system prompt; streams tool_use blocks (input_json_delta) with stop_reason tool_use', async () => {
    const { stub, model } = await setup([{ tool_use: [{ name: 'wait', input: { ms: 250, note: 'ok' } }, { name: 'lookup', input: {} }], text: 'Let me wait.' }]);
    const tools = [{ name: 'wait', description: 'Waits', input_schema: { type: 'object' as const, properties: { ms: { type: 'integer' } } } }];
    const result = await model.step(task, new AbortController().signal, { tools, system: 'Agent prompt.', session_id: 's', run_id: 'r' });
    expect(result).toEqual({
      content: [
        { type: 'text', text: 'Let me wait.' },
        { type: 'tool_use', id: expect.stringMatching(/^toolu_stub_/), name: 'wait', input: { ms: 250, note: 'ok' } },
        { type: 'tool_use', id: expect.stringMatching(/^toolu_stub_/), name: 'lookup', input: {} },
      ],
      stop_reason: 'tool_use', continue: false,
    });
    expect(stub.requests[0]!.body).toMatchObject({ system: 'Agent prompt.', tools });
  });

  it('the stub refuses what the API refuses: a tool_use without its tool_result right after', async () => {
    const { model } = await setup([{ text: 'never' }], { maxRetries: 0 });
    const bad = [...task, { id: 's', role: 'assistant' as const, content: [{ type: 'tool_use' as const, id: 'x', name: 'wait', input: {} }] }, { id: 'u', role: 'user' as const, content: [{ type: 'text' as const, text: 'hi' }] }];
    await expect(model.step(bad, new AbortController().signal)).rejects.toMatchObject({ name: 'ModelError', type: 'invalid_request_error', status: 400 });
  });

  it('stop_reason drives the loop: pause_turn continues, end_turn / max_tokens / stop_sequence / refusal end the turn', async () => {
    const reasons = ['pause_turn', 'end_turn', 'max_tokens', 'stop_sequence', 'refusal'];
    const { model } = await setup(reasons.map((stop_reason) => ({ text: 'x', stop_reason })));
    const got: Array<[boolean | undefined, string | undefined]> = [];
    for (const _ of reasons) {
      const r = await model.step(task, new AbortController().signal);
      got.push([r.continue, r.stop_reason]);
    }
    expect(got).toEqual([[true, 'pause_turn'], [false, 'end_turn'], [false, 'max_tokens'], [false, 'end_turn'], [false, 'refusal']]);
  });

  it('an answer with no text (e.g. a refusal) is an empty step, and the next call leaves it out', async () => {
    const { stub, model } = await setup([{ text: [], stop_reason: 'refusal' }, { text: 'ok' }]);
    const signal = new AbortController().signal;
    const empty = await model.step(task, signal);
    expect(empty).toEqual({ content: [], stop_reason: 'refusal', continue: false });
    const next: TranscriptMessage[] = [...task, { id: 'run_1-step-0', role: 'assistant', content: empty.content }, { id: 'run_1-inbox-0', role: 'user', content: [{ type: 'text', text: 'Try again.' }] }];
    await model.step(next, signal);
    expect(stub.requests[1]!.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Summarise the inbox.' }, { type: 'text', text: 'Try again.' }] },
    ]);
  });

  it('retries a 429 after the wait its retry-after names (seconds), then succeeds', async () => {
    const { stub, model, retries } = await setup([
      { status: 429, error: { type: 'rate_limit_error', message: 'Number of requests has exceeded your rate limit' }, headers: { 'retry-after': '1' } },
      { text: 'done' },
    ]);
    const result = await model.step(task, new AbortController().signal);
    expect(result.content).toEqual([{ type: 'text', text: 'done' }]);
    expect(retries).toEqual([{ retry: 1, delayMs: 1000, type: 'rate_limit_error' }]);
    expect(stub.requests.map((r) => r.body)).toEqual([stub.requests[0]!.body, stub.requests[0]!.body]);
  });

  it('retries 500, 529 overloaded, an overloaded error event mid-stream and a cut stream with backoff; the next answer counts alone', async () => {
    const { stub, model, retries } = await setup([
      { status: 500, error: { type: 'api_error', message: 'Internal server error' } },
      { status: 529, error: { type: 'overloaded_error', message: 'Overloaded' }, headers: { 'retry-after-ms': '3' } },
      { streamError: { type: 'overloaded_error', message: 'Overloaded' }, afterText: 'half an ans' },
      { cut: ['half', ' an answer'] },
      { text: ['the ', 'answer'] },
    ], { maxRetries: 4 });
    const result = await model.step(task, new AbortController().signal);
    expect(result).toEqual({ content: [{ type: 'text', text: 'the answer' }], stop_reason: 'end_turn', continue: false });
    expect(stub.requests).toHaveLength(5);
    expect(retries.map((r) => [r.retry, r.type])).toEqual([[1, 'api_error'], [2, 'overloaded_error'], [3, 'overloaded_error'], [4, 'connection_error']]);
    expect(retries[1]!.delayMs).toBe(3);
    for (const r of [retries[0]!, retries[2]!, retries[3]!]) expect(r.delayMs).toBeLessThanOrEqual(5);
  });

  it('gives up after maxRetries with a ModelError that says what the provider answered and how many attempts were made', async () => {
    const overloaded: StubAnswer = { status: 529, error: { type: 'overloaded_error', message: 'Overloaded' } };
    const { stub, model, retries } = await setup([overloaded, overloaded, overloaded, { text: 'never reached' }], { maxRetries: 2 });
    const e = await failure(model.step(task, new AbortController().signal));
    expect(e).toMatchObject({ type: 'overloaded_error', status: 529, attempts: 3 });
    expect(e.message).toBe('The model provider answered with HTTP 529: overloaded_error (Overloaded). Gave up after 3 attempts.');
    expect(stub.requests).toHaveLength(3);
    expect(retries).toHaveLength(2);
  });

  it('does not retry what retrying cannot fix (400, 401), nor a provider that says x-should-retry: false', async () => {
    const { stub, model } = await setup([
      { status: 400, error: { type: 'invalid_request_error', message: 'messages: text content blocks must be non-empty' } },
      { status: 401, error: { type: 'authentication_error', message: 'invalid x-api-key' } },
      { status: 503, error: { type: 'api_error', message: 'Down for maintenance' }, headers: { 'x-should-retry': 'false' } },
    ]);
    const signal = new AbortController().signal;
    expect(await failure(model.step(task, signal))).toMatchObject({ type: 'invalid_request_error', status: 400, attempts: 1,
      message: 'The model provider answered with HTTP 400: invalid_request_error (messages: text content blocks must be non-empty).' });
    expect(await failure(model.step(task, signal))).toMatchObject({ type: 'authentication_error', status: 401, attempts: 1 });
    expect(await failure(model.step(task, signal))).toMatchObject({ type: 'api_error', status: 503, attempts: 1 });
    expect(stub.requests).toHaveLength(3);
  });

  it('does not sit out a retry-after longer than maxRetryAfterMs: the step fails at once', async () => {
    const { stub, model } = await setup([
      { status: 429, error: { type: 'rate_limit_error', message: 'slow down' }, headers: { 'retry-after': '3600' } },
      { text: 'never reached' },
    ], { maxRetryAfterMs: 5_000 });
    const e = await failure(model.step(task, new AbortController().signal));
    expect(e).toMatchObject({ type: 'rate_limit_error', status: 429, attempts: 1 });
    expect(e.message).toContain('asked to retry after 3600000 ms, longer than maxRetryAfterMs (5000 ms)');
    expect(stub.requests).toHaveLength(1);
  });

  it('a stream that stalls longer than idleTimeoutMs times out and is retried; at the last attempt it fails as timeout_error', async () => {
    const { stub, model, retries } = await setup([{ hang: true }, { hang: true }], { idleTimeoutMs: 150, maxRetries: 1 });
    const e = await failure(model.step(task, new AbortController().signal));
    expect(e).toMatchObject({ type: 'timeout_error', attempts: 2 });
    expect(retries.map((r) => r.type)).toEqual(['timeout_error']);
    await stub.aborted(1);
    await stub.aborted(2);
  });

  it('a slow stream that keeps sending is not a stall: idleTimeoutMs bounds the gap between events, not the whole answer', async () => {
    const chunks = Array.from({ length: 8 }, (_, i) => `c${i} `);
    const { stub, model, retries } = await setup([{ text: chunks, chunkDelayMs: 300 }], { idleTimeoutMs: 2_000 });
    const result = await model.step(task, new AbortController().signal);
    expect(result.content).toEqual([{ type: 'text', text: chunks.join('') }]);
    expect(stub.requests).toHaveLength(1);
    expect(retries).toEqual([]);
  });

  it('a connection the provider refuses is a retryable connection_error', async () => {
    const { stub, model } = await setup([]);
    await stub.close();
    const e = await failure(model.step(task, new AbortController().signal));
    expect(e).toMatchObject({ type: 'connection_error', attempts: 3 });
  });

  it('an abort mid-stream aborts the request in flight and rejects with the abort reason, without retrying', async () => {
    const { stub, model, retries } = await setup([{ hang: true }, { text: 'never reached' }]);
    const controller = new AbortController();
    const step = model.step(task, controller.signal);
    await stub.request(1);
    const reason = new Error('interrupted');
    controller.abort(reason);
    await expect(step).rejects.toBe(reason);
    expect((await stub.aborted(1)).aborted).toBe(true);
    expect(stub.requests).toHaveLength(1);
    expect(retries).toEqual([]);
  });

  it('an abort during the backoff wait ends the step without another request', async () => {
    const { stub, model } = await setup([
      { status: 429, error: { type: 'rate_limit_error', message: 'slow down' }, headers: { 'retry-after': '30' } },
    ], {
      onRetry: () => controller.abort(new Error('stop')),
    });
    const controller = new AbortController();
    await expect(model.step(task, controller.signal)).rejects.toThrow('stop');
    expect(stub.requests).toHaveLength(1);
  });

  it('refuses to build without a model name or an API key', () => {
    expect(() => createAnthropicModel({ apiKey: 'k', model: '' })).toThrow(/`model` is required/);
    expect(() => createAnthropicModel({ model: 'claude-test' })).toThrow(/`apiKey` is required/);
  });

  it('refuses numeric options that are not whole numbers in range', () => {
    const base = { apiKey: 'k', model: 'claude-test' };
    expect(() => createAnthropicModel({ ...base, maxTokens: 0 })).toThrow('`maxTokens` must be an integer from 1 to 2147483647, got 0');
    expect(() => createAnthropicModel({ ...base, maxRetries: -1 })).toThrow(/`maxRetries` must be an integer from 0/);
    expect(() => createAnthropicModel({ ...base, retryDelayMs: 1.5 })).toThrow(/`retryDelayMs`/);
    expect(() => createAnthropicModel({ ...base, idleTimeoutMs: 2 ** 31 })).toThrow(/`idleTimeoutMs`/);
    expect(() => createAnthropicModel({ ...base, timeoutMs: Number.NaN })).toThrow(/`timeoutMs`/);
    expect(() => createAnthropicModel({ ...base, maxRetries: 0, retryDelayMs: 0, maxTokens: 1 })).not.toThrow();
  });
});

describe('retryAfterOf', () => {
  it('reads retry-after-ms first, then retry-after as seconds or an HTTP date; ignores unusable values', () => {
    const h = (init: Record<string, string>) => new Headers(init);
    expect(retryAfterOf(h({ 'retry-after-ms': '250', 'retry-after': '9' }))).toBe(250);
    expect(retryAfterOf(h({ 'retry-after': '2' }))).toBe(2000);
    expect(retryAfterOf(h({ 'retry-after': '0.5' }))).toBe(500);
    const now = Date.parse('2026-11-30T12:00:00Z');
    expect(retryAfterOf(h({ 'retry-after': 'Mon, 30 Nov 2026 12:00:05 GMT' }), now)).toBe(5000);
    expect(retryAfterOf(h({ 'retry-after': 'Mon, 30 Nov 2026 11:00:00 GMT' }), now)).toBe(0);
    expect(retryAfterOf(h({ 'retry-after': 'soon' }))).toBeUndefined();
    expect(retryAfterOf(h({ 'retry-after-ms': '-3' }))).toBeUndefined();
    expect(retryAfterOf(h({}))).toBeUndefined();
    expect(retryAfterOf(undefined)).toBeUndefined();
  });
});
