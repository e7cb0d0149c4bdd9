/**
 * inbox-kit on Hono: one Hono route per entry of the contract's table (`@inbox-kit/core/http`).
 * Each request gets its id, is authenticated unless public, has its parts parsed with the
 * route's schemas, calls the route's service, and leaves as JSON (through the response schema),
 * no body, the relayed owner's answer, or an SSE stream. Every error leaves in the one envelope.
 */
import { InboxKitError, type Principal } from '@inbox-kit/core';
import {
  authenticateRequest, authenticateWithHost, corsApplies, corsPolicy, createEdgeBudgets, createLoadShedder, observeRequest, samePrincipal, type HostAuthenticate, type HttpObserver, type ObservedRequest,
  createStreamSlots, DEFAULT_BODY_TIMEOUT_MS, envelope, envelopeOf, forwardedPrincipal, httpRoutesFor, isWellFormedPath, malformedPathError,
  methodIndex, methodNotAllowedAnswer, openApiDocument, OPENAPI_DOCUMENT_PATH, openApiOptionsFor, type OpenApiDocumentOptions, parseJsonBody, parseRequestPart, queryObject, requestIdFor, routeNotFoundAnswer,
  SHOULD_RETRY_HEADER, shouldRetry, type CorsOptions, type CredentialThrottleOptions, type HttpOutcome, type HttpRoute, type HttpServices, type LoadShedder, type LoadSheddingOptions,
} from '@inbox-kit/core/http';
import { Hono, type Context } from 'hono';
import { cors } from 'hono/cors';
import { matchedRoutes } from 'hono/route';
import packageJson from '../package.json' with { type: 'json' };
import { eventStream, type StreamOptions, type StreamRegistry } from './sse.js';
import { defaultResponseValidation, responseText } from './response.js';

/** Options of {@link inboxKitHono}. */
export interface InboxKitHonoOptions {
  services: HttpServices;
  /** Maximum request body in bytes (default 1 MiB = 1,048,576); larger bodies get 413. */
  bodyLimit?: number;
  /** SSE heartbeat, retry hint, replay page size and per-caller stream cap. */
  streamTiming?: StreamOptions;
  /** Accept requests other processes forward here (attempt routing); see `@inbox-kit/core/http` `forwardedPrincipal`. */
  forwarding?: { secret: string };
  /**
   * The OpenAPI 3.1 document at `GET /openapi.json` (public), generated from the routes served
   * (`openApiDocument` of `@inbox-kit/core/http`: the same table as every adapter's). Options set
   * `info` (default version: this package's) and `servers`; `false` serves none. Mounted in a
   * host app (`host.route('/inbox', app)`), its paths are listed under the mount (`/inbox/me`), as
   * the Fastify plugin's under a `prefix`.
   */
  openapi?: OpenApiDocumentOptions | false;
  /**
   * ms a request body has to arrive, counted from the request's start (default 30,000; 0 = no
   * deadline). Past it: 408 `request_timeout` in the envelope with `Connection: close`, nothing
   * written. Any answer sent before its request's body was read (401, 404, 413, …) carries
   * `Connection: close`, so the server closes the socket once it is written (platform.md
   * "Connections and request bodies").
   * @throws TypeError (from {@link inboxKitHono}) when not an integer ≥ 0.
   */
  bodyTimeoutMs?: number;
  /**
   * Called with every unexpected error (one answered 500 `internal_error`, whose envelope never
   * shows it) and the request's id. Default: `console.error('inbox-kit: unexpected error', error)`.
   * Give it your logger; it must not throw.
   */
  reportError?: (error: unknown, request_id: string) => void;
  /**
   * The bad-credential throttle (platform.md "Per-caller bounds"): requests with an unknown or
   * revoked API key are counted per remote address ({@link clientAddress}); past `maxFailures`
   * (default 100) in `windowMs` (default 60,000) the address gets 429 `authentication_throttled`
   * with `Retry-After` before any key is looked up. `false`: off.
   */
  credentialThrottle?: CredentialThrottleOptions | false;
  /** Request bodies one API key may have in flight (default 64); past it 429 `too_many_bodies` with `Retry-After`, before the body is read. */
  maxBodiesPerKey?: number;
  /** Bytes of request bodies one API key may have in flight (default 2 MiB, as announced; one body always passes); past it 429 `too_many_bodies`. */
  maxBodyBytesPerKey?: number;
  /** Bytes of request bodies one API key may send per second (default 8 MiB/s; 0: no limit); past it 429 `too_many_bodies`. */
  bodyBytesPerSecondPerKey?: number;
  /**
   * Load shedding (the contract's `createLoadShedder`, as the Fastify preset's `underPressure`):
   * 503 `overloaded` with `Retry-After` while the process is over a threshold (default: mean
   * event-loop delay over 1,000 ms). `false` turns it off.
   */
  loadShedding?: LoadSheddingOptions | false;
  /**
   * The remote address a request counts against (the credential throttle). Default: the socket's
   * peer address on `@hono/node-server` (`c.env.incoming.socket.remoteAddress`). Behind a proxy,
   * return the client's address from a header the proxy sets.
   */
  clientAddress?: (c: Context) => string | undefined;
  /**
   * CORS (platform.md "Browsers" → "CORS"; `corsPolicy` of `@inbox-kit/core/http`, applied with
   * `hono/cors`): off by default (no CORS header; an `OPTIONS` is 405 with `Allow`). With exact
   * `origins`, a request from one of them gets `Access-Control-Allow-Origin` (that origin) and
   * `Access-Control-Expose-Headers`; its preflight is answered 204 on every path; `credentials`
   * (default false) adds `Access-Control-Allow-Credentials: true`. Other origins get no CORS header.
   * @throws TypeError (from {@link inboxKitHono}) when an origin is not exact.
   */
  cors?: CorsOptions;
  /**
   * The host's own authentication (platform.md "Embedding: the host's own authentication"),
   * instead of inbox-kit's API keys: called with the Hono `Context` of every non-public route
   * (after the host's own middleware that ran before the mount — what it `c.set` is there), it
   * answers the caller as a `Principal` (`{ workspace_id, account_id, key_id, key_kind }`) or
   * `null` → 401 `authentication_required` in the envelope. An `InboxKitError` it throws answers
   * as itself; anything else is a 500 `internal_error` (never a stack; `reportError` gets it).
   * Event streams call it again before every delivery (a `null` or another account ends the
   * stream). The credential throttle does not apply (no key is looked up); everything else does:
   * the account's project roles and the write gate, the per-key budgets (counted by `key_id`),
   * attempt routing's forwarded principal.
   */
  authenticate?: HostAuthenticate<Context>;
  /**
   * Told of every request the app answers (platform.md "Observing"), as the Fastify plugin's
   * `observer`: its method and route template (with the mount; never the raw path), when an event
   * stream opens, and its end (status, duration; a stream's when it closes); `within` wraps the
   * route's service call.
   */
  observer?: HttpObserver;
  /**
   * Check every response against its route's zod schema (`response.ts`): a response the schema
   * would reject or change becomes a 500. Default: on unless `NODE_ENV` is `production`. Off,
   * responses are `JSON.stringify` of what the services return, with no per-response parse.
   */
  responseValidation?: boolean;
}

/** The socket's peer address on `@hono/node-server` (its `env.incoming` is Node's request). */
function socketAddress(c: Context): string | undefined {
  return (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming?.socket?.remoteAddress;
}

/** The default of `reportError`: the error on stderr. */
const reportToConsole = (error: unknown): void => console.error('inbox-kit: unexpected error', error);

/** Default time a request body has to arrive, in ms (30 s): the kit's, shared by every adapter. */
export { DEFAULT_BODY_TIMEOUT_MS };

type Env = { Variables: { requestId: string; bodyRead: boolean; bodyDeadline: Promise<typeof TIMED_OUT> | undefined; observation: ObservedRequest | undefined } };

/** The template of the route (not middleware) that matched, with the mount (`/inbox/projects/:id`); null for the catch-all 404. */
function routeTemplateOf(c: Context): string | null {
  const route = matchedRoutes(c).find((r) => r.method !== 'ALL');
  return route?.path ?? null;
}

const TIMED_OUT = Symbol('body deadline passed');

/** Thrown when the body did not arrive within the deadline (answered 408 `request_timeout`). */
class BodyTimeout extends Error {}

/** True when the request announces a body (`Transfer-Encoding`, or a `Content-Length` other than 0). */
function announcesBody(headers: Headers): boolean {
  const length = headers.get('content-length');
  return headers.has('transfer-encoding') || (length !== null && length !== '0');
}

/** True for an event stream's response (whose observation the stream ends). */
const isEventStream = (res: Response): boolean => res.status === 200 && (res.headers.get('content-type') ?? '').startsWith('text/event-stream') && res.body !== null;

/** Request headers as a plain object with lower-case names. */
function headerRecord(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    out[name] = value;
  });
  return out;
}
const JSON_TYPE = 'application/json; charset=utf-8';

/** `document` with its paths under `mount` (`/inbox` + `/me`; a `:name` segment as `{name}`). */
function underMount(document: Record<string, unknown>, mount: string): Record<string, unknown> {
  const prefix = mount.replace(/\/+$/, '').replace(/:([A-Za-z0-9_]+)/g, '{$1}');
  const paths = Object.entries(document['paths'] as Record<string, unknown>).map(([path, item]) => [`${prefix}${path}`, item]);
  return { ...document, paths: Object.fromEntries(paths) };
}

/** The Hono app plus the open event streams (end them with `closeStreams()` before closing the server). */
export interface InboxKitHonoApp {
  app: Hono<Env>;
  /** Ends every open event stream (clients resume with `Last-Event-ID`). */
  closeStreams(): void;
  /** Ends every open event stream and stops the app's timers (load shedding). */
  close(): void;
}

/**
 * Builds a Hono app serving every route of the contract for `services`. Mount it in a host with
 * `host.route(path, app)`: every path under `path` is then its own (unknown ones 404 `not_found`
 * in the envelope, all with `x-request-id`), and the host's other paths stay untouched.
 * @throws TypeError when `forwarding.secret` is empty or `bodyTimeoutMs` is not an integer ≥ 0.
 */
export function inboxKitHono(options: InboxKitHonoOptions): InboxKitHonoApp {
  const { services } = options;
  const bodyLimit = options.bodyLimit ?? 1_048_576;
  const validateResponses = options.responseValidation ?? defaultResponseValidation();
  const secret = options.forwarding?.secret;
  if (secret === '') throw new TypeError('inboxKitHono: forwarding.secret must not be empty');
  const bodyTimeoutMs = options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS;
  const reportError = options.reportError ?? reportToConsole;
  if (!Number.isInteger(bodyTimeoutMs) || bodyTimeoutMs < 0) throw new TypeError(`inboxKitHono: bodyTimeoutMs must be an integer ≥ 0, got ${bodyTimeoutMs}`);
  const streams: StreamRegistry = { open: new Set(), slots: createStreamSlots() };
  const budgets = createEdgeBudgets({
    ...(options.credentialThrottle !== undefined ? { credentialThrottle: options.credentialThrottle } : {}),
    ...(options.maxBodiesPerKey !== undefined ? { maxBodiesPerKey: options.maxBodiesPerKey } : {}),
    ...(options.maxBodyBytesPerKey !== undefined ? { maxBodyBytesPerKey: options.maxBodyBytesPerKey } : {}),
    ...(options.bodyBytesPerSecondPerKey !== undefined ? { bodyBytesPerSecondPerKey: options.bodyBytesPerSecondPerKey } : {}),
  });
  const addressOf = options.clientAddress ?? socketAddress;
  const hostAuthenticate = options.authenticate;
  const shedder: LoadShedder | undefined = options.loadShedding === false ? undefined
    : createLoadShedder(options.loadShedding ?? {}, (error) => reportError(error, 'load-shedding'));
  const app = new Hono<Env>();
  const corsRules = options.cors === undefined ? undefined : corsPolicy(options.cors);

  app.use('*', async (c, next) => {
    c.set('requestId', requestIdFor(c.req.header('x-request-id')));
    const observation = options.observer === undefined ? undefined : observeRequest(options.observer, { method: c.req.method, route: routeTemplateOf(c) });
    c.set('observation', observation);
    const announced = announcesBody(c.req.raw.headers);
    let timer: ReturnType<typeof setTimeout> | undefined;
    if (announced && bodyTimeoutMs > 0) {
      c.set('bodyDeadline', new Promise((resolve) => {
        timer = setTimeout(() => resolve(TIMED_OUT), bodyTimeoutMs);
      }));
    }
    try {
      await next();
    } finally {
      clearTimeout(timer);
    }
    c.header('x-request-id', c.get('requestId'));
    c.header('request-id', c.get('requestId'));
    // Every error answer says whether a retry can succeed (platform.md "Errors" → "Retries").
    const retry = shouldRetry(c.res.status);
    if (retry !== undefined && !c.res.headers.has(SHOULD_RETRY_HEADER)) c.header(SHOULD_RETRY_HEADER, String(retry));
    // Answered before the body was read: close the socket once written, instead of holding it
    // while the client trickles in the rest of the body.
    if (announced && !c.get('bodyRead')) c.header('connection', 'close');
    // An event stream's observation ends when the stream does (`sse.ts`).
    if (observation !== undefined && !isEventStream(c.res)) observation.end({ status: c.res.status, aborted: c.req.raw.signal.aborted });
  });
  // CORS: only for an allowed Origin (hono/cors would answer every OPTIONS); a preflight is
  // answered 204 here, before authentication; any other OPTIONS is 405 below.
  if (corsRules !== undefined) {
    const middleware = cors({
      origin: (origin) => (corsRules.allows(origin) ? origin : null),
      allowMethods: corsRules.methods.split(','),
      exposeHeaders: corsRules.exposedHeaders.split(','),
      credentials: corsRules.credentials,
      maxAge: corsRules.maxAgeSeconds,
    });
    app.use('*', async (c, next) => {
      const origin = c.req.header('origin');
      if (!corsApplies(corsRules, origin)) return next();
      if (c.req.method === 'OPTIONS' && c.req.header('access-control-request-method') === undefined) return next();
      return middleware(c, next);
    });
  }
  // Load shedding: before any work (authentication included) is done for the request.
  if (shedder !== undefined) {
    app.use('*', async (_c, next) => {
      const refusal = shedder.refusal();
      if (refusal !== undefined) throw refusal;
      await next();
    });
  }
  // A path whose percent-encoding does not decode is a 400 before routing (never a 404).
  app.use('*', async (c, next) => {
    if (!isWellFormedPath(new URL(c.req.url).pathname)) throw malformedPathError();
    await next();
  });
  app.onError((error, c) => {
    if (error instanceof BodyTimeout) {
      const body = envelope(408, 'request_timeout', `The request body did not arrive within ${bodyTimeoutMs} ms`, [], c.get('requestId'));
      return c.body(JSON.stringify(body), 408, { 'content-type': JSON_TYPE, connection: 'close', [SHOULD_RETRY_HEADER]: 'true' });
    }
    const { status, body, unexpected, headers } = envelopeOf(error, c.get('requestId'));
    if (unexpected) reportError(error, c.get('requestId'));
    return c.body(JSON.stringify(body), status as 500, { ...headers, 'content-type': JSON_TYPE, 'x-request-id': c.get('requestId') });
  });
  const routes = httpRoutesFor(services);
  // A path of the table under another method is 405 with `Allow`; any other path 404 (platform.md "Errors" → "Methods").
  const index = methodIndex([...routes, ...(options.openapi !== false ? [{ method: 'GET', path: OPENAPI_DOCUMENT_PATH }] : [])], { options: corsRules !== undefined });
  const notFound = (c: Context<Env>): Response => {
    const pathname = new URL(c.req.url).pathname;
    // Mounted in a host, the path within the app: the part after where `*` matched.
    const mount = c.req.routePath.endsWith('*') ? c.req.routePath.slice(0, -2).replace(/\/+$/, '') : '';
    const mountPrefix = mount === '' ? '' : pathname.split('/').slice(0, mount.split('/').length).join('/');
    const within = pathname.slice(mountPrefix.length) || '/';
    const answer = methodNotAllowedAnswer(index, c.req.method, within, c.get('requestId')) ?? routeNotFoundAnswer(c.req.method, pathname, c.get('requestId'));
    return c.body(JSON.stringify(answer.body), answer.status as 404, { ...answer.headers, 'content-type': JSON_TYPE });
  };
  app.notFound(notFound);

  const authenticate = async (c: Context<Env>, route: HttpRoute, expiry = true): Promise<{ principal: Principal | null; forwarded: boolean }> => {
    if (route.public) return { principal: null, forwarded: false };
    const headers = headerRecord(c.req.raw.headers);
    if (secret !== undefined && route.forwardable) {
      const principal = forwardedPrincipal(headers, secret);
      if (principal !== undefined) return { principal, forwarded: true };
    }
    if (hostAuthenticate !== undefined) return { principal: await authenticateWithHost(hostAuthenticate, c), forwarded: false };
    // An API key in a header; on a stream route, a stream token (`?access_token=`) instead.
    const principal = await budgets.authenticate(addressOf(c), () => authenticateRequest(services.platform, { headers, url: c.req.url, stream: route.stream === true, expiry }));
    return { principal, forwarded: false };
  };

  /**
   * The body's bytes, read as they arrive: 413 as soon as they pass `bodyLimit` (announced or
   * counted; the rest is never buffered), 408 when they have not all arrived by the body deadline.
   */
  const readBytes = async (c: Context<Env>, principal: Principal | null): Promise<Uint8Array> => {
    const length = Number(c.req.header('content-length') ?? 0);
    if (length > bodyLimit) throw new InboxKitError('payload_too_large', 'Request body is too large');
    const reader = c.req.raw.body?.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    const reading = (async () => {
      for (let next = await reader?.read(); next !== undefined && !next.done; next = await reader!.read()) {
        size += next.value.byteLength;
        if (size > bodyLimit) throw new InboxKitError('payload_too_large', 'Request body is too large');
        chunks.push(next.value);
      }
    })();
    const deadline = c.get('bodyDeadline');
    try {
      if ((deadline ? await Promise.race([reading, deadline]) : await reading) === TIMED_OUT) throw new BodyTimeout();
    } catch (error) {
      reading.catch(() => {}); // the socket is closed with the answer; a pending read then fails
      reader?.cancel().catch(() => {});
      throw error;
    }
    c.set('bodyRead', true);
    // A chunked body is charged to its key's bytes-per-second budget once its size is known.
    if (length === 0 && c.req.header('content-length') === undefined) budgets.chargeBody(principal, size);
    const bytes = new Uint8Array(size);
    let at = 0;
    for (const chunk of chunks) {
      bytes.set(chunk, at);
      at += chunk.byteLength;
    }
    return bytes;
  };

  const answer = (c: Context<Env>, route: HttpRoute, outcome: HttpOutcome, principal: Principal | null, forwarded: boolean): Response => {
    const request_id = c.get('requestId');
    switch (outcome.kind) {
      case 'json':
        return c.body(responseText(route.response, outcome.body, validateResponses, route.operationId), outcome.status as 200, { 'content-type': JSON_TYPE, ...outcome.headers });
      case 'empty':
        return c.body(null, outcome.status as 204);
      case 'forwarded': {
        const { status, content_type, body } = outcome.reply;
        return new Response(body === '' ? null : body, { status, headers: { ...(content_type === null ? {} : { 'content-type': content_type }), 'x-request-id': request_id } });
      }
      case 'stream':
        return eventStream(c.req.raw, outcome.feed, outcome.after, principal, request_id, streams, { ...options.streamTiming, observation: c.get('observation'), ...(outcome.lastEventId !== undefined ? { lastEventId: outcome.lastEventId } : {}) }, forwarded ? undefined : async () => {
          // The credential, again, as a fresh request would present it (a revoked key ends the
          // stream; a stream token is checked for revocation, not expiry: opened in time, it stays open).
          const again = await authenticate(c, route, false);
          if (!samePrincipal(principal, again.principal)) throw new InboxKitError('invalid_credentials', 'The API key is unknown or revoked');
        });
    }
  };

  if (options.openapi !== false) {
    const { info, servers, agents } = { ...openApiOptionsFor(services), ...options.openapi };
    const document = openApiDocument(routes, { info: { ...info, version: info?.version ?? packageJson.version }, ...(servers ? { servers } : {}), ...(agents ? { agents } : {}) });
    // Mounted in a host (`host.route('/inbox', app)`), the paths are listed under the mount, as
    // the Fastify plugin's under its `prefix`: the mount is where this route matched.
    const byMount = new Map<string, string>();
    app.get(OPENAPI_DOCUMENT_PATH, (c) => {
      const mount = c.req.routePath.slice(0, -OPENAPI_DOCUMENT_PATH.length);
      let text = byMount.get(mount);
      if (text === undefined) {
        text = JSON.stringify(mount === '' ? document : underMount(document, mount));
        byMount.set(mount, text);
      }
      return c.body(text, 200, { 'content-type': JSON_TYPE });
    });
  }
  for (const route of routes) {
    app.on(route.method, route.path, async (c) => {
      const { principal, forwarded } = await authenticate(c, route);
      // A body still to read takes one of its key's slots until the route has answered; one
      // announced over the body limit is refused 413 unread, and takes none.
      const length = c.req.header('content-length');
      const bytes = length !== undefined && Number.isFinite(Number(length)) && Number(length) >= 0 ? Number(length) : undefined;
      const release = announcesBody(c.req.raw.headers) && !forwarded && (bytes === undefined || bytes <= bodyLimit) ? budgets.claimBody(principal, bytes) : undefined;
      try {
        return await handleRoute(c, route, principal, forwarded);
      } finally {
        release?.();
      }
    });
  }

  /** Parses the request parts, calls the route and answers (after authentication). */
  async function handleRoute(c: Context<Env>, route: HttpRoute, principal: Principal | null, forwarded: boolean): Promise<Response> {
    const params = route.params ? parseRequestPart('params', route.params, c.req.param()) : {};
    const query = route.query ? parseRequestPart('querystring', route.query, queryObject(new URL(c.req.url).searchParams)) : {};
    const headers = route.headers ? parseRequestPart('headers', route.headers, headerRecord(c.req.raw.headers)) : headerRecord(c.req.raw.headers);
    let body: unknown;
    if (route.body) {
      const raw = parseJsonBody(await readBytes(c, principal), c.req.header('content-type'));
      route.precheckBody?.(raw);
      body = parseRequestPart('body', route.body, raw);
    } else if (announcesBody(c.req.raw.headers)) {
      // A route that takes no body ignores one, but the body limit and deadline still apply.
      await readBytes(c, principal);
    }
    const call = () => route.handle(services, {
      ctx: () => {
        if (principal === null) throw new InboxKitError('authentication_required', 'An API key is required');
        return { principal, request_id: c.get('requestId') };
      },
      params, query, body, headers, forwarded, lastEventId: c.req.header('last-event-id'),
    });
    const observation = c.get('observation');
    const outcome = await (observation ? observation.within(call) : call());
    return answer(c, route, outcome, principal, forwarded);
  }

  // Every other path within the app (within its mount, in a host) is 404 `not_found` in the
  // envelope; a host's paths outside the mount keep the host's own 404.
  app.all('*', notFound);

  const closeStreams = () => {
    for (const end of [...streams.open]) end();
  };
  return {
    app,
    closeStreams,
    close: () => {
      closeStreams();
      shedder?.close();
    },
  };
}
