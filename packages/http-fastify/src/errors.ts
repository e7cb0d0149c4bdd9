/**
 * The error envelope on Fastify: the contract's one table (`@inbox-kit/core/http`) applied to
 * what Fastify throws — domain errors, schema validation failures, its own 4xx (platform.md "Errors"):
 * `{ "type": "error", "error": { "type", "code", "message", "details", "request_id" } }`.
 * A 500 never shows a stack, SQL or the original message.
 */
import { isInboxKitError } from '@inbox-kit/core';
import { envelope, envelopeForStatus, envelopeOf, malformedPathError, type ErrorAnswer } from '@inbox-kit/core/http';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';

export { STATUS_BY_CODE, errorKind, envelope, type ErrorEnvelope } from '@inbox-kit/core/http';

interface ZodLikeValidationIssue {
  instancePath?: string;
  message?: string;
  keyword?: string;
}

/** Maps any thrown value to `[status, envelope]`; unknown errors become a bare 500. */
export function toEnvelope(error: unknown, request_id: string): ErrorAnswer {
  if (isInboxKitError(error)) return envelopeOf(error, request_id);
  // Fastify's router refusing a path whose percent-encoding does not decode: the contract's 400.
  if ((error as { code?: unknown } | null)?.code === 'FST_ERR_BAD_URL') return envelopeOf(malformedPathError(), request_id);
  const fe = error as Partial<FastifyError> & { validation?: ZodLikeValidationIssue[]; validationContext?: string };
  if (Array.isArray(fe.validation)) {
    const where = fe.validationContext ?? 'request';
    const details = fe.validation.map((v) => ({
      path: [where, ...(v.instancePath ?? '').split('/').filter(Boolean)].join('.'),
      message: v.message ?? 'is invalid',
      ...(v.keyword ? { code: v.keyword } : {}),
    }));
    return { status: 400, body: envelope(400, 'validation_error', `Invalid ${where}`, details, request_id), unexpected: false };
  }
  if (typeof fe.statusCode === 'number') return envelopeForStatus(fe.statusCode, request_id, fe.message);
  return envelopeOf(error, request_id);
}

/** Fastify error handler: every error leaves in the envelope; unexpected ones are logged, not shown. */
export function errorHandler(this: unknown, error: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const { status, body, unexpected, headers } = toEnvelope(error, request.requestId);
  if (unexpected) request.log.error({ err: error }, 'unexpected error');
  if (headers !== undefined) void reply.headers(headers);
  void reply.code(status).type('application/json; charset=utf-8').send(body);
}
