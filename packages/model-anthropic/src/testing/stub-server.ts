/**
 * A local stand-in for the Messages API (`POST /v1/messages`, streamed), for tests without the
 * internet: node:http on 127.0.0.1, answers scripted per test, every request body recorded.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * One scripted answer of {@link MessagesStub}:
 * - `{ text }`: a streamed text turn (`message_start`, `content_block_start`, one
 *   `content_block_delta` per chunk, `content_block_stop`, `message_delta` with `stop_reason`
 *   (default `end_turn`), `message_stop`); `chunkDelayMs` waits between chunks (a slow stream),
 *   and `gate` holds the stream after the first chunk until it settles (a step a test can steer
 *   while it is in flight);
 * - `{ status, error }`: an HTTP error answer with the API's JSON error body and `headers`
 *   (e.g. `retry-after`), like a 429, a 500 or a 529 overloaded;
 * - `{ streamError }`: a 200 stream that sends `afterText` (if any) and then an `error` event;
 * - `{ cut }`: a stream that sends `message_start` and the chunks of `cut`, then closes the
 *   connection without `message_stop`;
 * - `{ hang: true }`: a stream that sends `message_start` and then nothing until the client leaves;
 * - `{ tool_use: [{ name, input, id? }, …], text? }`: a streamed tool-use turn — an optional text
 *   block first, then one `tool_use` block per call (`content_block_start` with `input: {}`, the
 *   input JSON in two `input_json_delta` pieces, `content_block_stop`), `stop_reason` `tool_use`
 *   (ids default to `toolu_stub_<n>`); `gate` holds the stream after `message_start`.
 */
export type StubAnswer =
  | { text: string | string[]; stop_reason?: string; chunkDelayMs?: number; gate?: Promise<unknown> }
  | { tool_use: Array<{ name: string; input: Record<string, unknown>; id?: string }>; text?: string; stop_reason?: string; gate?: Promise<unknown> }
  | { status: number; error: { type: string; message: string }; headers?: Record<string, string> }
  | { streamError: { type: string; message: string }; afterText?: string }
  | { cut: string | string[] }
  | { hang: true };

/** A request the stub received: its headers (lower-case names) and parsed JSON body. */
export interface StubRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  /** True once the client closed the connection before the answer was complete (an abort). */
  aborted: boolean;
}

/** Options of {@link startMessagesStub}. */
export interface MessagesStubOptions {
  /** Answers, in order, one per request; when they run out `fallback` answers. */
  answers?: Array<StubAnswer | ((request: StubRequest) => StubAnswer)>;
  /** The answer once the script is used up; default: a 500 `api_error` "no scripted answer left". */
  fallback?: (request: StubRequest) => StubAnswer;
}

/** A running stub: `url` is the base URL to give the SDK (`baseURL`). */
export interface MessagesStub {
  url: string;
  /** Every `POST /v1/messages` request, in arrival order. */
  requests: StubRequest[];
  /** Appends answers to the script. */
  script(...answers: Array<StubAnswer | ((request: StubRequest) => StubAnswer)>): void;
  /** Resolves with the `n`-th request (1-based) once it has arrived. */
  request(n: number): Promise<StubRequest>;
  /** Resolves once the `n`-th request's connection was closed by the client before its answer ended. */
  aborted(n: number): Promise<StubRequest>;
  close(): Promise<void>;
}

/** An answer that echoes the last user text: `Echo: <text>` (handy as a `fallback`). */
export function echoAnswer(request: StubRequest): StubAnswer {
  const messages: Array<{ role: string; content: Array<{ type: string; text?: string }> }> = Array.isArray(request.body?.messages) ? request.body.messages : [];
  const last = [...messages].reverse().find((m) => m.role === 'user');
  const text = (last?.content ?? []).filter((b) => b.type === 'text').map((b) => b.text).join(' ');
  return { text: ['Echo: ', text] };
}

/**
 * Starts a Messages API stub on 127.0.0.1 (a free port). It checks what the real API checks first —
 * `POST /v1/messages`, an API key (`x-api-key` or `Authorization: Bearer`), an `anthropic-version`, a JSON body with `model`,
 * `max_tokens`, `stream: true` and a non-empty `messages` list whose first turn is `user`; `tools`
 * (when sent) of `{ name, input_schema: { type: 'object' } }` with unique names; and the tool
 * rounds as the API refuses them otherwise: every `tool_use` id (`^[a-zA-Z0-9_-]+$`) of an
 * assistant turn answered by a `tool_result` in the very next user turn, the results before any
 * other block of that turn, no `tool_result` without its `tool_use` — and answers 400/401/404 in
 * the API's error shape when they are missing; otherwise the next scripted answer. Close it with
 * `close()` (open streams are ended).
 */
export async function startMessagesStub(options: MessagesStubOptions = {}): Promise<MessagesStub> {
  const queue = [...(options.answers ?? [])];
  const fallback = options.fallback ?? (() => ({ status: 500, error: { type: 'api_error', message: 'no scripted answer left' } }));
  const requests: StubRequest[] = [];
  const waiters: Array<{ n: number; kind: 'request' | 'aborted'; resolve: (r: StubRequest) => void }> = [];
  const open = new Set<ServerResponse>();
  let messageCount = 0;
  let closing = false;

  const settle = () => {
    for (const w of [...waiters]) {
      const r = requests[w.n - 1];
      if (r !== undefined && (w.kind === 'request' || r.aborted)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(r);
      }
    }
  };

  const server: Server = createServer((req, res) => {
    void handle(req, res).catch(() => res.destroy());
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (req.method !== 'POST' || path !== '/v1/messages') return sendError(res, 404, 'not_found_error', `no route ${req.method} ${path}`);
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      return sendError(res, 400, 'invalid_request_error', 'the body is not JSON');
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
    const record: StubRequest = { method: req.method, path, headers, body, aborted: false };
    requests.push(record);
    settle();
    if (!headers['x-api-key'] && !/^Bearer \S/.test(headers.authorization ?? '')) {
      return sendError(res, 401, 'authentication_error', 'an API key is required (x-api-key or Authorization: Bearer)');
    }
    if (!headers['anthropic-version']) return sendError(res, 400, 'invalid_request_error', 'anthropic-version header is required');
    const problem = checkBody(body);
    if (problem) return sendError(res, 400, 'invalid_request_error', problem);

    const next = queue.shift();
    const answer = next === undefined ? fallback(record) : typeof next === 'function' ? next(record) : next;
    open.add(res);
    let cutByUs = false;
    res.on('close', () => {
      open.delete(res);
      if (!res.writableEnded && !cutByUs && !closing) {
        record.aborted = true;
        settle();
      }
    });
    messageCount++;
    await respond(res, answer, `msg_stub_${messageCount}`, String((body as { model: string }).model), () => (cutByUs = true));
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    script: (...answers) => void queue.push(...answers),
    request: (n) => new Promise((resolve) => {
      waiters.push({ n, kind: 'request', resolve });
      settle();
    }),
    aborted: (n) => new Promise((resolve) => {
      waiters.push({ n, kind: 'aborted', resolve });
      settle();
    }),
    close: async () => {
      closing = true;
      for (const res of open) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function checkBody(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return 'the body must be a JSON object';
  const b = body as Record<string, unknown>;
  if (typeof b.model !== 'string' || b.model === '') return 'model: Field required';
  if (!Number.isInteger(b.max_tokens) || (b.max_tokens as number) < 1) return 'max_tokens: Field required';
  if (b.stream !== true) return 'this stub answers streamed requests only (stream: true)';
  if (!Array.isArray(b.messages) || b.messages.length === 0) return 'messages: at least one message is required';
  const first = b.messages[0] as { role?: unknown } | undefined;
  if (first?.role !== 'user') return 'messages: the first message must use the "user" role';
  for (const [i, m] of (b.messages as Array<{ role?: unknown; content?: unknown }>).entries()) {
    if (m.role !== 'user' && m.role !== 'assistant') return `messages.${i}.role: must be "user" or "assistant"`;
    if (!Array.isArray(m.content) || m.content.length === 0) return `messages.${i}: all messages must have non-empty content`;
  }
  if (b.tools !== undefined) {
    if (!Array.isArray(b.tools)) return 'tools: must be a list';
    const names = new Set<string>();
    for (const [i, t] of (b.tools as Array<{ name?: unknown; input_schema?: { type?: unknown } }>).entries()) {
      if (typeof t.name !== 'string' || !/^[a-zA-Z0-9_-]{1,128}$/.test(t.name)) return `tools.${i}.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`;
      if (names.has(t.name)) return 'tools: Tool names must be unique.';
      names.add(t.name);
      if (t.input_schema?.type !== 'object') return `tools.${i}.input_schema.type: Input should be 'object'`;
    }
  }
  return toolRoundProblem(b.messages as Array<{ role: string; content: Array<Record<string, unknown>> }>);
}

/** What the real API says about a transcript whose tool rounds are not well formed, or undefined. */
function toolRoundProblem(messages: Array<{ role: string; content: Array<Record<string, unknown>> }>): string | undefined {
  for (const [i, m] of messages.entries()) {
    const uses = m.role === 'assistant' ? m.content.filter((c) => c.type === 'tool_use') : [];
    for (const u of uses) {
      if (typeof u.id !== 'string' || !/^[a-zA-Z0-9_-]+$/.test(u.id)) return `messages.${i}.content: tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'`;
    }
    const results = m.role === 'user' ? m.content.filter((c) => c.type === 'tool_result') : [];
    if (m.role === 'assistant' && m.content.some((c) => c.type === 'tool_result')) return `messages.${i}: tool_result blocks are only allowed in user messages`;
    if (results.length > 0) {
      const before = messages[i - 1];
      const asked = new Set(before?.role === 'assistant' ? before.content.filter((c) => c.type === 'tool_use').map((c) => c.id) : []);
      for (const r of results) {
        if (!asked.has(r.tool_use_id)) return `messages.${i}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(r.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
      }
      const firstOther = m.content.findIndex((c) => c.type !== 'tool_result');
      if (firstOther !== -1 && m.content.slice(firstOther).some((c) => c.type === 'tool_result')) return `messages.${i}: tool_result blocks must come before any other content`;
    }
    if (uses.length > 0) {
      const next = messages[i + 1];
      if (next === undefined) continue; // a final assistant turn (continued) may end with tool uses only in a prefill; let it pass
      const answered = new Set(next.role === 'user' ? next.content.filter((c) => c.type === 'tool_result').map((c) => c.tool_use_id) : []);
      const missing = uses.map((u) => String(u.id)).filter((id) => !answered.has(id));
      if (missing.length > 0) return `messages.${i + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
    }
  }
  return undefined;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendError(res: ServerResponse, status: number, type: string, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': 'req_stub', ...headers });
  res.end(JSON.stringify({ type: 'error', error: { type, message } }));
}

const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function respond(res: ServerResponse, answer: StubAnswer, id: string, model: string, cutting: () => void): Promise<void> {
  if ('status' in answer) return sendError(res, answer.status, answer.error.type, answer.error.message, answer.headers);
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': 'req_stub' });
  const write = (event: string, data: unknown) => {
    if (!res.destroyed) res.write(sse(event, data));
  };
  write('message_start', {
    type: 'message_start',
    message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } },
  });
  if ('hang' in answer) return; // the connection stays open until the client leaves (or close())
  const chunksOf = (t: string | string[]) => (Array.isArray(t) ? t : [t]);
  const startBlock = () => {
    write('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    write('ping', { type: 'ping' });
  };
  const delta = (text: string) => write('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } });
  if ('streamError' in answer) {
    if (answer.afterText !== undefined) {
      startBlock();
      delta(answer.afterText);
    }
    write('error', { type: 'error', error: answer.streamError });
    res.end();
    return;
  }
  if ('tool_use' in answer) {
    if (answer.gate) await answer.gate.catch(() => undefined);
    if (res.destroyed) return;
    let index = 0;
    if (answer.text !== undefined && answer.text !== '') {
      write('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      write('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: answer.text } });
      write('content_block_stop', { type: 'content_block_stop', index });
      index++;
    }
    for (const [n, call] of answer.tool_use.entries()) {
      const json = JSON.stringify(call.input);
      const half = Math.floor(json.length / 2);
      write('content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: call.id ?? `toolu_stub_${id}_${n}`, name: call.name, input: {} } });
      write('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: json.slice(0, half) } });
      write('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: json.slice(half) } });
      write('content_block_stop', { type: 'content_block_stop', index });
      index++;
    }
    write('message_delta', { type: 'message_delta', delta: { stop_reason: answer.stop_reason ?? 'tool_use', stop_sequence: null }, usage: { output_tokens: index } });
    write('message_stop', { type: 'message_stop' });
    res.end();
    return;
  }
  if ('cut' in answer) {
    startBlock();
    for (const c of chunksOf(answer.cut)) delta(c);
    await wait(5);
    cutting();
    res.destroy();
    return;
  }
  startBlock();
  const chunks = chunksOf(answer.text);
  for (const [i, c] of chunks.entries()) {
    if (i > 0 && answer.chunkDelayMs) await wait(answer.chunkDelayMs);
    if (res.destroyed) return;
    delta(c);
    if (i === 0 && answer.gate) await answer.gate.catch(() => undefined);
  }
  if (res.destroyed) return;
  write('content_block_stop', { type: 'content_block_stop', index: 0 });
  write('message_delta', { type: 'message_delta', delta: { stop_reason: answer.stop_reason ?? 'end_turn', stop_sequence: null }, usage: { output_tokens: chunks.length } });
  write('message_stop', { type: 'message_stop' });
  res.end();
}
