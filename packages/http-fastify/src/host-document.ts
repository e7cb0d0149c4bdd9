/**
 * The plugin's routes in a host's own `@fastify/swagger` document: hidden there by default, or
 * (`inHostDocument: true`) listed with the JSON Schemas of inbox-kit's own document (the contract's
 * `zodToJsonSchema`), never zod internals. inbox-kit's own document is the pipeline's.
 */
import type { SwaggerTransform } from '@fastify/swagger';
import { zodToJsonSchema, type RouteDeclaration } from '@inbox-kit/core/http';
import type { FastifyInstance, FastifySchema } from 'fastify';
import { z } from 'zod';

type Json = Record<string, unknown>;

const isZod = (value: unknown): value is z.ZodType => value instanceof z.ZodType;

/** The Fastify schema of a route the plugin serves (zod schemas, never compiled: the pipeline validates and serialises). */
export function routeSchema(route: RouteDeclaration): FastifySchema {
  return {
    operationId: route.operationId, tags: route.tags, summary: route.summary,
    ...(route.description !== undefined ? { description: route.description } : {}),
    ...(route.params ? { params: route.params } : {}),
    ...(route.query ? { querystring: route.query } : {}),
    ...(route.headers ? { headers: route.headers } : {}),
    ...(route.body ? { body: route.body } : {}),
    ...(route.stream ? { produces: ['text/event-stream'] } : {}),
    ...(route.public ? { security: [] } : {}),
    response: { [route.status]: route.response },
  } as FastifySchema;
}

/** A route's zod schemas as their JSON Schemas (request parts as input, responses as output). */
const transform: SwaggerTransform = ({ schema, url }) => {
  const out: Json = {};
  for (const [key, value] of Object.entries((schema ?? {}) as Json)) {
    if (key === 'response' && value && typeof value === 'object') {
      out['response'] = Object.fromEntries(Object.entries(value as Json).map(([status, s]) => [status, isZod(s) ? zodToJsonSchema(s, 'output') : s]));
    } else out[key] = ['body', 'querystring', 'params', 'headers'].includes(key) && isZod(value) ? zodToJsonSchema(value, 'input') : value;
  }
  return { schema: out, url };
};

/**
 * Keeps the routes of `app`'s scope (those added after this call) out of every `@fastify/swagger`
 * document, or with `include` lists them there, transformed: each route gets a
 * `config.swaggerTransform`, which `@fastify/swagger` prefers to a document's own `transform`.
 * Their zod schemas are never compiled (the pipeline validates and serialises).
 */
export function hideFromHostDocuments(app: FastifyInstance, include: boolean): void {
  const swaggerTransform: SwaggerTransform = (input) => (include ? transform(input) : { schema: { hide: true } as never, url: input.url });
  app.setValidatorCompiler(() => () => true);
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.addHook('onRoute', (route) => {
    route.config = { ...(route.config as object | undefined), swaggerTransform } as typeof route.config;
  });
}
