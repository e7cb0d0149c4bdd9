/**
 * Test helpers: a fake `fetch` that records every request and answers from a script of canned
 * Responses (or errors), plus builders for JSON, empty and SSE responses.
 */
import type { FetchLike } from '../src/transport.js';

/** One request the fake saw. `body` is the parsed JSON body (`undefined` when none). */
export interface RecordedRequest {
  url: string;
  method: string;
  headers: Headers;
  body: unknown;
  signal: AbortSignal | undefined;
}

/** What the fake answers one request with: a Response, an Error to reject with, or a function. */
export type Step = Response | Error | ((req: RecordedRequest) => Response | Promise<Response>);

/** A fake fetch answering the `steps` in order; a request past the script fails the test. */
export function fakeFetch(...steps: Step[]): { fetch: FetchLike; requests: RecordedRequest[] } {
  const requests: RecordedRequest[] = [];
  const fetch: FetchLike = async (input, init) => {
    const raw = init.body;
    const req: RecordedRequest = {
      url: input,
      method: init.method ?? 'GET',
      headers: new Headers(init.headers),
      body: typeof raw === 'string' ? (JSON.parse(raw) as unknown) : undefined,
      signal: init.signal ?? undefined,
    };
    requests.push(req);
    const step = steps[requests.length - 1];
    if (step === undefined) throw new Error(`fake fetch: unexpected request #${requests.length}: ${req.method} ${req.url}`);
    if (step instanceof Error) throw step;
    return typeof step === 'function' ? step(req) : step;
  };
  return { fetch, requests };
}

/** A JSON response. */
export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
}

/** A 204 No Content. */
export function noContent(): Response {
  return new Response(null, { status: 204 });
}

/** The server's error envelope. */
export function apiError(status: number, code: string, type: string, message: string, extra: Record<string, unknown> = {}): Response {
  return json({ type: 'error', error: { type, code, message, details: [], request_id: 'req_test', ...extra } }, status, { 'x-request-id': 'req_test' });
}

/** Controls of one fake SSE body. */
export interface SseBody {
  response: Response;
  /** Resolves when the consumer cancelled the body (closed the connection). */
  cancelled: Promise<void>;
}

/**
 * An SSE response that sends `chunks` one by one, then closes (or, with `hang`, stays open until
 * the consumer cancels it).
 */
export function sse(chunks: string[], opts: { hang?: boolean } = {}): SseBody {
  const encoder = new TextEncoder();
  let markCancelled: () => void = () => undefined;
  const cancelled = new Promise<void>((resolve) => {
    markCancelled = resolve;
  });
  let i = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[i++];
      if (chunk !== undefined) {
        controller.enqueue(encoder.encode(chunk));
        return;
      }
      if (!opts.hang) {
        controller.close();
        return;
      }
      return new Promise<void>(() => undefined); // never sends again
    },
    cancel() {
      markCancelled();
    },
  });
  const response = new Response(stream, { status: 200, headers: { 'content-type': 'text/event-stream' } });
  return { response, cancelled };
}

/** One SSE frame: `id:`, `event:`, `data:` (JSON) and the blank line. */
export function frame(id: number | string, type: string, data: unknown): string {
  return `id: ${id}\nevent: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}
