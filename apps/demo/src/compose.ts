/**
 * The demo's composition root: storage (SQLite file under DATA_DIR, or PostgreSQL from
 * DATABASE_URL), the event bus, the services, the Live Inbox runtime host with the model (DEMO_MODEL:
 * scripted or anthropic), first-start seed data, and the options every HTTP adapter takes to serve
 * them (`http`). It names no HTTP adapter: the server entry picks one (HTTP_ADAPTER; `app.ts` builds
 * the Fastify server, `main.ts` serves Hono). On PostgreSQL with INBOX_KIT_ADVERTISE_URL and
 * INBOX_KIT_FORWARD_SECRET, Live Inbox requests are routed between processes (see `routingOf`),
 * forwarded with the core's `createHttpAttemptForwarder`, which every adapter's `forwarding` accepts.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  LiveInboxHost, ManagedSessionsService, SessionRuntimeService, createIdGenerator, createLocalEventBus, createServices, observeEventBus, observeStore, systemClock,
  type AttemptRoutingOptions, type Clock, type EventBus, type ManagedAgentDefinition, type Model, type RunOptions, type ServiceDeps, type Store,
  type Tool,
} from '@inbox-kit/core';
import { createHttpAttemptForwarder, type CorsOptions, type HttpObserver, type HttpServices } from '@inbox-kit/core/http';
import { openStore, type OpenedStore } from '@inbox-kit/storage-kysely';
import { nanoid } from 'nanoid';
import type { DemoConfig } from './config.js';
import { createDemoModel } from './model.js';
import { startUp, type Credentials, type StartUp } from './seed.js';
import { createDemoExecutor } from './runtimes.js';
import { waitTool } from './tools.js';
import { createObservability, type Observability } from './observability.js';

/** Where the composition's log lines go (pino's shape: an object, then the message). */
export interface DemoLog {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
  error(object: object, message: string): void;
}

/** What any HTTP adapter needs to serve the demo's API (the same option names on every adapter). */
export interface DemoHttp {
  services: HttpServices;
  forwarding?: { secret: string };
  connections: DemoConfig['connections'];
  credentialThrottle: DemoConfig['credentialThrottle'];
  maxBodiesPerKey: number;
  maxBodyBytesPerKey: number;
  bodyBytesPerSecondPerKey: number;
  bodyLimit: number;
  bodyTimeoutMs: number;
  streamTiming: { maxStreamsPerCaller: number; retryMs: number };
  cors?: CorsOptions;
  observer?: HttpObserver;
}

/** The composed demo: services and storage, no server. */
export interface ComposedDemo {
  /** What any HTTP adapter needs to serve the same API (the Fastify entry and HTTP_ADAPTER=hono serve it with these). */
  http: DemoHttp;
  /** Metrics (METRICS_PORT) and tracing (an OTLP endpoint), or undefined with neither; `observability.listen` serves `/metrics`. */
  observability: Observability | undefined;
  store: Store;
  /** The store without the observability wrapper (the web page reads it). */
  rawStore: Store;
  bus: EventBus;
  /** The Session Runtime (durable Session events, Runs, Live Inbox). */
  runtime: SessionRuntimeService;
  /** The keys the web page may offer: those issued now (first start), else those of `credentials.json` that authenticate. */
  credentials: Credentials;
  /** True when this start found an empty database and wrote its first data (the demo seed, or with `DEMO_SEED=false` one workspace and its admin key). */
  seeded: boolean;
  /** What the start found and did about data and keys (for the start-up lines). */
  startUp: StartUp;
  /** The migrations: applied by this start, still pending (none unless `DATABASE_MIGRATE=false`), or of a newer release (served as they are). */
  migrations: OpenedStore['migrations'];
  /** How many Runs left `running` by a dead process this start ended (`failed`, with `session.status_idle`), before serving; 0 when config `recoverStaleRuns` is off. */
  recovered: number;
  dialect: 'sqlite' | 'postgres';
  /** Sends the composition's log lines (bus, routing, runs, retries, sweeps) to `log`. */
  setLog(log: DemoLog): void;
  /** Runs first (each ends `cancelled`), then `server` (the adapter's), observability, the event bus, storage. */
  close(server?: { close(): Promise<unknown> }): Promise<void>;
}

/** A start-up refusal a user can fix (main.ts prints the message alone and exits 1). */
export class StartUpError extends Error {
  override readonly name = 'StartUpError';
}

/** How often expired idempotency records are swept (ms): 10 minutes. */
const IDEMPOTENCY_SWEEP_MS = 600_000;

/**
 * The demo's one configured agent: `POST /v1/sessions` with `agent: 'assistant'` (or `{ type:
 * 'agent', id: 'assistant', version: 1 }`) runs on the demo's model, with the host tool `wait`.
 */
export const DEMO_AGENT: ManagedAgentDefinition = {
  id: 'assistant',
  name: 'Assistant',
  description: 'The inbox-kit demo agent: answers on the demo model, drains the Live Inbox between steps and can wait (the host tool `wait`).',
  model: 'inbox-kit-demo-scripted',
  version: 1,
  tools: [waitTool('always_allow')],
};

/** {@link DEMO_AGENT} with its `wait` tool's permission set by DEMO_TOOL_POLICY. */
export function demoAgent(config: Pick<DemoConfig, 'toolPolicy'>): ManagedAgentDefinition {
  return { ...DEMO_AGENT, tools: [waitTool(config.toolPolicy)] };
}

/**
 * Composes the demo (no server). `overrides.model` replaces the model of config `model`
 * (DEMO_MODEL: the scripted model by default, or the Messages API model); `overrides.tools` are
 * more tools of the `assistant` agent (after `wait`), `overrides.run` its Run options (e.g.
 * `maxToolRounds`) — for tests and embedders.
 * @throws StartUpError when the database lacks migrations and DATABASE_MIGRATE=false; storage and
 *   event bus connection errors.
 */
export async function composeDemo(config: DemoConfig, overrides: { clock?: Clock; model?: Model; tools?: readonly Tool[]; run?: RunOptions } = {}): Promise<ComposedDemo> {
  // Owner-only when created here: it holds the database and credentials.json.
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const opened = await openStore({
    databaseUrl: config.databaseUrl,
    sqliteFile: join(config.dataDir, 'inbox-kit.sqlite'),
    postgres: { preparedStatements: config.preparedStatements },
    migrate: config.migrate,
    sqlite: { busyTimeoutMs: config.sqliteBusyTimeoutMs },
  });
  if (opened.migrations.pending.length > 0) {
    // DATABASE_MIGRATE=false on a database that lacks this release's migrations: nothing would work.
    await opened.close();
    throw new StartUpError(`the database lacks ${opened.migrations.pending.length} migration(s) of this release (${opened.migrations.pending.join(', ')}) and DATABASE_MIGRATE=false: `
      + 'run `npm run admin -- migrate` with the same DATABASE_URL / DATA_DIR first (or unset DATABASE_MIGRATE)');
  }
  // Where log lines go: the server entry's logger once it has one (`setLog`).
  let log: DemoLog | undefined;
  let bus: EventBus & { close?(): Promise<void> };
  try {
    bus = await openEventBus(opened, config, (error) => log?.error({ err: error }, 'event bus error'));
  } catch (error) {
    await opened.close();
    throw error;
  }
  const clock = overrides.clock ?? offsetClock(config.clockOffsetMs);
  // Metrics and spans, when configured: every storage call and bus delivery reported to them.
  const observability = createObservability({ metrics: config.metricsPort !== undefined, tracing: config.tracing });
  const store = observability ? observeStore(opened.store, observability.store) : opened.store;
  if (observability) bus = observeEventBus(bus, observability.bus, clock);
  const deps: ServiceDeps = {
    store,
    bus,
    clock,
    ids: createIdGenerator({ clock, random: nanoid }),
    onPublishError: (error) => log?.error({ err: error }, 'event publish failed after commit'),
    budgets: config.budgets,
    idempotencyTtlMs: config.idempotencyTtlMs,
    principalCacheTtlMs: config.principalCacheTtlMs,
    sessionGateCacheTtlMs: config.sessionGateCacheTtlMs,
  };
  const { platform, projectInbox } = createServices(deps);
  const routing = routingOf(opened, config, (error, info) => log?.warn({ err: error, ...info }, 'attempt routing failed; answered locally'));
  const base = demoAgent(config);
  const agent: ManagedAgentDefinition = {
    ...base, tools: [...(base.tools ?? []), ...(overrides.tools ?? [])], ...(overrides.run ? { run: overrides.run } : {}),
  };
  const model = overrides.model ?? await createDemoModel(config, {
    onRetry: ({ retry, delayMs, error }) => log?.warn({ retry, delay_ms: delayMs, error_type: error.type, status: error.status }, `model request failed, retrying: ${error.message}`),
  });
  // DEMO_RUNTIME: the native loop on `model`, or a framework's loop through its adapter.
  const executor = await createDemoExecutor(config.runtime, config, model);
  const runtime = new SessionRuntimeService({
    ...deps,
    host: new LiveInboxHost({
      limits: config.liveInbox,
      onCarryOverDropped: (info) => log?.warn(info, 'Live Inbox carry-over over the limits: newest messages dropped'),
    }),
    model,
    ...(executor ? { executor } : {}),
    onRunError: (error, run) => log?.error({ err: error, ...run }, 'run failed'),
    ...(observability ? { onRunEnded: observability.onRunEnded } : {}),
    // The `assistant` agent and its host tool `wait`; Sessions of /sessions (no agent) get it too.
    agents: [agent],
    tools: agent.tools,
    ...(agent.run ? { runDefaults: agent.run } : {}),
    recoverStaleRuns: config.recoverStaleRuns,
    ...(routing ? { routing } : {}),
  });
  // The Managed Agents surface (`/v1/sessions`, `/v1/agents`): the configured agent `assistant`
  // (the Runtime's), backed by the model, and the agents callers create.
  const managedSessions = new ManagedSessionsService({ ...deps, platform, runtime });
  observability?.attachRuntime(runtime);
  try {
    const started = await startUp(store, platform, config.dataDir, { demoSeed: config.demoSeed, workspaceName: config.workspaceName });
    const { credentials, created } = started;
    const forwarding = routing && config.forwardSecret ? { secret: config.forwardSecret } : undefined;
    const http: DemoHttp = {
      services: { platform, projectInbox, runtime, managedSessions }, ...(forwarding ? { forwarding } : {}),
      connections: config.connections, credentialThrottle: config.credentialThrottle, maxBodiesPerKey: config.maxBodiesPerKey,
      maxBodyBytesPerKey: config.maxBodyBytesPerKey, bodyBytesPerSecondPerKey: config.bodyBytesPerSecondPerKey,
      bodyLimit: config.bodyLimit, bodyTimeoutMs: config.bodyTimeoutMs, streamTiming: { maxStreamsPerCaller: config.maxStreamsPerCaller, retryMs: config.sseRetryMs },
      ...(config.corsOrigins.length > 0 ? { cors: { origins: config.corsOrigins } } : {}),
      ...(observability ? { observer: observability.http } : {}),
    };
    // Runs a killed process left `running` end now (not when input next reaches their Session), so
    // history and `GET …/live-inbox` are right from the first request. A no-op when turned off.
    const recovered = await runtime.recoverStaleRuns();
    // Retention (platform.md "Retention"): expired idempotency records go now and every 10 minutes.
    const sweep = () => {
      projectInbox.sweepExpiredIdempotencyKeys().then((n) => {
        if (n > 0) log?.info({ deleted: n }, 'expired idempotency records swept');
      }, (error: unknown) => log?.error({ err: error }, 'sweeping expired idempotency records failed; retrying at the next sweep'));
    };
    sweep();
    const sweeper = setInterval(sweep, IDEMPOTENCY_SWEEP_MS);
    sweeper.unref();
    return {
      http, observability, store, rawStore: opened.store, bus, runtime, credentials, seeded: created, startUp: started,
      migrations: opened.migrations, recovered, dialect: opened.dialect,
      setLog(next) {
        log = next;
      },
      close: async (server) => {
        clearInterval(sweeper);
        await runtime.close();
        await server?.close();
        await observability?.close();
        await bus.close?.();
        await opened.close();
      },
    };
  } catch (error) {
    await runtime.close();
    await bus.close?.();
    await opened.close();
    throw error;
  }
}

/**
 * Attempt routing (live-inbox.md "Scale"), only on PostgreSQL with both INBOX_KIT_ADVERTISE_URL and
 * INBOX_KIT_FORWARD_SECRET: this process records the attempts it hosts under a random host id and
 * its advertised URL, and forwards Live Inbox requests for attempts of other processes to them
 * (2 s timeout). Otherwise undefined: the Live Inbox stays process-local.
 */
function routingOf(opened: OpenedStore, config: DemoConfig, onRoutingError: AttemptRoutingOptions['onRoutingError']): AttemptRoutingOptions | undefined {
  if (opened.dialect !== 'postgres' || !config.advertiseUrl || !config.forwardSecret) return undefined;
  return {
    host_id: `host_${nanoid(16)}`,
    host_url: config.advertiseUrl,
    forwarder: createHttpAttemptForwarder({ secret: config.forwardSecret, timeoutMs: 2_000 }),
    lease_ms: config.lease.leaseMs,
    takeover_check_ms: config.lease.takeoverCheckMs,
    onRoutingError,
  };
}

/** The wall clock, or (INBOX_KIT_TEST_CLOCK_OFFSET_MS, tests only) the wall clock moved by `offsetMs`. */
function offsetClock(offsetMs: number): Clock {
  return offsetMs === 0 ? systemClock : { now: () => Date.now() + offsetMs };
}

/**
 * The event bus (platform.md "Project Events"): in-process on SQLite (one server process); on
 * PostgreSQL, LISTEN/NOTIFY on the same database so events committed by any demo process reach the
 * streams of every other one, the listener on DATABASE_LISTEN_URL with its health check
 * (platform.md "Many processes"). The PostgreSQL bus is listening when this returns.
 * @throws the connection error when PostgreSQL cannot be reached for LISTEN; `EventBusListenError`
 *   when the listen connection receives no notifications (a transaction-mode pooler).
 */
async function openEventBus(opened: OpenedStore, config: DemoConfig, onError: (error: unknown) => void): Promise<EventBus & { close?(): Promise<void> }> {
  if (opened.dialect !== 'postgres' || !config.databaseUrl) return createLocalEventBus();
  // Loaded only here: a SQLite demo does not carry the PostgreSQL bus.
  const { createPostgresEventBus } = await import('@inbox-kit/storage-kysely/postgres');
  // The listener has its own connection (DATABASE_LISTEN_URL): writes may go through a
  // transaction-mode pooler, LISTEN may not; start() refuses a listener that receives nothing.
  const bus = createPostgresEventBus({
    url: config.databaseUrl, listenUrl: config.databaseListenUrl ?? config.databaseUrl, db: opened.db, onError,
    healthCheckIntervalMs: config.listenCheck.intervalMs, healthCheckTimeoutMs: config.listenCheck.timeoutMs,
  });
  try {
    await bus.start();
  } catch (error) {
    await bus.close().catch(() => undefined);
    throw error;
  }
  return bus;
}
