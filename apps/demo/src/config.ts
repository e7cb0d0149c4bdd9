/**
 * Demo configuration from the environment: PORT (default 3000), HOST (default 127.0.0.1),
 * DATA_DIR (default ./data), DATABASE_URL (PostgreSQL; SQLite file under DATA_DIR when unset),
 * BODY_LIMIT (bytes, default 1 MiB), BODY_TIMEOUT_MS (ms a request body has to arrive, default
 * 30000; 0 = no deadline), LIVE_INBOX_MAX_MESSAGES and LIVE_INBOX_MAX_BYTES (per-inbox bounds,
 * default 100 and 4 MiB), MAX_STREAMS_PER_CALLER (event streams one API key and account may hold
 * open, default 16), LOG_LEVEL (default info; "silent" turns logging off),
 * LOG_FORMAT (`pretty`: one human-readable line per entry; `json`: one JSON object per line;
 * default pretty when stdout is a terminal, json otherwise),
 * DEMO_MODEL_STEP_MS (ms one scripted model step takes, default 1500), DEMO_MODEL_STEPS (steps
 * per user message, default 3), RATE_LIMIT_MAX (requests per API key and window; unset or 0 = no
 * limit) and RATE_LIMIT_WINDOW_MS (the window, default 60000), CORS_ORIGINS (exact origins a page
 * on another origin may call the API from, comma separated; unset: CORS off), INBOX_KIT_ADVERTISE_URL (this
 * process's base URL as other processes reach it) and INBOX_KIT_FORWARD_SECRET (shared by the
 * processes): with both, on PostgreSQL, Live Inbox requests are routed to the process owning the
 * attempt (live-inbox.md "Scale"), and INBOX_KIT_RECOVER_STALE_RUNS (default true; "false" or "0"
 * turns off ending Runs left running by a dead process — at start-up and when input arrives; do
 * so when several processes share one PostgreSQL database without attempt routing), and
 * DATABASE_PREPARED_STATEMENTS (default true; "false" or "0" behind a transaction-mode pooler such
 * as PgBouncer before 1.21, which cannot keep named prepared statements), DATABASE_LISTEN_URL (the
 * event listener's own connection, default DATABASE_URL: a direct or session-mode connection, since
 * a transaction-mode pooler drops notifications and the demo refuses to start on one),
 * SQLITE_BUSY_TIMEOUT_MS (ms a write waits for another process's SQLite write lock before it
 * answers 503 `storage_busy`, default 5000; the wait never blocks the server), DATABASE_LISTEN_CHECK_MS (ms between the listener's health checks, default 5000; 0 = off) and
 * DATABASE_LISTEN_CHECK_TIMEOUT_MS (ms a check may take, default 3000), INBOX_KIT_LEASE_MS (attempt
 * lease, default 15000) and INBOX_KIT_TAKEOVER_CHECK_MS (ms between takeover checks, default a
 * third of the lease; 0 = off), INBOX_KIT_TEST_CLOCK_OFFSET_MS (a test hook, honoured only with
 * NODE_ENV=test: ms added to this process's clock, to play a process with a skewed clock), and DEMO_MODEL
 * (`scripted`, the default, or `anthropic`: the Messages API model, which needs ANTHROPIC_API_KEY
 * and takes ANTHROPIC_BASE_URL and ANTHROPIC_MODEL, default `claude-haiku-4-5`),
 * DEMO_TOOL_POLICY (`always_allow`, the default, or `always_ask`: the permission of the
 * `assistant` agent's host tool `wait`; with `always_ask` each call waits for a
 * `user.tool_confirmation`), DEMO_SEED (default true; "false" or "0": an empty database gets one
 * workspace, INBOX_KIT_WORKSPACE_NAME, default `Workspace`, and one admin key instead of the demo
 * data) and DATABASE_MIGRATE (default true; "false" or "0": no migration at start-up, which then
 * refuses a database lacking this release's migrations: run `npm run admin -- migrate` ahead), and
 * DEMO_RUNTIME (`native`, the default, `ai-sdk`, `langgraph` or `openai-agents`: whose loop runs the `assistant` agent),
 * METRICS_PORT (Prometheus metrics at `GET /metrics` on this port, bound like HOST; unset = none;
 * 0 = any free port, printed at start-up), and OTEL_EXPORTER_OTLP_ENDPOINT /
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (set: OpenTelemetry spans around requests and storage calls,
 * through `@opentelemetry/api`, exported by the SDK the process registers).
 *
 * Connections and per-caller budgets (platform.md "Connections and request bodies", "Per-caller
 * bounds"; unset = the default): MAX_CONNECTIONS (open sockets; default 70% of the process's
 * file-descriptor limit, at most 10,000), MAX_CONNECTIONS_PER_ADDRESS (default a quarter of that),
 * FIRST_REQUEST_TIMEOUT_MS (a socket that sends no request is closed; default 10000),
 * KEEP_ALIVE_TIMEOUT_MS (default 72000: above a load balancer's 60 s), HEADERS_TIMEOUT_MS (default
 * keep-alive + 1000), MAX_RUNS_PER_ACCOUNT and MAX_RUNS_PER_KEY (Runs running at once; default 8
 * each), SESSIONS_PER_MINUTE (per API key; default 120; 0 = no limit), MAX_BODIES_PER_KEY (request
 * bodies in flight per API key; default 64), MAX_BODY_BYTES_PER_KEY (their bytes in flight; default
 * 2 MiB), BODY_BYTES_PER_SECOND_PER_KEY (default 8 MiB; 0 = no limit), AUTH_FAILURES_PER_WINDOW (requests with an unknown or
 * revoked key per remote address before 429; default 100; 0 = off) and AUTH_FAILURE_WINDOW_MS
 * (default 60000), IDEMPOTENCY_TTL_MS (how long an Idempotency-Key keeps its first answer;
 * default 86400000 = 24 h; expired records are swept every 10 minutes), PRINCIPAL_CACHE_TTL_MS (ms an
 * authenticated API key is cached in the process: how long a revocation made by another process goes
 * unseen here; default 1000; 0 = no cache), SESSION_GATE_CACHE_TTL_MS (ms a Session's gate — project
 * owner and status, the caller's role, its archive — is cached for the Live Inbox routes: how long
 * such a change made by another process goes unseen by them here; default 1000; 0 = no cache) and SSE_RETRY_MS (the `retry:` hint event streams send:
 * how long a dropped client waits before it reconnects; default 2000).
 */
import type { CallerBudgetOptions } from '@inbox-kit/core';
import { parseCorsOrigins, type ConnectionPolicyOptions, type CredentialThrottleOptions } from '@inbox-kit/core/http';
import { dataDirOf } from './data-dir.js';
import { DEMO_RUNTIMES, type DemoRuntime } from './runtimes.js';

export interface DemoConfig {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  bodyLimit: number;
  /** ms a request body has to arrive before 408 (BODY_TIMEOUT_MS, default 30,000; 0 = none). */
  bodyTimeoutMs: number;
  /** Per-inbox bounds of the Live Inbox (LIVE_INBOX_MAX_MESSAGES, default 100; LIVE_INBOX_MAX_BYTES, default 4 MiB). */
  liveInbox: { maxMessages: number; maxBytes: number };
  /** Event streams one API key (per acting account) may hold open at once (MAX_STREAMS_PER_CALLER, default 16). */
  maxStreamsPerCaller: number;
  logLevel: string;
  /** `pretty` (human-readable lines, for a terminal) or `json` (one object per line, for log collectors). */
  logFormat: 'pretty' | 'json';
  modelStepMs: number;
  modelSteps: number;
  /** Per-API-key rate limit, or undefined for none (RATE_LIMIT_MAX unset or 0). */
  rateLimit: { max: number; timeWindowMs: number } | undefined;
  /** Exact origins a browser page may call the API from (CORS_ORIGINS, comma or space separated); empty: CORS off. */
  corsOrigins: string[];
  /** This process's base URL for its peers (INBOX_KIT_ADVERTISE_URL), e.g. `http://127.0.0.1:3001`. */
  advertiseUrl: string | undefined;
  /** The secret forwarded requests carry between processes (INBOX_KIT_FORWARD_SECRET). */
  forwardSecret: string | undefined;
  /**
   * End Runs left `running` by a dead process (INBOX_KIT_RECOVER_STALE_RUNS, default true): all of
   * them once at start-up, before listening, and any left later when durable input reaches its Session.
   */
  recoverStaleRuns: boolean;
  /** SQLite: how long a write waits for another process's write lock before 503 `storage_busy` (SQLITE_BUSY_TIMEOUT_MS, default 5,000). */
  sqliteBusyTimeoutMs: number;
  /** PostgreSQL: run the store's hot queries as named prepared statements (DATABASE_PREPARED_STATEMENTS, default true). */
  preparedStatements: boolean;
  /** PostgreSQL: the event listener's own connection (DATABASE_LISTEN_URL, default `databaseUrl`). */
  databaseListenUrl: string | undefined;
  /** PostgreSQL: the listener's health check, ms between checks (DATABASE_LISTEN_CHECK_MS, default 5,000; 0 = off) and its deadline (DATABASE_LISTEN_CHECK_TIMEOUT_MS, default 3,000). */
  listenCheck: { intervalMs: number; timeoutMs: number };
  /** Attempt routing: the lease (INBOX_KIT_LEASE_MS, default 15,000) and the takeover check interval (INBOX_KIT_TAKEOVER_CHECK_MS, default a third of the lease). */
  lease: { leaseMs: number; takeoverCheckMs: number };
  /** A test hook: ms added to this process's clock (INBOX_KIT_TEST_CLOCK_OFFSET_MS, only with NODE_ENV=test; default 0). */
  clockOffsetMs: number;
  /**
   * The model behind the agent loop (DEMO_MODEL): `scripted` (default, no network) or `anthropic`
   * with its API key (ANTHROPIC_API_KEY), base URL (ANTHROPIC_BASE_URL, the SDK's default when
   * unset) and model name (ANTHROPIC_MODEL).
   */
  model: { kind: 'scripted' } | { kind: 'anthropic'; apiKey: string; baseURL: string | undefined; model: string };
  /**
   * The HTTP adapter (HTTP_ADAPTER): `fastify` (default: the API, the web page and /docs) or
   * `hono` (`@inbox-kit/http-hono`: the same API on Hono, without the web page and /docs).
   */
  httpAdapter: 'fastify' | 'hono';
  /** The connection policy; only the numbers set in the environment (the rest take the adapter's defaults). */
  connections: ConnectionPolicyOptions;
  /** Per-caller budgets of the services (Runs per account and key, Sessions per minute per key). */
  budgets: CallerBudgetOptions;
  /** Request bodies one API key may have in flight (MAX_BODIES_PER_KEY, default 64). */
  maxBodiesPerKey: number;
  /** Bytes of request bodies one API key may have in flight (MAX_BODY_BYTES_PER_KEY, default 2 MiB). */
  maxBodyBytesPerKey: number;
  /** Bytes of request bodies one API key may send per second (BODY_BYTES_PER_SECOND_PER_KEY, default 8 MiB; 0 = no limit). */
  bodyBytesPerSecondPerKey: number;
  /** The bad-credential throttle per remote address, or false (AUTH_FAILURES_PER_WINDOW=0). */
  credentialThrottle: CredentialThrottleOptions | false;
  /** ms an Idempotency-Key keeps its first answer (IDEMPOTENCY_TTL_MS, default 24 h). */
  idempotencyTtlMs: number;
  /** ms an authenticated principal is cached in the process (PRINCIPAL_CACHE_TTL_MS, default 1000; 0 = no cache). */
  principalCacheTtlMs: number;
  /** ms a Session's gate is cached for the Live Inbox routes (SESSION_GATE_CACHE_TTL_MS, default 1000; 0 = no cache). */
  sessionGateCacheTtlMs: number;
  /** The `retry:` hint of event streams in ms (SSE_RETRY_MS, default 2000). */
  sseRetryMs: number;
  /** The permission of the demo's host tool `wait` (DEMO_TOOL_POLICY, default `always_allow`). */
  toolPolicy: 'always_allow' | 'always_ask';
  /** Seed the demo data on an empty database (DEMO_SEED, default true); false: one workspace and its admin key. */
  demoSeed: boolean;
  /** The name of that one workspace (INBOX_KIT_WORKSPACE_NAME, default `Workspace`, 1–200 characters). */
  workspaceName: string;
  /** Apply pending migrations at start-up (DATABASE_MIGRATE, default true). */
  migrate: boolean;
  /**
   * Whose loop executes the `assistant` agent's Runs (DEMO_RUNTIME): `native` (default, the
   * inbox-kit agent loop), `ai-sdk`, `langgraph` or `openai-agents` (that framework's loop, steered
   * through its `@inbox-kit/*` adapter; see `runtimes.ts`).
   */
  runtime: DemoRuntime;
  /** Port of the Prometheus metrics (`GET /metrics`, bound like HOST), or undefined for none (METRICS_PORT unset). */
  metricsPort: number | undefined;
  /** OpenTelemetry spans around requests and storage calls (an OTLP endpoint configured: OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT). */
  tracing: boolean;
}

/** The Messages API model the demo uses when ANTHROPIC_MODEL is unset. */
export const DEFAULT_ANTHROPIC_MODEL = 'claude-haiku-4-5';

/** A configuration mistake: main.ts prints its message alone (no stack) and exits 1. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

function int(name: string, value: string | undefined, fallback: number, range: { min?: number; max?: number } = {}): number {
  if (value === undefined || value === '') return fallback;
  const min = range.min ?? 0;
  const max = range.max ?? Number.MAX_SAFE_INTEGER;
  if (!/^\d{1,15}$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${value}"`);
  }
  return Number(value);
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function databaseUrlOf(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^postgres(ql)?:\/\//i.test(value)) {
    throw new ConfigError('DATABASE_URL must be a postgres:// or postgresql:// URL; leave it unset to use the SQLite file under DATA_DIR');
  }
  return value;
}

/**
 * Reads the configuration; throws with a clear message on a malformed value. `stdoutIsTerminal`
 * picks the default LOG_FORMAT (pretty on a terminal, json otherwise).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, stdoutIsTerminal = process.stdout.isTTY === true): DemoConfig {
  return {
    port: int('PORT', env.PORT, 3000, { max: 65_535 }),
    host: env.HOST || '127.0.0.1',
    dataDir: dataDirOf(env),
    databaseUrl: databaseUrlOf(env.DATABASE_URL),
    bodyLimit: int('BODY_LIMIT', env.BODY_LIMIT, 1_048_576, { min: 1 }),
    bodyTimeoutMs: int('BODY_TIMEOUT_MS', env.BODY_TIMEOUT_MS, 30_000),
    liveInbox: {
      maxMessages: int('LIVE_INBOX_MAX_MESSAGES', env.LIVE_INBOX_MAX_MESSAGES, 100, { min: 1 }),
      maxBytes: int('LIVE_INBOX_MAX_BYTES', env.LIVE_INBOX_MAX_BYTES, 4_194_304, { min: 1 }),
    },
    maxStreamsPerCaller: int('MAX_STREAMS_PER_CALLER', env.MAX_STREAMS_PER_CALLER, 16, { min: 1 }),
    logLevel: logLevelOf(env.LOG_LEVEL),
    logFormat: logFormatOf(env.LOG_FORMAT, stdoutIsTerminal),
    modelStepMs: int('DEMO_MODEL_STEP_MS', env.DEMO_MODEL_STEP_MS, 1500),
    modelSteps: int('DEMO_MODEL_STEPS', env.DEMO_MODEL_STEPS, 3),
    rateLimit: rateLimitOf(env),
    corsOrigins: corsOriginsOf(env.CORS_ORIGINS),
    advertiseUrl: advertiseUrlOf(env.INBOX_KIT_ADVERTISE_URL),
    forwardSecret: env.INBOX_KIT_FORWARD_SECRET || undefined,
    recoverStaleRuns: booleanOf('INBOX_KIT_RECOVER_STALE_RUNS', env.INBOX_KIT_RECOVER_STALE_RUNS, true),
    preparedStatements: booleanOf('DATABASE_PREPARED_STATEMENTS', env.DATABASE_PREPARED_STATEMENTS, true),
    databaseListenUrl: listenUrlOf(env.DATABASE_LISTEN_URL, env.DATABASE_URL),
    sqliteBusyTimeoutMs: int('SQLITE_BUSY_TIMEOUT_MS', env.SQLITE_BUSY_TIMEOUT_MS, 5_000),
    listenCheck: {
      intervalMs: int('DATABASE_LISTEN_CHECK_MS', env.DATABASE_LISTEN_CHECK_MS, 5_000),
      timeoutMs: int('DATABASE_LISTEN_CHECK_TIMEOUT_MS', env.DATABASE_LISTEN_CHECK_TIMEOUT_MS, 3_000, { min: 1 }),
    },
    lease: leaseOf(env),
    clockOffsetMs: clockOffsetOf(env),
    httpAdapter: httpAdapterOf(env.HTTP_ADAPTER),
    model: modelOf(env),
    connections: connectionsOf(env),
    budgets: {
      runsPerAccount: int('MAX_RUNS_PER_ACCOUNT', env.MAX_RUNS_PER_ACCOUNT, 8, { min: 1 }),
      runsPerKey: int('MAX_RUNS_PER_KEY', env.MAX_RUNS_PER_KEY, 8, { min: 1 }),
      sessionsPerMinute: int('SESSIONS_PER_MINUTE', env.SESSIONS_PER_MINUTE, 120),
    },
    maxBodiesPerKey: int('MAX_BODIES_PER_KEY', env.MAX_BODIES_PER_KEY, 64, { min: 1 }),
    maxBodyBytesPerKey: int('MAX_BODY_BYTES_PER_KEY', env.MAX_BODY_BYTES_PER_KEY, 2_097_152, { min: 1 }),
    bodyBytesPerSecondPerKey: int('BODY_BYTES_PER_SECOND_PER_KEY', env.BODY_BYTES_PER_SECOND_PER_KEY, 8_388_608),
    credentialThrottle: credentialThrottleOf(env),
    idempotencyTtlMs: int('IDEMPOTENCY_TTL_MS', env.IDEMPOTENCY_TTL_MS, 86_400_000, { min: 1 }),
    principalCacheTtlMs: int('PRINCIPAL_CACHE_TTL_MS', env.PRINCIPAL_CACHE_TTL_MS, 1_000),
    sessionGateCacheTtlMs: int('SESSION_GATE_CACHE_TTL_MS', env.SESSION_GATE_CACHE_TTL_MS, 1_000),
    sseRetryMs: int('SSE_RETRY_MS', env.SSE_RETRY_MS, 2_000, { min: 1 }),
    toolPolicy: toolPolicyOf(env.DEMO_TOOL_POLICY),
    demoSeed: booleanOf('DEMO_SEED', env.DEMO_SEED, true),
    workspaceName: workspaceNameOf(env.INBOX_KIT_WORKSPACE_NAME),
    migrate: booleanOf('DATABASE_MIGRATE', env.DATABASE_MIGRATE, true),
    runtime: runtimeOf(env.DEMO_RUNTIME),
    metricsPort: env.METRICS_PORT === undefined || env.METRICS_PORT === '' ? undefined : int('METRICS_PORT', env.METRICS_PORT, 0, { max: 65_535 }),
    tracing: Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT),
  };
}

function workspaceNameOf(value: string | undefined): string {
  const name = (value ?? '').trim();
  if (name === '') return 'Workspace';
  if ([...name].length > 200) throw new ConfigError(`INBOX_KIT_WORKSPACE_NAME must be at most 200 characters, got ${[...name].length}`);
  return name;
}

function runtimeOf(value: string | undefined): DemoRuntime {
  if (value === undefined || value === '') return 'native';
  if ((DEMO_RUNTIMES as readonly string[]).includes(value)) return value as DemoRuntime;
  throw new ConfigError(`DEMO_RUNTIME must be one of ${DEMO_RUNTIMES.join(', ')}, got "${value}"`);
}

/** The connection policy numbers set in the environment (absent ones: the adapter's defaults). */
function connectionsOf(env: NodeJS.ProcessEnv): ConnectionPolicyOptions {
  const out: ConnectionPolicyOptions = {};
  const set = (key: keyof ConnectionPolicyOptions, name: string) => {
    const value = env[name];
    if (value !== undefined && value !== '') out[key] = int(name, value, 0, { min: 1 });
  };
  set('maxConnections', 'MAX_CONNECTIONS');
  set('maxConnectionsPerAddress', 'MAX_CONNECTIONS_PER_ADDRESS');
  set('firstRequestTimeoutMs', 'FIRST_REQUEST_TIMEOUT_MS');
  set('keepAliveTimeoutMs', 'KEEP_ALIVE_TIMEOUT_MS');
  set('headersTimeoutMs', 'HEADERS_TIMEOUT_MS');
  const keepAlive = out.keepAliveTimeoutMs ?? 72_000;
  if (out.headersTimeoutMs !== undefined && out.headersTimeoutMs <= keepAlive) {
    throw new ConfigError(`HEADERS_TIMEOUT_MS (${out.headersTimeoutMs}) must be above KEEP_ALIVE_TIMEOUT_MS (${keepAlive})`);
  }
  return out;
}

function credentialThrottleOf(env: NodeJS.ProcessEnv): DemoConfig['credentialThrottle'] {
  const maxFailures = int('AUTH_FAILURES_PER_WINDOW', env.AUTH_FAILURES_PER_WINDOW, 100);
  const windowMs = int('AUTH_FAILURE_WINDOW_MS', env.AUTH_FAILURE_WINDOW_MS, 60_000, { min: 1 });
  return maxFailures === 0 ? false : { maxFailures, windowMs };
}

function toolPolicyOf(value: string | undefined): 'always_allow' | 'always_ask' {
  if (value === undefined || value === '' || value === 'always_allow') return 'always_allow';
  if (value === 'always_ask') return 'always_ask';
  throw new ConfigError(`DEMO_TOOL_POLICY must be always_allow or always_ask, got "${value}"`);
}

function listenUrlOf(value: string | undefined, databaseUrl: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^postgres(ql)?:\/\//i.test(value)) throw new ConfigError('DATABASE_LISTEN_URL must be a postgres:// or postgresql:// URL (a direct or session-mode connection for LISTEN)');
  if (databaseUrl === undefined || databaseUrl === '') throw new ConfigError('DATABASE_LISTEN_URL needs DATABASE_URL (it is the listener of the PostgreSQL event bus)');
  return value;
}

function leaseOf(env: NodeJS.ProcessEnv): DemoConfig['lease'] {
  const leaseMs = int('INBOX_KIT_LEASE_MS', env.INBOX_KIT_LEASE_MS, 15_000, { min: 100 });
  return { leaseMs, takeoverCheckMs: int('INBOX_KIT_TAKEOVER_CHECK_MS', env.INBOX_KIT_TAKEOVER_CHECK_MS, Math.floor(leaseMs / 3)) };
}

function clockOffsetOf(env: NodeJS.ProcessEnv): number {
  const value = env.INBOX_KIT_TEST_CLOCK_OFFSET_MS;
  if (value === undefined || value === '') return 0;
  if (env.NODE_ENV !== 'test') throw new ConfigError('INBOX_KIT_TEST_CLOCK_OFFSET_MS is a test hook (it skews this process\'s clock): it is honoured only with NODE_ENV=test');
  if (!/^-?\d{1,12}$/.test(value)) throw new ConfigError(`INBOX_KIT_TEST_CLOCK_OFFSET_MS must be an integer number of ms, got "${value}"`);
  return Number(value);
}

function httpAdapterOf(value: string | undefined): 'fastify' | 'hono' {
  if (value === undefined || value === '' || value === 'fastify') return 'fastify';
  if (value === 'hono') return 'hono';
  throw new ConfigError(`HTTP_ADAPTER must be fastify or hono, got "${value}"`);
}

function modelOf(env: NodeJS.ProcessEnv): DemoConfig['model'] {
  const kind = env.DEMO_MODEL || 'scripted';
  if (kind === 'scripted') return { kind };
  if (kind !== 'anthropic') throw new ConfigError(`DEMO_MODEL must be scripted or anthropic, got "${kind}"`);
  const apiKey = env.ANTHROPIC_API_KEY?.trim();
  if (!apiKey) throw new ConfigError('DEMO_MODEL=anthropic needs ANTHROPIC_API_KEY (an API key of the Anthropic Console); unset DEMO_MODEL to run the scripted model');
  let baseURL: string | undefined;
  if (env.ANTHROPIC_BASE_URL) {
    let url: URL | undefined;
    try {
      url = new URL(env.ANTHROPIC_BASE_URL);
    } catch {
      url = undefined;
    }
    if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      throw new ConfigError(`ANTHROPIC_BASE_URL must be an http(s) URL, got "${env.ANTHROPIC_BASE_URL}"`);
    }
    baseURL = env.ANTHROPIC_BASE_URL.replace(/\/+$/, '');
  }
  return { kind, apiKey, baseURL, model: env.ANTHROPIC_MODEL?.trim() || DEFAULT_ANTHROPIC_MODEL };
}

function booleanOf(name: string, value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value === '') return fallback;
  const v = value.toLowerCase();
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw new ConfigError(`${name} must be true, false, 1 or 0, got "${value}"`);
}

function logLevelOf(value: string | undefined): string {
  if (value === undefined || value === '') return 'info';
  if (!LOG_LEVELS.includes(value)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${value}"`);
  return value;
}

function logFormatOf(value: string | undefined, stdoutIsTerminal: boolean): DemoConfig['logFormat'] {
  if (value === undefined || value === '') return stdoutIsTerminal ? 'pretty' : 'json';
  if (value !== 'pretty' && value !== 'json') throw new ConfigError(`LOG_FORMAT must be pretty or json, got "${value}"`);
  return value;
}

function advertiseUrlOf(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`INBOX_KIT_ADVERTISE_URL must be an http(s) URL, got "${value}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`INBOX_KIT_ADVERTISE_URL must be an http(s) URL, got "${value}"`);
  return value.replace(/\/+$/, '');
}

function rateLimitOf(env: NodeJS.ProcessEnv): DemoConfig['rateLimit'] {
  const max = int('RATE_LIMIT_MAX', env.RATE_LIMIT_MAX, 0);
  const timeWindowMs = int('RATE_LIMIT_WINDOW_MS', env.RATE_LIMIT_WINDOW_MS, 60_000);
  if (timeWindowMs < 1) throw new ConfigError(`RATE_LIMIT_WINDOW_MS must be at least 1, got "${env.RATE_LIMIT_WINDOW_MS}"`);
  return max === 0 ? undefined : { max, timeWindowMs };
}

/** CORS_ORIGINS: exact origins (`https://app.example.com,http://localhost:5173`); empty or unset → CORS off. */
function corsOriginsOf(value: string | undefined): string[] {
  try {
    return parseCorsOrigins(value);
  } catch (error) {
    throw new ConfigError(`CORS_ORIGINS: ${(error as Error).message.replace(/^cors: /, '')}`);
  }
}
