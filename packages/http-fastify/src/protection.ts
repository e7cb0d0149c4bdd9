/**
 * Load protection of `createServer`, every refusal in the one error envelope with `x-request-id`
 * and a `Retry-After` header (seconds):
 *
 * - **Load shedding** (the contract's `createLoadShedder`, the same on every adapter): while the
 *   process is over a threshold (event-loop delay or utilisation, heap, RSS) or an external health
 *   check fails, new requests get 503 `overloaded` before any work (authentication included) is
 *   done for them. Its sampler never throws (a metric it cannot read, e.g. under `EMFILE`, keeps
 *   its last value and is logged).
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
import { InboxKitError } from '@inbox-kit/core';
import { createLoadShedder, envelope, LOAD_SHEDDING_DEFAULTS, requestIdFor, requestIdHeaders, type LoadSheddingOptions } from '@inbox-kit/core/http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Thresholds of the load shedding (the contract's `LoadSheddingOptions`); a threshold of 0 is not checked. */
export type UnderPressureOptions = LoadSheddingOptions;

/** A per-key rate limit (`@fastify/rate-limit`). */
export interface RateLimitOptions {
  /** Requests allowed per key in one window (≥ 1). */
  max: number;
  /** Length of the window in ms (≥ 1). */
  timeWindowMs: number;
}

/** Defaults of {@link UnderPressureOptions}. */
export const UNDER_PRESSURE_DEFAULTS = { maxEventLoopDelay: LOAD_SHEDDING_DEFAULTS.maxEventLoopDelay, retryAfter: LOAD_SHEDDING_DEFAULTS.retryAfter, healthCheckInterval: LOAD_SHEDDING_DEFAULTS.healthCheckInterval } as const;

/** `Retry-After` (seconds) of a request refused because the server is closing. */
const CLOSING_RETRY_AFTER = 1;

/** Answers 503 `overloaded` in the envelope with `Retry-After` (from a callback `onRequest` hook that then calls no `done`: no later hook or handler runs). */
function refuse(request: FastifyRequest, reply: FastifyReply, retryAfter: number, message: string, close: boolean): void {
  request.requestId = requestIdFor(request.headers['x-request-id']);
  void reply.headers(requestIdHeaders(request.requestId)).code(503).header('retry-after', String(retryAfter))
    .type('application/json; charset=utf-8');
  if (close) void reply.header('connection', 'close');
  void reply.send(envelope(503, 'overloaded', message, [], request.requestId));
}

/**
 * Registers load shedding, rate limits and the closing refusal on `app` (before the routes): one
 * `onRequest` hook for the closing refusal and the load shedding (a callback hook: no promise per
 * request). Returns whether closing has begun, for the preset's one `onSend` hook, which answers a
 * request still in flight then with `Connection: close`.
 */
export async function registerProtection(
  app: FastifyInstance,
  options: { underPressure?: UnderPressureOptions | false; rateLimit?: RateLimitOptions | false },
): Promise<{ closing: () => boolean }> {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  const shedder = options.underPressure === false
    ? undefined
    : createLoadShedder(options.underPressure ?? {}, (error, context) => app.log.error({ err: error }, `load shedding: ${context} failed; the last values stay`));
  if (shedder !== undefined) {
    app.addHook('onClose', (_app, done) => {
      shedder.close();
      done();
    });
  }
  app.addHook('onRequest', (request, reply, done) => {
    if (closing) return refuse(request, reply, CLOSING_RETRY_AFTER, 'The server is shutting down; retry shortly', true);
    const refusal = shedder?.refusal();
    if (refusal) return refuse(request, reply, refusal.retryAfterSeconds ?? LOAD_SHEDDING_DEFAULTS.retryAfter, refusal.message, false);
    done();
  });

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
  return { closing: () => closing };
}
