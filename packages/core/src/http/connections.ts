/**
 * The connection policy of every adapter's HTTP server (platform.md "Connections and request
 * bodies"), written once: how many sockets the process holds (in total and per remote address),
 * how long a socket may take to complete its first request (an idle socket that never sends one
 * is closed quickly: the connection flood), how long a connection that has served requests is
 * kept alive between them (≥ 65 s, above the 60 s idle timeout of common load balancers, so the
 * balancer closes first), and the headers timeout above that. Accept errors (`EMFILE`, `ENFILE`,
 * …) are reported and the server keeps serving.
 *
 * The core imports no `node:net`: {@link guardConnections} works on any server shaped like
 * Node's `http.Server` ({@link HttpServerLike}); each adapter passes its own.
 */
/** Options of the connection policy; every number is configurable, absent ones take the defaults. */
export interface ConnectionPolicyOptions {
  /**
   * Open sockets the server holds at most (new ones past it are closed at once, before a byte is
   * read). Default: 70% of the process's file-descriptor limit when the adapter knows it (the
   * rest stays for the database, files and logs), at most 10,000; 4,096 when unknown.
   */
  maxConnections?: number;
  /** Open sockets from one remote address at most (default: a quarter of `maxConnections`, at least 64). */
  maxConnectionsPerAddress?: number;
  /** ms a new socket has to complete its first request's headers; past it the socket is closed (default 10,000). */
  firstRequestTimeoutMs?: number;
  /** ms a connection that has served a request is kept open for the next one (default 72,000; at least 65,000 advised behind a load balancer). */
  keepAliveTimeoutMs?: number;
  /** ms a request's headers have to arrive (default `keepAliveTimeoutMs` + 1,000: above the keep-alive, as Node requires for reused sockets). */
  headersTimeoutMs?: number;
}

/** The policy with every number resolved. */
export type ConnectionPolicy = Required<ConnectionPolicyOptions>;

/** Defaults that do not depend on the process (see {@link connectionPolicy} for the caps). */
export const CONNECTION_DEFAULTS = {
  firstRequestTimeoutMs: 10_000,
  keepAliveTimeoutMs: 72_000,
  /** `maxConnections` when the file-descriptor limit is unknown. */
  maxConnections: 4_096,
  /** The most `maxConnections` defaults to, whatever the limit. */
  maxConnectionsCeiling: 10_000,
  /** Share of the file-descriptor limit `maxConnections` defaults to. */
  fdShare: 0.7,
} as const;

const positiveInt = (name: string, value: number): number => {
  if (!Number.isInteger(value) || value < 1) throw new TypeError(`connections.${name} must be an integer ≥ 1, got ${value}`);
  return value;
};

/**
 * Resolves the policy.
 * @param fdLimit the process's soft file-descriptor limit, when the adapter can read it (Linux:
 *   `/proc/self/limits`); it sizes the default `maxConnections`.
 * @throws TypeError when a number is not an integer ≥ 1, or `headersTimeoutMs` is not above `keepAliveTimeoutMs`.
 */
export function connectionPolicy(options: ConnectionPolicyOptions = {}, fdLimit?: number): ConnectionPolicy {
  const fromLimit = fdLimit !== undefined && Number.isFinite(fdLimit) && fdLimit > 0
    ? Math.max(16, Math.min(CONNECTION_DEFAULTS.maxConnectionsCeiling, Math.floor(fdLimit * CONNECTION_DEFAULTS.fdShare)))
    : CONNECTION_DEFAULTS.maxConnections;
  const maxConnections = positiveInt('maxConnections', options.maxConnections ?? fromLimit);
  const maxConnectionsPerAddress = positiveInt('maxConnectionsPerAddress', options.maxConnectionsPerAddress ?? Math.min(maxConnections, Math.max(64, Math.floor(maxConnections / 4))));
  const firstRequestTimeoutMs = positiveInt('firstRequestTimeoutMs', options.firstRequestTimeoutMs ?? CONNECTION_DEFAULTS.firstRequestTimeoutMs);
  const keepAliveTimeoutMs = positiveInt('keepAliveTimeoutMs', options.keepAliveTimeoutMs ?? CONNECTION_DEFAULTS.keepAliveTimeoutMs);
  const headersTimeoutMs = positiveInt('headersTimeoutMs', options.headersTimeoutMs ?? keepAliveTimeoutMs + 1_000);
  if (headersTimeoutMs <= keepAliveTimeoutMs) {
    throw new TypeError(`connections.headersTimeoutMs (${headersTimeoutMs}) must be above keepAliveTimeoutMs (${keepAliveTimeoutMs})`);
  }
  return { maxConnections, maxConnectionsPerAddress, firstRequestTimeoutMs, keepAliveTimeoutMs, headersTimeoutMs };
}

/** What the policy needs of a socket (Node's `net.Socket` has it). */
export interface SocketLike {
  remoteAddress?: string | undefined;
  destroyed: boolean;
  destroy(error?: Error): unknown;
  once(event: 'close', listener: () => void): unknown;
}

/** What the policy needs of a server (Node's `http.Server` has it). */
export interface HttpServerLike {
  on(event: string, listener: (...args: any[]) => void): unknown;
  off?(event: string, listener: (...args: any[]) => void): unknown;
  readonly listening?: boolean;
  maxConnections?: number | null | undefined;
  keepAliveTimeout: number;
  headersTimeout: number;
  requestTimeout: number;
}

/** Where the policy reports what it does: refused sockets by reason, and errors it handled. */
export interface ConnectionEvents {
  /** An error the server raised (accept errors such as `EMFILE`), or one of the policy's own timer; the server keeps serving. */
  onError?(error: unknown, context: 'accept' | 'timer'): void;
}

/** A server under the policy. */
export interface ConnectionGuard {
  readonly policy: ConnectionPolicy;
  /**
   * Counts: open sockets, distinct remote addresses, sockets still waiting for their first
   * request, sockets closed for not sending one in time, sockets refused over the per-address
   * cap, accept errors handled.
   */
  stats(): { open: number; addresses: number; pendingFirstRequest: number; closedIdle: number; refusedPerAddress: number; acceptErrors: number };
  /** Stops the policy's timer (the server's own timeouts stay as set). */
  close(): void;
}

/**
 * Puts `server` under the policy: sets its `maxConnections`, `keepAliveTimeout`, `headersTimeout`
 * (and a `requestTimeout` that is not below it, when one is set), counts sockets per remote
 * address (one past `maxConnectionsPerAddress` is closed at once), closes a socket that has not
 * completed its first request within `firstRequestTimeoutMs` (checked by one timer, at most once a
 * second, for all sockets), and handles the server's `error` events once it listens (accept
 * failures such as `EMFILE`: reported through `events.onError`, never thrown). A connection that
 * has completed a request is left to `keepAliveTimeout`.
 */
export function guardConnections(server: HttpServerLike, policy: ConnectionPolicy, events: ConnectionEvents = {}): ConnectionGuard {
  const report = (error: unknown, context: 'accept' | 'timer') => {
    try {
      events.onError?.(error, context);
    } catch {
      // A failing reporter must not take the server down.
    }
  };
  server.maxConnections = policy.maxConnections;
  server.keepAliveTimeout = policy.keepAliveTimeoutMs;
  server.headersTimeout = policy.headersTimeoutMs;
  if (server.requestTimeout > 0 && server.requestTimeout < policy.headersTimeoutMs) server.requestTimeout = policy.headersTimeoutMs;

  const byAddress = new Map<string, number>();
  /** Sockets whose first request has not arrived, with the time it must have by (ms). */
  const pending = new Map<SocketLike, number>();
  let open = 0;
  let closedIdle = 0;
  let refusedPerAddress = 0;
  let acceptErrors = 0;
  let sweeper: ReturnType<typeof setInterval> | undefined;
  const period = Math.min(1_000, Math.max(10, Math.floor(policy.firstRequestTimeoutMs / 4)));

  const sweep = () => {
    try {
      const now = Date.now();
      for (const [socket, deadline] of pending) {
        if (socket.destroyed) {
          pending.delete(socket);
          continue;
        }
        if (now < deadline) continue;
        pending.delete(socket);
        closedIdle++;
        socket.destroy();
      }
      if (pending.size === 0 && sweeper !== undefined) {
        clearInterval(sweeper);
        sweeper = undefined;
      }
    } catch (error) {
      report(error, 'timer');
    }
  };

  const onConnection = (socket: SocketLike) => {
    const address = socket.remoteAddress ?? '';
    const count = (byAddress.get(address) ?? 0) + 1;
    byAddress.set(address, count);
    open++;
    socket.once('close', () => {
      open--;
      pending.delete(socket);
      const left = (byAddress.get(address) ?? 1) - 1;
      if (left <= 0) byAddress.delete(address);
      else byAddress.set(address, left);
    });
    if (count > policy.maxConnectionsPerAddress) {
      refusedPerAddress++;
      socket.destroy();
      return;
    }
    pending.set(socket, Date.now() + policy.firstRequestTimeoutMs);
    if (sweeper === undefined) {
      sweeper = setInterval(sweep, period);
      (sweeper as { unref?: () => void }).unref?.();
    }
  };
  const onRequest = (request: { socket?: SocketLike }) => {
    if (request.socket !== undefined) pending.delete(request.socket);
  };
  const onError = (error: Error & { code?: string }) => {
    // Before it listens, the listen call owns its errors (a port in use must fail the start).
    if (server.listening === false) return;
    // EMFILE, ENFILE, ENOBUFS, ECONNABORTED …: the socket is lost, the server keeps listening.
    acceptErrors++;
    report(error, 'accept');
  };
  server.on('connection', onConnection);
  server.on('request', onRequest);
  server.on('error', onError);

  return {
    policy,
    stats: () => ({ open, addresses: byAddress.size, pendingFirstRequest: pending.size, closedIdle, refusedPerAddress, acceptErrors }),
    close: () => {
      if (sweeper !== undefined) clearInterval(sweeper);
      sweeper = undefined;
      server.off?.('connection', onConnection);
      server.off?.('request', onRequest);
    },
  };
}

/**
 * Reads a soft file-descriptor limit from the text of Linux's `/proc/self/limits` (the adapter
 * reads the file; the core reads no file): the "Max open files" row's soft value, or `undefined`
 * (no such row, `unlimited`).
 */
export function fdLimitFromProcLimits(text: string): number | undefined {
  const row = /^Max open files\s+(\d+|unlimited)\s+(\d+|unlimited)/m.exec(text);
  if (row === null || row[1] === 'unlimited') return undefined;
  return Number(row[1]);
}
