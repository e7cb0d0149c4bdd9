/**
 * The plugin's routes in a host's own `@fastify/swagger` document: hidden by default, or
 * (`inHostDocument: true`) listed with the JSON Schemas of inbox-kit's own document, never zod
 * internals. Fastify never sees the routes' zod schemas: the pipeline validates and serialises.
 */
import type { SwaggerTransform } from '@fastify/swagger';
import { zodToJsonSchema, type RouteDeclaration } from '@inbox-kit/core/http';
import type { FastifyInstance } from 'fastify';

/** A route as an operation of a host's document: its request parts as input JSON Schemas, its success response as output. */
function operationOf(route: RouteDeclaration): Record<string, unknown> {
  const input = (part: NonNullable<RouteDeclaration['body']>) => zodToJsonSchema(part, 'input');
  return {
    operationId: route.operationId, tags: route.tags, summary: route.summary,
    ...(route.description !== undefined ? { description: route.description } : {}),
    ...(route.params ? { params: input(route.params) } : {}),
    ...(route.query ? { querystring: input(route.query) } : {}),
    ...(route.headers ? { headers: input(route.headers) } : {}),
    ...(route.body ? { body: input(route.body) } : {}),
    ...(route.stream ? { produces: ['text/event-stream'] } : {}),
    ...(route.public ? { security: [] } : {}),
    response: { [route.status]: zodToJsonSchema(route.response, 'output') },
  };
}

/**
 * The `config.swaggerTransform` of a plugin's route (`@fastify/swagger` prefers it to a document's own `transform`):
 * hidden, or (`include`) the operation of `route`; a route outside the table (a preflight, a reference page) as it is.
 */
export function hostDocumentTransform(include: boolean, route?: RouteDeclaration): SwaggerTransform {
  return ({ schema, url }) => ({ schema: (!include ? { hide: true } : route ? operationOf(route) : schema ?? {}) as never, url });
}

/** Gives the routes `app`'s scope adds after this call without a `swaggerTransform` of their own the one of a route outside the table. */
export function hideFromHostDocuments(app: FastifyInstance, include: boolean): void {
  const swaggerTransform = hostDocumentTransform(include);
  app.addHook('onRoute', (route) => {
    const config = route.config as { swaggerTransform?: SwaggerTransform } | undefined;
    route.config = { ...config, swaggerTransform: config?.swaggerTransform ?? swaggerTransform } as typeof route.config;
  });
}
