/**
 * The fetch handler on a real socket for the tests: `@hono/node-server` converts Node's request to a
 * `Request` and the `Response` back, under the contract's connection policy (`guardConnections`)
 * and with Node's refused requests answered in the envelope — what a Node host of the handler does.
 */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { answerClientError, connectionPolicy, guardConnections, type ConnectionPolicyOptions, type HttpServerLike } from '@inbox-kit/core/http';
import { createFetchHandler, type FetchHandlerOptions } from '../src/index.js';

/** A listening handler: its base URL and how to stop it. */
export interface ServedHandler {
  url: string;
  close(): Promise<void>;
}

/** Serves `createFetchHandler(options)` on 127.0.0.1 (any free port). */
export async function serveFetchHandler(options: FetchHandlerOptions & { connections?: ConnectionPolicyOptions }): Promise<ServedHandler> {
  const { connections: policyOptions, ...handlerOptions } = options;
  // The socket's peer address, as a Node host passes it (`@hono/node-server` puts Node's request in `env.incoming`).
  const clientAddress = (_request: Request, env: unknown) => (env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming?.socket?.remoteAddress;
  const handler = createFetchHandler({ clientAddress, ...handlerOptions });
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve({ fetch: handler, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
    s.once('error', reject);
  });
  server.on('clientError', answerClientError);
  const guard = guardConnections(server as unknown as HttpServerLike, connectionPolicy(policyOptions, undefined), { onError: () => {} });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${options.basePath ?? ''}`,
    close: () => new Promise<void>((resolve, reject) => {
      handler.close();
      guard.close();
      server.close((error) => (error ? reject(error) : resolve()));
      (server as { closeAllConnections?: () => void }).closeAllConnections?.();
    }),
  };
}
