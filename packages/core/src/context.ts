/**
 * Who is calling and under which request: passed to every use case.
 */

/** An authenticated caller acting as one account in one workspace. */
export interface Principal {
  workspace_id: string;
  account_id: string;
  /** The API key that authenticated the call. */
  key_id: string;
  /** Its kind: `standard`, `service` (may act as any account of its workspace) or `admin` (may use the `/admin` routes). */
  key_kind: import('./records.js').ApiKeyKind;
}

export interface RequestContext {
  principal: Principal;
  /** The request id (`x-request-id`); becomes the event `correlation_id` and the log `request_id`. */
  request_id: string;
  /**
   * What is acting: `api` (default) for a request through the API, `runtime_job` for the agent
   * runtime acting on its own, `system` for start-up recovery and seeding. Becomes the `source`
   * of the Project Events the use case writes (platform.md "Project Events").
   */
  source?: import('./records.js').ProjectEventSource;
}

/** Services' shared dependencies. */
export interface ServiceDeps {
  store: import('./ports/store.js').Store;
  bus: import('./ports/event-bus.js').EventBus;
  clock: import('./ports/clock.js').Clock;
  ids: import('./ports/clock.js').IdGenerator;
  /** Called when publishing after commit fails; the write stays committed. */
  onPublishError?: (error: unknown) => void;
  /**
   * Hex SHA-256 of an API key secret. Defaults to `node:crypto` (synchronous) where the runtime
   * lends it through `process.getBuiltinModule` (Node ≥ 20.16, Bun, Deno), else Web Crypto
   * (asynchronous). MUST return exactly the lowercase hex SHA-256 digest of the UTF-8 bytes.
   */
  hashApiKey?: (secret: string) => string | Promise<string>;
  /**
   * How long an `Idempotency-Key` keeps its first outcome, in ms (default
   * {@link DEFAULT_IDEMPOTENCY_TTL_MS}, 24 h). Past it the key is free again (a repeat creates
   * anew) and `ProjectInboxService.sweepExpiredIdempotencyKeys` deletes its record. Needs a store
   * with `sweepIdempotencyRecords`; without one, keys never expire. Spec: platform.md "Retention".
   */
  idempotencyTtlMs?: number;
  /**
   * How long (ms) an authenticated principal is cached in the process (default
   * `PRINCIPAL_CACHE_TTL_MS`, 1,000): the bound on how long a revocation made by another process,
   * or directly in storage, goes unseen here. `0` turns the cache off. Spec: platform.md "Per-caller bounds".
   */
  principalCacheTtlMs?: number;
  /**
   * How long (ms) a Session's gate — its project's owner and status, the caller's role, its
   * archive — is cached in the process for the reads made without a lock (the Live Inbox routes,
   * attempt routing; default `SESSION_GATE_CACHE_TTL_MS`, 1,000): the bound on how long a project
   * archived, a member removed or a Session archived by another process, or directly in storage,
   * goes unseen by them here (what is queued is decided again when committed). Such a write
   * through this process's services takes effect at once. `0` turns the cache off. Spec:
   * platform.md "The write gate".
   */
  sessionGateCacheTtlMs?: number;
  /**
   * Per-caller budgets of the services (platform.md "Per-caller bounds"): Runs running at once per
   * account and per API key (default 8 each; 429 `too_many_runs`), Sessions created per minute per
   * API key (default 120; 429 `rate_limited`). Counted per process.
   */
  budgets?: import('./caller-budgets.js').CallerBudgetOptions;
}

/** Default lifetime of an idempotency record: 24 h, in ms. */
export const DEFAULT_IDEMPOTENCY_TTL_MS = 86_400_000;
