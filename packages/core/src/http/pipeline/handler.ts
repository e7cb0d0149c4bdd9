/**
 * `createHttpHandler`: the one request pipeline every HTTP adapter runs (platform.md "HTTP
 * adapters"). For each request, in this order: its request id; the CORS decision (a preflight
 * answered 204 here); load shedding (503 `overloaded`); a well-formed path (else 400); the route
 * (else 405 with `Allow`, or 404); the OpenAPI document; authentication (forwarded principal of
 * attempt routing, the host's `authenticate`, or an API key / stream token through the credential
 * throttle); the key's body budget; parsing with the route's schemas (body limit → 413, deadline
 * → 408); the route's service call inside the observer's `within`; the answer (response policy,
 * forwarded reply, event stream with its slot and re-authentication). Every error leaves in the
 * one envelope with `x-should-retry` (and `Retry-After` on 429/503); an unexpected one is a bare
 * 500 and goes to `reportError`. Every answer carries `x-request-id` and `request-id`, and one sent
 * before its announced body was read carries `Connection: close`.
 */
import type { Principal } from '../../context.js';
import { InboxKitError, isInboxKitError } from '../../errors.js';
import { corsApplies } from '../cors.js';
import { envelope, envelopeOf, routeNotFoundAnswer, SHOULD_RETRY_HEADER, shouldRetry } from '../errors.js';
import { forwardedPrincipal } from '../forwarding.js';
import { authenticateWithHost, samePrincipal } from '../host-auth.js';
import { methodNotAllowedAnswer } from '../methods.js';
import { observeRequest, UNOBSERVED, type ObservedRequest } from '../observe.js';
import { isWellFormedPath, malformedPathError, parseJsonBody, parseRequestPart, queryObject } from '../parse.js';
import { authenticateRequest, cachedRequestAuthentication, requestIdFor, type HeaderValue } from '../request.js';
import type { HttpOutcome, HttpRoute } from '../routes.js';
import type { RouteMatch } from './router.js';
import { DEFAULT_MAX_STREAMS_PER_CALLER, SSE_HEADERS } from '../sse.js';
import { announcedLength, announcesBody, BodyTimeoutError } from './body.js';
import { pipelineContext, type PipelineContext } from './context.js';
import { corsHeaders, isPreflight, preflightHeaders } from './cors-headers.js';
import { responseJson, responseText } from './response.js';
import { pipelineStream } from './stream.js';
import type { Caller, HttpHandler, HttpHandlerOptions, PipelineAnswer, PipelineRequest } from './types.js';

const JSON_TYPE = 'application/json; charset=utf-8';

/** One request on its way through the pipeline. */
interface Exchange<H> {
  request: PipelineRequest<H>;
  id: string;
  path: string;
  query: string;
  mount: string;
  startedAt: number;
  announced: boolean;
  bodyRead: boolean;
  observation: ObservedRequest;
}

/**
 * The pipeline for `options` (see {@link HttpHandlerOptions}).
 * @throws TypeError when `forwarding.secret` is empty, `bodyTimeoutMs` is not an integer ≥ 0, a
 *   CORS origin is not exact, or a budget is invalid.
 */
export function createHttpHandler<H = unknown>(options: HttpHandlerOptions<H>): HttpHandler<H> {
  const context = pipelineContext(options);
  const closeStreams = () => {
    for (const stream of [...context.streams]) stream.end();
  };
  return {
    handle: (request) => handle(context, request),
    authenticate: (request) => authenticateFirst(context, request),
    closeStreams,
    close() {
      closeStreams();
      context.shedder?.close();
      context.body.close();
    },
    openStreams: () => context.streams.size,
    document: (mount = '') => (context.documentPath === undefined ? undefined : context.documentText(mount.replace(/\/+$/, ''))),
  };
}

/** A request's path (without the query), whether it decodes, and its route: found once per request. */
interface Routing {
  method: string;
  url: string;
  path: string;
  wellFormed: boolean;
  match: RouteMatch<HttpRoute> | undefined;
}

/**
 * Where `authenticate` leaves the routing it found on the request `handle` will answer (same
 * method and target), so the route is matched once: a symbol-keyed property of the request, not
 * a `WeakMap` (an ephemeron per request is work for every garbage collection while it lives).
 */
const ROUTING = Symbol('inbox-kit routing');
type Routed = { [ROUTING]?: Routing };

/** The routing of `request`: the one `authenticateFirst` found for it when its method and target are unchanged, else found now. */
function routingOf<H>(context: PipelineContext<H>, request: PipelineRequest<H>): Routing {
  const found = (request as Routed)[ROUTING];
  if (found !== undefined && found.method === request.method && found.url === request.url) return found;
  const { method, url } = request;
  const at = url.indexOf('?');
  const path = at < 0 ? url : url.slice(0, at);
  const wellFormed = isWellFormedPath(path);
  return { method, url, path, wellFormed, match: wellFormed ? context.router.match(method, path) : undefined };
}

/** `HttpHandler.authenticate`: the caller of the route `request` is for (none when `handle` will not reach authentication). */
async function authenticateFirst<H>(context: PipelineContext<H>, request: PipelineRequest<H>): Promise<Caller> {
  const routing = routingOf(context, request);
  (request as Routed)[ROUTING] = routing;
  const { match } = routing;
  if (match === undefined || context.shedder?.refusal() !== undefined) return { principal: null, forwarded: false };
  return authenticate(context, request, match.route);
}

/** Answers one request (never rejects). */
async function handle<H>(context: PipelineContext<H>, request: PipelineRequest<H>): Promise<PipelineAnswer> {
  const { headers, url } = request;
  const { path, wellFormed, match } = routingOf(context, request);
  const at = url.indexOf('?');
  const mount = request.mount === undefined || request.mount === '' ? '' : request.mount.replace(/\/+$/, '');
  const isDocument = context.documentPath !== undefined && path === context.documentPath && (request.method === 'GET' || request.method === 'HEAD');
  const template = match !== undefined ? `${mount}${match.route.path}` : isDocument ? `${mount}${context.documentPath}` : null;
  const exchange: Exchange<H> = {
    request, id: request.requestId ?? requestIdFor(headers['x-request-id']), path, query: at < 0 ? '' : url.slice(at + 1), mount,
    startedAt: request.startedAt ?? performance.now(), announced: announcesBody(headers), bodyRead: false,
    observation: observeRequest(context.options.observer, { method: request.method, route: template }),
  };
  const origin = headers['origin'];
  const cors = context.cors !== undefined && corsApplies(context.cors, origin) ? context.cors : undefined;
  let answer: PipelineAnswer;
  if (cors !== undefined && isPreflight(request.method, headers)) {
    answer = { status: 204, headers: preflightHeaders(cors, origin!, headers['access-control-request-headers']) };
  } else {
    try {
      const refusal = context.shedder?.refusal();
      if (refusal !== undefined) throw refusal;
      if (!wellFormed) throw malformedPathError();
      if (isDocument) answer = documentAnswer(context, exchange);
      else if (match === undefined) answer = notFoundAnswer(context, exchange);
      else answer = await routeAnswer(context, exchange, match.route, match.params);
    } catch (error) {
      answer = errorAnswer(context, exchange, error);
    }
    if (cors !== undefined && request.method !== 'OPTIONS') {
      Object.assign(answer.headers, corsHeaders(cors, origin!));
      answer.headers['vary'] = answer.headers['vary'] === undefined ? 'Origin' : `${answer.headers['vary']}, Origin`;
    }
  }
  return finish(exchange, answer);
}

/** The headers every answer gets: request ids, `x-should-retry`, `Connection: close` before an unread body; ends the observation. */
function finish<H>(exchange: Exchange<H>, answer: PipelineAnswer): PipelineAnswer {
  const { headers } = answer;
  headers['x-request-id'] = exchange.id;
  headers['request-id'] = exchange.id;
  const retry = shouldRetry(answer.status);
  if (retry !== undefined && headers[SHOULD_RETRY_HEADER] === undefined) headers[SHOULD_RETRY_HEADER] = String(retry);
  if (exchange.announced && !exchange.bodyRead) headers['connection'] = 'close';
  if (exchange.request.method === 'HEAD') answer.body = undefined;
  // The signal is read only when observed (on fetch-style hosts, reading it may build the request's AbortController).
  if (answer.stream === undefined && exchange.observation !== UNOBSERVED) {
    exchange.observation.end({ status: answer.status, aborted: exchange.request.signal?.aborted ?? false });
  }
  return answer;
}

/** The envelope of a thrown value (408 for a body past its deadline; unexpected errors reported, never shown). */
function errorAnswer<H>(context: PipelineContext<H>, exchange: Exchange<H>, error: unknown): PipelineAnswer {
  if (error instanceof BodyTimeoutError) {
    const body = envelope(408, 'request_timeout', error.message, [], exchange.id);
    return { status: 408, headers: { 'content-type': JSON_TYPE, connection: 'close', [SHOULD_RETRY_HEADER]: 'true' }, body: JSON.stringify(body) };
  }
  const { status, body, unexpected, headers } = envelopeOf(error, exchange.id);
  if (unexpected) reportSafely(context, error, exchange.id);
  return { status, headers: { ...headers, 'content-type': JSON_TYPE }, body: JSON.stringify(body) };
}

/** `reportError`, whose own failure never reaches the client. */
function reportSafely<H>(context: PipelineContext<H>, error: unknown, request_id: string): void {
  try {
    context.reportError(error, request_id);
  } catch {
    // the reporter's own failure
  }
}

/** 405 with `Allow` on a path of the table under another method, else 404 (platform.md "Errors" → "Methods"). */
function notFoundAnswer<H>(context: PipelineContext<H>, exchange: Exchange<H>): PipelineAnswer {
  const { method } = exchange.request;
  const answer = methodNotAllowedAnswer(context.methods, method, exchange.path || '/', exchange.id)
    ?? routeNotFoundAnswer(method, `${exchange.mount}${exchange.path}`, exchange.id);
  return { status: answer.status, headers: { ...answer.headers, 'content-type': JSON_TYPE }, body: JSON.stringify(answer.body) };
}

/** The OpenAPI document (public), its paths under the mount. */
function documentAnswer<H>(context: PipelineContext<H>, exchange: Exchange<H>): PipelineAnswer {
  return { status: 200, headers: { 'content-type': JSON_TYPE }, body: context.documentText(exchange.mount) };
}

/**
 * The caller of a request to `route`: none on a public route; a forwarded principal (attempt
 * routing, right secret, forwardable route); the host's `authenticate`; else the API key (or
 * stream token) through the credential throttle.
 */
async function authenticate<H>(context: PipelineContext<H>, request: PipelineRequest<H>, route: HttpRoute): Promise<Caller> {
  if (route.public) return { principal: null, forwarded: false };
  const headers = request.headers as Record<string, HeaderValue>;
  if (context.secret !== undefined && route.forwardable) {
    const principal = forwardedPrincipal(headers, context.secret);
    if (principal !== undefined) return { principal, forwarded: true };
  }
  const host = context.options.authenticate;
  if (host !== undefined) return { principal: await authenticateWithHost(host, request.host as H), forwarded: false };
  const principal = await context.budgets.authenticate(request.remoteAddress, () => authenticateRequest(context.options.services.platform, {
    headers, url: request.url, stream: route.stream === true,
  }));
  return { principal, forwarded: false };
}

/**
 * An open stream's check before every delivery: the credential again, as a fresh request would
 * present it (a revoked key, or the host answering another caller, ends the stream; a stream
 * token is checked for revocation, not expiry: opened in time, it stays open).
 */
function reauthenticator<H>(context: PipelineContext<H>, exchange: Exchange<H>, principal: Principal | null): () => Promise<void> | undefined {
  const { request } = exchange;
  const host = context.options.authenticate;
  if (host !== undefined) {
    const framework = request.host as H;
    return async () => {
      if (!samePrincipal(principal, await authenticateWithHost(host, framework))) throw refusedCredential();
    };
  }
  // Held for the stream's lifetime: the credential's own headers and the target, not the request.
  const headers = credentialHeaders(request.headers as Record<string, HeaderValue>);
  const input = { headers, url: request.url, stream: true, expiry: false };
  // The streams of one credential share a check started while another is still running (a
  // fan-out re-checks every open stream at once): one lookup, as concurrent requests share one.
  // One flat string (`join`), not a tree of concatenations held for the stream's lifetime.
  const credential = [principal?.key_id, principal?.account_id, headers['authorization'], headers['x-api-key'], headers['x-account-id'],
    headers['anthropic-workspace-id'], accessTokenPart(request.url)].join('\n');
  const { platform } = context.options.services;
  const checks = context.reauthentications;
  const verify = (found: Readonly<Principal>) => {
    if (!samePrincipal(principal, found)) throw refusedCredential();
  };
  // What a fresh request's authentication would answer from the principal cache, read without
  // I/O: while the caller's key is cached, a delivery waits on no promise (one turn for a fan-out).
  const cached = cachedRequestAuthentication(platform, input);
  return () => {
    const found = cached?.();
    if (found !== undefined) {
      verify(found);
      return undefined;
    }
    let check = checks.get(credential);
    if (check === undefined) {
      check = authenticateRequest(platform, input).finally(() => checks.delete(credential));
      checks.set(credential, check);
    }
    return check.then(verify);
  };
}

/** What an open stream's re-check answers for a credential that no longer names its caller. */
function refusedCredential(): InboxKitError {
  return new InboxKitError('invalid_credentials', 'The API key is unknown or revoked');
}

/** The headers `authenticateRequest` reads (`readCredentials`), copied out of the request's. */
function credentialHeaders(headers: Record<string, HeaderValue>): Record<string, HeaderValue> {
  const kept: Record<string, HeaderValue> = {};
  for (const name of ['authorization', 'x-api-key', 'x-account-id', 'anthropic-workspace-id']) {
    const value = headers[name];
    if (value !== undefined) kept[name] = value;
  }
  return kept;
}

/** The query of a request target when it may carry an `access_token` (the credential of a browser's stream), else ''. */
function accessTokenPart(url: string): string {
  const at = url.indexOf('?');
  return at >= 0 && url.includes('access_token', at) ? url.slice(at + 1) : '';
}

/** Authenticates, holds the key's body slot while the route runs, and answers. */
async function routeAnswer<H>(context: PipelineContext<H>, exchange: Exchange<H>, route: HttpRoute, params: Record<string, string>): Promise<PipelineAnswer> {
  const caller = await (exchange.request.caller ?? authenticate(context, exchange.request, route));
  // A body still to read takes one of its key's slots until the route has answered; one
  // announced over the body limit is refused 413 unread, and takes none.
  const bytes = announcedLength(exchange.request.headers);
  const release = exchange.announced && !caller.forwarded && (bytes === undefined || bytes <= context.bodyLimit)
    ? context.budgets.claimBody(caller.principal, bytes) : undefined;
  try {
    return await callRoute(context, exchange, route, params, caller);
  } finally {
    release?.();
  }
}

/** Reads the whole body (limit, deadline), charging a chunked one to its key once its size is known. */
async function readBody<H>(context: PipelineContext<H>, exchange: Exchange<H>, principal: Principal | null): Promise<Uint8Array> {
  const { headers, body } = exchange.request;
  const announced = announcedLength(headers);
  const bytes = await context.body.read(body, announced, exchange.startedAt);
  exchange.bodyRead = true;
  if (headers['content-length'] === undefined) context.budgets.chargeBody(principal, bytes.byteLength);
  return bytes;
}

/** Parses the request parts with the route's schemas, calls its service and answers. */
async function callRoute<H>(context: PipelineContext<H>, exchange: Exchange<H>, route: HttpRoute, rawParams: Record<string, string>, caller: Caller): Promise<PipelineAnswer> {
  const { request } = exchange;
  const params = route.params ? parseRequestPart('params', route.params, rawParams) : {};
  const query = route.query ? parseRequestPart('querystring', route.query, queryObject(new URLSearchParams(exchange.query))) : {};
  const headers = route.headers ? parseRequestPart('headers', route.headers, request.headers) : request.headers;
  let body: unknown;
  if (route.body) {
    const raw = parseJsonBody(await readBody(context, exchange, caller.principal), request.headers['content-type']);
    route.precheckBody?.(raw);
    body = parseRequestPart('body', route.body, raw);
  } else if (exchange.announced) {
    // A route that takes no body ignores one, but the body limit and deadline still apply.
    await readBody(context, exchange, caller.principal);
  }
  const { principal, forwarded } = caller;
  const outcome = await exchange.observation.within(() => route.handle(context.options.services, {
    ctx: () => {
      if (principal === null) throw new InboxKitError('authentication_required', 'An API key is required');
      return { principal, request_id: exchange.id };
    },
    params, query, body, headers, forwarded, lastEventId: request.headers['last-event-id'],
  }));
  return outcomeAnswer(context, exchange, route, outcome, caller);
}

/** The answer of a route's outcome. */
function outcomeAnswer<H>(context: PipelineContext<H>, exchange: Exchange<H>, route: HttpRoute, outcome: HttpOutcome, caller: Caller): PipelineAnswer {
  switch (outcome.kind) {
    case 'json':
      return {
        status: outcome.status, headers: { 'content-type': JSON_TYPE, ...outcome.headers },
        body: outcome.text !== undefined
          ? responseJson(route.response, outcome.text, context.validateResponses, route.operationId)
          : responseText(route.response, outcome.body, context.validateResponses, route.operationId),
      };
    case 'empty':
      return { status: outcome.status, headers: {} };
    case 'forwarded': {
      const { status, content_type, body, headers } = outcome.reply;
      // The owner's retry hints (retry-after, x-should-retry) and allow, relayed with its answer.
      return { status, headers: content_type === null ? { ...headers } : { ...headers, 'content-type': content_type }, body: body === '' ? undefined : body };
    }
    case 'stream': {
      const headers: Record<string, string> = { ...SSE_HEADERS };
      if (exchange.request.method === 'HEAD') return { status: 200, headers };
      const timing = context.options.streamTiming;
      const release = context.slots.claim(caller.principal, timing?.maxStreamsPerCaller ?? DEFAULT_MAX_STREAMS_PER_CALLER);
      const request_id = exchange.id;
      const stream = pipelineStream(outcome.feed, {
        after: outcome.after, lastEventId: outcome.lastEventId, timing, observation: exchange.observation, release,
        registry: context.streams, signal: exchange.request.signal,
        reauthenticate: caller.forwarded ? undefined : reauthenticator(context, exchange, caller.principal),
        reportError: (error) => {
          if (!isInboxKitError(error)) reportSafely(context, error, request_id);
        },
      });
      return { status: 200, headers, stream };
    }
  }
}
