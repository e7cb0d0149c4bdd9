/**
 * The OpenAPI 3.1 description of the server, generated from the same zod schemas that validate
 * requests and serialise responses (no hand-written copy), and the interactive API reference.
 * `@fastify/swagger` collects the routes (registered from the contract's table); the head and the
 * finishing touches are the contract's (`openApiHead`, `decorateOpenApiDocument` of
 * `@inbox-kit/core/http`), so the document agrees with `openApiDocument` that other adapters serve.
 *
 * - `GET /openapi.json` (public): the document. Every route registered after this plugin is in it
 *   (except those marked `schema: { hide: true }`), with its parameters, body and responses.
 * - `GET /docs` (public): Swagger UI, served from the package's own files (no CDN, works offline).
 * - Security schemes `bearerAuth` (`Authorization: Bearer <key>`) and `apiKeyHeader`
 *   (`x-api-key`); routes with `config: { public: true }` need neither.
 * - The one error envelope is the shared component `#/components/schemas/ErrorEnvelope`, and every
 *   operation's 4xx/5xx responses reference it (`#/components/responses/*`).
 *
 * Register it before the routes (the root plugin does); `@fastify/swagger` only sees routes added
 * after it.
 *
 * `/docs` needs `@fastify/swagger-ui`, an optional peer dependency (the `createServer` preset's
 * users install it): it is imported only when the reference is served. When it is not installed,
 * the default (`docsPrefix` not given) serves the document without the reference and logs a
 * warning; an explicit `docsPrefix` fails the registration with an error naming the package.
 */
import { createRequire } from 'node:module';
import fastifySwagger from '@fastify/swagger';
import type { SwaggerTransform, SwaggerTransformObject } from '@fastify/swagger';
import { decorateOpenApiDocument, openApiHead, openApiRoute, OPENAPI_DOCUMENT_PATH, zodToJsonSchema } from '@inbox-kit/core/http';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import { z } from 'zod';

export { ERROR_KINDS, errorDetailSchema, errorEnvelopeSchema } from '@inbox-kit/core/http';

/** Options of {@link inboxKitOpenApi}. */
export interface InboxKitOpenApiOptions {
  /** Path of the JSON document (default `/openapi.json`). */
  documentPath?: string;
  /** Prefix of the interactive API reference (default `/docs`); `false` serves none. */
  docsPrefix?: string | false;
  /** Overrides of the document's `info` (default title `inbox-kit`, version of this package). */
  info?: { title?: string; version?: string; description?: string };
  /** The document's `servers` (default none: relative to where the document was fetched). */
  servers?: Array<{ url: string; description?: string }>;
  /**
   * Whether a host's own `@fastify/swagger` document (registered by the host, outside this
   * plugin) lists the routes of this scope (default `false`: hidden there, listed only in this
   * document); `true` lists them there with this document's JSON Schemas, never zod internals.
   */
  inHostDocument?: boolean;
}

type Json = Record<string, unknown>;

/** This package's version (the document's default `info.version`); `../package.json` from `src/` and from `dist/`. */
const packageVersion = (createRequire(import.meta.url)('../package.json') as { version: string }).version;

const isZod = (value: unknown): value is z.ZodType => value instanceof z.ZodType;

/**
 * The route transform: each zod schema of the route (`body`, `querystring`, `params`, `headers`,
 * and every `response`) becomes its JSON Schema (the contract's `zodToJsonSchema`); public routes
 * (`config.public`) get `security: []`. This replaces `jsonSchemaTransform` of
 * fastify-type-provider-zod 6.1, whose union clean-up drops a union member that is a transform
 * while it is still unresolved (every `optionalText` field came out as `type: null` only).
 */
const transform: SwaggerTransform = ({ schema, url, route }) => {
  const out: Json = {};
  for (const [key, value] of Object.entries((schema ?? {}) as Json)) {
    if (key === 'response' && value && typeof value === 'object') {
      out['response'] = Object.fromEntries(
        Object.entries(value as Json).map(([status, s]) => [status, isZod(s) ? zodToJsonSchema(s, 'output') : s]),
      );
    } else if (['body', 'querystring', 'params', 'headers'].includes(key) && isZod(value)) {
      out[key] = zodToJsonSchema(value, 'input');
    } else {
      out[key] = value;
    }
  }
  if (route.config?.public === true) out['security'] = [];
  return { schema: out, url };
};

/** The contract's finishing touches: shared components, error responses and common headers on every operation. */
const transformObject: SwaggerTransformObject = (input) => {
  if (!('openapiObject' in input)) throw new Error('inbox-kit: only OpenAPI 3 documents are generated');
  return decorateOpenApiDocument(input.openapiObject as Json) as typeof input.openapiObject;
};

/**
 * `@fastify/swagger-ui`, imported on demand; `undefined` when it is not installed and not
 * `required`.
 *
 * @throws Error naming the package when it is `required` and not installed.
 */
async function loadSwaggerUi(required: boolean): Promise<typeof import('@fastify/swagger-ui').default | undefined> {
  try {
    return (await import('@fastify/swagger-ui')).default;
  } catch (error) {
    const e = error as { code?: string; message?: string };
    const missing = (e?.code === 'ERR_MODULE_NOT_FOUND' || e?.code === 'MODULE_NOT_FOUND') && (e.message ?? '').includes('@fastify/swagger-ui');
    if (!missing) throw error;
    if (!required) return undefined;
    throw new Error('inboxKitOpenApi: docsPrefix needs @fastify/swagger-ui (an optional peer dependency): npm install @fastify/swagger-ui', { cause: error });
  }
}

/**
 * Keeps the routes of `app`'s scope (those added after this call, its child scopes' included) out
 * of every `@fastify/swagger` document but `own` (identified by its `info` object, which
 * `@fastify/swagger` keeps as given), or with `include` lists them in those too, transformed as in
 * `own`: each route gets a `config.swaggerTransform`, which `@fastify/swagger` prefers to a
 * document's own `transform`. Without it, a host's document registered at the root collects these
 * routes with their zod schemas as they are (zod internals as JSON Schema).
 */
export function hideFromHostDocuments(app: FastifyInstance, include: boolean, own?: { info: unknown }): void {
  const swaggerTransform: SwaggerTransform = (input) => {
    const document = (input as { openapiObject?: { info?: unknown } }).openapiObject;
    const ours = own !== undefined && document?.info === own.info;
    return ours || include ? transform(input) : { schema: { hide: true } as never, url: input.url };
  };
  app.addHook('onRoute', (route) => {
    route.config = { ...(route.config as object | undefined), swaggerTransform } as typeof route.config;
  });
}

const openApiPlugin: FastifyPluginAsync<InboxKitOpenApiOptions> = async (app, opts) => {
  const documentPath = opts.documentPath ?? OPENAPI_DOCUMENT_PATH;
  const docsPrefix = opts.docsPrefix === undefined ? '/docs' : opts.docsPrefix;
  const head = openApiHead({ info: { ...opts.info, version: opts.info?.version ?? packageVersion }, ...(opts.servers ? { servers: opts.servers } : {}) }) as { info: unknown };
  hideFromHostDocuments(app, opts.inHostDocument ?? false, head);

  await app.register(fastifySwagger, {
    openapi: head as never,
    transform,
    transformObject,
  });

  app.get(documentPath, {
    config: { public: true },
    schema: { operationId: openApiRoute.operationId, tags: [...openApiRoute.tags], summary: openApiRoute.summary, security: [], response: { 200: openApiRoute.response } },
  }, async (_request, reply) => reply.type('application/json; charset=utf-8').send(app.swagger()));

  const swaggerUi = docsPrefix === false ? undefined : await loadSwaggerUi(opts.docsPrefix !== undefined);
  if (swaggerUi === undefined && docsPrefix !== false) {
    app.log.warn('inbox-kit: /docs is not served: install @fastify/swagger-ui (an optional peer) for the API reference');
  }
  if (docsPrefix !== false && swaggerUi !== undefined) {
    // A child scope, so the hook that marks the reference's routes public touches only them.
    await app.register(async (scope) => {
      scope.addHook('onRoute', (route) => {
        route.config = { ...(route.config as object | undefined), public: true } as typeof route.config;
      });
      await scope.register(swaggerUi, {
        routePrefix: docsPrefix,
        // Everything is served from the package's own files; the online validator badge stays off
        // (its default here), so the page needs no network beyond this server.
        uiConfig: { deepLinking: true, tryItOutEnabled: false, persistAuthorization: false },
      });
    });
  }
};

/**
 * Registers `@fastify/swagger` (OpenAPI 3.1 from the routes' zod schemas), the public
 * `GET /openapi.json` and the public interactive reference at `/docs` (Swagger UI, offline).
 * Register before the routes. Options: {@link InboxKitOpenApiOptions}.
 */
export const inboxKitOpenApi = fp(openApiPlugin, { name: '@inbox-kit/http-fastify/openapi', fastify: '5.x' });
