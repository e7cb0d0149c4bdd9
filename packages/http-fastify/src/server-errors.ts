/**
 * The preset's envelope at the root of its server (`createServer` owns the root error handler):
 * what the plugin's handler answers (`thrownAnswer`), plus Fastify's schema validation failures
 * of routes a host adds to the preset's instance (400 `validation_error`, one detail per failure),
 * and `x-should-retry` on every error answer, whoever made it (platform.md "Errors").
 */
import { envelope, SHOULD_RETRY_HEADER, shouldRetry, thrownAnswer, type ErrorAnswer } from '@inbox-kit/core/http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errorHandler } from './plugin.js';

/** One failure of Fastify's (Ajv's) validation, as Fastify puts it on the error's `validation`. */
interface ValidationIssue {
  instancePath?: string;
  message?: string;
  keyword?: string;
}

/** `thrownAnswer`, with a Fastify validation error as 400 `validation_error` (details `querystring.limit`, …). */
function rootAnswerOf(error: unknown, request_id: string): ErrorAnswer {
  const fe = error as { validation?: ValidationIssue[]; validationContext?: string } | null;
  if (!Array.isArray(fe?.validation)) return thrownAnswer(error, request_id);
  const where = fe.validationContext ?? 'request';
  const details = fe.validation.map((v) => ({
    path: [where, ...(v.instancePath ?? '').split('/').filter(Boolean)].join('.'),
    message: v.message ?? 'is invalid',
    ...(v.keyword ? { code: v.keyword } : {}),
  }));
  return { status: 400, body: envelope(400, 'validation_error', `Invalid ${where}`, details, request_id), unexpected: false };
}

/** The root error handler of `createServer`: every error in the envelope; unexpected ones logged, not shown. */
export function rootErrorHandler(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
  errorHandler(error, request, reply, rootAnswerOf(error, request.requestId));
}

/** Sets `x-should-retry` on an error answer that has none yet (the preset's own 429 / 503). */
export function setShouldRetryHeader(reply: FastifyReply): void {
  const retry = shouldRetry(reply.statusCode);
  if (retry !== undefined && reply.getHeader(SHOULD_RETRY_HEADER) === undefined) void reply.header(SHOULD_RETRY_HEADER, String(retry));
}
