/**
 * The `inboxKit` plugin: the core's request pipeline (`createHttpHandler` of `@inbox-kit/core/http`:
 * request ids, auth, budgets, body rules, the route's service, errors, CORS, the response policy,
 * event streams, OpenAPI) on Fastify. It registers the contract's routes (so a host's own
 * `@fastify/swagger` and 404 see them), converts each Fastify request to the pipeline's (the raw
 * body stream, headers, remote address, a signal for the client leaving, the `FastifyRequest` for
 * `authenticate`) and writes the answer back. Not wrapped in `fastify-plugin`: `prefix` works and
 * the host's other routes, parsers, 404 and error handlers stay exactly as they were.
 */
import {
  createHttpHandler, httpRoutesFor, methodIndex, methodNotAllowedAnswer, OPENAPI_DOCUMENT_PATH, routeNotFoundAnswer,
  type ErrorAnswer, type HostAuthenticate, type HttpHandler, type HttpHandlerOptions, type MethodIndex, type PipelineAnswer, type PipelineRequest,
} from '@inbox-kit/core/http';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import packageJson from '../package.json' with { type: 'json' };
import { requestIdOf } from './context.js';
import { registerDocs, type DocsOptions } from './docs.js';
import { errorHandler } from './errors.js';
import { hideFromHostDocuments, routeSchema } from './host-document.js';

/** The OpenAPI option of {@link InboxKitPluginOptions}: the document's `info`, `servers`, `agents`, `documentPath`, and `docsPrefix`. */
export type InboxKitOpenApiOptions = NonNullable<Exclude<HttpHandlerOptions['openapi'], false>> & DocsOptions;

/** The services the routes call: `{ platform, projectInbox, runtime?, managedSessions? }` (the contract's `HttpServices`). */
export type InboxKitServices = HttpHandlerOptions['services'];

/**
 * Options of {@link inboxKit}: the pipeline's (`HttpHandlerOptions` of `@inbox-kit/core/http`, the
 * same names and meaning on every adapter; platform.md "HTTP adapters") — `services`, `bodyLimit`
 * (default: the Fastify instance's `bodyLimit`, 1 MiB), `bodyTimeoutMs` (default 30,000 → 408),
 * `streamTiming`, `forwarding`, `openapi` (plus `docsPrefix`: Swagger UI, default `/docs` when
 * `@fastify/swagger-ui` is installed), `reportError` (default: the request's Fastify logger),
 * `credentialThrottle` (per `request.ip`: set `trustProxy` behind a proxy), the per-key body
 * budgets, `loadShedding` (default off here: the host sheds; `createServer` does), `cors`,
 * `observer`, `responseValidation` — plus the Fastify ones below.
 */
export interface InboxKitPluginOptions extends Omit<HttpHandlerOptions<FastifyRequest>, 'packageVersion' | 'adapterName' | 'authenticate' | 'openapi'> {
  /** The OpenAPI document at `GET /openapi.json` and the API reference (`docsPrefix`, default `/docs`; `false`: none); `false` serves neither. */
  openapi?: InboxKitOpenApiOptions | false;
  /**
   * The host's own authentication instead of API keys (platform.md "Embedding: the host's own
   * authentication"): called with the `FastifyRequest` of every non-public route in the plugin's
   * `onRequest` hook (after the host's root hooks), it answers a `Principal` or `null` → 401.
   * Event streams call it again before every delivery. The credential throttle does not apply.
   */
  authenticate?: HostAuthenticate<FastifyRequest>;
  /** Whether a host's own `@fastify/swagger` document lists the routes (default `false`: hidden there); `true`: with clean JSON Schemas. */
  inHostDocument?: boolean;
}

/** One registration of the plugin on a server: its prefix, its paths' methods (405s), and how it answers. */
interface Registration {
  prefix: string;
  index: MethodIndex;
  serve(request: FastifyRequest, reply: FastifyReply): Promise<unknown>;
  openStreams(): number;
}

const registrations = new WeakMap<object, Registration[]>();
const pending = new WeakMap<FastifyRequest, PipelineRequest<FastifyRequest>>();
const served = new WeakSet<FastifyRequest>();

/** True once the pipeline has answered `request` (it observed it; the preset observes only the others). */
export function servedByPipeline(request: FastifyRequest): boolean {
  return served.has(request);
}

/**
 * What a request no route took is answered with, for a host's own not-found handler (a host that
 * registers `inboxKit` without a prefix keeps its 404s): 405 `method_not_allowed` with `Allow` when
 * the path is one of a registered inboxKit's routes under another method, else 404 `not_found`.
 */
export function inboxKitNotFoundAnswer(request: FastifyRequest, request_id: string): ErrorAnswer {
  const path = request.url.split('?')[0]!;
  for (const { prefix, index } of registrations.get(request.server.server) ?? []) {
    if (prefix !== '' && path !== prefix && !path.startsWith(`${prefix}/`)) continue;
    const refused = methodNotAllowedAnswer(index, request.method, path.slice(prefix.length) || '/', request_id);
    if (refused !== undefined) return refused;
  }
  return routeNotFoundAnswer(request.method, request.url, request_id);
}

/** The event streams open now on `app`'s server, over every registration of the plugin there. */
export function openStreamCount(app: FastifyInstance): number {
  return (registrations.get(app.server) ?? []).reduce((sum, r) => sum + r.openStreams(), 0);
}

/** The pipeline's answer to a request of the plugin registered at the root of `request`'s server (the `createServer` preset's 404s). */
export function serveAtRoot(request: FastifyRequest, reply: FastifyReply): Promise<unknown> | undefined {
  return registrations.get(request.server.server)?.find((r) => r.prefix === '')?.serve(request, reply);
}

/** The pipeline's request for a Fastify request (the path within the plugin's prefix). */
function pipelineRequestOf(request: FastifyRequest, reply: FastifyReply, prefix: string): PipelineRequest<FastifyRequest> {
  let url = request.url.slice(prefix.length);
  if (url === '' || url.startsWith('?')) url = `/${url}`;
  let controller: AbortController | undefined;
  return {
    method: request.method, url, headers: request.headers as Record<string, string | undefined>, body: request.raw, remoteAddress: request.ip,
    // Made when the pipeline first asks (an event stream, an observer): most answers never need one.
    get signal() {
      if (controller === undefined) controller = abortedOnClose(reply.raw);
      return controller.signal;
    },
    host: request, mount: prefix, startedAt: performance.now(),
    requestId: requestIdOf(request.headers['x-request-id'], String(request.id)),
  };
}

/** A controller aborted when `raw` closes before its answer was finished (the client left), or at once if it already did. */
function abortedOnClose(raw: FastifyReply['raw']): AbortController {
  const controller = new AbortController();
  if (raw.destroyed) {
    if (!raw.writableFinished) controller.abort();
  } else {
    raw.once('close', () => {
      if (!raw.writableFinished) controller.abort();
    });
  }
  return controller;
}

/** Writes the answer: status, headers and body through Fastify, or the event stream piped to the socket. */
async function send(reply: FastifyReply, answer: PipelineAnswer): Promise<unknown> {
  if (answer.stream === undefined) return reply.code(answer.status).headers(answer.headers).send(answer.body);
  const raw = reply.raw;
  reply.hijack();
  raw.writeHead(answer.status, { ...(reply.getHeaders() as Record<string, string>), ...answer.headers });
  await answer.stream.pipe({
    write: (chunk) => void raw.write(chunk),
    buffered: () => raw.writableLength,
    drained: () => raw.writableLength === 0 || raw.destroyed ? Promise.resolve() : new Promise<void>((resolve) => {
      const done = () => {
        raw.off('drain', done).off('close', done);
        resolve();
      };
      raw.on('drain', done).on('close', done);
    }),
    close: () => raw.end(),
  });
  return undefined;
}

/**
 * The inbox-kit plugin. Options: {@link InboxKitPluginOptions}. Register it on any Fastify 5
 * instance, optionally under a `prefix` (`app.register(inboxKit, { prefix: '/inbox', services })`);
 * under a prefix it answers every unknown path below it too (404 / 405 in the envelope).
 * @throws TypeError when `forwarding.secret` is empty, `bodyTimeoutMs` is not an integer ≥ 0 or a CORS origin is not exact.
 */
export const inboxKit: FastifyPluginAsync<InboxKitPluginOptions> = async (app, opts) => {
  const { services, inHostDocument = false, openapi, ...rest } = opts;
  const { docsPrefix, ...document } = openapi === false ? { docsPrefix: false as const } : openapi ?? {};
  const handler: HttpHandler<FastifyRequest> = createHttpHandler<FastifyRequest>({
    bodyLimit: app.initialConfig.bodyLimit, loadShedding: false, reportError: (error) => app.log.error({ err: error }, 'inbox-kit: unexpected error'),
    ...rest, services, openapi: openapi === false ? false : document, packageVersion: packageJson.version, adapterName: 'inboxKit',
  });
  decorateRequests(app);
  const prefix = app.prefix;
  // The pipeline reads the body itself, from the socket, by its own limit and deadline.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
  // A content type Fastify cannot even parse is the pipeline's to refuse (415, as on every adapter); anything else in the envelope.
  app.setErrorHandler((error: { code?: string }, request, reply) => (error.code?.startsWith('FST_ERR_CTP_') ? serve(request, reply) : errorHandler.call(app, error, request, reply)));
  hideFromHostDocuments(app, inHostDocument);
  app.addHook('preClose', async () => handler.closeStreams());
  app.addHook('onClose', async () => handler.close());

  // The caller first (the preset's rate limiter keys on it): once, passed on to `handle`; a refusal is answered here.
  app.addHook('onRequest', async (request, reply) => {
    const pipelineRequest = pipelineRequestOf(request, reply, prefix);
    pending.set(request, pipelineRequest);
    request.requestId = pipelineRequest.requestId!;
    void reply.header('x-request-id', request.requestId).header('request-id', request.requestId);
    if (request.routeOptions.config?.inboxKit !== true) return;
    pipelineRequest.caller = handler.authenticate(pipelineRequest);
    const caller = await pipelineRequest.caller.catch(() => undefined);
    if (caller === undefined) return serve(request, reply);
    request.principal = caller.principal;
    request.forwarded = caller.forwarded;
  });
  const serve = async (request: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    served.add(request);
    return send(reply, await handler.handle(pending.get(request) ?? pipelineRequestOf(request, reply, prefix)));
  };

  const routes = httpRoutesFor(services);
  const documentPath = openapi === false ? undefined : openapi?.documentPath ?? OPENAPI_DOCUMENT_PATH;
  const paths = new Set<string>();
  for (const route of [...routes, ...(documentPath !== undefined ? [{ method: 'GET', path: documentPath }] : [])]) {
    paths.add(route.path);
    app.route({ method: route.method as 'GET', url: route.path, config: { inboxKit: true }, schema: routeSchema(route), handler: serve });
  }
  // CORS preflights of the routes' paths (elsewhere under a prefix, the not-found handler's).
  if (opts.cors !== undefined) for (const url of paths) app.options(url, { config: { inboxKit: true }, schema: { hide: true } }, serve);
  const index = methodIndex([...routes, ...(documentPath !== undefined ? [{ method: 'GET', path: documentPath }] : [])], { options: opts.cors !== undefined });
  const list = registrations.get(app.server) ?? [];
  list.push({ prefix, index, serve, openStreams: () => handler.openStreams() });
  registrations.set(app.server, list);
  // Under a prefix, unknown paths below it are the pipeline's (404, or 405 on a known path).
  if (prefix !== '') app.setNotFoundHandler(serve);
  const text = handler.document(prefix);
  if (docsPrefix !== false && text !== undefined) await registerDocs(app, { docsPrefix, document: text });
};

/** The request decorations (`requestId`, `principal`, `forwarded`), unless the host or `createServer` already added them. */
export function decorateRequests(app: FastifyInstance): void {
  if (!app.hasRequestDecorator('requestId')) app.decorateRequest('requestId', '');
  if (!app.hasRequestDecorator('principal')) app.decorateRequest('principal', null);
  if (!app.hasRequestDecorator('forwarded')) app.decorateRequest('forwarded', false);
}
