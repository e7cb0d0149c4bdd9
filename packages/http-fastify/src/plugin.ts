/**
 * The routes plugin: every route of the contract's table with request ids, authentication, the
 * error envelope, the zod validator and the UTF-8 JSON parser — all inside its own encapsulated
 * scope. It is not wrapped in `fastify-plugin`, so `prefix` works and the host's other routes,
 * parsers, 404 and error handlers stay exactly as they were. `createServer` is the one-call preset.
 */
import { InboxKitError } from '@inbox-kit/core';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { validatorCompiler } from 'fastify-type-provider-zod';
import {
  authenticateWithHost, createEdgeBudgets, observeRequest, type HttpObserver, parseJsonBody, readCredentials, routeNotFound, samePrincipal, type CredentialThrottleOptions, type HostAuthenticate, type HttpServices,
} from '@inbox-kit/core/http';
import { requestIdOf } from './context.js';
import { DEFAULT_BODY_TIMEOUT_MS, registerBodyDeadline } from './body-deadline.js';
import { defaultResponseValidation, stringifySerializerCompiler, validatingSerializerCompiler } from './serializer.js';
import { errorHandler } from './errors.js';
import { forwardedPrincipal } from './forwarding.js';
import { registerStreamShutdown, type StreamTiming } from './sse.js';
import { hideFromHostDocuments, inboxKitOpenApi, type InboxKitOpenApiOptions } from './openapi.js';
import { registerRoutes } from './routes.js';
import { setRequestIdHeaders } from './context.js';

/**
 * The services the routes call: `{ platform, projectInbox, runtime?, managedSessions? }`, the
 * contract's `HttpServices` (`@inbox-kit/core/http`). With `runtime`, the durable Session event
 * routes (`/v1/sessions/:id/events`) and the Live Inbox routes (`/v1/awaken/sessions/:id/live-inbox`)
 * are registered; with `runtime` and `managedSessions`, the Session resource (`/v1/sessions`).
 */
export type InboxKitServices = HttpServices;

export interface InboxKitPluginOptions {
  services: InboxKitServices;
  /** SSE heartbeat and retry hint (defaults: 15,000 ms and 2,000 ms). */
  streamTiming?: StreamTiming;
  /** The OpenAPI document (`/openapi.json`) and API reference (`/docs`); `false` serves neither. */
  openapi?: InboxKitOpenApiOptions | false;
  /**
   * Attempt routing (live-inbox.md "Scale"): accept requests other processes forward to this one
   * (header `x-inbox-kit-forward: <secret>` plus the original principal, see `forwarding.ts`) on
   * the Live Inbox and Session event routes. Without it (default), forward headers are ignored.
   * The Runtime's `routing` option decides what this process forwards.
   */
  forwarding?: { secret: string };
  /**
   * ms a request body has to arrive, counted from the request's start (default 30,000; 0: no
   * deadline). Past it: 408 `request_timeout` in the envelope and the socket closed; any answer
   * sent before its request's body arrived closes the socket too (`body-deadline.ts`). Applies to
   * the plugin's routes; under `createServer`, its `bodyTimeoutMs` applies instead.
   * @throws TypeError (at registration) when not an integer ≥ 0.
   */
  bodyTimeoutMs?: number;
  /**
   * The bad-credential throttle (platform.md "Per-caller bounds"): requests with an unknown or
   * revoked API key are counted per remote address (`request.ip`: set Fastify's `trustProxy`
   * behind a proxy); past `maxFailures` (default 100) in `windowMs` (default 60,000) the address
   * gets 429 `authentication_throttled` with `Retry-After` before any key is looked up. `false`: off.
   */
  credentialThrottle?: CredentialThrottleOptions | false;
  /**
   * Request bodies one API key may have in flight on this server (default 64); past it 429
   * `too_many_bodies` with `Retry-After`, before the body is read.
   */
  maxBodiesPerKey?: number;
  /**
   * Bytes of request bodies one API key may have in flight (default 2 MiB, as announced by
   * `Content-Length`; a body is always let through when the key has none in flight); past it 429
   * `too_many_bodies`, before the body is read.
   */
  maxBodyBytesPerKey?: number;
  /**
   * Bytes of request bodies one API key may send per second (default 8 MiB/s, bursts of one
   * second's worth; 0: no limit); past it 429 `too_many_bodies`, before the body is read.
   */
  bodyBytesPerSecondPerKey?: number;
  /**
   * Check every response against its route's zod schema (see `serializer.ts`): a response the
   * schema would reject or change becomes a 500. Default: on unless `NODE_ENV` is `production`.
   * Off, responses are `JSON.stringify` of what the services return, with no per-response cost.
   */
  responseValidation?: boolean;
  /**
   * The host's own authentication (platform.md "Embedding: the host's own authentication"),
   * instead of inbox-kit's API keys: called with the request of every non-public route (in the
   * plugin's `onRequest` hook, so after the host's own root `onRequest` hooks — what they set on
   * the request is there), it answers the caller as a `Principal` (`{ workspace_id, account_id,
   * key_id, key_kind }`) or `null` → 401 `authentication_required` in the envelope. An
   * `InboxKitError` it throws answers as itself; anything else is a 500 `internal_error` (never
   * a stack). Event streams call it again before every delivery (a `null` or another account
   * ends the stream). The credential throttle does not apply (no key is looked up); everything
   * else does: the account's project roles and the write gate, the per-key budgets (counted by
   * `key_id`), attempt routing's forwarded principal.
   */
  authenticate?: HostAuthenticate<FastifyRequest>;
  /**
   * Whether a host's own `@fastify/swagger` document lists inbox-kit's routes (default `false`:
   * they are hidden from every document but inbox-kit's own `/openapi.json`); `true` lists them
   * there with the same JSON Schemas as inbox-kit's own document (never zod internals).
   */
  inHostDocument?: boolean;
  /**
   * Told of every request the plugin's routes answer (platform.md "Observing"): its method and
   * route template (with the prefix; never the raw path), when an event stream opens, and its
   * end (status, duration); `within` wraps the route's service call. The demo feeds its
   * `/metrics` and tracing spans from it. Under `createServer`, give it there: it then sees the
   * preset's own answers too (rate limits, load shedding, 404s).
   */
  observer?: HttpObserver;
}

/** True when the request announces a body (`Transfer-Encoding`, or a `Content-Length` other than 0). */
function announcesBody(raw: FastifyRequest['raw']): boolean {
  const length = raw.headers['content-length'];
  return raw.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** The route's body limit in bytes (Fastify's, default 1 MiB). */
function bodyLimitOf(request: FastifyRequest): number {
  return request.routeOptions.bodyLimit ?? 1_048_576;
}

/** A request body's announced `Content-Length` in bytes, or undefined (chunked). */
function announcedLength(request: FastifyRequest): number | undefined {
  const length = request.raw.headers['content-length'];
  const n = Number(length);
  return length !== undefined && Number.isFinite(n) && n >= 0 ? n : undefined;
}

/** 404 `not_found` in the envelope for a route that does not exist (`request.requestId` must be set). */
export async function notFound(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  await reply.code(404).send(routeNotFound(request.method, request.url, request.requestId));
}

/**
 * The inbox-kit routes plugin. Options: {@link InboxKitPluginOptions}. Register it on any Fastify 5
 * instance, optionally under a `prefix` (`app.register(inboxKit, { prefix: '/inbox', services })`).
 * Everything it sets (hooks, parsers, compilers, error handler) applies to its own routes only;
 * under a prefix it also answers unknown paths below the prefix with 404 `not_found` in the
 * envelope, while the host keeps its own 404 everywhere else.
 * @throws TypeError when `forwarding.secret` is empty.
 */
export const inboxKit: FastifyPluginAsync<InboxKitPluginOptions> = async (app, opts) => {
  const { services } = opts;
  // First: a child scope (Swagger UI's routes) copies the request decorations when it is created.
  decorateRequests(app);
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(opts.responseValidation ?? defaultResponseValidation() ? validatingSerializerCompiler : stringifySerializerCompiler);
  // Before every route: @fastify/swagger documents only the routes added after it.
  if (opts.openapi !== false) await app.register(inboxKitOpenApi, { ...opts.openapi, inHostDocument: opts.inHostDocument ?? false });
  // No document of inbox-kit's: a host's own document still lists the routes only when asked.
  else hideFromHostDocuments(app, opts.inHostDocument ?? false);
  // The contract's per-caller budgets (one set per registration): the bad-credential throttle, bodies in flight.
  const budgets = createEdgeBudgets({
    ...(opts.credentialThrottle !== undefined ? { credentialThrottle: opts.credentialThrottle } : {}),
    ...(opts.maxBodiesPerKey !== undefined ? { maxBodiesPerKey: opts.maxBodiesPerKey } : {}),
    ...(opts.maxBodyBytesPerKey !== undefined ? { maxBodyBytesPerKey: opts.maxBodyBytesPerKey } : {}),
    ...(opts.bodyBytesPerSecondPerKey !== undefined ? { bodyBytesPerSecondPerKey: opts.bodyBytesPerSecondPerKey } : {}),
  });
  // The contract's body rules (`parseJsonBody` of `@inbox-kit/core/http`, as every adapter's):
  // only `application/json` in UTF-8 (Fastify's own `text/plain` parser goes too, so any other
  // content type is 415 `unsupported_media_type`), valid UTF-8 and JSON, no `__proto__` /
  // `constructor.prototype` key, numbers a double holds exactly; else 400 `validation_error`.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    try {
      // A chunked body is charged to its key's bytes-per-second budget once its size is known.
      if (request.headers['content-length'] === undefined) budgets.chargeBody(request.principal, (body as Buffer).byteLength);
      done(null, parseJsonBody(body as Buffer, request.headers['content-type']));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  registerBodyDeadline(app, opts.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS);
  const forwardSecret = opts.forwarding?.secret;
  const hostAuthenticate = opts.authenticate;
  const keyOf = (request: FastifyRequest) => {
    const { apiKey, actingAccountId, options } = readCredentials(request.headers);
    return [apiKey, actingAccountId, options] as const;
  };
  // The host's authentication, or the API key (through the bad-credential throttle).
  const authenticateRequest = (request: FastifyRequest) => hostAuthenticate
    ? authenticateWithHost(hostAuthenticate, request)
    : budgets.authenticate(request.ip, () => services.platform.authenticate(...keyOf(request)));
  if (forwardSecret === '') throw new TypeError('inboxKit: forwarding.secret must not be empty');

  app.addHook('onRequest', async (request, reply) => {
    startObservation(request, reply, opts.observer);
    // Under `createServer` the root's hook has already set the id and its headers.
    if (!request.requestId) {
      request.requestId = requestIdOf(request.headers['x-request-id'], request.id);
      setRequestIdHeaders(reply, request.requestId);
    }
    if (request.routeOptions.config?.public) return;
    if (request.is404) {
      // Answered before the body is read when it has not all arrived (the socket then closes).
      if (!request.raw.complete) return notFound(request, reply);
      return;
    }
    if (forwardSecret !== undefined && request.routeOptions.config?.forwardable) {
      const principal = forwardedPrincipal(request, forwardSecret);
      if (principal !== undefined) {
        request.principal = principal;
        request.forwarded = true;
        return;
      }
    }
    request.principal = await authenticateRequest(request);
    // A body still to read takes one of its key's slots until the request is answered (or its
    // socket closes); one announced over the body limit is refused 413 unread, and takes none.
    if (announcesBody(request.raw)) {
      const bytes = announcedLength(request);
      if (bytes === undefined || bytes <= bodyLimitOf(request)) reply.raw.once('close', budgets.claimBody(request.principal, bytes));
    }
  });

  // Answers made before the hook above ran (the rate limiter's 429) still get both headers.
  app.addHook('onSend', (_request, reply, payload, done) => {
    const id = reply.getHeader('x-request-id');
    if (typeof id === 'string' && reply.getHeader('request-id') === undefined) setRequestIdHeaders(reply, id);
    done(null, payload);
  });

  // Long-lived streams re-authenticate their request's credential before every delivery, exactly
  // as the hook above would for a fresh request (platform.md "Project Events": authorised as of now).
  const reauthenticate = async (request: FastifyRequest): Promise<void> => {
    if (request.forwarded) return;
    const principal = hostAuthenticate ? await authenticateWithHost(hostAuthenticate, request) : await services.platform.authenticate(...keyOf(request));
    if (!samePrincipal(request.principal, principal)) throw new InboxKitError('invalid_credentials', 'The API key is unknown or revoked');
  };

  app.setErrorHandler(errorHandler);
  // Under a prefix, unknown paths below it are ours to answer; without one, 404s stay the host's.
  if (app.prefix !== '') app.setNotFoundHandler(notFound);

  registerStreamShutdown(app);
  registerRoutes(app, services, opts.streamTiming, reauthenticate);
};

/**
 * Starts observing `request` with `observer` (once: under `createServer` the root's hook already
 * did); the observation ends when the response closes (sent, or the connection gone first).
 */
export function startObservation(request: FastifyRequest, reply: FastifyReply, observer: HttpObserver | undefined): void {
  if (observer === undefined || request.observation) return;
  const observation = observeRequest(observer, { method: request.method, route: request.is404 ? null : request.routeOptions.url ?? null });
  request.observation = observation;
  reply.raw.once('close', () => observation.end({ status: reply.raw.statusCode, aborted: !reply.raw.writableFinished }));
}

/** The request decorations (`requestId`, `principal`, `forwarded`, `observation`), unless the host or `createServer` already added them. */
export function decorateRequests(app: FastifyInstance): void {
  if (!app.hasRequestDecorator('observation')) app.decorateRequest('observation', null);
  if (!app.hasRequestDecorator('requestId')) app.decorateRequest('requestId', '');
  if (!app.hasRequestDecorator('principal')) app.decorateRequest('principal', null);
  if (!app.hasRequestDecorator('forwarded')) app.decorateRequest('forwarded', false);
}

export type { FastifyInstance };
