/**
 * The OpenAPI 3.1 document of the contract, generated from the route table ({@link HTTP_ROUTES})
 * and its zod schemas by framework-neutral functions, so every adapter serves the same document
 * (platform.md "HTTP contract"): `GET /openapi.json`, public.
 *
 * - {@link openApiDocument} builds the whole document from the routes an adapter serves.
 * - {@link zodToJsonSchema} and {@link decorateOpenApiDocument} are its parts, for adapters that
 *   let their framework collect the routes (http-fastify feeds `@fastify/swagger` with the same
 *   table and finishes the document with `decorateOpenApiDocument`).
 *
 * Security schemes `bearerAuth` (`Authorization: Bearer <key>`) and `apiKeyHeader` (`x-api-key`);
 * public routes need neither. The one error envelope is the component
 * `#/components/schemas/ErrorEnvelope`; every operation lists exactly the codes its route declares,
 * one response per status in that envelope (`./openapi-errors.ts`).
 */
import { z } from 'zod';
import { INTEGER_PARAMETER } from '../validation.js';
import { errorEnvelopeSchema } from './errors.js';
import { documentedErrorCodes, errorResponsesFor } from './openapi-errors.js';
import { HTTP_ROUTES, type HttpRoute, type HttpServices } from './routes.js';

type Json = Record<string, unknown>;

/** Path of the document in both adapters: `/openapi.json`. */
export const OPENAPI_DOCUMENT_PATH = '/openapi.json';

/** Options of {@link openApiDocument} (and of the adapters' `openapi` option). */
export interface OpenApiDocumentOptions {
  /** Overrides of `info` (default title `inbox-kit`; `version` is the adapter's package version). */
  info?: { title?: string; version?: string; description?: string };
  /** `servers` (default none: relative to where the document was fetched). */
  servers?: Array<{ url: string; description?: string }>;
  /**
   * Ids of the configured agents (`/v1/sessions` `agent`, e.g. `assistant`): given as `examples`
   * of the create body's `agent`, so a generator or a fuzzer can create a Session. Default none;
   * {@link openApiOptionsFor} reads them from the services.
   */
  agents?: readonly string[];
}

/** The document options the services imply: the configured agents' ids (`agents`). */
export function openApiOptionsFor(services: HttpServices): Pick<OpenApiDocumentOptions, 'agents'> {
  const agents = services.managedSessions?.configuredAgentIds ?? services.runtime?.agents.map((a) => a.id) ?? [];
  return agents.length > 0 ? { agents } : {};
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
/** The document's head: OpenAPI version, `info`, `servers`, security schemes, default security and tags (no paths). */
export function openApiHead(options: OpenApiDocumentOptions = {}): Json {
  return {
    openapi: '3.1.0',
    info: {
      title: options.info?.title ?? 'inbox-kit',
      version: options.info?.version ?? '0.0.0',
      description: options.info?.description ??
        'The Project Inbox (derivers file suggestions, the project owner decides), the Live Inbox (steer an active agent Run) ' +
        'and the platform they stand on. Authenticate with an API key as `Authorization: Bearer <key>` or `x-api-key: <key>`; ' +
        'a service key may act as any account of its workspace with `x-account-id`; a browser opens an event stream with a stream token (`POST /stream-tokens`) ' +
        'as `?access_token=`. Every error is one envelope (`#/components/schemas/ErrorEnvelope`) with `x-should-retry` (true on 408, 429, 503; false on every other 4xx), ' +
        'every response carries `x-request-id` and `request-id`, and a method a path does not declare is 405 with `Allow` (`#/components/responses/MethodNotAllowed`).',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    ...(options.servers ? { servers: options.servers } : {}),
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'An inbox-kit API key: `Authorization: Bearer <key>`' },
        apiKeyHeader: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'An inbox-kit API key in the `x-api-key` header' },
        streamToken: {
          type: 'apiKey', in: 'query', name: 'access_token',
          description: 'Event stream routes only: a stream token from `POST /stream-tokens` (RFC 6750 `access_token`), for an `EventSource` that cannot send `Authorization`. An API key is never accepted in a URL.',
        },
      },
    },
    security: [{ bearerAuth: [] }, { apiKeyHeader: [] }],
    tags: [
      { name: 'meta', description: 'Liveness (`/health`), readiness (`/ready`) and this description' },
      { name: 'identity', description: 'The calling account' },
      { name: 'projects', description: 'Projects owned by an account' },
      { name: 'members', description: 'Project members and their roles' },
      { name: 'project-inbox', description: 'Suggestions filed by derivers, decided by the project owner' },
      { name: 'events', description: 'Project Events (pages and a live SSE stream) and the Operation Log' },
      { name: 'sessions', description: 'Sessions, their Floors (committed turns) and Pages (versions)' },
      { name: 'agents', description: 'Managed Agents compatibility (`client.beta.agents.*` of `@anthropic-ai/sdk`): agents and their custom tools, versioned' },
      { name: 'managed-sessions', description: 'Managed Agents compatibility (`client.beta.sessions.*` of `@anthropic-ai/sdk`): Sessions with an agent' },
      { name: 'session-events', description: 'Durable Session input and committed history, in the Managed Agents wire shape (`client.beta.sessions.events.*`)' },
      { name: 'live-inbox', description: 'Best-effort steering of the active native Run of a Session' },
      { name: 'admin', description: 'Workspace administration with an API key of kind `admin`: accounts, API keys (create, list, rotate, revoke) and the log of these writes' },
    ],
  };
}

/**
 * One zod schema as a JSON Schema 2020-12 object (what OpenAPI 3.1 embeds): the request side
 * (`io: 'input'`, what a caller sends) or the response side (`io: 'output'`). Values JSON Schema
 * cannot express (a transform's function) become `{}`; `z.undefined()`/`z.null()` becomes
 * `{ type: 'null' }` (a response without content, 204).
 */
export function zodToJsonSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
  const kind = schema._zod.def.type;
  if (kind === 'undefined' || kind === 'null') {
    return { type: 'null', ...(schema.description ? { description: schema.description } : {}) };
  }
  const json = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any', cycles: 'throw', reused: 'inline', override: integerParameters }) as Json;
  delete json['$schema'];
  delete json['$id'];
  return json;
}

/**
 * `toJSONSchema` override: a parameter that arrives as digits (`queryInt`, the Live Inbox
 * `message_id`; metadata {@link INTEGER_PARAMETER}) is `{ type: integer, minimum, maximum }`, and a
 * default shows its value.
 */
function integerParameters(ctx: { zodSchema: z.core.$ZodType; jsonSchema: Record<string, unknown> }): void {
  const j = ctx.jsonSchema;
  const bounds = j[INTEGER_PARAMETER] as { minimum?: number; maximum?: number } | undefined;
  if (bounds !== undefined) {
    for (const key of Object.keys(j)) if (key !== 'description') delete j[key];
    Object.assign(j, { type: 'integer', ...bounds });
  }
  const def = ctx.zodSchema._zod.def as { type: string; defaultValue?: unknown };
  if (def.type === 'default' && j['default'] === undefined) {
    const value = typeof def.defaultValue === 'function' ? undefined : def.defaultValue;
    if (value !== undefined) j['default'] = value;
  }
}

/** `getProjectsByIdInboxByItemId` from `get /projects/{id}/inbox/{item_id}`. */
function operationIdOf(method: string, path: string): string {
  const words = path.split('/').filter(Boolean).map((seg) => {
    const param = /^\{(.+)\}$/.exec(seg);
    const word = (param ? param[1] : seg) ?? '';
    const camel = word.replace(/[-_.]+([A-Za-z0-9])/g, (_, c: string) => c.toUpperCase());
    return (param ? 'By' : '') + camel.charAt(0).toUpperCase() + camel.slice(1);
  });
  return method + words.join('');
}

/**
 * Finishes a document whose `paths` are filled: adds the shared components (the error envelope,
 * the request-id header, the `x-account-id` and `x-request-id` parameters, one response per error
 * class) and, to every operation, an `operationId` when it has none, the request-id headers on its
 * responses, its error responses and the common parameters. Mutates and returns `doc`.
 */
export function decorateOpenApiDocument<T extends Json>(doc: T, options: Pick<OpenApiDocumentOptions, 'agents'> = {}): T {
  const d = doc as Json & { components?: Json; paths?: Record<string, Json> };
  const components = (d.components ??= {}) as Record<string, Json>;
  const requestIdHeader = {
    description: 'The request id: the caller\'s own `x-request-id` when it is 1–128 safe characters, else `req_…`; sent as both `x-request-id` and `request-id` (what `@anthropic-ai/sdk` reads into `err.requestID`)',
    schema: { type: 'string' },
  };
  components['schemas'] = { ...components['schemas'], ErrorEnvelope: zodToJsonSchema(errorEnvelopeSchema, 'output') };
  components['headers'] = {
    ...components['headers'], RequestId: requestIdHeader,
    ShouldRetry: {
      description: 'Whether retrying the same request can succeed: `true` on 408, 429 and 503 (after `Retry-After` when given), `false` on every other 4xx; absent on other 5xx. The official Anthropic SDKs and inbox-kit\'s read it before their own retry rules.',
      schema: { type: 'string', enum: ['true', 'false'] },
    },
    RetryAfter: { description: 'Seconds to wait before retrying (429, 503)', schema: { type: 'integer', minimum: 0 } },
    Allow: { description: 'The methods this path answers, e.g. `GET, HEAD, POST`', schema: { type: 'string' } },
  };
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
  const errorHeaders = {
    'x-request-id': { $ref: '#/components/headers/RequestId' }, 'request-id': { $ref: '#/components/headers/RequestId' },
    'x-should-retry': { $ref: '#/components/headers/ShouldRetry' },
  };
  // Not referenced by an operation (each path answers it for the methods it does not declare).
  responses['MethodNotAllowed'] = {
    description: 'The path exists but does not answer this method (`method_not_allowed`); `Allow` lists the methods it answers. A path no route has is 404 `not_found`.',
    headers: { ...errorHeaders, allow: { $ref: '#/components/headers/Allow' } },
    content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
  };
  const routes = new Map(HTTP_ROUTES.map((r) => [r.operationId, r]));
  components['responses'] = responses;

  for (const [path, item] of Object.entries(d.paths ?? {})) {
    for (const method of HTTP_METHODS) {
      const op = item[method] as (Json & { responses?: Record<string, Json>; parameters?: Json[]; security?: unknown[] }) | undefined;
      if (!op) continue;
      op['operationId'] ??= operationIdOf(method, path);
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
      const declared = routes.get(op['operationId'] as string) ?? (op['operationId'] === openApiRoute.operationId ? openApiRoute : undefined);
      for (const [status, response] of Object.entries(errorResponsesFor(documentedErrorCodes(declared, { auth, body, method }), errorHeaders))) {
        opResponses[status] ??= response;
      }
      const parameters = (op.parameters ??= []);
      if (auth) parameters.push({ $ref: '#/components/parameters/AccountId' });
      parameters.push({ $ref: '#/components/parameters/RequestId' });
      const route = routes.get(op['operationId'] as string);
      // A body the route may go without (`POST /stream-tokens`, a rotation) is not required, on every adapter's document.
      const requestBody = op['requestBody'] as Json | undefined;
      if (requestBody !== undefined && route?.body !== undefined && route.body.safeParse(undefined).success) requestBody['required'] = false;
      if (route?.links !== undefined) {
        const success = opResponses[String(route.status)];
        if (success !== undefined) success['links'] = route.links;
      }
      if (route?.stream) {
        // The stream token is a security scheme of the stream routes, not a parameter of their own.
        op.parameters = parameters.filter((p) => !(p['in'] === 'query' && p['name'] === 'access_token'));
        op.security = [{ bearerAuth: [] }, { apiKeyHeader: [] }, { streamToken: [] }];
      }
      if (route?.operationId === 'createManagedSession' && options.agents !== undefined && options.agents.length > 0) documentAgents(op, options.agents);
    }
  }
  return doc;
}

/** Names the configured agents in the create body's `agent` (its string form, and the `id` of the object forms) as `examples`. */
function documentAgents(op: Json, agents: readonly string[]): void {
  const body = (op['requestBody'] as Json | undefined)?.['content'] as Record<string, { schema?: Json }> | undefined;
  const agent = (body?.['application/json']?.schema?.['properties'] as Record<string, Json> | undefined)?.['agent'];
  if (agent === undefined) return;
  const note = `A configured agent of this server: ${agents.map((a) => `\`${a}\``).join(', ')} (or an \`agent_…\` created through \`/v1/agents\`)`;
  agent['description'] = agent['description'] === undefined ? note : `${String(agent['description'])}. ${note}`;
  agent['examples'] = [...agents];
  for (const variant of (agent['anyOf'] ?? agent['oneOf'] ?? []) as Json[]) {
    if (variant['type'] === 'string') variant['examples'] = [...agents];
    const id = (variant['properties'] as Record<string, Json> | undefined)?.['id'];
    if (id !== undefined) id['examples'] = [...agents];
  }
}

/** The route serving the document itself (`GET /openapi.json`, public), as the table describes routes. */
export const openApiRoute = {
  // An explicit id: the same under any prefix the document is served below.
  method: 'GET', path: OPENAPI_DOCUMENT_PATH, operationId: 'getOpenapiJson', tags: ['meta'], summary: 'This OpenAPI 3.1 document', status: 200, public: true,
  response: z.record(z.string(), z.unknown()).describe('The OpenAPI 3.1 document of this server'), errors: [],
} as const;

/** The parameters of one part (`path`, `query`, `header`) from an object schema's properties. */
function parametersOf(schema: z.ZodType, where: 'path' | 'query' | 'header'): Json[] {
  const json = zodToJsonSchema(schema, 'input') as { properties?: Record<string, Json>; required?: string[] };
  const required = new Set(json.required ?? []);
  return Object.entries(json.properties ?? {}).map(([name, property]) => {
    const { description, ...rest } = property as Json & { description?: string };
    return { name, in: where, required: where === 'path' || required.has(name), schema: rest, ...(description === undefined ? {} : { description }) };
  });
}

/** One operation of the document for a route (before {@link decorateOpenApiDocument}). */
function operationOf(route: Pick<HttpRoute, 'tags' | 'summary' | 'status' | 'response'> & Partial<HttpRoute>): Json {
  const response = zodToJsonSchema(route.response, 'output');
  const description = (response['description'] as string | undefined) ?? 'Default Response';
  const noContent = response['type'] === 'null';
  return {
    tags: route.tags,
    summary: route.summary,
    ...(route.description !== undefined ? { description: route.description } : {}),
    ...(route.operationId !== undefined ? { operationId: route.operationId } : {}),
    parameters: [
      ...(route.params ? parametersOf(route.params, 'path') : []),
      ...(route.query ? parametersOf(route.query, 'query') : []),
      ...(route.headers ? parametersOf(route.headers, 'header') : []),
    ],
    // A body the route may go without (`POST /admin/keys/{id}/rotate`) is not `required`.
    ...(route.body ? { requestBody: { required: !route.body.safeParse(undefined).success, content: { 'application/json': { schema: zodToJsonSchema(route.body, 'input') } } } } : {}),
    responses: {
      [String(route.status)]: noContent
        ? { description }
        : { description, content: { [route.stream ? 'text/event-stream' : 'application/json']: { schema: response } } },
    },
    ...(route.public ? { security: [] } : {}),
  };
}

/**
 * The OpenAPI 3.1 document of `routes` (the ones an adapter serves, e.g. `httpRoutesFor(services)`),
 * plus `GET /openapi.json` itself: paths in OpenAPI form (`/projects/{id}`), each operation with its
 * summary, description, tags, `operationId`, parameters (path, query, documented headers), JSON
 * body, success response (JSON, `text/event-stream` or no content) and the shared error responses.
 */
export function openApiDocument(routes: readonly HttpRoute[], options: OpenApiDocumentOptions = {}): Json {
  const paths: Record<string, Json> = {};
  for (const route of [...routes, openApiRoute]) {
    const path = route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    (paths[path] ??= {})[route.method.toLowerCase()] = operationOf(route as HttpRoute);
  }
  return decorateOpenApiDocument({ ...openApiHead(options), paths }, options);
}
