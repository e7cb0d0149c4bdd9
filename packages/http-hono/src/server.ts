/**
 * `serveInboxKit`: the Hono app on Node (`@hono/node-server`), listening, under the contract's
 * connection policy (socket caps, the first-request window, keep-alive above a load balancer's,
 * accept errors handled), with a `close()` that ends open event streams and connections so it
 * returns promptly. Requests Node's HTTP parser refuses are answered in the envelope too.
 */
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import {
  answerClientError, connectionPolicy, fdLimitFromProcLimits, guardConnections, type ConnectionGuard, type ConnectionPolicyOptions, type HttpServerLike,
} from '@inbox-kit/core/http';
import { inboxKitHono, type InboxKitHonoOptions } from './app.js';

/** Options of {@link serveInboxKit}: the app's, plus where to listen (default 127.0.0.1, port 0 = any free port). */
export interface ServeInboxKitOptions extends InboxKitHonoOptions {
  hostname?: string;
  port?: number;
  /**
   * The connection policy (platform.md "Connections and request bodies"), the Fastify preset's:
   * socket caps (default: 70% of the file-descriptor limit, at most 10,000; a quarter per
   * address), `firstRequestTimeoutMs` (10,000), `keepAliveTimeoutMs` (72,000, where
   * `@hono/node-server` alone keeps 5,000) and `headersTimeoutMs` (keep-alive + 1,000).
   */
  connections?: ConnectionPolicyOptions;
}

/** A listening server: its base URL (`http://host:port`) and how to stop it. */
export interface InboxKitHonoServer {
  url: string;
  port: number;
  /** The connection policy at work (its numbers and counts). */
  connections: ConnectionGuard;
  close(): Promise<void>;
}

/** Starts the server; resolves once it listens. */
export async function serveInboxKit(options: ServeInboxKitOptions): Promise<InboxKitHonoServer> {
  const policy = connectionPolicy(options.connections, readFdLimit());
  const kit = inboxKitHono(options);
  const hostname = options.hostname ?? '127.0.0.1';
  const reportError = options.reportError ?? ((error: unknown) => console.error('inbox-kit: connection error', error));
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve({ fetch: kit.app.fetch, hostname, port: options.port ?? 0 }, () => {
      s.off('error', reject);
      resolve(s);
    });
    s.once('error', reject);
  }).catch((error: unknown) => {
    kit.close();
    throw error;
  });
  server.on('clientError', answerClientError);
  const connections = guardConnections(server as unknown as HttpServerLike, policy, { onError: (error) => reportError(error, 'connection') });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${hostname.includes(':') ? `[${hostname}]` : hostname}:${port}`,
    port,
    connections,
    close: () => new Promise<void>((resolve, reject) => {
      kit.close();
      connections.close();
      server.close((error) => (error ? reject(error) : resolve()));
      (server as { closeAllConnections?: () => void }).closeAllConnections?.();
    }),
  };
}

/** The process's soft file-descriptor limit (Linux `/proc/self/limits`), or undefined elsewhere. */
function readFdLimit(): number | undefined {
  try {
    return fdLimitFromProcLimits(readFileSync('/proc/self/limits', 'utf8'));
  } catch {
    return undefined;
  }
}
