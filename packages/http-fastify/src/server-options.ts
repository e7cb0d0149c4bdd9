/**
 * `inboxKitServerOptions()`: the Fastify server options for a host that registers `inboxKit` on its
 * own instance (`Fastify({ ...inboxKitServerOptions(), logger: true })`). A plugin cannot set them,
 * and without them three kinds of hostile request leave outside the error envelope (platform.md
 * "Errors"; README "What `createServer` adds that the plugin cannot"). `createServer` uses these.
 */
import { answerClientError, envelopeOf, malformedPathError, requestIdHeaders, requestIdReusing, thrownAnswer } from '@inbox-kit/core/http';
import type { FastifyReply, FastifyServerOptions } from 'fastify';

/** The options {@link inboxKitServerOptions} returns; spread them into `Fastify({ … })`. */
export type InboxKitServerOptions = Pick<FastifyServerOptions, 'routerOptions' | 'frameworkErrors' | 'clientErrorHandler'>;

/**
 * The recommended server options, for the whole server (the host's routes too):
 * `routerOptions.maxParamLength: 1024` (a longer path segment than Fastify's 100 reaches the route:
 * ids are up to 128, longer fail validation, 400 — not Fastify's bare 414); `frameworkErrors` (what
 * Fastify refuses before routing, e.g. an undecodable path, in the envelope with request ids and
 * `x-should-retry`); and
 * `clientErrorHandler` (`answerClientError`: what Node's parser refuses, 431 / 400 / 408, in the envelope).
 */
export function inboxKitServerOptions(): InboxKitServerOptions {
  return {
    routerOptions: { maxParamLength: 1024 },
    frameworkErrors: (error, request, reply) => {
      // The id of the request's log lines, as on every other answer.
      const request_id = requestIdReusing(request.headers['x-request-id'], String(request.id));
      const { status, body, headers } = error.code === 'FST_ERR_BAD_URL' ? envelopeOf(malformedPathError(), request_id) : thrownAnswer(error, request_id);
      // x-should-retry (and retry-after on a 429 / 503) as on every error answer (platform.md "Errors" → "Retries").
      void (reply as FastifyReply).headers({ ...requestIdHeaders(request_id), ...headers }).code(status).type('application/json; charset=utf-8').send(body);
    },
    clientErrorHandler: answerClientError,
  };
}
