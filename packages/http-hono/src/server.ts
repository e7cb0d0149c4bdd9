/**
 * `serveInboxKit`: the Hono app on Node (`@hono/node-server`), listening, with a `close()` that
 * ends open event streams and connections so it returns promptly. Requests Node's HTTP parser
 * refuses are answered in the envelope too.
 */
import type { AddressInfo, Socket } from 'node:net';
import { serve } from '@hono/node-server';
import { clientErrorResponse, newRequestId } from '@inbox-kit/core/http';
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
  if (socket.writable) socket.write(clientErrorResponse(error.code, newRequestId()));
  socket.destroy();
}
