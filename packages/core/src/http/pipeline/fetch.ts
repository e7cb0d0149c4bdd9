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
 * A fetch `Request` as the pipeline's request: `body` and `signal` are read when the pipeline
 * needs them (a body to read, a stream, an observer): on `@hono/node-server` reading `body` builds
 * the whole web `Request`, and `signal` its AbortController. A class, so no getters or closures are
 * made per request (and the adapter's later `caller`, `requestId` keep the object's shape).
 */
class FetchPipelineRequest<H> implements PipelineRequest<H> {
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string | undefined>;
  readonly remoteAddress: string | undefined;
  readonly host: H;
  readonly mount: string;
  readonly startedAt: number;
  requestId?: string = undefined;
  caller?: PipelineRequest<H>['caller'] = undefined;
  readonly #request: Request;
  readonly #body: AsyncIterable<Uint8Array> | null | undefined;

  constructor(request: Request, parts: FetchRequestParts<H>) {
    this.#request = request;
    this.#body = parts.body;
    this.method = request.method;
    this.url = parts.url ?? targetOf(request.url);
    this.headers = headerRecord(request.headers);
    this.remoteAddress = parts.remoteAddress;
    this.host = parts.host;
    this.mount = parts.mount ?? '';
    this.startedAt = parts.startedAt ?? performance.now();
  }

  get body(): PipelineRequest<H>['body'] {
    return this.#body !== undefined ? this.#body : bodyOf(this.#request.body);
  }

  get signal(): AbortSignal {
    return this.#request.signal;
  }
}

/** What {@link pipelineRequestOf} takes beside the `Request`. */
export interface FetchRequestParts<H> {
  /** What the adapter's `authenticate` option is called with (a Hono `Context`, the `Request`). */
  host: H;
  /** The target within the mount (default: the request's whole target). */
  url?: string;
  /** Where the handler is mounted in the host (`/inbox`; default none). */
  mount?: string;
  remoteAddress?: string | undefined;
  /** `performance.now()` ms when the request started (default: now). */
  startedAt?: number;
  /**
   * The body's bytes, when the host read the `Request`'s body already (it is used: `bodyUsed`) and
   * kept them (Hono's `c.req.arrayBuffer()` after a middleware's `c.req.json()`). Default: the
   * `Request`'s body, read when the pipeline needs it.
   */
  body?: AsyncIterable<Uint8Array> | null;
}

/**
 * The pipeline's request for `request` (see {@link FetchRequestParts}).
 */
export function pipelineRequestOf<H>(request: Request, parts: FetchRequestParts<H>): PipelineRequest<H> {
  return new FetchPipelineRequest(request, parts);
}

/** The `Response` of an answer. */
export function responseOf(answer: PipelineAnswer): Response {
  const body = answer.stream !== undefined ? streamToReadable(answer.stream) : answer.body ?? null;
  return new Response(body as BodyInit | null, { status: answer.status, headers: answer.headers });
}
