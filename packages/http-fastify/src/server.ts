/**
 * `createServer`: a Fastify instance with inbox-kit's recommended options (body limit, request
 * ids, no logging of request bodies) and the plugin registered. Embedders that own their Fastify
 * instance register `inboxKit` themselves instead.
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyServerOptions } from 'fastify';
import { newRequestId, requestIdFor } from './context.js';
import { toEnvelope } from './errors.js';
import { inboxKit, type InboxKitServices } from './plugin.js';
import type { StreamTiming } from './sse.js';

export interface CreateServerOptions {
  services: InboxKitServices;
  /** Maximum request body in bytes (default 1 MiB = 1,048,576). Larger bodies get 413. */
  bodyLimit?: number;
  /** Fastify logger option (default: off). */
  logger?: FastifyServerOptions['logger'];
  /** SSE heartbeat and retry hint. */
  streamTiming?: StreamTiming;
}

/** Builds (but does not start) a Fastify server exposing every inbox-kit route. */
export async function createServer(options: CreateServerOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: options.bodyLimit ?? 1_048_576,
    genReqId: () => newRequestId(),
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    // Ids are up to 128 characters; longer path segments reach the routes and fail validation
    // (400 in the envelope) instead of Fastify's bare 414.
    routerOptions: { maxParamLength: 1024 },
    // Errors Fastify raises before routing (bad percent-encoding, …) leave in the envelope too.
    frameworkErrors: (error, request, reply) => {
      const request_id = requestIdFor(request.headers['x-request-id']);
      const { status, body } = toEnvelope(error, request_id);
      void (reply as FastifyReply).code(status).header('x-request-id', request_id).send(body);
    },
  });
  await app.register(inboxKit, { services: options.services, streamTiming: options.streamTiming });
  return app;
}
