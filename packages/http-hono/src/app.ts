/**
 * inbox-kit on Hono: one catch-all route that hands every request to the core's pipeline
 * (`createHttpHandler` of `@inbox-kit/core/http`: request ids, auth, budgets, body rules, the
 * route's service, errors, CORS, the response policy, event streams, OpenAPI) and returns its
 * answer as a `Response`. Mounted in a host (`host.route('/inbox', app)`), every path under the
 * mount is the pipeline's; the host's other paths stay untouched.
 */
import {
  createHttpHandler, DEFAULT_BODY_TIMEOUT_MS, pipelineRequestOf, responseOf, targetOf, type HostAuthenticate, type HttpHandlerOptions, type PipelineRequest, type StreamTimingOptions,
} from '@inbox-kit/core/http';
import { Hono, type Context } from 'hono';
import packageJson from '../package.json' with { type: 'json' };

/** Stream settings (ms; `pageSize` items; `maxStreamsPerCaller` per API key and acting account, default 16). */
export type StreamOptions = StreamTimingOptions;

/**
 * Options of {@link inboxKitHono}: the pipeline's (`HttpHandlerOptions` of `@inbox-kit/core/http`,
 * same names and meaning on every adapter) — `services`; `bodyLimit` (bytes, default 1 MiB → 413);
 * `bodyTimeoutMs` (default 30,000; past it 408 `request_timeout` with `Connection: close`);
 * `streamTiming`; `forwarding` (attempt routing); `openapi` (`GET /openapi.json`, paths under the
 * mount; `false`: none); `reportError`; `credentialThrottle`; `maxBodiesPerKey`,
 * `maxBodyBytesPerKey`, `bodyBytesPerSecondPerKey`; `loadShedding` (default on: 503 `overloaded`
 * past a mean event-loop delay of 1,000 ms); `cors`; `observer` (route templates with the mount);
 * `responseValidation` (default on unless `NODE_ENV` is `production`) — plus Hono's own below.
 */
export interface InboxKitHonoOptions extends Omit<HttpHandlerOptions<Context>, 'packageVersion' | 'adapterName' | 'authenticate'> {
  /**
   * The remote address a request counts against (the credential throttle). Default: the socket's
   * peer address on `@hono/node-server` (`c.env.incoming.socket.remoteAddress`). Behind a proxy,
   * return the client's address from a header the proxy sets.
   */
  clientAddress?: (c: Context) => string | undefined;
  /**
   * The host's own authentication (platform.md "Embedding: the host's own authentication"),
   * instead of inbox-kit's API keys: called with the Hono `Context` of every non-public route
   * (after the host's own middleware that ran before the mount — what it `c.set` is there), it
   * answers the caller as a `Principal` or `null` → 401 `authentication_required`. An
   * `InboxKitError` it throws answers as itself; anything else is a 500 `internal_error`. Event
   * streams call it again before every delivery. The credential throttle does not apply.
   */
  authenticate?: HostAuthenticate<Context>;
}

/** The socket's peer address on `@hono/node-server` (its `env.incoming` is Node's request). */
function socketAddress(c: Context): string | undefined {
  return (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming?.socket?.remoteAddress;
}

/**
 * The body a host middleware already read from `c.req` (`c.req.json()`, `c.req.text()` before the
 * mount): Hono keeps what it read, so the pipeline reads those bytes, under its own limit and rules.
 */
function keptBody(c: Context): AsyncIterable<Uint8Array> {
  return {
    async *[Symbol.asyncIterator]() {
      yield new Uint8Array(await c.req.arrayBuffer());
    },
  };
}

/** What this adapter reads of Node's HTTP/1 request (`c.env.incoming` on `@hono/node-server`). */
interface NodeIncoming extends AsyncIterable<Uint8Array> {
  httpVersionMajor: number;
  headers: Record<string, string | string[] | undefined>;
  /** `null` until something reads or pipes the stream (Node's `Readable`). */
  readableFlowing: boolean | null;
  readableDidRead: boolean;
}

/**
 * Node's HTTP/1 request behind `c`, when Hono runs on `@hono/node-server` (no other runtime has
 * one) and nothing has read its body yet (a host middleware that read `c.req` before the mount
 * leaves it to the web `Request`, as on every other runtime).
 */
function nodeIncoming(c: Context): NodeIncoming | undefined {
  const incoming = (c.env as { incoming?: Partial<NodeIncoming> } | undefined)?.incoming;
  return incoming !== undefined && incoming.httpVersionMajor === 1 && typeof incoming.headers === 'object'
    && typeof incoming[Symbol.asyncIterator] === 'function' && incoming.readableFlowing === null && incoming.readableDidRead === false
    ? incoming as NodeIncoming : undefined;
}

/**
 * The pipeline's request on `@hono/node-server`, read from Node's request itself (as the Fastify
 * adapter reads it: its headers object, its body stream) rather than through the web `Request`,
 * which `@hono/node-server` builds in full — headers, body stream, `AbortController` — the first
 * time its body is read. The `signal` is still the `Request`'s, made only when asked for (an event
 * stream, an observer). A class: no getter or closure per request.
 */
class NodeHonoPipelineRequest implements PipelineRequest<Context> {
  readonly method: string;
  readonly headers: Record<string, string | undefined>;
  readonly body: NodeIncoming;
  requestId?: string = undefined;
  caller?: PipelineRequest<Context>['caller'] = undefined;

  constructor(incoming: NodeIncoming, readonly host: Context, readonly url: string, readonly mount: string, readonly remoteAddress: string | undefined, readonly startedAt: number) {
    this.method = host.req.method;
    this.headers = incoming.headers as Record<string, string | undefined>;
    this.body = incoming;
  }

  get signal(): AbortSignal {
    return this.host.req.raw.signal;
  }
}

/** Default time a request body has to arrive, in ms (30 s): the kit's, shared by every adapter. */
export { DEFAULT_BODY_TIMEOUT_MS };

/** The Hono app plus the open event streams (end them with `closeStreams()` before closing the server). */
export interface InboxKitHonoApp {
  app: Hono;
  /** Ends every open event stream (clients resume with `Last-Event-ID`). */
  closeStreams(): void;
  /** Ends every open event stream and stops the app's timers (load shedding, body deadlines). */
  close(): void;
}

/**
 * Builds a Hono app serving every route of the contract for `services`. Mount it in a host with
 * `host.route(path, app)`: every path under `path` is then its own (unknown ones 404 `not_found`
 * in the envelope, all with `x-request-id`), and the host's other paths stay untouched.
 * @throws TypeError when `forwarding.secret` is empty or `bodyTimeoutMs` is not an integer ≥ 0.
 */
export function inboxKitHono(options: InboxKitHonoOptions): InboxKitHonoApp {
  const { clientAddress = socketAddress, ...rest } = options;
  const handler = createHttpHandler<Context>({ packageVersion: packageJson.version, adapterName: 'inboxKitHono', ...rest });
  const app = new Hono();
  app.all('*', async (c) => {
    const startedAt = performance.now();
    // Mounted in a host, the mount's template (`/inbox`, `/w/:id`) and the path within it.
    const mount = c.req.routePath.replace(/\/?\*$/, '');
    let url = targetOf(c.req.url);
    if (mount !== '') url = url.split('/').slice(mount.split('/').length).join('/').replace(/^(?!\/)/, '/');
    const incoming = nodeIncoming(c);
    const request = incoming !== undefined
      ? new NodeHonoPipelineRequest(incoming, c, url, mount, clientAddress(c), startedAt)
      : pipelineRequestOf(c.req.raw, { host: c, url, mount, remoteAddress: clientAddress(c), startedAt, ...(c.req.raw.bodyUsed ? { body: keptBody(c) } : {}) });
    return responseOf(await handler.handle(request));
  });
  return { app, closeStreams: () => handler.closeStreams(), close: () => handler.close() };
}
