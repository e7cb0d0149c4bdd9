/**
 * `createFetchHandler`: the core's request pipeline (`createHttpHandler` of `@inbox-kit/core/http`)
 * behind the fetch API. It converts a `Request` to the pipeline's request (method, path and query
 * under `basePath`, lower-case headers, the body stream, the abort signal) and the pipeline's
 * answer to a `Response` (an event stream as a `ReadableStream` whose reads are the back-pressure).
 * Every behaviour — request ids, auth, budgets, body rules, errors, CORS, streams, OpenAPI — is
 * the pipeline's, the same as on every other adapter.
 */
import { createHttpHandler, pipelineRequestOf, requestIdFor, responseOf, routeNotFoundAnswer, targetOf, type HttpHandlerOptions } from '@inbox-kit/core/http';
import packageJson from '../package.json' with { type: 'json' };

/**
 * Options of {@link createFetchHandler}: every option of the pipeline (`HttpHandlerOptions`:
 * `services`, `bodyLimit`, `bodyTimeoutMs`, `streamTiming`, `forwarding`, `openapi`, `reportError`,
 * `credentialThrottle`, the per-key body budgets, `loadShedding`, `cors`, `authenticate` — called
 * with the `Request` —, `observer`, `responseValidation`), plus where the handler is mounted and
 * how to find the client's address.
 */
export interface FetchHandlerOptions extends HttpHandlerOptions<Request> {
  /**
   * The path the handler is mounted under (`/api/inbox` for a Next.js route
   * `app/api/inbox/[...path]/route.ts`; default none): removed from every request's path, listed
   * in the OpenAPI document and the observer's route templates. A request outside it is 404.
   */
  basePath?: string;
  /**
   * The remote address a request counts against (the credential throttle), from the request and
   * the second argument the host passes its fetch handler. Hosts differ (Bun: `(r, server) =>
   * server.requestIP(r)?.address`, Deno: `(r, info) => info.remoteAddr.hostname`, Workers:
   * `(r) => r.headers.get('cf-connecting-ip')`, `@hono/node-server`: `(r, env) =>
   * env.incoming.socket.remoteAddress`); default: none (every client shares one throttle budget).
   */
  clientAddress?: (request: Request, context: unknown) => string | undefined;
}

/** The handler, plus how to stop what it holds. */
export interface FetchHandler {
  /**
   * Answers one request; never rejects (every failure is an answer in the envelope). `context`
   * is what the host passes beside the request (Bun's server, Deno's info, `@hono/node-server`'s
   * env), handed to `clientAddress` only.
   */
  (request: Request, context?: unknown): Promise<Response>;
  /** Ends every open event stream (clients resume with `Last-Event-ID`). */
  closeStreams(): void;
  /** Ends every open event stream and stops the handler's timers (load shedding, body deadlines). */
  close(): void;
}

/** A request outside `basePath`: 404 `not_found` in the envelope (no route of the table is there). */
function outside(request: Request, target: string): Response {
  const request_id = requestIdFor(request.headers.get('x-request-id') ?? undefined);
  const answer = routeNotFoundAnswer(request.method, target, request_id);
  const headers = { ...answer.headers, 'content-type': 'application/json; charset=utf-8', 'x-request-id': request_id, 'request-id': request_id };
  return new Response(request.method === 'HEAD' ? null : JSON.stringify(answer.body), { status: answer.status, headers });
}

/**
 * A fetch handler serving every route of the contract for `options.services`.
 * @throws TypeError when `forwarding.secret` is empty, `bodyTimeoutMs` is not an integer ≥ 0, a
 *   CORS origin is not exact, or `basePath` does not start with `/`.
 */
export function createFetchHandler(options: FetchHandlerOptions): FetchHandler {
  const { basePath: base = '', clientAddress, ...rest } = options;
  const basePath = base.replace(/\/+$/, '');
  if (basePath !== '' && !basePath.startsWith('/')) throw new TypeError(`createFetchHandler: basePath must start with /, got ${JSON.stringify(base)}`);
  const pipeline = createHttpHandler<Request>({ packageVersion: packageJson.version, adapterName: 'createFetchHandler', ...rest });
  const handler = (async (request: Request, context?: unknown): Promise<Response> => {
    const startedAt = performance.now();
    let target = targetOf(request.url);
    if (basePath !== '') {
      if (target !== basePath && !target.startsWith(`${basePath}/`) && !target.startsWith(`${basePath}?`)) return outside(request, target);
      target = target.slice(basePath.length);
      if (target === '' || target.startsWith('?')) target = `/${target}`;
    }
    const remoteAddress = clientAddress?.(request, context);
    return responseOf(await pipeline.handle(pipelineRequestOf(request, { host: request, url: target, mount: basePath, remoteAddress, startedAt })));
  }) as FetchHandler;
  handler.closeStreams = () => pipeline.closeStreams();
  handler.close = () => pipeline.close();
  return handler;
}
