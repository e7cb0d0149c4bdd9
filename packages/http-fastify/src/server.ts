/**
 * `createServer`: a Fastify instance with inbox-kit's recommended options (body limit, request
 * ids, no logging of request bodies, the connection policy, per-caller budgets, load shedding,
 * optional rate limits, graceful close) and the routes plugin registered at the root, plus the
 * envelope for 404s and errors outside the routes.
 * Embedders that own their Fastify instance register `inboxKit` themselves instead (it changes
 * nothing of the host).
 */
import { readFileSync } from 'node:fs';
import {
  connectionPolicy, fdLimitFromProcLimits, guardConnections, observeRequest, requestIdFor, requestIdReusing, type ConnectionPolicyOptions, type CorsOptions,
  type CredentialThrottleOptions, type HttpObserver,
} from '@inbox-kit/core/http';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { swaggerUi } from './docs.js';
import { decorateRequests, inboxKit, servedByPipeline, serveAtRoot, type InboxKitPluginOptions, type InboxKitServices } from './plugin.js';
import { registerProtection, type RateLimitOptions, type UnderPressureOptions } from './protection.js';
import { inboxKitServerOptions } from './server-options.js';
import { rootErrorHandler, setShouldRetryHeader } from './server-errors.js';

export interface CreateServerOptions {
  services: InboxKitServices;
  /** Maximum request body in bytes (default 1 MiB = 1,048,576). Larger bodies get 413. */
  bodyLimit?: number;
  /**
   * Time a request body has to arrive, in ms from the request's start (default 30,000; 0: no
   * deadline). Past it: 408 `request_timeout` in the envelope and the socket closed. Any answer
   * sent before its request's body arrived (401, 413 …) closes the socket too (`body-deadline.ts`).
   */
  bodyTimeoutMs?: number;
  /**
   * Fastify logger option (default: off). When on, each answered request is logged once, at
   * `info`, as one line: `{ reqId, method, url, status, ms, msg: "request" }` (`reqId` is the
   * response's `x-request-id`, `ms` the response time to 0.1 ms), instead of Fastify's
   * "incoming request" / "request completed" pair.
   */
  logger?: FastifyServerOptions['logger'];
  /** SSE heartbeat and retry hint. */
  streamTiming?: InboxKitPluginOptions['streamTiming'];
  /**
   * Load shedding: 503 `overloaded` with `Retry-After` while the process is over a threshold
   * (default: mean event-loop delay over 1,000 ms; `Retry-After: 10`). `false` turns it off.
   */
  underPressure?: UnderPressureOptions | false;
  /**
   * Per-API-key rate limit (per client IP on public routes): 429 `rate_limited` with `Retry-After`
   * past `max` requests in `timeWindowMs`. Default: off.
   */
  rateLimit?: RateLimitOptions | false;
  /**
   * The connection policy (platform.md "Connections and request bodies"): total and per-address
   * socket caps (default: 70% of the process's file-descriptor limit, at most 10,000; a quarter
   * of that per address), `firstRequestTimeoutMs` (10,000: a socket that sends no request is
   * closed), `keepAliveTimeoutMs` (72,000: above a load balancer's 60 s) and `headersTimeoutMs`
   * (keep-alive + 1,000). Accept errors (`EMFILE` …) are logged; the server keeps serving.
   */
  connections?: ConnectionPolicyOptions;
  /** Requests with an unknown or revoked key per remote address before 429 `authentication_throttled` (default 100 per 60 s); `false`: off. See `InboxKitPluginOptions`. */
  credentialThrottle?: CredentialThrottleOptions | false;
  /** Request bodies one API key may have in flight (default 64); past it 429 `too_many_bodies`. */
  maxBodiesPerKey?: number;
  /** Bytes of request bodies one API key may have in flight (default 2 MiB; one body always passes); past it 429 `too_many_bodies`. */
  maxBodyBytesPerKey?: number;
  /** Bytes of request bodies one API key may send per second (default 8 MiB/s; 0: no limit); past it 429 `too_many_bodies`. */
  bodyBytesPerSecondPerKey?: number;
  /** Accept requests forwarded by other processes (attempt routing); see `InboxKitPluginOptions.forwarding`. */
  forwarding?: { secret: string };
  /** Check responses against their schemas (default: unless `NODE_ENV=production`); see `InboxKitPluginOptions.responseValidation`. */
  responseValidation?: boolean;
  /** CORS for exact origins (default off); see `InboxKitPluginOptions.cors`. */
  cors?: CorsOptions;
  /** Told of every request the server answers, the preset's own answers (404, 429, 503) included; see `InboxKitPluginOptions.observer`. */
  observer?: HttpObserver;
  /** The host's own authentication instead of API keys; see `InboxKitPluginOptions.authenticate`. */
  authenticate?: InboxKitPluginOptions['authenticate'];
}

/**
 * Fastify's own "incoming request" / "request completed" pair off (the `onResponse` hook below
 * logs one line instead): through `logController` where Fastify has it (5.12 and later, which
 * warn FSTDEP023 on the top-level `disableRequestLogging`), through that option before.
 */
function requestLoggingOff(): Pick<FastifyServerOptions, 'logController' | 'disableRequestLogging'> {
  const { LogController } = Fastify as unknown as { LogController?: new (options: { disableRequestLogging: boolean }) => FastifyServerOptions['logController'] };
  return LogController ? { logController: new LogController({ disableRequestLogging: true }) } : { disableRequestLogging: true };
}

/** Builds (but does not start) a Fastify server exposing every inbox-kit route. */
export async function createServer(options: CreateServerOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: options.bodyLimit ?? 1_048_576,
    genReqId: (request) => requestIdFor(request.headers['x-request-id']),
    ...requestLoggingOff(),
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    // Path params up to 1,024 characters, framework and client errors in the envelope (./server-options.ts).
    ...inboxKitServerOptions(),
    // While closing, requests on open connections get 503 in the envelope (./protection.ts).
    return503OnClosing: false,
  });
  // The preset owns the whole server: request ids, 404s (the pipeline's) and errors in the envelope at the root too.
  decorateRequests(app);
  // A callback hook (no promise per request).
  app.addHook('onRequest', (request, reply, done) => {
    const id = (request.requestId = requestIdReusing(request.headers['x-request-id'], request.id));
    void reply.header('x-request-id', id).header('request-id', id);
    // The answers the pipeline does not make (rate limits, load shedding, closing) are observed here.
    if (options.observer !== undefined) {
      const route = request.is404 ? null : request.routeOptions.url ?? null;
      reply.raw.once('close', () => {
        if (!servedByPipeline(request)) observeRequest(options.observer, { method: request.method, route }).end({ status: reply.raw.statusCode, aborted: !reply.raw.writableFinished });
      });
    }
    // An unknown path is the pipeline's, answered before Fastify parses its body (no `done`: nothing else runs for it).
    const served = request.is404 ? serveAtRoot(request, reply) : undefined;
    if (served === undefined) done();
    else served.catch(done);
  });
  // Every error answer carries `x-should-retry`, whoever made it (rate limiter, load shedding, …);
  // once closing has begun, an answer still in flight closes its connection (one hook for both).
  let closing = (): boolean => false;
  app.addHook('onSend', (_request, reply, payload, done) => {
    setShouldRetryHeader(reply);
    if (closing()) void reply.header('connection', 'close');
    done(null, payload);
  });
  app.setErrorHandler(rootErrorHandler);
  app.setNotFoundHandler(async (request, reply) => serveAtRoot(request, reply));
  if (options.logger) {
    app.addHook('onResponse', (request, reply, done) => {
      request.log.info({ method: request.method, url: request.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 }, 'request');
      done();
    });
  }
  // Sockets: caps, the first-request window, keep-alive above a load balancer's; accept errors logged, never thrown.
  const connections = guardConnections(app.server, connectionPolicy(options.connections, readFdLimit()), {
    onError: (error, context) => app.log.error({ err: error }, context === 'accept' ? 'accepting a connection failed; serving on' : 'connection policy timer failed'),
  });
  app.addHook('onClose', (_app, done) => {
    connections.close();
    done();
  });
  ({ closing } = await registerProtection(app, { underPressure: options.underPressure, rateLimit: options.rateLimit }));
  const { logger: _logger, underPressure: _underPressure, rateLimit: _rateLimit, connections: _connections, ...plugin } = options;
  // The API reference at /docs (Swagger UI, when @fastify/swagger-ui is installed: ./docs.ts).
  await app.register(inboxKit, { ...plugin, bodyLimit: options.bodyLimit ?? 1_048_576, openapi: { docs: swaggerUi } });
  return app;
}

/** The process's soft file-descriptor limit (Linux `/proc/self/limits`), or undefined elsewhere. */
function readFdLimit(): number | undefined {
  try {
    return fdLimitFromProcLimits(readFileSync('/proc/self/limits', 'utf8'));
  } catch {
    return undefined;
  }
}
