/**
 * The pipeline on the fetch API, for adapters whose framework speaks `Request` / `Response`
 * (Hono, fetch-style hosts): {@link pipelineRequestOf} converts a `Request`, {@link responseOf}
 * turns an answer into a `Response` (an event stream as a `ReadableStream` whose reads are the
 * back-pressure).
 */
import { streamToReadable } from './stream.js';
import type { PipelineAnswer, PipelineRequest } from './types.js';

/** Request headers as a plain object with lower-case names (a `Headers` joins repeats with `, `). */
function headerRecord(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    out[name] = value;
  });
  return out;
}

/** A body stream as the async iterable the pipeline reads, cancelling the stream when it stops early. */
function bodyOf(body: ReadableStream<Uint8Array> | null): AsyncIterable<Uint8Array> | null {
  if (body === null) return null;
  return {
    [Symbol.asyncIterator]() {
      const reader = body.getReader();
      return {
        next: () => reader.read() as Promise<IteratorResult<Uint8Array>>,
        return: () => {
          reader.cancel().catch(() => {});
          return Promise.resolve({ done: true, value: undefined });
        },
      };
    },
  };
}

/** The request target of a URL (path and query as sent, after `scheme://host`). */
export function targetOf(url: string): string {
  const at = url.indexOf('/', url.indexOf('//') + 2);
  return at < 0 ? '/' : url.slice(at);
}

/**
 * The pipeline's request for `request`.
 * @param parts.url the target within the mount (default: the request's whole target).
 */
export function pipelineRequestOf<H>(request: Request, parts: { host: H; url?: string; mount?: string; remoteAddress?: string | undefined; startedAt?: number }): PipelineRequest<H> {
  // `body` and `signal` are read when the pipeline needs them (a body to read, a stream, an
  // observer): on `@hono/node-server` reading `body` builds the whole web `Request`, and `signal` its AbortController.
  return {
    method: request.method, url: parts.url ?? targetOf(request.url), headers: headerRecord(request.headers),
    get body() {
      return bodyOf(request.body);
    },
    get signal() {
      return request.signal;
    },
    remoteAddress: parts.remoteAddress, host: parts.host, mount: parts.mount ?? '', startedAt: parts.startedAt ?? performance.now(),
  };
}

/** The `Response` of an answer. */
export function responseOf(answer: PipelineAnswer): Response {
  const body = answer.stream !== undefined ? streamToReadable(answer.stream) : answer.body ?? null;
  return new Response(body as BodyInit | null, { status: answer.status, headers: answer.headers });
}
