/**
 * The checks of the HTTP conformance kit, as plain async functions (no test framework): each gets
 * a fresh subject — an adapter serving the contract (`@inbox-kit/core/http`) over a real socket,
 * on services over a freshly seeded store — drives it with `fetch` only (black box), and throws an
 * `HttpConformanceError` naming what broke. `http-conformance.ts` registers them as a vitest suite.
 *
 * Success bodies are checked against the route table's own response schemas, errors against the
 * one envelope and the code → status → `error.type` table, so the kit follows the contract.
 */
import { LiveInboxHost } from '../live-inbox/registry.js';
import type { Model, ModelStepResult } from '../live-inbox/agent-loop.js';
import { createIdGenerator, systemClock } from '../ports/clock.js';
import { createLocalEventBus } from '../ports/event-bus.js';
import type { Store } from '../ports/store.js';
import { PlatformService } from '../platform/service.js';
import { ProjectInboxService } from '../project-inbox/service.js';
import { SessionRuntimeService } from '../sessions/service.js';
import { ManagedSessionsService } from '../sessions/managed-sessions.js';
import type { HttpServices } from '../http/routes.js';
import { createMemoryStore } from './memory-store.js';
import { seedTestWorld } from './world.js';
import type { CorsOptions } from '../http/cors.js';
import type { HttpCheckLayer, HttpKitMode, HttpKitOptOut } from './http-kit.js';
import { contractChecks } from './http-checks-contract.js';
import { resourceChecks } from './http-checks-resources.js';

export { HttpConformanceError } from './http-checks-support.js';

/** What an adapter author's `start` returns: the base URL it listens on (no trailing slash) and how to stop it. */
export interface HttpConformanceServer {
  url: string;
  close(): Promise<void>;
  /**
   * In-process: a fetch-style handler (`(request: Request) => Promise<Response>`) the kit calls
   * instead of `fetch(url)` (then `url` is only the base the requests' URLs are built on, and no
   * socket is opened). Absent: the kit sends over a socket to `url`.
   */
  fetch?: (request: Request) => Promise<Response>;
}

/** `fetch`, sent to `server.fetch` (in-process) when the server has one, else over a socket. */
export function serverFetch(server: Pick<HttpConformanceServer, 'fetch'>): (url: string, init?: RequestInit) => Promise<Response> {
  const handler = server.fetch;
  return handler ? (url, init) => handler(new Request(url, init)) : (url, init) => fetch(url, init);
}

/** What the kit's suites ask of an adapter beyond its services (pass each on to the adapter's own options). */
export interface HttpAdapterSettings {
  /** SSE heartbeat and `retry:` hint (ms) and the per-caller cap on open event streams (default 16). */
  streamTiming?: { heartbeatMs?: number; retryMs?: number; maxStreamsPerCaller?: number };
  /** ms a request body has to arrive before 408 `request_timeout` (platform.md "Connections and request bodies"). */
  bodyTimeoutMs?: number;
  /**
   * The bad-credential throttle per remote address (platform.md "Per-caller bounds"): every
   * request of the kit comes from 127.0.0.1, so its suites pass `false` (off) but the budget suite,
   * which passes small numbers and checks the 429s.
   */
  credentialThrottle?: { maxFailures?: number; windowMs?: number } | false;
  /** Request bodies one API key may have in flight (the budget suite passes a small number). */
  maxBodiesPerKey?: number;
  /**
   * Bytes of request bodies one API key may send per second: the kit's suites pass 0 (off: the
   * hostile-input suite sends many bodies over the limit from one key), but the budget suite's
   * flood, which runs at the adapter's default.
   */
  bodyBytesPerSecondPerKey?: number;
  /**
   * The connection policy (platform.md "Connections and request bodies"): the connections suite
   * passes small caps and a short first-request window. An adapter embedded in a host passes it to
   * the host's `guardConnections` (`@inbox-kit/core/http`).
   */
  connections?: { maxConnections?: number; maxConnectionsPerAddress?: number; firstRequestTimeoutMs?: number; keepAliveTimeoutMs?: number; headersTimeoutMs?: number };
  /** CORS (platform.md "Browsers" → "CORS"): the CORS check passes exact origins; absent, CORS is off. */
  cors?: CorsOptions;
}

/**
 * The settings every suite and check of the kit starts an adapter with unless it says otherwise:
 * the bad-credential throttle and the body bytes per second off (the suites send thousands of bad
 * keys, and many bodies over the limit, from one address and key on purpose).
 */
export const KIT_ADAPTER_SETTINGS: HttpAdapterSettings = { credentialThrottle: false, bodyBytesPerSecondPerKey: 0 };

/** Options of the kit. */
export interface HttpConformanceOptions {
  /** Which layers of checks run (see `http-kit.ts`); default `sockets`: all of them. Set by the kit's runners. */
  mode?: HttpKitMode;
  /** Checks or groups not run, each with the reason (registered as skipped, the reason in the title). */
  optOut?: HttpKitOptOut;
  /** Starts the adapter on `services` with `settings` (absent: the adapter's defaults), listening on a real socket (e.g. 127.0.0.1, port 0). */
  start(services: HttpServices, settings?: HttpAdapterSettings): Promise<HttpConformanceServer>;
  /**
   * A fresh, migrated store per check (default: the in-memory reference store). `rowCounts`, when
   * given, reads the row count of every table of the database underneath with raw queries (not
   * through the adapter nor the Store port); the hostile-input suite then checks that no refused
   * request changed any of them. `dumpRows` likewise reads every row (the security suite's check).
   */
  openStore?: () => Promise<{
    store: Store;
    close(): Promise<void>;
    rowCounts?: () => Promise<Record<string, number>>;
    /** Every row of every table, each as JSON, sorted per table (raw queries): the security suite's "nothing written". */
    dumpRows?: () => Promise<Record<string, string[]>>;
  }>;
}

/** A model whose steps the check answers by hand (no timers). */
export interface GatedModel extends Model {
  /** Resolves with the next pending step; `reply(text)` ends it (the Run ends unless `more`). */
  next(): Promise<{ reply(text: string, more?: boolean): void }>;
}

/** The seeded world a check runs against. */
export interface HttpConformanceSubject {
  url: string;
  /** `fetch` to the adapter: in-process when the server gave a handler, else over its socket. */
  fetch: (url: string, init?: RequestInit) => Promise<Response>;
  /** Secrets of the seeded world (`seedTestWorld`, `world.ts`): `acc_owner`, `acc_deriver`, `acc_deriver2`, `acc_observer`, `acc_outsider` (ws_demo), `acc_stranger` (ws_other), `service` (ws_demo, acting as anyone there), `revoked`, `admin`. */
  keys: Record<string, string>;
  /** `proj_main`: owner acc_owner, derivers acc_deriver and acc_deriver2, observer acc_observer; its session `sess_001`. */
  project_id: string;
  session_id: string;
  /** The one agent `POST /v1/sessions` may name: `kit_agent`, version 1. */
  agent_id: string;
  model: GatedModel;
}

function gatedModel(): GatedModel {
  const pending: Array<{ reply(text: string, more?: boolean): void }> = [];
  let taken = 0;
  let wake: (() => void) | undefined;
  return {
    step(_transcript, signal) {
      return new Promise<ModelStepResult>((resolve, reject) => {
        if (signal.aborted) return reject(signal.reason);
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
        pending.push({ reply: (text, more = false) => resolve({ content: [{ type: 'text', text }], continue: more }) });
        wake?.();
      });
    },
    async next() {
      while (pending.length <= taken) await new Promise<void>((r) => (wake = r));
      return pending[taken++]!;
    },
  };
}

/**
 * Builds the services on a fresh store, seeds the world, starts the adapter, runs `check`, and
 * stops everything whatever happened.
 */
export async function withHttpSubject(options: HttpConformanceOptions, check: (subject: HttpConformanceSubject) => Promise<void>, settings: HttpAdapterSettings = {}): Promise<void> {
  const opened = options.openStore ? await options.openStore() : { store: createMemoryStore() as Store, close: async () => {} };
  const deps = { store: opened.store, bus: createLocalEventBus(), clock: systemClock, ids: createIdGenerator() };
  const platform = new PlatformService(deps);
  const model = gatedModel();
  const runtime = new SessionRuntimeService({ ...deps, host: new LiveInboxHost(), model });
  try {
    const { keys } = await seedTestWorld(platform);
    const managedSessions = new ManagedSessionsService({ ...deps, platform, runtime, agents: [{ id: 'kit_agent', name: 'Kit agent', model: 'gated', version: 1 }] });
    const server = await options.start({ platform, projectInbox: new ProjectInboxService(deps), runtime, managedSessions }, { ...KIT_ADAPTER_SETTINGS, ...settings });
    try {
      await check({ url: server.url.replace(/\/+$/, ''), fetch: serverFetch(server), keys, project_id: 'proj_main', session_id: 'sess_001', agent_id: 'kit_agent', model });
    } finally {
      await server.close();
    }
  } finally {
    await runtime.close();
    await opened.close();
  }
}

/** One check: a name and its body. */
export interface HttpConformanceCheck {
  name: string;
  /** The group it belongs to (a run may opt a whole group out). */
  group: string;
  /** `behaviour` (default: runs in-process too), `wire` or `both` (see `http-kit.ts`). */
  layer?: HttpCheckLayer;
  /** Adapter settings of this check on top of {@link KIT_ADAPTER_SETTINGS} (the CORS check's origins). */
  settings?: HttpAdapterSettings;
  run(subject: HttpConformanceSubject): Promise<void>;
}

/** Every check of the kit, in order. */
export const httpConformanceChecks: HttpConformanceCheck[] = [...contractChecks, ...resourceChecks];
