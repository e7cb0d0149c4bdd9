/**
 * The Session Runtime: durable Session events (the ledger), Runs started by durable input and
 * executed in the background by the native agent loop, and the Live Inbox operations that steer
 * the active native attempt. Spec: live-inbox.md ("Model", "HTTP", "Drain, commit, carry-over"),
 * platform.md (Floor and Page written when the Runtime commits a turn).
 *
 * The service is a facade over four units, each its own module: the Session ledger
 * (`ledger.ts`: events, turns, pages, reads and publishing), the Run supervisor
 * (`run-supervisor.ts`: durable input, Run start, end, follow-up, recovery, shutdown), attempt
 * leases (`attempt-leases.ts`: ownership of the running attempt and routing to its process) and
 * Live Inbox steering (`steering.ts`). Who may use a Session is `access.ts`.
 *
 * Decisions the spec leaves open (documented on {@link SessionRuntimeService}):
 * - a durable `user.message` committed while a Run is running is NOT put into the Live Inbox (it
 *   is already committed; the queue is for editable, not-yet-authoritative input). The running
 *   Run finishes, and a follow-up Run starts at once for every such message (its transcript
 *   includes them), unless a `user.interrupt` came after the message;
 * - every committed message (durable input, drained inbox input, agent output) writes its own
 *   Floor and Page in the same transaction as its Session event;
 * - Runs left `running` in storage by a previous process are ended (`failed`) the next time
 *   durable input reaches the Session, or at once by {@link SessionRuntimeService.recoverStaleRuns}
 *   (call it at start-up; see "Ownership of Runs" on the class);
 * - with `routing` (several processes on one database), each native attempt holds a lease on its
 *   Session in storage, and Live Inbox requests and interrupts reaching another process are
 *   forwarded to the owner (see "Attempt routing" on the class).
 */
import type { RequestContext } from '../context.js';
import { compileTools, type Tool } from '../live-inbox/tools.js';
import type { LiveInboxHost, LiveInboxHostStats } from '../live-inbox/registry.js';
import type { Feed } from '../ports/feed.js';
import type { SessionEvent } from '../records.js';
import { AttemptLeases } from './attempt-leases.js';
import { sessionGateCache, type SessionGateCache } from './gate-cache.js';
import type { RunExecutor, RunHandle, StartRunOptions } from './executor.js';
import { SessionLedger, type SessionEventPage } from './ledger.js';
import type { ListSessionEventsInput, ManagedAgentDefinition } from './managed-agents.js';
import type { AttemptRoute, LiveInboxOperation } from './routing.js';
import { RunSupervisor } from './run-supervisor.js';
import { RunTakeover } from './run-takeover.js';
import type { SessionRuntimeDeps } from './runtime-deps.js';
import type { LiveInboxContentInput, LiveInboxOrderInput, SendSessionEventsInput } from './schemas.js';
import { LiveInboxSteering, type LiveInboxView } from './steering.js';

export type { SessionRuntimeDeps } from './runtime-deps.js';

/**
 * Session Runtime use cases. Spec: live-inbox.md.
 *
 * **Durable input** ({@link sendEvents}): each `user.message` is committed to the Session ledger
 * (event `user.message`, its own Floor and Page). When no Run is running, the first one starts a
 * Run in the same transaction (`runs` row + `session.status_running`), and after commit the native
 * agent loop ({@link runNativeAttempt}) executes it in the background. Its transcript is the
 * committed history up to the Run's start. After each model step the loop drains the Live Inbox;
 * drained messages become `user.message` events with `message_id` `{run_id}-inbox-{n}`, and each
 * assistant step an `agent.message` with `message_id` `{run_id}-step-{k}`; every ledger commit of
 * the loop is one store transaction (events + one Floor and Page per message). When the loop ends,
 * the Run is ended (`completed` | `cancelled` | `failed`) and `session.status_idle` committed
 * (`content: { outcome }`; a failed Run adds `error: { type, message }`, see {@link RunFailure}).
 *
 * **Durable input during a Run**: the message is committed (with `run_id: null`) and is not put
 * into the Live Inbox — committed input is authoritative and must not become editable or be
 * committed twice. When the running Run ends, a follow-up Run starts in the same transaction as
 * the end, and its transcript includes every such message. Messages committed before a
 * `user.interrupt` of that Run do not start a follow-up (the interrupt stops the work they asked
 * for; they stay in history and reach the next Run's transcript).
 *
 * **Atomic with the Session's state** (storage README "Conditional writes"): durable input locks
 * the Project and then the Session (`lockProject`, `lockSession`) before checking archive, role
 * and the running Run; a Run's end and every ledger commit of the loop lock the Session, and a
 * commit whose Run is no longer `running` commits nothing (the attempt fails, its drained input
 * moves to the next attempt). So, across processes sharing a database, a Session has at most one
 * running Run, input committed while a Run ends always gets its follow-up, and nothing commits
 * after the Project's archive.
 *
 * **Interrupt** (`{ type: 'user.interrupt' }`, or {@link interrupt}): committed as a
 * `user.interrupt` event; after commit the running Run's attempt is aborted, the Run ends
 * `cancelled`, and whatever was still queued in its Live Inbox is carried over by the host into
 * the Session's next native attempt (re-queued with new ids and drained at that attempt's first
 * boundary).
 *
 * **Live Inbox** ({@link liveInboxSnapshot} … {@link liveInboxReorder}): check order is session
 * visibility (404 `session_not_found`; a failing ownership read → 500
 * `session_ownership_unavailable`, no queue touched) → write permission for mutations (403
 * `permission_denied`) → active native attempt (410 `live_inbox_inactive`) → the edit (404
 * `live_inbox_message_not_found`, 409 `live_inbox_order_conflict`).
 *
 * **Who may steer**: a Session in a Project is readable by its owner and members, writable
 * (events, steering) by the owner only; a Session outside any Project is open to every account of
 * its workspace; anything else is 404 (see {@link loadSessionAccess}).
 *
 * **Ownership of Runs**: one process owns the Runs it starts. A Run found `running` in storage
 * that this instance does not execute and that started before this instance was built is taken
 * for a leftover of a previous process and ended `failed` (with `session.status_idle`) when
 * durable input next reaches its Session (option `recoverStaleRuns`, default on), or at once by
 * {@link recoverStaleRuns} (one call at start-up, before serving, ends them all). A Run of
 * another live process is left alone: durable input is committed and that process's follow-up
 * picks it up when its Run ends, but an interrupt cannot reach it and the Live Inbox answers 410
 * here unless attempt routing is on.
 *
 * **Attempt routing** (option `routing`; live-inbox.md "Scale"): while a native attempt runs, its
 * process holds a lease on the Session in storage (`claimAttemptOwnership` before the attempt,
 * renewed every `lease_ms / 3`, released when it ends; a crashed owner's lease expires). The HTTP
 * layer asks {@link routeLiveInbox} before answering a Live Inbox request, or durable input with a
 * `user.interrupt`: it is answered here when this process hosts the attempt (or executes the Run),
 * when the request was already forwarded once, or when no other host holds a live lease; otherwise
 * it is forwarded to the owner (after the same visibility and permission checks as here) and the
 * owner's answer is relayed unchanged. An unreachable owner is reported and the request answered
 * here, as if no attempt were active (410 for a Live Inbox mutation; an interrupt is committed
 * here but cannot stop the Run).
 *
 * Committed events are published on the bus (`session:<id>`) after commit; a publish failure
 * goes to `onPublishError` and never undoes the write.
 */
export class SessionRuntimeService {
  readonly #ledger: SessionLedger;
  readonly #runs: RunSupervisor;
  readonly #leases: AttemptLeases;
  readonly #steering: LiveInboxSteering;
  readonly #takeover: RunTakeover | undefined;

  readonly #agents: readonly ManagedAgentDefinition[];

  readonly #host: LiveInboxHost;
  /** The store's Session gates (`gate-cache.ts`). */
  readonly #gates: SessionGateCache;

  constructor(deps: SessionRuntimeDeps) {
    this.#gates = sessionGateCache(deps);
    this.#host = deps.host;
    this.#agents = checkAgents(deps.agents ?? [], deps.tools ?? []);
    this.#ledger = new SessionLedger(deps);
    this.#leases = new AttemptLeases({ ...deps, isExecuting: (session_id) => this.#runs.isRunning(session_id) });
    this.#runs = new RunSupervisor(deps, this.#ledger, this.#leases);
    this.#steering = new LiveInboxSteering(deps);
    const routing = deps.routing;
    const interval = routing === undefined ? 0 : (routing.takeover_check_ms ?? Math.floor(this.#leases.leaseMs / 3));
    if (routing !== undefined && interval > 0 && (deps.recoverStaleRuns ?? true)) {
      this.#takeover = new RunTakeover(() => this.#runs.recoverStaleRuns(), interval, (error) => routing.onRoutingError?.(error, { session_id: '', action: 'takeover' }));
      this.#takeover.start();
    }
  }

  /**
   * What this process executes now (for metrics; platform.md "Observing"): `runs.running`,
   * the Runs it executes (a parked Run is executed by nobody until it resumes), and its host's
   * Live Inbox queues ({@link LiveInboxHost.stats}).
   */
  stats(): { runs: { running: number }; live_inbox: LiveInboxHostStats } {
    return { runs: { running: this.#runs.runningCount }, live_inbox: this.#host.stats() };
  }

  /** The configured agents (`SessionRuntimeDeps.agents`). */
  get agents(): readonly ManagedAgentDefinition[] {
    return this.#agents;
  }

  /** The executor of Runs durable input starts (`SessionRuntimeDeps.executor`, else the native one on `model`), if any. */
  get executor(): RunExecutor | undefined {
    return this.#runs.executor;
  }

  // — Runs an application executes (live-inbox.md "Run executors") —

  /**
   * Starts a Run of a Session that the application executes itself, on its own loop (an AI SDK,
   * LangGraph.js or OpenAI Agents SDK loop through `@inbox-kit/ai-sdk`, `@inbox-kit/langgraph`,
   * `@inbox-kit/openai-agents`, or any loop on the bridge). In one transaction under the Session's
   * lock: `options.content` (if given) is committed as the Run's `user.message`, the Run is inserted
   * (leased, with routing) and `session.status_running` appended; then the attempt is opened on this
   * host (`GET …/live-inbox` → `active: true`; other processes forward to this one), its first
   * boundary taken (carried-over steering drained and committed), and the handle returned:
   * `transcript` (valid for a model, the new input last), `bridge` (drain at each boundary, commit
   * before the next model call), `signal` (a `user.interrupt` aborts it) and `finish(outcome)`.
   *
   * Durable input sent during the Run is committed and never starts a native attempt: when the Run
   * finishes, a follow-up Run starts with `options.executor` (default the Runtime's executor); with
   * none, the input waits for the next `startRun` (call it without `content`).
   * @throws InboxKitError `validation_error` (400: bad content, or no content and nothing pending),
   *   `session_not_found` (404), `permission_denied` (403), `project_archived` / `session_archived`
   *   (409), `session_running` (409: a Run runs or awaits tool results), `overloaded` (503).
   */
  startRun(ctx: RequestContext, session_id: string, options: StartRunOptions = {}): Promise<RunHandle> {
    return this.#runs.startRun(ctx, session_id, options);
  }

  /**
   * Deletes a Session (`DELETE /v1/sessions/{id}`), under its lock: a running Run → 409
   * `session_running` (interrupt first); a Run parked on tool results or confirmations (the Session
   * reads `idle`) is ended `cancelled` in the delete's transaction (its round closed with error
   * results, `session.status_idle`), and the Session's carried-over steering is dropped.
   * @throws InboxKitError `session_not_found` (404), `permission_denied` (403), `session_running` (409).
   */
  deleteSession(ctx: RequestContext, session_id: string): Promise<void> {
    // A Session deleted moves its gate: this process's cached ones are dropped once it committed.
    return this.#runs.deleteSession(ctx, session_id).finally(() => this.#gates.forget());
  }

  // — durable Session events —

  /**
   * `POST /v1/sessions/{id}/events`: commits the events in order, in one transaction, and answers
   * one receipt per event. A `user.message` starts a Run when none is running (see the class doc
   * for a message sent while one runs); a `user.interrupt` aborts the running Run after commit.
   * @param input `{ events: [{ type: 'user.message', content } | { type: 'user.interrupt' }] }`, 1–50 events.
   * @returns `{ data }`: the committed `user.message` / `user.interrupt` events, in order (the
   *   wire shows them as {@link managedSessionEvent}).
   * @throws InboxKitError `validation_error` (400), `unsupported_capability` (400: tool results,
   *   tool confirmations, outcomes, system messages), `session_not_found` (404), `permission_denied`
   *   (403: a deriver or observer of the Session's Project), `project_archived` (409: a
   *   `user.message` to a Session of an archived Project), `session_archived` (409: a
   *   `user.message` to an archived Session), `too_many_runs` (429: the message would start a Run
   *   while the caller's account or API key already has `budgets.runsPerAccount` / `runsPerKey`
   *   Runs running; nothing is written), `overloaded` (503: the runtime is closing).
   */
  sendEvents(ctx: RequestContext, session_id: string, input: SendSessionEventsInput): Promise<{ data: SessionEvent[] }> {
    return this.#runs.sendEvents(ctx, session_id, input);
  }

  /**
   * Interrupts the running Run of a Session: {@link sendEvents} with `[{ type: 'user.interrupt' }]`.
   * Without a running Run the interrupt is still committed and changes nothing else.
   * @throws as {@link sendEvents}.
   */
  interrupt(ctx: RequestContext, session_id: string): Promise<{ data: SessionEvent[] }> {
    return this.sendEvents(ctx, session_id, { events: [{ type: 'user.interrupt' }] });
  }

  /**
   * `GET /v1/sessions/{id}/events` (`client.beta.sessions.events.list`): one page of committed
   * history. Spec: live-inbox.md "Managed Agents compatibility".
   * @param input `{ limit?: 1–1000 (100), page?: cursor, order?: 'asc' | 'desc' ('asc'), types?,
   *   'types[]'?, 'created_at[gt|gte|lt|lte]'?: RFC 3339 (on processed_at), after?: seq }`; pass
   *   `next_page` back as `page` with the same other parameters.
   * @throws InboxKitError `validation_error` (400), `invalid_cursor` (400: a foreign, forged or
   *   mismatched `page`), `session_not_found` (404).
   */
  listEvents(ctx: RequestContext, session_id: string, input: ListSessionEventsInput = {}): Promise<SessionEventPage> {
    return this.#ledger.listEvents(ctx, session_id, input);
  }

  /**
   * The caller's feed of a Session's ledger for `GET /v1/sessions/{id}/events/stream` (SSE with
   * resume): item `id` = `seq`, `type` = event type, `data` = the {@link SessionEvent}. Every
   * account that may read the Session sees every event; `authorize` re-reads that right from
   * storage before every delivery (membership changes are events of another topic, which another
   * process may see later than this Session's events, so nothing is trusted between checks): a
   * caller removed from the Session's project (or whose Session is gone) is cut off with
   * `session_not_found` before the next frame, as a fresh request would be.
   * @throws InboxKitError `session_not_found`.
   */
  eventFeed(ctx: RequestContext, session_id: string): Promise<Feed<SessionEvent>> {
    return this.#ledger.eventFeed(ctx, session_id);
  }

  // — Live Inbox (spec live-inbox.md "HTTP") —

  /**
   * `GET …/live-inbox`: the editable window of the active native attempt, or
   * `{ active: false, version: 0, messages: [] }` when none accepts live input. Any account that
   * may read the Session may read it.
   * @throws InboxKitError `session_not_found` (404), `session_ownership_unavailable` (500).
   */
  liveInboxSnapshot(ctx: RequestContext, session_id: string): Promise<LiveInboxView> {
    return this.#steering.snapshot(ctx, session_id);
  }

  /**
   * {@link liveInboxSnapshot} as its JSON text, the same text `JSON.stringify` of the view makes,
   * built once per state of the queue and shared by the reads until the next edit (what
   * `GET …/live-inbox` answers).
   * @throws InboxKitError `session_not_found` (404), `session_ownership_unavailable` (500).
   */
  liveInboxSnapshotJson(ctx: RequestContext, session_id: string): Promise<string> {
    return this.#steering.snapshotJson(ctx, session_id);
  }

  /**
   * `POST …/live-inbox` `{ content }`: queues content at the tail of the active native attempt's inbox.
   * @returns `{ id }`, the queue-local integer id.
   * @throws InboxKitError `validation_error` (400), `session_not_found` (404),
   *   `session_ownership_unavailable` (500), `permission_denied` (403), `live_inbox_inactive` (410).
   */
  liveInboxQueue(ctx: RequestContext, session_id: string, input: LiveInboxContentInput): Promise<{ id: number }> {
    return this.#steering.queue(ctx, session_id, input);
  }

  /**
   * `PUT …/live-inbox/{message_id}` `{ content }`: replaces a queued message, keeping id and position.
   * @throws InboxKitError as {@link liveInboxQueue}, plus `live_inbox_message_not_found` (404:
   *   drained, withdrawn or never queued).
   */
  liveInboxReplace(ctx: RequestContext, session_id: string, message_id: number, input: LiveInboxContentInput): Promise<void> {
    return this.#steering.replace(ctx, session_id, message_id, input);
  }

  /**
   * `DELETE …/live-inbox/{message_id}`: withdraws a queued message (a second withdraw is 404).
   * @throws InboxKitError `session_not_found` (404), `session_ownership_unavailable` (500),
   *   `permission_denied` (403), `live_inbox_inactive` (410), `live_inbox_message_not_found` (404).
   */
  liveInboxWithdraw(ctx: RequestContext, session_id: string, message_id: number): Promise<void> {
    return this.#steering.withdraw(ctx, session_id, message_id);
  }

  /**
   * `PUT …/live-inbox/order` `{ order }`: reorders the queue; `order` must be an exact permutation
   * of the current ids, else nothing changes.
   * @throws InboxKitError `validation_error` (400), `session_not_found` (404),
   *   `session_ownership_unavailable` (500), `permission_denied` (403), `live_inbox_inactive`
   *   (410), `live_inbox_order_conflict` (409).
   */
  liveInboxReorder(ctx: RequestContext, session_id: string, input: LiveInboxOrderInput): Promise<void> {
    return this.#steering.reorder(ctx, session_id, input);
  }

  // — attempt routing (live-inbox.md "Scale") —

  /**
   * Where a Live Inbox request (or durable input with a `user.interrupt`) is answered. Call it
   * before the matching method; on `local`, call that method here; on `forwarded`, relay the
   * owner's reply unchanged.
   *
   * Answers `local` at once, with no storage read, when routing is off, when `options.forwarded`
   * (a request is forwarded at most once), when this process hosts the Session's active native
   * attempt (for `send_events`: executes its Run), or when `send_events` holds no interrupt.
   * Otherwise it checks, exactly as the local answer would, Session visibility (404, or 500
   * `session_ownership_unavailable` for the Live Inbox) and, except for `snapshot`, write
   * permission (403); then reads the live owner: another host → forwarded; none, this host, a
   * failing read or an unreachable owner → `local` (the last two reported to `onRoutingError`).
   * @throws InboxKitError `validation_error` (400, `send_events`), `session_not_found` (404),
   *   `session_ownership_unavailable` (500), `permission_denied` (403).
   */
  routeLiveInbox(ctx: RequestContext, session_id: string, operation: LiveInboxOperation, options: { forwarded?: boolean } = {}): Promise<AttemptRoute> {
    return this.#leases.route(ctx, session_id, operation, options);
  }

  /**
   * Refuses a caller whose account or API key already has its budget of running Runs
   * (`budgets.runsPerAccount` / `runsPerKey`, default 8 each, per process), without taking a slot:
   * for writes that would start a Run after writing something else first (a Session created with
   * `initial_events`). {@link sendEvents} enforces the budget itself.
   * @throws InboxKitError `too_many_runs` (429, `retryAfterSeconds` 5).
   */
  assertRunBudget(ctx: RequestContext): void {
    this.#runs.assertRunBudget(ctx.principal);
  }

  // — lifecycle —

  /**
   * Start-up recovery: ends every Run left `running` in storage by a process that is gone, instead
   * of waiting for durable input to reach its Session (the lazy path of {@link sendEvents}; both
   * apply exactly the same rule). A Run this instance does not execute is ended `failed`, with
   * `session.status_idle` (`content: { outcome: 'failed', error: { type: 'api_error', message } }`,
   * the message saying its process stopped) appended and published, when — with `routing` — no
   * live lease names it (judged by the store's clock, `Store.now`), or — without — it started at or
   * before this instance was built. Durable input its process committed but never ran (after the
   * Run's start and the last interrupt) then starts a follow-up Run here. Each Session is handled
   * under its own locks (this process's and the Session row's), in its own transaction, so it is
   * safe while durable input arrives on any process (a Run is never ended twice).
   * Does nothing (returns 0) when option `recoverStaleRuns` is false.
   *
   * Call it once after building the instance, before serving. With `routing`, the instance also
   * runs it every `takeover_check_ms` (platform.md "Many processes": a dead process's Runs are
   * taken over within `lease_ms + takeover_check_ms`). Without `routing`, do not call it while
   * another live process shares the database (it cannot tell that process's Runs from a dead one's).
   * @returns how many Runs it ended.
   * @throws the store's error when a read or a transaction fails (Runs already ended stay ended).
   */
  recoverStaleRuns(): Promise<number> {
    return this.#runs.recoverStaleRuns();
  }

  /** Whether this instance is executing a Run of `session_id` right now. */
  isRunning(session_id: string): boolean {
    return this.#runs.isRunning(session_id);
  }

  /**
   * Resolves once this instance executes no Run of `session_id` (follow-up Runs included). For
   * tests and embedders; never rejects.
   */
  whenIdle(session_id: string): Promise<void> {
    return this.#runs.whenIdle(session_id);
  }

  /**
   * Graceful shutdown: refuses new durable input (503 `overloaded`), aborts every Run this
   * instance executes, and waits until each has ended in storage (`cancelled`, with
   * `session.status_idle`). Starts no follow-up Run. Idempotent.
   */
  async close(): Promise<void> {
    await this.#takeover?.stop();
    await this.#runs.close();
  }
}

/**
 * Checks the configured agents and the Runtime's own tools once, at construction: ids unique,
 * every tool definition valid (`toolDefinitionProblems`), tool names unique per agent.
 * @throws TypeError naming the first problem.
 */
function checkAgents(agents: readonly ManagedAgentDefinition[], tools: readonly Tool[]): readonly ManagedAgentDefinition[] {
  const ids = new Set<string>();
  for (const agent of agents) {
    if (ids.has(agent.id)) throw new TypeError(`SessionRuntimeService: agent id "${agent.id}" is configured twice`);
    ids.add(agent.id);
    try {
      compileTools(agent.tools ?? []);
    } catch (error) {
      throw new TypeError(`SessionRuntimeService: agent "${agent.id}": ${(error as Error).message}`);
    }
  }
  try {
    compileTools(tools);
  } catch (error) {
    throw new TypeError(`SessionRuntimeService: tools: ${(error as Error).message}`);
  }
  return agents;
}
