/**
 * Slow and refused request bodies (`createServer`): a request body must arrive within
 * `bodyTimeoutMs` of the request's start, else the request is answered 408 `request_timeout` in
 * the envelope with `Connection: close` and its socket closed; and any answer sent before its
 * request's body has fully arrived (a 401 from authentication, a 404, a 413 …) is sent with
 * `Connection: close`, so the socket is closed once the answer is written instead of being held
 * while the client trickles in the rest of the body. A request without a body, or whose body has
 * arrived, keeps its connection alive as usual. The server's `requestTimeout` (whole request;
 * Fastify sets it to 0, no limit, unless you pass one) and `headersTimeout` still apply on top.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DEFAULT_BODY_TIMEOUT_MS } from '@inbox-kit/core/http';
import { requestIdFor, setRequestIdHeaders } from './context.js';
import { envelope } from './errors.js';

/** The decoration that marks a scope (and its children) as having the body deadline. */
const BODY_DEADLINE = Symbol.for('inbox-kit.bodyDeadline');

/** Default time a request body has to arrive, in ms (30 s): the kit's, shared by every adapter. */
export { DEFAULT_BODY_TIMEOUT_MS };

/** True when the request announces a body (`Transfer-Encoding`, or a `Content-Length` other than 0). */
function announcesBody(raw: IncomingMessage): boolean {
  const length = raw.headers['content-length'];
  return raw.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** How often the pending bodies are checked: a tenth of the deadline, between 10 ms and 1 s. */
function sweepPeriodMs(bodyTimeoutMs: number): number {
  return Math.min(1000, Math.max(10, Math.floor(bodyTimeoutMs / 10)));
}

/**
 * Registers the body deadline and the closing of refused requests' sockets on `app` and its
 * children (the preset: the root; the `inboxKit` plugin: its own scope), unless an ancestor
 * already has them.
 * The deadline costs no timer or listener per request: a request whose body is still to come is
 * noted with its deadline, forgotten when it is answered (an aborted one at the next check: no
 * `close` listener per request), and one interval, running
 * only while such requests exist, answers those past their deadline — between `bodyTimeoutMs` and
 * `bodyTimeoutMs` + a tenth of it (at most 1 s more) after the request's start.
 * @param bodyTimeoutMs ms the body has to arrive, counted from the request's start; 0 turns the
 *   deadline off (refused requests' sockets are still closed).
 * @throws TypeError when `bodyTimeoutMs` is not an integer ≥ 0.
 */
export function registerBodyDeadline(app: FastifyInstance, bodyTimeoutMs: number = DEFAULT_BODY_TIMEOUT_MS): void {
  if (!Number.isInteger(bodyTimeoutMs) || bodyTimeoutMs < 0) throw new TypeError(`bodyTimeoutMs must be an integer ≥ 0, got ${bodyTimeoutMs}`);
  // Once per scope chain: the plugin registered by `createServer` finds the preset's at the root.
  if (app.hasDecorator(BODY_DEADLINE)) return;
  app.decorate(BODY_DEADLINE, bodyTimeoutMs);
  if (bodyTimeoutMs > 0) {
    // Requests whose body had not arrived when they started, with their deadline (ms since the epoch).
    const pending = new Map<FastifyRequest, { reply: FastifyReply; deadline: number }>();
    let sweeper: ReturnType<typeof setInterval> | undefined;
    const sweep = () => {
      const now = Date.now();
      for (const [request, { reply, deadline }] of pending) {
        const raw = request.raw;
        if (raw.complete || raw.destroyed || reply.sent) {
          pending.delete(request);
          continue;
        }
        if (now < deadline) continue;
        pending.delete(request);
        if (reply.sent || reply.raw.headersSent) {
          raw.socket?.destroy();
          continue;
        }
        const request_id = request.requestId || requestIdFor(request.headers['x-request-id']);
        void setRequestIdHeaders(reply, request_id).code(408).header('connection', 'close').type('application/json; charset=utf-8')
          .send(envelope(408, 'request_timeout', `The request body did not arrive within ${bodyTimeoutMs} ms`, [], request_id));
      }
      if (pending.size === 0 && sweeper !== undefined) {
        clearInterval(sweeper);
        sweeper = undefined;
      }
    };
    app.addHook('onRequest', (request, reply, done) => {
      const raw = request.raw;
      if (announcesBody(raw) && !raw.complete) {
        pending.set(request, { reply, deadline: Date.now() + bodyTimeoutMs });
        if (sweeper === undefined) {
          sweeper = setInterval(sweep, sweepPeriodMs(bodyTimeoutMs));
          sweeper.unref();
        }
      }
      done();
    });
    // Forgotten once answered: held until the next check, a busy server would keep a second's
    // worth of requests (and their sockets and bodies) alive.
    app.addHook('onResponse', (request, _reply, done) => {
      pending.delete(request);
      done();
    });
    app.addHook('onClose', (_app, done) => {
      if (sweeper !== undefined) clearInterval(sweeper);
      sweeper = undefined;
      pending.clear();
      done();
    });
  }
  // An answer sent before the body arrived closes the connection once written (Node then discards
  // what is left of the body instead of reading it to the end for keep-alive).
  app.addHook('onSend', (request, reply, payload, done) => {
    if (!request.raw.complete && announcesBody(request.raw)) void reply.header('connection', 'close');
    done(null, payload);
  });
}
