/**
 * The OpenAPI 3.1 description of the server, generated from the same zod schemas that validate
 * requests and serialise responses (no hand-written copy), and the interactive API reference.
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
import { ERROR_CODES } from '@inbox-kit/core';
import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import { z } from 'zod';

/** One problem of a request, as listed in `error.details`. */
export const errorDetailSchema = z.object({
  path: z.string().describe('The field, as a dot path (`body.title`, `querystring.limit`)'),
  message: z.string(),
  code: z.string().optional().describe('A machine-readable reason, when there is one'),
});

/** The `error.type` values (by HTTP status; see `errorKind`). */
export const ERROR_KINDS = [
  'invalid_request_error', 'authentication_error', 'permission_error', 'not_found_error', 'request_too_large',
  'rate_limit_error', 'overloaded_error', 'api_error',
] as const;

/**
 * The error envelope every route answers every error with (platform.md "Errors"):
 * `{ "type": "error", "error": { type, code, message, details, request_id } }`.
 */
export const errorEnvelopeSchema = z
  .object({
    type: z.literal('error'),
    error: z.object({
      type: z.enum(ERROR_KINDS).describe('The error family, chosen by the HTTP status'),
      code: z.enum(ERROR_CODES).describe('The precise reason; the HTTP status follows from it'),
      message: z.string().describe('Safe to show; never a stack, SQL or another tenant\'s id'),
      details: z.array(errorDetailSchema),
      request_id: z.string().describe('Also sent as the `x-request-id` and `request-id` headers'),
    }),
  })
  .describe('The error envelope');

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
}

type Json = Record<string, unknown>;

/** This package's version (the document's default `info.version`); `../package.json` from `src/` and from `dist/`. */
const packageVersion = (createRequire(import.meta.url)('../package.json') as { version: string }).version;
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
const errorRef = (name: string) => ({ $ref: `#/components/responses/${name}` });

/** Error responses by status: the component name and when an operation gets it. */
const ERROR_RESPONSES: Array<{ status: string; name: string; description: string; when: (op: { auth: boolean; body: boolean; method: string; path: string }) => boolean }> = [
  { status: '400', name: 'BadRequest', description: 'Invalid request: `validation_error` (with one detail per problem), `invalid_cursor`, `project_inbox_payload_invalid`, `unsupported_capability` (`/v1/sessions`: a capability this runtime does not host — agent overrides, tools, resources, vaults, budgets)', when: (o) => o.auth || o.body },
  { status: '401', name: 'Unauthorized', description: 'No API key (`authentication_required`) or an unknown or revoked one (`invalid_credentials`)', when: (o) => o.auth },
  { status: '403', name: 'Forbidden', description: 'The caller\'s role does not allow this (`permission_denied`, `project_inbox_*_denied`)', when: (o) => o.auth },
  { status: '404', name: 'NotFound', description: 'Not found, or not visible to the caller (indistinguishable): `*_not_found` (`agent_not_found`: `POST /v1/sessions` names no configured agent)', when: (o) => o.auth },
  { status: '413', name: 'PayloadTooLarge', description: 'The body is over the server\'s limit (`payload_too_large`) or the payload over 256 KiB (`project_inbox_payload_too_large`)', when: (o) => o.body },
  { status: '415', name: 'UnsupportedMediaType', description: 'The body is not `application/json` (`unsupported_media_type`)', when: (o) => o.body },
  { status: '409', name: 'LiveInboxOrderConflict', description: 'The order is not an exact permutation of the current ids (`live_inbox_order_conflict`); nothing changed: read a fresh snapshot and retry once', when: (o) => o.method === 'put' && o.path.endsWith('/live-inbox/order') },
  { status: '409', name: 'LiveInboxFull', description: 'The Live Inbox holds its limit of messages (`live_inbox_full`, detail code `max_messages`) or the content would take it past its byte limit (`max_bytes`); nothing changed: wait for the next boundary or withdraw a message', when: (o) => (o.method === 'post' || o.method === 'put') && /\/live-inbox(\/\{[^}]+\})?$/.test(o.path) && !o.path.endsWith('/order') },
  { status: '410', name: 'LiveInboxInactive', description: 'No native attempt accepts live input (`live_inbox_inactive`): send the content as a durable Session event instead', when: (o) => o.method !== 'get' && o.path.includes('/live-inbox') },
  { status: '4XX', name: 'ClientError', description: 'Any other client error in the envelope: 409 (`conflict`, `project_archived`, `session_archived`, `session_running`, `project_inbox_invalid_transition`, `project_inbox_source_scope_mismatch`, `live_inbox_order_conflict`, `live_inbox_full`, `idempotency_key_reused`), 410 (`live_inbox_inactive`), 429 (`rate_limited`, `too_many_streams`)', when: () => true },
  { status: '5XX', name: 'ServerError', description: 'Server error in the envelope: 500 (`internal_error`, `session_ownership_unavailable`), 503 (`overloaded`); never a stack or SQL', when: () => true },
];

/**
 * One zod schema as a JSON Schema 2020-12 object (what OpenAPI 3.1 embeds): the request side
 * (`io: 'input'`, what a caller sends) or the response side (`io: 'output'`). Values JSON Schema
 * cannot express (a transform's function) become `{}`; `z.undefined()`/`z.null()` becomes
 * `{ type: 'null' }`, which `@fastify/swagger` renders as a response without content (204).
 */
function zodToJsonSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
  const kind = schema._zod.def.type;
  if (kind === 'undefined' || kind === 'null') {
    return { type: 'null', ...(schema.description ? { description: schema.description } : {}) };
  }
  const json = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any', cycles: 'throw', reused: 'inline' }) as Json;
  delete json['$schema'];
  delete json['$id'];
  return json;
}

const isZod = (value: unknown): value is z.ZodType => value instanceof z.ZodType;

/**
 * The route transform: each zod schema of the route (`body`, `querystring`, `params`, `headers`,
 * and every `response`) becomes its JSON Schema; public routes (`config.public`) get
 * `security: []`. This replaces `jsonSchemaTransform` of fastify-type-provider-zod 6.1, whose
 * union clean-up drops a union member that is a transform while it is still unresolved (every
 * `optionalText` field came out as `type: null` only); the conversion here is zod's own.
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

/** `getProjectsByIdInboxByItemId` from `get /projects/{id}/inbox/{item_id}`. */
function operationId(method: string, path: string): string {
  const words = path.split('/').filter(Boolean).map((seg) => {
    const param = /^\{(.+)\}$/.exec(seg);
    const word = (param ? param[1] : seg) ?? '';
    const camel = word.replace(/[-_.]+([A-Za-z0-9])/g, (_, c: string) => c.toUpperCase());
    return (param ? 'By' : '') + camel.charAt(0).toUpperCase() + camel.slice(1);
  });
  return method + words.join('');
}

/** Adds the shared components and, to every operation, its error responses and common headers. */
const transformObject: SwaggerTransformObject = (input) => {
  if (!('openapiObject' in input)) throw new Error('inbox-kit: only OpenAPI 3 documents are generated');
  const doc = input.openapiObject as Json & { components?: Json; paths?: Record<string, Json> };
  const components = (doc.components ??= {}) as Record<string, Json>;
  const requestIdHeader = {
    description: 'The request id: the caller\'s own `x-request-id` when it is 1–128 safe characters, else `req_…`; sent as both `x-request-id` and `request-id` (what `@anthropic-ai/sdk` reads into `err.requestID`)',
    schema: { type: 'string' },
  };
  components['schemas'] = { ...components['schemas'], ErrorEnvelope: zodToJsonSchema(errorEnvelopeSchema, 'output') };
  components['headers'] = { ...components['headers'], RequestId: requestIdHeader };
  components['parameters'] = {
    ...components['parameters'],
    AccountId: {
      name: 'x-account-id', in: 'header', required: false, schema: { type: 'string' },
      description: 'Act as this account of the key\'s workspace (service keys only; a standard key may name only its own account)',
    },
    RequestId: {
      name: 'x-request-id', in: 'header', required: false, schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$' },
      description: 'Your own request id, echoed in the `x-request-id` response header and in error envelopes',
    },
  };
  const responses: Json = { ...components['responses'] };
  for (const { name, description } of ERROR_RESPONSES) {
    responses[name] = {
      description,
      headers: { 'x-request-id': { $ref: '#/components/headers/RequestId' }, 'request-id': { $ref: '#/components/headers/RequestId' } },
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
    };
  }
  components['responses'] = responses;

  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of HTTP_METHODS) {
      const op = item[method] as (Json & { responses?: Record<string, Json>; parameters?: Json[]; security?: unknown[] }) | undefined;
      if (!op) continue;
      op['operationId'] ??= operationId(method, path);
      const auth = !(Array.isArray(op.security) && op.security.length === 0);
      const body = op['requestBody'] !== undefined;
      const opResponses = (op.responses ??= {});
      for (const response of Object.values(opResponses)) {
        if (!('$ref' in response)) {
          response['headers'] = {
            'x-request-id': { $ref: '#/components/headers/RequestId' }, 'request-id': { $ref: '#/components/headers/RequestId' }, ...(response['headers'] as Json | undefined),
          };
        }
      }
      for (const e of ERROR_RESPONSES) {
        if (e.when({ auth, body, method, path }) && opResponses[e.status] === undefined) opResponses[e.status] = errorRef(e.name);
      }
      const parameters = (op.parameters ??= []);
      if (auth) parameters.push({ $ref: '#/components/parameters/AccountId' });
      parameters.push({ $ref: '#/components/parameters/RequestId' });
    }
  }
  return doc;
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

const openApiPlugin: FastifyPluginAsync<InboxKitOpenApiOptions> = async (app, opts) => {
  const documentPath = opts.documentPath ?? '/openapi.json';
  const docsPrefix = opts.docsPrefix === undefined ? '/docs' : opts.docsPrefix;

  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: opts.info?.title ?? 'inbox-kit',
        version: opts.info?.version ?? packageVersion,
        description: opts.info?.description ??
          'The Project Inbox (derivers file suggestions, the project owner decides), the Live Inbox (steer an active agent Run) ' +
          'and the platform they stand on. Authenticate with an API key as `Authorization: Bearer <key>` or `x-api-key: <key>`; ' +
          'a service key may act as any account of its workspace with `x-account-id`. Every error is one envelope ' +
          '(`#/components/schemas/ErrorEnvelope`) and every response carries `x-request-id`.',
        license: { name: 'MIT', identifier: 'MIT' },
      },
      ...(opts.servers ? { servers: opts.servers } : {}),
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'An inbox-kit API key: `Authorization: Bearer <key>`' },
          apiKeyHeader: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'An inbox-kit API key in the `x-api-key` header' },
        },
      },
      security: [{ bearerAuth: [] }, { apiKeyHeader: [] }],
      tags: [
        { name: 'meta', description: 'Health and this description' },
        { name: 'identity', description: 'The calling account' },
        { name: 'projects', description: 'Projects owned by an account' },
        { name: 'members', description: 'Project members and their roles' },
        { name: 'project-inbox', description: 'Suggestions filed by derivers, decided by the project owner' },
        { name: 'events', description: 'Project Events (pages and a live SSE stream) and the Operation Log' },
        { name: 'sessions', description: 'Sessions, their Floors (committed turns) and Pages (versions)' },
        { name: 'managed-sessions', description: 'Managed Agents compatibility (`client.beta.sessions.*` of `@anthropic-ai/sdk`): Sessions with a configured agent' },
        { name: 'session-events', description: 'Durable Session input and committed history, in the Managed Agents wire shape (`client.beta.sessions.events.*`)' },
        { name: 'live-inbox', description: 'Best-effort steering of the active native Run of a Session' },
      ],
    },
    transform,
    transformObject,
  });

  app.get(documentPath, {
    config: { public: true },
    schema: {
      tags: ['meta'], summary: 'This OpenAPI 3.1 document', security: [],
      response: { 200: z.record(z.string(), z.unknown()).describe('The OpenAPI 3.1 document of this server') },
    },
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
