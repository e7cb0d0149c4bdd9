/**
 * The routes: one Fastify route per entry of the contract's table (`@inbox-kit/core/http`
 * `httpRoutesFor`), its schemas validating the request, serialising the response and feeding the
 * OpenAPI document. The adapter only translates: request parts in, the route's outcome out.
 */
import { httpRoutesFor, type HttpCall, type HttpOutcome, type HttpRoute, type HttpServices } from '@inbox-kit/core/http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ctxOf } from './context.js';
import { relayForwardedReply } from './forwarding.js';
import { sendEventStream, type StreamTiming } from './sse.js';

/** The call a route's `handle` gets for a Fastify request (parts already validated by the schemas). */
function callOf(request: FastifyRequest): HttpCall {
  return {
    ctx: () => ctxOf(request),
    params: request.params,
    query: request.query,
    body: request.body,
    headers: request.headers,
    forwarded: request.forwarded,
    lastEventId: request.headers['last-event-id'],
  };
}

/** Sends a route's outcome. */
async function answer(request: FastifyRequest, reply: FastifyReply, outcome: HttpOutcome, streamTiming: StreamTiming | undefined, reauthenticate: Reauthenticate | undefined): Promise<unknown> {
  switch (outcome.kind) {
    case 'json':
      if (outcome.headers) void reply.headers(outcome.headers);
      return reply.code(outcome.status).send(outcome.body);
    case 'empty':
      return reply.code(outcome.status).send();
    case 'forwarded':
      return relayForwardedReply(reply, outcome.reply);
    case 'stream':
      await sendEventStream(request, reply, outcome.feed, { after: outcome.after, ...streamTiming, reauthenticate: reauthenticate && (() => reauthenticate(request)) });
      return undefined;
  }
}

/** Re-authenticates a stream's request before every delivery (the plugin's credential check, again). */
export type Reauthenticate = (request: FastifyRequest) => Promise<void>;

/** Registers one route of the table. */
function registerRoute(app: FastifyInstance, route: HttpRoute, services: HttpServices, streamTiming: StreamTiming | undefined, reauthenticate: Reauthenticate | undefined): void {
  app.route({
    method: route.method,
    url: route.path,
    config: { ...(route.public ? { public: true } : {}), ...(route.forwardable ? { forwardable: true } : {}) },
    ...(route.precheckBody ? { preValidation: async (request: FastifyRequest) => route.precheckBody!(request.body) } : {}),
    schema: {
      operationId: route.operationId,
      tags: route.tags,
      summary: route.summary,
      ...(route.description !== undefined ? { description: route.description } : {}),
      ...(route.params ? { params: route.params } : {}),
      ...(route.query ? { querystring: route.query } : {}),
      ...(route.headers ? { headers: route.headers } : {}),
      ...(route.body ? { body: route.body } : {}),
      ...(route.stream ? { produces: ['text/event-stream'] } : {}),
      response: { [route.status]: route.response },
    },
    handler: async (request, reply) => {
      const call = () => route.handle(services, callOf(request));
      return answer(request, reply, await (request.observation ? request.observation.within(call) : call()), streamTiming, reauthenticate);
    },
  });
}

/** Registers every route the services serve (the runtime routes only with `services.runtime`); streams re-authenticate with `reauthenticate`. */
export function registerRoutes(app: FastifyInstance, services: HttpServices, streamTiming?: StreamTiming, reauthenticate?: Reauthenticate): void {
  for (const route of httpRoutesFor(services)) registerRoute(app, route, services, streamTiming, reauthenticate);
}
