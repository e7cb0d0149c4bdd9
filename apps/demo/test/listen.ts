/** In-process demo helpers for the tests: listen on a free port, close without lingering sockets. */
import type { Demo } from '../src/index.js';

/** Starts `demo` listening on a free 127.0.0.1 port; returns its base URL (`http://127.0.0.1:<port>`). */
export async function listen(demo: Demo): Promise<string> {
  await demo.app.listen({ port: 0, host: '127.0.0.1' });
  const address = demo.app.server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
}

/**
 * Closes `demo` (if any). An aborted SSE socket can linger in keep-alive until the client's
 * timeout, so open connections are dropped rather than waited for.
 */
export async function closeDemo(demo: Demo | undefined): Promise<void> {
  if (!demo) return;
  const closing = demo.close();
  demo.app.server.closeAllConnections();
  await closing;
}
