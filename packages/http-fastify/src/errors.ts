/**
 * The error envelope on Fastify (platform.md "Errors"): what Fastify or a host's hook throws on the
 * plugin's routes leaves in the contract's one envelope, through the contract's one table
 * (`thrownAnswer` of `@inbox-kit/core/http`). A 500 never shows a stack, SQL or the original message.
 */
import { envelopeOf, malformedPathError, thrownAnswer, type ErrorAnswer } from '@inbox-kit/core/http';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** The answer to a thrown value: Fastify's router refusing a path whose percent-encoding does not decode is the contract's 400, anything else `thrownAnswer`. */
export function errorAnswerOf(error: unknown, request_id: string): ErrorAnswer {
  if ((error as { code?: unknown } | null)?.code === 'FST_ERR_BAD_URL') return envelopeOf(malformedPathError(), request_id);
  return thrownAnswer(error, request_id);
}

/** Fastify error handler: every error leaves in the envelope (`answer`, by default {@link errorAnswerOf}); unexpected ones are logged, not shown. */
export function errorHandler(error: unknown, request: FastifyRequest, reply: FastifyReply, answer = errorAnswerOf(error, request.requestId)): void {
  if (answer.unexpected) request.log.error({ err: error }, 'unexpected error');
  if (answer.headers !== undefined) void reply.headers(answer.headers);
  void reply.code(answer.status).type('application/json; charset=utf-8').send(answer.body);
}
