/**
 * Load protection of `createServer`, every refusal in the one error envelope with `x-request-id`
 * and a `Retry-After` header (seconds):
 *
 * - **Load shedding** (`@fastify/under-pressure`): while the process is over a threshold (event
 *   loop delay or utilisation, heap, RSS) or an external health check fails, new requests get
 *   503 `overloaded` before any work (authentication included) is done for them.
 * - **Rate limits** (`@fastify/rate-limit`), off unless configured: a fixed window of `max`
 *   requests per `timeWindowMs` per API key (the key that authenticated the request, whichever
 *   account it acts as), or per client IP on public routes; over it, 429 `rate_limited`. Requests
 *   refused with 401 are not counted. The counters live in the process (one window per process).
 * - **Shutdown**: once `app.close()` has begun, requests that arrive on still-open connections get
 *   503 `overloaded` with `Connection: close` (instead of Fastify's bare 503); requests in flight
 *   finish normally, answered with `Connection: close` so `close()` does not wait for idle
 *   keep-alive sockets.
 */
import rateLimit from '@fastify/rate-limit';
import underPressure from '@fastify/under-pressure';
import { InboxKitError } from '@inbox-kit/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { requestIdFor, setRequestIdHeaders } from './context.js';
import { envelope } from './errors.js';

/** Thresholds of the load shedding (`@fastify/under-pressure`); a threshold of 0 is not checked. */
export interface UnderPressureOptions {
  /** Shed while the mean event-loop delay of the last sample is over this many ms (default 1,000). */
  maxEventLoopDelay?: number;
  /** Shed while event-loop utilisation over the last sample interval is over this fraction, 0–1 (default 0: off). */
  maxEventLoopUtilization?: number;
  /** Shed while the V8 heap in use is over this many bytes (default 0: off). */
  maxHeapUsedBytes?: number;
  /** Shed while the resident set is over this many bytes (default 0: off). */
  maxRssBytes?: number;
  /** Sampling interval of the metrics in ms (default 1,000). */
  sampleInterval?: number;
  /**
   * An external health check (e.g. the database answers); while it resolves `false` or throws,
   * requests are shed. Run at start (the server is unhealthy until it first returns true) and every
   * `healthCheckInterval` ms.
   */
  healthCheck?: () => Promise<boolean>;
  /** Interval of `healthCheck` in ms (default 5,000). */
  healthCheckInterval?: number;
  /** `Retry-After` of a shed request, in seconds (default 10). */
  retryAfter?: number;
}

/** A per-key rate limit (`@fastify/rate-limit`). */
export interface RateLimitOptions {
  /** Requests allowed per key in one window (≥ 1). */
  max: number;
  /** Length of the window in ms (≥ 1). */
  timeWindowMs: number;
}

/** Defaults of {@link UnderPressureOptions}. */
export const UNDER_PRESSURE_DEFAULTS = { maxEventLoopDelay: 1_000, retryAfter: 10, healthCheckInterval: 5_000 } as const;

/** `Retry-After` (seconds) of a request refused because the server is closing. */
const CLOSING_RETRY_AFTER = 1;

/**
 * Answers 503 `overloaded` in the envelope with `Retry-After`, and resolves once the answer is
 * written (so no later hook or handler runs for the request).
 */
async function refuse(request: FastifyRequest, reply: FastifyReply, retryAfter: number, message: string, close: boolean): Promise<void> {
  request.requestId = requestIdFor(request.headers['x-request-id']);
  void setRequestIdHeaders(reply, request.requestId).code(503).header('retry-after', String(retryAfter))
    .type('application/json; charset=utf-8');
  if (close) void reply.header('connection', 'close');
  void reply.send(envelope(503, 'overloaded', message, [], request.requestId));
  await reply;
}

/** Registers load shedding, rate limits and the closing refusal on `app` (before the routes). */
export async function registerProtection(
  app: FastifyInstance,
  options: { underPressure?: UnderPressureOptions | false; rateLimit?: RateLimitOptions | false },
): Promise<void> {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (request, reply) => {
    if (closing) await refuse(request, reply, CLOSING_RETRY_AFTER, 'The server is shutting down; retry shortly', true);
  });
  // A request in flight when closing began is answered normally, but its connection is not kept
  // alive: otherwise the idle socket would hold `close()` until the keep-alive timeout.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) void reply.header('connection', 'close');
    done(null, payload);
  });

  if (options.underPressure !== false) {
    const o = options.underPressure ?? {};
    const retryAfter = o.retryAfter ?? UNDER_PRESSURE_DEFAULTS.retryAfter;
    const check = o.healthCheck;
    await app.register(underPressure, {
      maxEventLoopDelay: o.maxEventLoopDelay ?? UNDER_PRESSURE_DEFAULTS.maxEventLoopDelay,
      maxEventLoopUtilization: o.maxEventLoopUtilization ?? 0,
      eventLoopUtilizationMode: 'interval',
      maxHeapUsedBytes: o.maxHeapUsedBytes ?? 0,
      maxRssBytes: o.maxRssBytes ?? 0,
      ...(o.sampleInterval !== undefined ? { sampleInterval: o.sampleInterval } : {}),
      ...(check ? { healthCheck: async () => (await check()) === true, healthCheckInterval: o.healthCheckInterval ?? UNDER_PRESSURE_DEFAULTS.healthCheckInterval } : {}),
      retryAfter,
      pressureHandler: (request, reply) => refuse(request, reply, retryAfter, 'The server is overloaded; retry later', false),
    });
  }

  if (options.rateLimit) {
    const { max, timeWindowMs } = options.rateLimit;
    if (!Number.isInteger(max) || max < 1) throw new TypeError(`rateLimit.max must be an integer ≥ 1, got ${max}`);
    if (!Number.isInteger(timeWindowMs) || timeWindowMs < 1) throw new TypeError(`rateLimit.timeWindowMs must be an integer ≥ 1, got ${timeWindowMs}`);
    await app.register(rateLimit, {
      global: true,
      max,
      timeWindow: timeWindowMs,
      // Route-level onRequest hooks run after the root's, so authentication has set the principal.
      hook: 'onRequest',
      keyGenerator: (request) => (request.principal ? `key:${request.principal.key_id}` : `ip:${request.ip}`),
      // A forwarded request was counted by the process the client called.
      allowList: (request) => request.forwarded,
      errorResponseBuilder: (_request, context) =>
        new InboxKitError('rate_limited', `Rate limit of ${context.max} requests per ${timeWindowMs} ms exceeded; retry in ${context.after}`),
    });
  }
}
