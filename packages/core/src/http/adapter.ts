/**
 * What an HTTP adapter writes around the pipeline besides converting its framework's request
 * (platform.md "HTTP adapters"), once for every adapter: the routes a router must know (the
 * table's plus the OpenAPI document's), the request target within a mount, the 404 / 405 of a
 * host that keeps its own not-found handler, the two request-id headers, the envelope of whatever
 * a framework or a host's hook throws, and, for frameworks on Node's `http` server (Fastify,
 * Express, Koa, plain `node:http`), the signal of a client leaving, the writer of an event
 * stream's answer and the answer to Node's `clientError`. Node's objects are described
 * structurally: the core imports no `node:http`.
 */
import { isInboxKitError } from '../errors.js';
import { clientErrorResponse, envelopeForStatus, envelopeOf, routeNotFoundAnswer, type ErrorAnswer } from './errors.js';
import { methodNotAllowedAnswer, type MethodIndex } from './methods.js';
import { OPENAPI_DOCUMENT_PATH, openApiRoute } from './openapi.js';
import type { PipelineAnswer } from './pipeline/types.js';
import { newRequestId } from './request.js';
import { httpRoutesFor, type HttpServices, type RouteDeclaration } from './routes.js';

/**
 * The routes a pipeline for `services` answers, for an adapter whose router must list them (its
 * 404 and 405 handling, CORS preflight routes, a framework's own OpenAPI document): the table's
 * ({@link httpRoutesFor}), then the document's (`GET` at `openapi.documentPath`, default
 * `/openapi.json`, public, operation `getOpenapiJson`) unless `openapi` is `false`. The pipeline
 * still matches and answers every request itself.
 */
export function servedRoutes(services: HttpServices, openapi?: { documentPath?: string } | false): RouteDeclaration[] {
  const routes: RouteDeclaration[] = httpRoutesFor(services);
  if (openapi === false) return routes;
  return [...routes, { ...openApiRoute, tags: [...openApiRoute.tags], errors: [], path: openapi?.documentPath ?? OPENAPI_DOCUMENT_PATH }];
}

/**
 * The request target (path and query) within `mount`, for the pipeline's `url`: `/inbox/me?x=1`
 * under `/inbox` is `/me?x=1`, `/inbox` and `/inbox?x=1` are `/` and `/?x=1`. `target` must be at or
 * below `mount` (`''`: no mount, the target unchanged).
 */
export function targetWithin(target: string, mount: string): string {
  const rest = target.slice(mount.length);
  return rest === '' || rest.startsWith('?') ? `/${rest}` : rest;
}

/** A pipeline mounted in a host, for {@link unroutedAnswer}: where, and the methods of its paths (`methodIndex(servedRoutes(…))`). */
export interface MountedRoutes {
  mount: string;
  index: MethodIndex;
}

/**
 * The answer to a request no route of a host took, for a host that keeps its own not-found handler
 * around the pipelines mounted in it (platform.md "Errors"): 405 `method_not_allowed` with `Allow`
 * when, within a mount it is at or below, the path is a route's under another method; else 404
 * `not_found`. `target` is the request's path and query as the host received it.
 */
export function unroutedAnswer(mounts: readonly MountedRoutes[], method: string, target: string, request_id: string): ErrorAnswer {
  const path = target.split('?')[0]!;
  for (const { mount, index } of mounts) {
    if (mount !== '' && path !== mount && !path.startsWith(`${mount}/`)) continue;
    const refused = methodNotAllowedAnswer(index, method, path.slice(mount.length) || '/', request_id);
    if (refused !== undefined) return refused;
  }
  return routeNotFoundAnswer(method, target, request_id);
}

/** The request-id headers of an answer the adapter makes itself: `{ 'x-request-id': id, 'request-id': id }` (platform.md "Errors"). */
export function requestIdHeaders(request_id: string): { 'x-request-id': string; 'request-id': string } {
  return { 'x-request-id': request_id, 'request-id': request_id };
}

/**
 * The envelope of a value thrown outside the pipeline (a framework's own error, a host's hook): an
 * `InboxKitError` by the contract's table (`envelopeOf`); an error with a numeric `statusCode` (the
 * `http-errors` convention of Fastify, Express and Koa) by its status (`envelopeForStatus`: a 4xx
 * keeps a short message, a 5xx says nothing); anything else a bare 500 `internal_error` marked
 * `unexpected` (report it, never show it).
 */
export function thrownAnswer(error: unknown, request_id: string): ErrorAnswer {
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  if (isInboxKitError(error) || typeof status !== 'number') return envelopeOf(error, request_id);
  return envelopeForStatus(status, request_id, (error as { message?: string }).message);
}

/** What the Node helpers use of Node's `http.ServerResponse` (Fastify's `reply.raw`, Express's `res`). */
export interface ServerResponseLike {
  readonly writableLength: number;
  readonly writableFinished: boolean;
  readonly destroyed: boolean;
  writeHead(status: number, headers: Record<string, string | number | string[] | undefined>): unknown;
  write(chunk: string): unknown;
  end(): unknown;
  on(event: 'drain' | 'close', listener: () => void): unknown;
  off(event: 'drain' | 'close', listener: () => void): unknown;
  once(event: 'close', listener: () => void): unknown;
}

/**
 * A signal that aborts when `response` closes before it finished, i.e. the client left (the
 * pipeline's `PipelineRequest.signal`); aborted at once when it already closed unfinished. Make it
 * when the pipeline first reads `signal` (a getter): most answers never need one.
 */
export function clientLeftSignal(response: ServerResponseLike): AbortSignal {
  const controller = new AbortController();
  if (response.destroyed) {
    if (!response.writableFinished) controller.abort();
  } else {
    response.once('close', () => {
      if (!response.writableFinished) controller.abort();
    });
  }
  return controller.signal;
}

/**
 * Writes an event stream's answer to `response`: the head (`answer.status`; the `headers` the host
 * already set on the response, then the answer's, which win), then the stream's frames, waiting
 * for `drain` (or `close`) while the socket holds unread bytes, and ends the response when the
 * stream ends. Resolves then (client gone, access withdrawn, server closing).
 * @throws TypeError when `answer` has no `stream` (write other answers as the framework does).
 */
export function writeEventStream(response: ServerResponseLike, answer: PipelineAnswer, headers: Record<string, string | number | string[] | undefined> = {}): Promise<void> {
  if (answer.stream === undefined) return Promise.reject(new TypeError('writeEventStream: the answer is not an event stream'));
  try {
    // The stream's body ends when its connection closes (`Connection: close`, RFC 9112 §6.3): no
    // chunked framing, so each frame is one plain write to the socket (not a corked three-part writev).
    (response as { useChunkedEncodingByDefault?: boolean }).useChunkedEncodingByDefault = false;
    response.writeHead(answer.status, { ...headers, ...answer.headers });
  } catch (error) {
    return Promise.reject(error);
  }
  flatten((response as { _header?: unknown })._header);
  return answer.stream.pipe(new ResponseSink(response));
}

/**
 * Makes `text` one flat string in place when it is one (Node's response keeps the head it built,
 * a tree of one concatenation per header, for the response's lifetime: ~1 KB an open stream as a
 * tree, its length flat). Converting a string to a number flattens it; nothing else changes.
 */
function flatten(text: unknown): void {
  if (typeof text === 'string') void Number(text);
}

/**
 * The sink of one stream on a Node response: one object holding the response (the listeners of a
 * wait for `drain` exist only while the client is behind).
 */
class ResponseSink {
  constructor(private readonly response: ServerResponseLike) {}

  write(chunk: string): void {
    this.response.write(chunk);
  }

  buffered(): number {
    return this.response.writableLength;
  }

  drained(): Promise<void> {
    const { response } = this;
    if (response.writableLength === 0 || response.destroyed) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        response.off('drain', done);
        response.off('close', done);
        resolve();
      };
      response.on('drain', done);
      response.on('close', done);
    });
  }

  close(): void {
    this.response.end();
  }
}

/**
 * Node's `clientError` (`server.on('clientError', answerClientError)`; Fastify's
 * `clientErrorHandler`): a request Node's HTTP parser refused is answered in the envelope with a new
 * request id — 431 (request line or headers too large), 408 (timeout), 400 (unparseable, smuggling)
 * — and the socket destroyed; a client that reset the connection gets nothing.
 */
export function answerClientError(error: Error & { code?: string }, socket: { destroyed: boolean; writable: boolean; write(text: string): unknown; destroy(): unknown }): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) socket.write(clientErrorResponse(error.code, newRequestId()));
  socket.destroy();
}
