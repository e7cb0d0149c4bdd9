/**
 * `inboxKitServerOptions()`: the Fastify server options inbox-kit recommends for a host that
 * registers the `inboxKit` plugin on its own Fastify instance. A plugin cannot set them (Fastify
 * takes them when the instance is built), and without them three kinds of hostile request leave
 * outside the error envelope (platform.md "Errors"). `createServer` uses exactly these.
 *
 * ```ts
 * const app = Fastify({ logger: true, ...inboxKitServerOptions() });
 * await app.register(inboxKit, { prefix: '/inbox', services });
 * ```
 */
import { answerClientError, requestIdHeaders, requestIdReusing } from '@inbox-kit/core/http';
import type { FastifyReply, FastifyServerOptions } from 'fastify';
import { errorAnswerOf } from './errors.js';

/** The options {@link inboxKitServerOptions} returns; spread them into `Fastify({ … })`. */
export type InboxKitServerOptions = Pick<FastifyServerOptions, 'routerOptions' | 'frameworkErrors' | 'clientErrorHandler'>;

/**
 * The recommended Fastify server options, each applying to the whole server (the host's routes too):
 * - `routerOptions.maxParamLength: 1024` — path segments up to 1,024 characters reach the routes
 *   (ids are at most 128; longer ones fail validation: 400 in the envelope) instead of Fastify's
 *   bare 414 `FST_ERR_MAX_PARAM_LENGTH` (default limit 100).
 * - `frameworkErrors` — errors Fastify raises before routing (a path whose percent-encoding does
 *   not decode: 400 `validation_error`, …) leave in the envelope with request ids.
 * - `clientErrorHandler` — requests Node's HTTP parser refuses before Fastify sees them (request
 *   line or headers over the size limit: 431; garbage or smuggling: 400; a timeout: 408) are
 *   answered in the envelope, then the socket closes (`answerClientError` of `@inbox-kit/core/http`).
 */
export function inboxKitServerOptions(): InboxKitServerOptions {
  return {
    routerOptions: { maxParamLength: 1024 },
    frameworkErrors: (error, request, reply) => {
      // The id of the request's log lines, as on every other answer.
      const request_id = requestIdReusing(request.headers['x-request-id'], String(request.id));
      const { status, body } = errorAnswerOf(error, request_id);
      void (reply as FastifyReply).headers(requestIdHeaders(request_id)).code(status).type('application/json; charset=utf-8').send(body);
    },
    clientErrorHandler: answerClientError,
  };
}
