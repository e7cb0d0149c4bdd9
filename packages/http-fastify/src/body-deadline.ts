/**
 * Slow and refused request bodies (`createServer`): a request body must arrive within
 * `bodyTimeoutMs` of the request's start, else the request is answered 408 `request_timeout` in
 * the envelope with `Connection: close` and its socket closed; and any answer sent before its
 * request's body has fully arrived (a 401 from authentication, a 404, a 413 …) is sent with
 * `Connection: close`, so the socket is closed once the answer is written instead of being held
 * while the client trickles in the rest of the body. A request without a body, or whose body has
 * arrived, keeps its connection alive as usual. Node's own `requestTimeout` (whole request, 300 s
 * by default) and `headersTimeout` still apply on top.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { requestIdFor, setRequestIdHeaders } from './context.js';
import { envelope } from './errors.js';

/** Default time a request body has to arrive, in ms (30 s). */
export const DEFAULT_BODY_TIMEOUT_MS = 30_000;

/** True when the request announces a body (`Transfer-Encoding`, or a `Content-Length` other than 0). */
function announcesBody(raw: IncomingMessage): boolean {
  const length = raw.headers['content-length'];
  return raw.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Registers the body deadline and the closing of refused requests' sockets on `app` (root scope).
 * @param bodyTimeoutMs ms the body has to arrive, counted from the request's start; 0 turns the
 *   deadline off (refused requests' sockets are still closed).
 * @throws TypeError when `bodyTimeoutMs` is not an integer ≥ 0.
 */
export function registerBodyDeadline(app: FastifyInstance, bodyTimeoutMs: number = DEFAULT_BODY_TIMEOUT_MS): void {
  if (!Number.isInteger(bodyTimeoutMs) || bodyTimeoutMs < 0) throw new TypeError(`bodyTimeoutMs must be an integer ≥ 0, got ${bodyTimeoutMs}`);
  app.addHook('onRequest', (request, reply, done) => {
    const raw = request.raw;
    if (bodyTimeoutMs > 0 && announcesBody(raw) && !raw.complete) {
      const timer = setTimeout(() => {
        if (raw.complete) return;
        if (reply.sent || reply.raw.headersSent) {
          raw.socket?.destroy();
          return;
        }
        const request_id = request.requestId || requestIdFor(request.headers['x-request-id']);
        void setRequestIdHeaders(reply, request_id).code(408).header('connection', 'close').type('application/json; charset=utf-8')
          .send(envelope(408, 'request_timeout', `The request body did not arrive within ${bodyTimeoutMs} ms`, [], request_id));
      }, bodyTimeoutMs);
      const clear = () => clearTimeout(timer);
      raw.once('end', clear);
      raw.once('close', clear);
      reply.raw.once('finish', clear);
    }
    done();
  });
  // An answer sent before the body arrived closes the connection once written (Node then discards
  // what is left of the body instead of reading it to the end for keep-alive).
  app.addHook('onSend', (request, reply, payload, done) => {
    if (announcesBody(request.raw) && !request.raw.complete) void reply.header('connection', 'close');
    done(null, payload);
  });
}
