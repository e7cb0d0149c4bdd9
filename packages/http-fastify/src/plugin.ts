/**
 * The `inboxKit` plugin: the core's request pipeline (`createHttpHandler` of `@inbox-kit/core/http`)
 * on Fastify (platform.md "HTTP adapters"). It registers the contract's routes (a host's own
 * `@fastify/swagger` and 404 see them), hands each request to the pipeline and writes the answer back.
 * Not wrapped in `fastify-plugin`: `prefix` works; the host's routes, parsers and handlers stay as they were.
 */
import type { Principal } from '@inbox-kit/core';
import { clientLeftSignal, createHttpHandler, methodIndex, requestIdReusing, servedRoutes, targetWithin, thrownAnswer, unroutedAnswer, writeEventStream } from '@inbox-kit/core/http';
import type { ErrorAnswer, HostAuthenticate, HttpHandlerOptions, MountedRoutes, PipelineRequest } from '@inbox-kit/core/http';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import packageJson from '../package.json' with { type: 'json' };
import { hideFromHostDocuments, hostDocumentTransform } from './host-document.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** `req_…`, or the caller's own `x-request-id` when it is 1–128 safe characters. */
    requestId: string;
    /** The authenticated caller; null on public routes (and before the plugin's `onRequest` hook). */
    principal: Principal | null;
    /** True when another process forwarded this request here (attempt routing); it is never forwarded again. */
    forwarded: boolean;
  }
  interface FastifyContextConfig {
    /** The routes the plugin hands to the pipeline. */
    inboxKit?: boolean;
  }
}

/** Serves the API reference of the OpenAPI `document` (its text) at `docsPrefix` (undefined: its default) in `app`, e.g. `swaggerUi` of `@inbox-kit/http-fastify/docs`. */
export type InboxKitDocs = (app: FastifyInstance, options: { docsPrefix: string | undefined; document: string }) => Promise<void>;

/** The `openapi` option: the pipeline's (`info`, `servers`, `agents`, `documentPath`), plus the reference page `docs` at `docsPrefix` (default `/docs`). */
export type InboxKitOpenApiOptions = NonNullable<Exclude<HttpHandlerOptions['openapi'], false>> & { docs?: InboxKitDocs; docsPrefix?: string | false };

/** The services the routes call: `{ platform, projectInbox, runtime?, managedSessions? }` (the contract's `HttpServices`). */
export type InboxKitServices = HttpHandlerOptions['services'];

/**
 * Options of {@link inboxKit}: the pipeline's (`HttpHandlerOptions`, the same on every adapter; `bodyLimit` defaults to the
 * instance's, `reportError` to its logger, `loadShedding` off; the credential throttle counts per `request.ip`), plus these.
 */
export interface InboxKitPluginOptions extends Omit<HttpHandlerOptions<FastifyRequest>, 'packageVersion' | 'adapterName' | 'authenticate' | 'openapi'> {
  /** The OpenAPI document at `GET /openapi.json` and, with `docs`, the API reference at `docsPrefix`; `false` serves neither. */
  openapi?: InboxKitOpenApiOptions | false;
  /** The host's own authentication instead of API keys (platform.md "Embedding: the host's own authentication"), called with the `FastifyRequest` in the plugin's `onRequest` hook, after the host's root hooks. */
  authenticate?: HostAuthenticate<FastifyRequest>;
  /** Whether a host's own `@fastify/swagger` document lists the routes (default `false`: hidden there); `true`: with clean JSON Schemas. */
  inHostDocument?: boolean;
}

/** One registration of the plugin on a server: its prefix (`mount`), its paths' methods, how it answers. */
interface Registration extends MountedRoutes {
  serve(request: FastifyRequest, reply: FastifyReply): Promise<unknown>;
  openStreams(): number;
}

const registrations = new WeakMap<object, Registration[]>();
/** The plugin's own request decorations (symbol names, not `WeakMap`s): the pipeline request the hook made, and whether the pipeline answered. */
const PENDING = Symbol('inbox-kit pending request');
const SERVED = Symbol('inbox-kit served');
const slots = (request: FastifyRequest) => request as unknown as { [PENDING]: PipelineRequest<FastifyRequest> | null; [SERVED]: boolean };

/** True once the pipeline has answered `request` (it observed it; the preset observes only the others). */
export const servedByPipeline = (request: FastifyRequest): boolean => slots(request)[SERVED] === true;

/** For a host's own not-found handler (without a prefix the host keeps its 404s): 405 with `Allow` on a path of a registered inboxKit's routes, else 404. */
export function inboxKitNotFoundAnswer(request: FastifyRequest, request_id: string): ErrorAnswer {
  return unroutedAnswer(registrations.get(request.server.server) ?? [], request.method, request.url, request_id);
}

/** The event streams open now on `app`'s server, over every registration of the plugin there. */
export function openStreamCount(app: FastifyInstance): number {
  return (registrations.get(app.server) ?? []).reduce((sum, r) => sum + r.openStreams(), 0);
}

/** The pipeline's answer to a request of the plugin registered at the root of `request`'s server (the `createServer` preset's 404s). */
export function serveAtRoot(request: FastifyRequest, reply: FastifyReply): Promise<unknown> | undefined {
  return registrations.get(request.server.server)?.find((r) => r.mount === '')?.serve(request, reply);
}

/** The pipeline's request for a Fastify request: the target within the prefix, the id the hooks gave it; a class, so no getter or closure is made per request. */
class FastifyPipelineRequest implements PipelineRequest<FastifyRequest> {
  method: string; url: string; headers: Record<string, string | undefined>; body: FastifyRequest['raw']; remoteAddress: string; startedAt = performance.now(); requestId: string; caller?: PipelineRequest['caller']; #signal?: AbortSignal;
  constructor(readonly host: FastifyRequest, private readonly reply: FastifyReply, readonly mount: string) {
    this.method = host.method; this.url = targetWithin(host.url, mount); this.headers = host.headers as Record<string, string | undefined>; this.body = host.raw; this.remoteAddress = host.ip;
    this.requestId = host.requestId || requestIdReusing(host.headers['x-request-id'], String(host.id));
  }
  get signal(): AbortSignal { return (this.#signal ??= clientLeftSignal(this.reply.raw)); } // made when first asked for (an event stream, an observer): most answers never need one
}

/** The error handler: what Fastify or a host's hook throws, `answer` (default: the contract's table) in the envelope; unexpected errors logged, never shown. */
export function errorHandler(error: unknown, request: FastifyRequest, reply: FastifyReply, answer = thrownAnswer(error, request.requestId)): void {
  if (answer.unexpected) request.log.error({ err: error }, 'unexpected error');
  if (answer.headers !== undefined) void reply.headers(answer.headers);
  void reply.code(answer.status).type('application/json; charset=utf-8').send(answer.body);
}

/**
 * The plugin ({@link InboxKitPluginOptions}), on any Fastify 5 instance, optionally under a `prefix`
 * (`app.register(inboxKit, { prefix: '/inbox', services })`), below which it answers every unknown path too.
 * @throws TypeError for an empty `forwarding.secret`, a `bodyTimeoutMs` not an integer ≥ 0, an inexact CORS origin, an `openapi.docsPrefix` without `openapi.docs`.
 */
export const inboxKit: FastifyPluginAsync<InboxKitPluginOptions> = async (app, opts) => {
  const { services, inHostDocument = false, openapi, ...rest } = opts;
  const { docsPrefix, docs, ...document }: InboxKitOpenApiOptions = openapi || {};
  if (typeof docsPrefix === 'string' && docs === undefined) throw new TypeError("inboxKit: openapi.docsPrefix needs openapi.docs: import { swaggerUi } from '@inbox-kit/http-fastify/docs'");
  const report = (error: unknown) => app.log.error({ err: error }, 'inbox-kit: unexpected error');
  const handler = createHttpHandler<FastifyRequest>({
    bodyLimit: app.initialConfig.bodyLimit, loadShedding: false, reportError: report,
    ...rest, services, openapi: openapi === false ? false : document, packageVersion: packageJson.version, adapterName: 'inboxKit',
  });
  decorateRequests(app);
  const prefix = app.prefix;
  // The pipeline reads the body itself, from the socket, by its own limit and deadline.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
  // A content type Fastify cannot even parse is the pipeline's to refuse (415, as on every adapter); anything else in the envelope.
  app.setErrorHandler((error: { code?: string }, request, reply) => (error.code?.startsWith('FST_ERR_CTP_') ? serve(request, reply) : errorHandler(error, request, reply)));
  hideFromHostDocuments(app, inHostDocument);
  app.addHook('preClose', async () => handler.closeStreams());
  app.addHook('onClose', async () => handler.close());

  // Every request here: its request id (`createServer` gave it one already) in `request.requestId` and the answer's headers.
  app.addHook('onRequest', (request, reply, done) => {
    const id = requestIdReusing(request.headers['x-request-id'], request.requestId || String(request.id));
    if (request.requestId !== id) void reply.header('x-request-id', (request.requestId = id)).header('request-id', id);
    done();
  });
  // The routes' caller first (a route hook: before the preset's rate limiter's, which keys on it): once, passed on to `handle`; a refusal is answered here.
  const authenticate = async (request: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    const pipelineRequest = (slots(request)[PENDING] = new FastifyPipelineRequest(request, reply, prefix));
    const caller = await (pipelineRequest.caller = handler.authenticate(pipelineRequest)).catch(() => undefined);
    if (caller === undefined) return serve(request, reply);
    request.principal = caller.principal;
    request.forwarded = caller.forwarded;
  };
  const serve = async (request: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    const own = slots(request);
    own[SERVED] = true;
    const pipelineRequest = own[PENDING] ?? new FastifyPipelineRequest(request, reply, prefix);
    own[PENDING] = null; // taken, not kept: Fastify holds `request` as long as its response (an open stream's lifetime)
    const answer = await handler.handle(pipelineRequest);
    if (answer.stream === undefined) return reply.code(answer.status).headers(answer.headers).send(answer.body);
    reply.hijack(); // The stream to the socket after the headers set on `reply`; returns at once (the open stream holds only its response).
    return void writeEventStream(reply.raw, answer, reply.getHeaders()).catch(report);
  };

  const routes = servedRoutes(services, openapi);
  for (const route of routes) app.route({ method: route.method, url: route.path, config: { inboxKit: true, swaggerTransform: hostDocumentTransform(inHostDocument, route) }, onRequest: authenticate, handler: serve });
  // CORS preflights of the routes' paths (elsewhere under a prefix, the not-found handler's).
  if (opts.cors !== undefined) for (const url of new Set(routes.map((r) => r.path))) app.options(url, { config: { inboxKit: true }, schema: { hide: true }, onRequest: authenticate }, serve);
  registrations.set(app.server, [...(registrations.get(app.server) ?? []), { mount: prefix, index: methodIndex(routes, { options: opts.cors !== undefined }), serve, openStreams: () => handler.openStreams() }]);
  // Under a prefix, unknown paths below it are the pipeline's (404, or 405 on a known path).
  if (prefix !== '') app.setNotFoundHandler(serve);
  const text = handler.document(prefix);
  if (docs !== undefined && docsPrefix !== false && text !== undefined) await docs(app, { docsPrefix, document: text });
};

/** The request decorations (`requestId`, `principal`, `forwarded`), unless the host or `createServer` already added them. */
export function decorateRequests(app: FastifyInstance): void {
  for (const [name, value] of [['requestId', ''], ['principal', null], ['forwarded', false], [PENDING, null], [SERVED, false]] as const) {
    if (!app.hasRequestDecorator(name)) app.decorateRequest(name as never, value as never);
  }
}
