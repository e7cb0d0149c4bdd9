/**
 * `serveInboxKit`: the Hono app on Node (`@hono/node-server`), listening, with a `close()` that
 * ends open event streams and connections so it returns promptly. Requests Node's HTTP parser
 * refuses are answered in the envelope too.
 */
import { STATUS_CODES } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { serve } from '@hono/node-server';
import { envelope, newRequestId } from '@inbox-kit/core/http';
import { inboxKitHono, type InboxKitHonoOptions } from './app.js';

/** Options of {@link serveInboxKit}: the app's, plus where to listen (default 127.0.0.1, port 0 = any free port). */
export interface ServeInboxKitOptions extends InboxKitHonoOptions {
  hostname?: string;
  port?: number;
}

/** A listening server: its base URL (`http://host:port`) and how to stop it. */
export interface InboxKitHonoServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Starts the server; resolves once it listens. */
export async function serveInboxKit(options: ServeInboxKitOptions): Promise<InboxKitHonoServer> {
  const { app, closeStreams } = inboxKitHono(options);
  const hostname = options.hostname ?? '127.0.0.1';
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: app.fetch, hostname, port: options.port ?? 0 }, () => resolve(s));
  });
  server.on('clientError', answerClientError);
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${hostname.includes(':') ? `[${hostname}]` : hostname}:${port}`,
    port,
    close: () => new Promise<void>((resolve, reject) => {
      closeStreams();
      server.close((error) => (error ? reject(error) : resolve()));
      (server as { closeAllConnections?: () => void }).closeAllConnections?.();
    }),
  };
}

/** Node's `clientError`: 431 (headers too large), 408 (timeout) or 400 (unparseable), in the envelope; then the socket closes. */
function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, code, message] =
    error.code === 'HPE_HEADER_OVERFLOW' ? [431, 'request_header_too_large', 'The request line or headers are too large']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? [408, 'request_timeout', 'The request took too long to arrive']
        : [400, 'validation_error', 'Malformed HTTP request'];
  const request_id = newRequestId();
  const body = JSON.stringify(envelope(status, code, message, [], request_id));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`
      + `x-request-id: ${request_id}\r\nrequest-id: ${request_id}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
