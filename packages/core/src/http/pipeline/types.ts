/**
 * The shapes of the one request pipeline (`createHttpHandler`, platform.md "HTTP adapters"): what
 * an adapter hands in for a request ({@link PipelineRequest}) and what it writes back
 * ({@link PipelineAnswer}). Framework-neutral: no Node, no framework types.
 */
import type { Principal } from '../../context.js';
import type { CorsOptions } from '../cors.js';
import type { CredentialThrottleOptions } from '../budgets.js';
import type { HostAuthenticate } from '../host-auth.js';
import type { LoadSheddingOptions } from '../load.js';
import type { HttpObserver } from '../observe.js';
import type { OpenApiDocumentOptions } from '../openapi.js';
import type { HttpServices } from '../routes.js';

/** One request as the adapter received it. */
export interface PipelineRequest<H = unknown> {
  /** The method, upper-case (`GET`, `HEAD`, `POST`, …). */
  method: string;
  /** The raw request target within the mount: path and query as sent (`/v1/projects/p%201?after=3`). */
  url: string;
  /** Request headers, lower-case names; a repeated header joined with `, `. */
  headers: Readonly<Record<string, string | undefined>>;
  /**
   * The body's bytes as they arrive (a `ReadableStream` or Node's `IncomingMessage` are both
   * async iterables). The pipeline reads it once, at most to the body limit, and calls the
   * iterator's `return()` when it stops early (limit passed, deadline passed).
   */
  body?: AsyncIterable<Uint8Array> | null;
  /** The peer address the credential throttle counts against (behind a proxy: the client's). */
  remoteAddress?: string | undefined;
  /** Aborts when the client goes away (ends an event stream; marks the observation `aborted`). */
  signal?: AbortSignal | undefined;
  /** What the adapter's `authenticate` option is called with (a Hono `Context`, a `FastifyRequest`, a `Request`). */
  host?: H;
  /**
   * Where the handler is mounted in the host (`/inbox`; default none): prefixed to the route
   * templates the observer sees and to the OpenAPI document's paths. `url` is always within it.
   */
  mount?: string;
  /** When the request started, `performance.now()` ms (default: when `handle` is called); the body deadline counts from it. */
  startedAt?: number;
  /**
   * The request's id when the adapter already chose one by the same rule (the caller's safe
   * `x-request-id`, else `req_…`; e.g. the id of the host's log lines). Default: that rule, here.
   */
  requestId?: string;
  /**
   * The caller as {@link HttpHandler.authenticate} resolved it for this very request, for an
   * adapter that needs the principal before `handle` (a rate limiter keyed on the API key):
   * `handle` then does not authenticate again, and answers a rejection as its own refusal.
   */
  caller?: Promise<Caller>;
}

/** Where an event stream's bytes go: the adapter's socket or web stream. */
export interface PipelineStreamSink {
  /** Queues `chunk` (UTF-8 text) for the client. */
  write(chunk: string): void;
  /** Bytes written the client has not taken yet. */
  buffered(): number;
  /** Resolves once the client has read what waits (or at once when nothing waits). */
  drained(): Promise<void>;
  /** Ends the response (called once). */
  close(): void;
}

/** An open event stream the adapter pipes to its client: call `pipe` once, `end` when the client leaves. */
export interface PipelineStream {
  /** Starts the write loop into `sink`; resolves when the stream has ended (client gone, access withdrawn, server closing). */
  pipe(sink: PipelineStreamSink): Promise<void>;
  /** Ends the stream (idempotent; before `pipe`, releases its slot and observation). */
  end(): void;
}

/** The answer to write back. Header names are lower-case; send them all, in this order. */
export interface PipelineAnswer {
  status: number;
  headers: Record<string, string>;
  /** The body: text (UTF-8), bytes, or none (`undefined`: no body, e.g. 204, HEAD). */
  body?: string | Uint8Array | undefined;
  /** Set on an event stream's 200: write the head, then `stream.pipe(sink)`. */
  stream?: PipelineStream | undefined;
}

/** Options of `createHttpHandler` — every option the adapters offer, with the same names and meaning. */
export interface HttpHandlerOptions<H = unknown> {
  services: HttpServices;
  /** Maximum request body in bytes (default 1 MiB = 1,048,576); larger bodies get 413. */
  bodyLimit?: number;
  /** ms a request body has to arrive, counted from the request's start (default 30,000; 0 = none); past it 408 `request_timeout`. */
  bodyTimeoutMs?: number;
  /** SSE heartbeat, retry hint, replay page size (ms, ms, items) and per-caller stream cap (default 16). */
  streamTiming?: StreamTimingOptions;
  /** Accept requests other processes forward here (attempt routing); `secret` must not be empty. */
  forwarding?: { secret: string };
  /** The OpenAPI document at `GET /openapi.json` (public); `false` serves none. `packageVersion` is the default `info.version`. */
  openapi?: (OpenApiDocumentOptions & { documentPath?: string }) | false;
  /** Default `info.version` of the document (the adapter's package version). */
  packageVersion?: string;
  /** The adapter's name, in the messages of the `TypeError`s invalid options throw (default `createHttpHandler`). */
  adapterName?: string;
  /** Called with every unexpected error (answered 500 `internal_error`) and the request id; default `console.error`. */
  reportError?: (error: unknown, request_id: string) => void;
  /** The bad-credential throttle per remote address; `false`: off. */
  credentialThrottle?: CredentialThrottleOptions | false;
  /** Request bodies one API key may have in flight (default 64). */
  maxBodiesPerKey?: number;
  /** Bytes of request bodies one API key may have in flight (default 2 MiB). */
  maxBodyBytesPerKey?: number;
  /** Bytes of request bodies one API key may send per second (default 8 MiB/s; 0: no limit). */
  bodyBytesPerSecondPerKey?: number;
  /** Load shedding: 503 `overloaded` with `Retry-After` while the process is over a threshold; `false` (or omitted when `loadSheddingDefault` is false): off. */
  loadShedding?: LoadSheddingOptions | false;
  /** CORS for exact origins (off by default). */
  cors?: CorsOptions;
  /** The host's own authentication, called with the request's `host`, instead of API keys. */
  authenticate?: HostAuthenticate<H>;
  /** Told of every request answered: method, route template (with the mount), stream opened, end. */
  observer?: HttpObserver;
  /** Check every response against its route's schema (default: on unless `NODE_ENV` is `production`). */
  responseValidation?: boolean;
}

/** Stream settings of {@link HttpHandlerOptions.streamTiming}. */
export interface StreamTimingOptions {
  heartbeatMs?: number;
  retryMs?: number;
  pageSize?: number;
  maxStreamsPerCaller?: number;
}

/** The handler `createHttpHandler` returns. */
export interface HttpHandler<H = unknown> {
  /** Answers one request. Never rejects: every failure is an answer in the envelope. */
  handle(request: PipelineRequest<H>): Promise<PipelineAnswer>;
  /**
   * The authentication step of `handle` alone, for an adapter that needs the caller first (pass
   * the promise on as `request.caller`, so the credential is checked, and throttled, once). A
   * public route, a path no route takes, a malformed path or a request load shedding refuses
   * resolves `{ principal: null, forwarded: false }` (`handle` answers those as usual).
   * @throws InboxKitError (rejects) as `handle` would answer: 401 `authentication_required` /
   *   `invalid_credentials`, 429 `authentication_throttled`, the host `authenticate`'s own error.
   */
  authenticate(request: PipelineRequest<H>): Promise<Caller>;
  /** Ends every open event stream (clients resume with `Last-Event-ID`). */
  closeStreams(): void;
  /** Ends every open event stream and stops the handler's timers (load shedding, body deadlines). */
  close(): void;
  /** The number of event streams open now. */
  openStreams(): number;
  /** The OpenAPI document's text with its paths under `mount` (default none), as `GET /openapi.json` serves it; undefined when `openapi` is false. */
  document(mount?: string): string | undefined;
}

/** The caller of a request, once authenticated (null on public routes). */
export interface Caller {
  principal: Principal | null;
  /** True when another process forwarded the request (never forwarded again, no re-authentication). */
  forwarded: boolean;
}
