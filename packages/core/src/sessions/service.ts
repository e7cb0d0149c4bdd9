/**
 * The Session Runtime: durable Session events (the ledger), Runs started by durable input and
 * executed in the background by the native agent loop, and the Live Inbox operations that steer
 * the active native attempt. Spec: live-inbox.md ("Model", "HTTP", "Drain, commit, carry-over"),
 * platform.md (Floor and Page written when the Runtime commits a turn).
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
import type { RequestContext, ServiceDeps } from '../context.js';
import { InboxKitError, isInboxKitError } from '../errors.js';
import { contentSchema, type ContentBlock } from '../live-inbox/content.js';
import type { LiveInboxMessage, LiveInboxQueue } from '../live-inbox/queue.js';
import type { LiveInboxHost } from '../live-inbox/registry.js';
import { isModelError, runNativeAttempt, type Model, type NativeAttemptResult, type RunLedger, type TranscriptMessage } from '../live-inbox/agent-loop.js';
import { loadSessionAccess, writeTurn, type SessionAccess } from '../platform/service.js';
import type { Feed, FeedItem } from '../ports/feed.js';
import type { AttemptOwnership, NewSessionEvent, StoreTx } from '../ports/store.js';
import type { JsonValue, Run, Session, SessionEvent } from '../records.js';
import { parseOrThrow } from '../validation.js';
import { DEFAULT_ATTEMPT_LEASE_MS, type AttemptRoute, type AttemptRoutingErrorInfo, type AttemptRoutingOptions, type LiveInboxOperation } from './routing.js';
import { decodeCursor, encodeCursor, filterFingerprint } from '../cursor.js';
import { listSessionEventsQuery, timeBoundsOf, type ListSessionEventsInput } from './managed-agents.js';
import {
  liveInboxContentBody, liveInboxOrderBody, parseSendSessionEvents,
  type LiveInboxContentInput, type LiveInboxOrderInput, type SendSessionEventsInput,
} from './schemas.js';

/** Dependencies of {@link SessionRuntimeService}. */
export type SessionRuntimeDeps = ServiceDeps & {
  /** The process's attempt registry; owns every Live Inbox. */
  host: LiveInboxHost;
  /** The model every native attempt calls. */
  model: Model;
  /** Told when a background Run fails (model or ledger error) or its bookkeeping fails. */
  onRunError?: (error: unknown, info: { session_id: string; run_id: string }) => void;
  /**
   * End Runs left `running` by an earlier process (default true): a Run this instance does not
   * execute and that started at or before this instance was built is ended `failed` when durable
   * input next reaches its Session, or when {@link SessionRuntimeService.recoverStaleRuns} is
   * called (false makes that call a no-op). With `routing`, a Run whose attempt holds a live ownership
   * lease is never ended by another process; without it, set false when several processes share
   * one database, so one process never ends another's live Run.
   */
  recoverStaleRuns?: boolean;
  /**
   * Cross-process attempt routing (live-inbox.md "Scale"), off when absent: every native attempt
   * records its ownership of the Session in storage under a renewed lease, and
   * {@link SessionRuntimeService.routeLiveInbox} forwards requests to the owning process.
   */
  routing?: AttemptRoutingOptions;
};

/**
 * One page of committed Session history, in the order asked for (by `seq`). `next_page` (an opaque
 * cursor for `page`) is null on the last page.
 */
export interface SessionEventPage {
  data: SessionEvent[];
  next_page: string | null;
  has_more: boolean;
}

/**
 * The editable window as `GET …/live-inbox` answers it. With no active native attempt:
 * `{ active: false, version: 0, messages: [] }`. Spec: live-inbox.md "HTTP".
 */
export interface LiveInboxView {
  active: boolean;
  version: number;
  messages: LiveInboxMessage[];
}

/** Session event types the Runtime writes. */
export const SESSION_EVENT_TYPES = {
  userMessage: 'user.message',
  userInterrupt: 'user.interrupt',
  agentMessage: 'agent.message',
  running: 'session.status_running',
  idle: 'session.status_idle',
} as const;

interface ActiveRun {
  run: Run;
  session: Session;
  /** `seq` of the Run's `session.status_running` event: its transcript is the history up to it. */
  startSeq: number;
  controller: AbortController;
  done: Promise<void>;
}

/** A Run the start transaction created, launched after commit. */
interface RunStart {
  run: Run;
  session: Session;
  startSeq: number;
}

const PAGE = 1000;
const LOCAL: AttemptRoute = Object.freeze({ route: 'local' });

const sessionWriteDenied = () => new InboxKitError('permission_denied', 'Only the project owner may send events to or steer this session');
const liveInboxInactive = () =>
  new InboxKitError('live_inbox_inactive', 'No native attempt accepts live input for this session; send the content as a durable Session event.');

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
  readonly #deps: SessionRuntimeDeps;
  /** Runs this instance executes, by session id. */
  readonly #active = new Map<string, ActiveRun>();
  /** Per-session serialisation of the start/end decisions (so no durable input is missed). */
  readonly #locks = new Map<string, Promise<void>>();
  #closed = false;
  /** When this instance was built (ms): Runs started at or before it by nobody here are leftovers. */
  readonly #bootedAt: number;

  constructor(deps: SessionRuntimeDeps) {
    this.#deps = deps;
    this.#bootedAt = deps.clock.now();
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
   *   `user.message` to an archived Session), `overloaded` (503: the runtime is closing).
   */
  async sendEvents(ctx: RequestContext, session_id: string, input: SendSessionEventsInput): Promise<{ data: SessionEvent[] }> {
    const body = parseSendSessionEvents(input);
    if (this.#closed) throw new InboxKitError('overloaded', 'The runtime is shutting down; retry later');
    return this.#withSessionLock(session_id, async () => {
      const { events, start, interruptRunId } = await this.#deps.store.transaction(async (tx) => {
        const access = await loadSessionAccess(tx, ctx.principal, session_id, { lock: true });
        if (!access.canWrite) throw sessionWriteDenied();
        // An archived project takes no new input; an interrupt may still stop a running Run.
        if (access.archived && body.events.some((e) => e.type === 'user.message')) {
          throw new InboxKitError('project_archived', 'Project is archived');
        }
        if (access.session.archived_at !== null && body.events.some((e) => e.type === 'user.message')) {
          throw new InboxKitError('session_archived', 'Session is archived; it takes no new messages');
        }
        const session = access.session;
        const now = this.#deps.clock.now();
        const pending: NewSessionEvent[] = [];
        const stored: SessionEvent[] = [];
        const flush = async () => {
          if (pending.length > 0) stored.push(...(await tx.appendSessionEvents(pending.splice(0))));
        };

        let running = await tx.getRunningRun(session.id);
        if (running !== undefined) {
          const recovered = await this.#endLeftover(tx, running, now);
          if (recovered !== false) {
            pending.push(...recovered);
            running = undefined;
          }
        }
        let start: RunStart | undefined;
        let interruptRunId: string | undefined;
        for (const event of body.events) {
          if (event.type === 'user.interrupt') {
            const target = start?.run ?? running;
            pending.push({
              id: this.#deps.ids.next('sevt'), session_id: session.id, type: SESSION_EVENT_TYPES.userInterrupt, run_id: target?.id ?? null,
              message_id: null, content: null, floor_id: null, page_id: null, processed_at: now,
            });
            if (target !== undefined) interruptRunId = target.id;
            continue;
          }
          const startsRun = start === undefined && running === undefined;
          const run: Run | undefined = startsRun
            ? { id: this.#deps.ids.next('run'), session_id: session.id, status: 'running', started_at: now, ended_at: null, outcome: null }
            : undefined;
          const id = this.#deps.ids.next('sevt');
          const { floor, page } = await writeTurn(tx, this.#deps, session, pageContent('user', null, id, event.content));
          pending.push({
            id, session_id: session.id, type: SESSION_EVENT_TYPES.userMessage, run_id: run?.id ?? null, message_id: null,
            content: event.content as unknown as JsonValue, floor_id: floor.id, page_id: page.id, processed_at: now,
          });
          if (run !== undefined) {
            await tx.insertRun(run);
            pending.push(this.#statusRunning(session.id, run.id, now));
            await flush();
            const startSeq = stored[stored.length - 1]?.seq ?? 0;
            start = { run, session, startSeq };
          }
        }
        await flush();
        return { events: stored, start, interruptRunId };
      });
      this.#publish(events);
      if (start !== undefined) this.#launch(start);
      if (interruptRunId !== undefined) {
        const active = this.#active.get(session_id);
        if (active !== undefined && active.run.id === interruptRunId) {
          active.controller.abort(new Error('The Run was interrupted by a user.interrupt event'));
        }
      }
      return { data: events.filter((e) => e.type === SESSION_EVENT_TYPES.userMessage || e.type === SESSION_EVENT_TYPES.userInterrupt) };
    });
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
  async listEvents(ctx: RequestContext, session_id: string, input: ListSessionEventsInput = {}): Promise<SessionEventPage> {
    const query = parseOrThrow(listSessionEventsQuery, input, 'query');
    const { session } = await loadSessionAccess(this.#deps.store, ctx.principal, session_id);
    const types = query.types === undefined && query['types[]'] === undefined ? undefined : [...(query.types ?? []), ...(query['types[]'] ?? [])];
    const processed_at = timeBoundsOf(query);
    const scope = `session_events:${session.id}`;
    const fingerprint = filterFingerprint({
      order: query.order, after: query.after, types: types?.join(','),
      gt: processed_at?.gt, gte: processed_at?.gte, lt: processed_at?.lt, lte: processed_at?.lte,
    });
    let after = query.after ?? 0;
    let before: number | undefined;
    if (query.page !== undefined) {
      const position = decodeCursor(query.page, scope, fingerprint).created_at;
      if (query.order === 'asc') after = Math.max(after, position);
      else before = position;
    }
    const rows = await this.#deps.store.listSessionEvents({
      session_id: session.id, after, before, order: query.order, types, processed_at, limit: query.limit + 1,
    });
    const data = rows.slice(0, query.limit);
    const has_more = rows.length > query.limit;
    const last = data[data.length - 1];
    // In the order of the wire schema ({ data, next_page, has_more }), so the response check's same-text fast path holds.
    return { data, next_page: has_more && last !== undefined ? encodeCursor(scope, fingerprint, { created_at: last.seq, id: last.id }) : null, has_more };
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
  async eventFeed(ctx: RequestContext, session_id: string): Promise<Feed<SessionEvent>> {
    const { session } = await loadSessionAccess(this.#deps.store, ctx.principal, session_id);
    const sid = session.id;
    const toItem = (e: SessionEvent): FeedItem<SessionEvent> => ({ id: e.seq, type: e.type, data: e });
    return {
      replay: async (after, limit) => (await this.#deps.store.listSessionEvents({ session_id: sid, after, limit })).map(toItem),
      latest: () => this.#deps.store.lastSessionEventSeq(sid),
      authorize: async () => {
        await loadSessionAccess(this.#deps.store, ctx.principal, session_id);
      },
      subscribe: (push) => this.#deps.bus.subscribe(`session:${sid}`, (m) => {
        if (m.kind === 'session_event' && m.event.session_id === sid) push(toItem(m.event));
      }),
      visible: () => true,
    };
  }

  // — Live Inbox (spec live-inbox.md "HTTP") —

  /**
   * `GET …/live-inbox`: the editable window of the active native attempt, or
   * `{ active: false, version: 0, messages: [] }` when none accepts live input. Any account that
   * may read the Session may read it.
   * @throws InboxKitError `session_not_found` (404), `session_ownership_unavailable` (500).
   */
  async liveInboxSnapshot(ctx: RequestContext, session_id: string): Promise<LiveInboxView> {
    const session = await this.#liveAccess(ctx, session_id, false);
    const inbox = this.#deps.host.liveInbox(session.id);
    if (inbox === undefined) return { active: false, version: 0, messages: [] };
    return { active: true, ...inbox.snapshot() };
  }

  /**
   * `POST …/live-inbox` `{ content }`: queues content at the tail of the active native attempt's inbox.
   * @returns `{ id }`, the queue-local integer id.
   * @throws InboxKitError `validation_error` (400), `session_not_found` (404),
   *   `session_ownership_unavailable` (500), `permission_denied` (403), `live_inbox_inactive` (410).
   */
  async liveInboxQueue(ctx: RequestContext, session_id: string, input: LiveInboxContentInput): Promise<{ id: number }> {
    const body = parseOrThrow(liveInboxContentBody, input, 'live inbox message');
    const inbox = await this.#mutableInbox(ctx, session_id);
    return { id: inbox.queue(body.content) };
  }

  /**
   * `PUT …/live-inbox/{message_id}` `{ content }`: replaces a queued message, keeping id and position.
   * @throws InboxKitError as {@link liveInboxQueue}, plus `live_inbox_message_not_found` (404:
   *   drained, withdrawn or never queued).
   */
  async liveInboxReplace(ctx: RequestContext, session_id: string, message_id: number, input: LiveInboxContentInput): Promise<void> {
    const body = parseOrThrow(liveInboxContentBody, input, 'live inbox message');
    const inbox = await this.#mutableInbox(ctx, session_id);
    inbox.replace(message_id, body.content);
  }

  /**
   * `DELETE …/live-inbox/{message_id}`: withdraws a queued message (a second withdraw is 404).
   * @throws InboxKitError `session_not_found` (404), `session_ownership_unavailable` (500),
   *   `permission_denied` (403), `live_inbox_inactive` (410), `live_inbox_message_not_found` (404).
   */
  async liveInboxWithdraw(ctx: RequestContext, session_id: string, message_id: number): Promise<void> {
    const inbox = await this.#mutableInbox(ctx, session_id);
    inbox.withdraw(message_id);
  }

  /**
   * `PUT …/live-inbox/order` `{ order }`: reorders the queue; `order` must be an exact permutation
   * of the current ids, else nothing changes.
   * @throws InboxKitError `validation_error` (400), `session_not_found` (404),
   *   `session_ownership_unavailable` (500), `permission_denied` (403), `live_inbox_inactive`
   *   (410), `live_inbox_order_conflict` (409).
   */
  async liveInboxReorder(ctx: RequestContext, session_id: string, input: LiveInboxOrderInput): Promise<void> {
    const body = parseOrThrow(liveInboxOrderBody, input, 'order');
    const inbox = await this.#mutableInbox(ctx, session_id);
    inbox.reorder(body.order);
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
  async routeLiveInbox(ctx: RequestContext, session_id: string, operation: LiveInboxOperation, options: { forwarded?: boolean } = {}): Promise<AttemptRoute> {
    const routing = this.#deps.routing;
    if (routing === undefined || options.forwarded === true) return LOCAL;
    let sid: string;
    if (operation.type === 'send_events') {
      const body = parseSendSessionEvents(operation.body);
      if (!body.events.some((e) => e.type === 'user.interrupt') || this.#active.has(session_id)) return LOCAL;
      const access = await loadSessionAccess(this.#deps.store, ctx.principal, session_id);
      if (!access.canWrite) throw sessionWriteDenied();
      sid = access.session.id;
    } else {
      if (this.#deps.host.liveInbox(session_id) !== undefined) return LOCAL;
      sid = (await this.#liveAccess(ctx, session_id, operation.type !== 'snapshot')).id;
    }
    let owner: AttemptOwnership | undefined;
    try {
      owner = await this.#deps.store.findAttemptOwner(sid, this.#deps.clock.now());
    } catch (error) {
      this.#routingError(error, { session_id: sid, action: 'lookup' });
      return LOCAL;
    }
    if (owner === undefined || owner.host_id === routing.host_id) return LOCAL;
    try {
      const reply = await routing.forwarder.forward({ owner, session_id: sid, operation, principal: ctx.principal, request_id: ctx.request_id });
      return { route: 'forwarded', reply };
    } catch (error) {
      this.#routingError(error, { session_id: sid, action: 'forward', owner });
      return LOCAL;
    }
  }

  // — lifecycle —

  /**
   * Start-up recovery: ends every Run left `running` in storage by a process that is gone, instead
   * of waiting for durable input to reach its Session (the lazy path of {@link sendEvents}; both
   * apply exactly the same rule). A Run is ended `failed`, with `session.status_idle`
   * (`content: { outcome: 'failed' }`) appended and published, when this instance does not execute
   * it, it started at or before this instance was built, and — with `routing` — no other host
   * holds a live ownership lease on its attempt. Each Session is handled under its own lock, in its
   * own transaction, so it is safe while durable input arrives (a Run is never ended twice).
   * Does nothing (returns 0) when option `recoverStaleRuns` is false.
   *
   * Call it once after building the instance, before serving. Without `routing`, do not call it
   * while another live process shares the database (it cannot tell that process's Runs from a
   * dead one's).
   * @returns how many Runs it ended.
   * @throws the store's error when a read or a transaction fails (Runs already ended stay ended).
   */
  async recoverStaleRuns(): Promise<number> {
    if (!(this.#deps.recoverStaleRuns ?? true)) return 0;
    const seen = new Set<string>();
    let ended = 0;
    for (let limit = PAGE; ; limit += PAGE) {
      // Runs this call keeps (ours, leased elsewhere) stay listed; a growing limit pages past them.
      const rows = await this.#deps.store.listRunningRuns(limit);
      for (const run of rows) {
        // Oldest first: from here on every Run started after this instance was built.
        if (run.started_at > this.#bootedAt) return ended;
        if (seen.has(run.id)) continue;
        seen.add(run.id);
        const events = await this.#withSessionLock(run.session_id, () =>
          this.#deps.store.transaction(async (tx) => {
            const recovered = await this.#endLeftover(tx, run, this.#deps.clock.now());
            return recovered === false || recovered.length === 0 ? [] : tx.appendSessionEvents(recovered);
          }));
        if (events.length > 0) ended++;
        this.#publish(events);
      }
      if (rows.length < limit) return ended;
    }
  }

  /** Whether this instance is executing a Run of `session_id` right now. */
  isRunning(session_id: string): boolean {
    return this.#active.has(session_id);
  }

  /**
   * Resolves once this instance executes no Run of `session_id` (follow-up Runs included). For
   * tests and embedders; never rejects.
   */
  async whenIdle(session_id: string): Promise<void> {
    for (let active = this.#active.get(session_id); active !== undefined; active = this.#active.get(session_id)) {
      await active.done;
    }
  }

  /**
   * Graceful shutdown: refuses new durable input (503 `overloaded`), aborts every Run this
   * instance executes, and waits until each has ended in storage (`cancelled`, with
   * `session.status_idle`). Starts no follow-up Run. Idempotent.
   */
  async close(): Promise<void> {
    this.#closed = true;
    for (;;) {
      const runs = [...this.#active.values()];
      if (runs.length === 0) return;
      for (const r of runs) r.controller.abort(new Error('The runtime is shutting down'));
      await Promise.all(runs.map((r) => r.done));
    }
  }

  // — internals —

  /** Session visibility for the Live Inbox: 404 as usual, but a failing read is 500 `session_ownership_unavailable`. */
  async #liveAccess(ctx: RequestContext, session_id: string, mutation: boolean): Promise<Session> {
    let access: SessionAccess;
    try {
      access = await loadSessionAccess(this.#deps.store, ctx.principal, session_id);
    } catch (error) {
      if (isInboxKitError(error)) throw error;
      throw new InboxKitError('session_ownership_unavailable', 'Session ownership could not be read; no queue mutation was attempted.', [], { cause: error });
    }
    if (mutation && !access.canWrite) throw sessionWriteDenied();
    return access.session;
  }

  /** Visibility (404/500) → write permission (403) → active native attempt (410). */
  async #mutableInbox(ctx: RequestContext, session_id: string): Promise<LiveInboxQueue> {
    const session = await this.#liveAccess(ctx, session_id, true);
    const inbox = this.#deps.host.liveInbox(session.id);
    if (inbox === undefined) throw liveInboxInactive();
    return inbox;
  }

  /**
   * The one rule of Run recovery (lazy in {@link sendEvents}, eager in {@link recoverStaleRuns}):
   * inside `tx`, ends `run` `failed` when it is a leftover of a previous process
   * ({@link #isLeftover}) whose attempt no other host holds a live lease on. Returns `false` when
   * the Run is not a leftover (it is left alone), else the events to append: the
   * `session.status_idle` `{ outcome: 'failed' }`, or none when another writer ended it first.
   * Call under the Run's session lock.
   */
  async #endLeftover(tx: StoreTx, run: Run, now: number): Promise<false | NewSessionEvent[]> {
    if (!this.#isLeftover(run) || (await this.#leasedElsewhere(tx, run, now))) return false;
    // A leftover of a previous process: nobody executes it any more.
    if (!(await tx.endRun(run.id, 'failed', now))) return [];
    return [this.#statusIdle(run.session_id, run.id, 'failed', now)];
  }

  /** A running Run nobody executes any more: not ours, and started before this instance existed. */
  #isLeftover(run: Run): boolean {
    if (this.#active.get(run.session_id)?.run.id === run.id) return false;
    return (this.#deps.recoverStaleRuns ?? true) && run.started_at <= this.#bootedAt;
  }

  /** With routing: whether another host holds a live ownership lease on `run` (so it is not a leftover). */
  async #leasedElsewhere(tx: StoreTx, run: Run, now: number): Promise<boolean> {
    const routing = this.#deps.routing;
    if (routing === undefined) return false;
    const owner = await tx.findAttemptOwner(run.session_id, now);
    return owner !== undefined && owner.run_id === run.id && owner.host_id !== routing.host_id;
  }

  /**
   * With routing: claims the Session for `run_id` on this host and renews the lease every third of
   * it until the returned release is called (which stops renewing and releases). Never throws:
   * failures go to `onRoutingError` and the attempt runs process-local.
   */
  async #holdOwnership(session_id: string, run_id: string): Promise<() => Promise<void>> {
    const routing = this.#deps.routing;
    if (routing === undefined) return async () => {};
    const { store, clock } = this.#deps;
    const leaseMs = routing.lease_ms ?? DEFAULT_ATTEMPT_LEASE_MS;
    const key = { session_id, run_id, host_id: routing.host_id };
    try {
      const now = clock.now();
      if (!(await store.claimAttemptOwnership({ ...key, host_url: routing.host_url, lease_expires_at: now + leaseMs }, now))) {
        this.#routingError(new Error('Another host holds a live lease on this Session; the attempt is not routable'), { session_id, run_id, action: 'claim' });
        return async () => {};
      }
    } catch (error) {
      this.#routingError(error, { session_id, run_id, action: 'claim' });
      return async () => {};
    }
    let renewing: Promise<void> = Promise.resolve();
    let stopped = false;
    const timer = setInterval(() => {
      renewing = renewing.then(async () => {
        if (stopped) return;
        try {
          if (!(await store.renewAttemptOwnership(key, clock.now() + leaseMs))) {
            stopped = true;
            clearInterval(timer);
            this.#routingError(new Error('The attempt lost its ownership lease'), { session_id, run_id, action: 'renew' });
          }
        } catch (error) {
          this.#routingError(error, { session_id, run_id, action: 'renew' });
        }
      });
    }, Math.max(1, Math.floor(leaseMs / 3)));
    (timer as { unref?: () => void }).unref?.();
    return async () => {
      stopped = true;
      clearInterval(timer);
      await renewing;
      try {
        await store.releaseAttemptOwnership(key);
      } catch (error) {
        // The lease expires on its own.
        this.#routingError(error, { session_id, run_id, action: 'release' });
      }
    };
  }

  #routingError(error: unknown, info: AttemptRoutingErrorInfo): void {
    try {
      this.#deps.routing?.onRoutingError?.(error, info);
    } catch {
      // A failing reporter must not break routing.
    }
  }

  /** Registers and starts a Run committed by a transaction. Call under the session lock, after commit. */
  #launch(start: RunStart): void {
    const controller = new AbortController();
    const active: ActiveRun = { ...start, controller, done: Promise.resolve() };
    this.#active.set(start.session.id, active);
    active.done = this.#execute(active).catch((error: unknown) => this.#runError(error, active));
  }

  /** Executes a Run, then ends it (and maybe starts the follow-up) under the session lock. */
  async #execute(active: ActiveRun): Promise<void> {
    const { run, session } = active;
    let result: NativeAttemptResult;
    const release = await this.#holdOwnership(session.id, run.id);
    try {
      const transcript = await this.#transcript(session.id, active.startSeq);
      result = await runNativeAttempt({
        host: this.#deps.host, model: this.#deps.model, ledger: this.#ledger(session), session_id: session.id, run_id: run.id,
        transcript, signal: active.controller.signal,
      });
    } catch (error) {
      result = { status: 'failed', error, committed: [] };
    }
    await release();
    if (result.status === 'failed') this.#runError(result.error, active);
    await this.#withSessionLock(session.id, async () => {
      try {
        const { events, next } = await this.#deps.store.transaction(async (tx) => {
          // Durable input committed by another process for this Session waits for this end (or
          // this end waits for it), so the follow-up check below sees it or it sees no running Run.
          await tx.lockSession(session.workspace_id, session.id);
          const now = this.#deps.clock.now();
          const pending: NewSessionEvent[] = [];
          if (await tx.endRun(run.id, result.status, now)) {
            pending.push(this.#statusIdle(session.id, run.id, result.status, now, result.status === 'failed' ? runFailureOf(result.error) : undefined));
          }
          let next: RunStart | undefined;
          if (!this.#closed && (await this.#hasFollowUpInput(tx, session.id, active.startSeq))) {
            const nextRun: Run = { id: this.#deps.ids.next('run'), session_id: session.id, status: 'running', started_at: now, ended_at: null, outcome: null };
            await tx.insertRun(nextRun);
            pending.push(this.#statusRunning(session.id, nextRun.id, now));
            next = { run: nextRun, session, startSeq: 0 };
          }
          const events = await tx.appendSessionEvents(pending);
          if (next !== undefined) next.startSeq = events[events.length - 1]?.seq ?? 0;
          return { events, next };
        });
        this.#publish(events);
        if (this.#active.get(session.id) === active) this.#active.delete(session.id);
        if (next !== undefined) this.#launch(next);
      } catch (error) {
        // The Run stays `running` in storage; the next durable input ends it as a leftover.
        if (this.#active.get(session.id) === active) this.#active.delete(session.id);
        this.#runError(error, active);
      }
    });
  }

  /**
   * Whether durable `user.message` input was committed after the Run started (seq > `startSeq`)
   * and after the last `user.interrupt` — input the ending Run never saw, for a follow-up Run.
   */
  async #hasFollowUpInput(tx: StoreTx, session_id: string, startSeq: number): Promise<boolean> {
    let after = startSeq;
    let durableAfterInterrupt = false;
    for (;;) {
      const rows = await tx.listSessionEvents({ session_id, after, limit: PAGE });
      for (const e of rows) {
        if (e.type === SESSION_EVENT_TYPES.userInterrupt) durableAfterInterrupt = false;
        else if (e.type === SESSION_EVENT_TYPES.userMessage && e.message_id === null) durableAfterInterrupt = true;
      }
      const last = rows[rows.length - 1];
      if (rows.length < PAGE || last === undefined) return durableAfterInterrupt;
      after = last.seq;
    }
  }

  /**
   * The transcript a Run starts from: every `user.message` and `agent.message` with `seq ≤ upTo`,
   * oldest first. Ids: the Run-scoped `message_id`, or the event id for durable input.
   */
  async #transcript(session_id: string, upTo: number): Promise<TranscriptMessage[]> {
    const out: TranscriptMessage[] = [];
    let after = 0;
    for (;;) {
      const rows = await this.#deps.store.listSessionEvents({ session_id, after, limit: PAGE });
      for (const e of rows) {
        if (e.seq > upTo) return out;
        const role = e.type === SESSION_EVENT_TYPES.userMessage ? 'user' : e.type === SESSION_EVENT_TYPES.agentMessage ? 'assistant' : undefined;
        if (role === undefined) continue;
        const content = contentSchema.safeParse(e.content);
        if (content.success) out.push({ id: e.message_id ?? e.id, role, content: content.data });
      }
      const last = rows[rows.length - 1];
      if (rows.length < PAGE || last === undefined) return out;
      after = last.seq;
    }
  }

  /**
   * The Session ledger as the native loop commits to it: one transaction per commit, one Floor and
   * Page per message (Page content `{ role, message_id, event_id, content }`), one Session event per
   * message (`user.message` for drained inbox input, `agent.message` for a step), published after commit.
   */
  #ledger(session: Session): RunLedger {
    return {
      commit: async ({ run_id, messages }) => {
        const events = await this.#deps.store.transaction(async (tx) => {
          // Conditional on the Run: a drain racing the Run's end (a leftover ended by another
          // process, a recovery at start-up) commits nothing; the attempt then fails and its
          // drained input moves to the Session's next attempt instead of landing in an ended Run.
          await tx.lockSession(session.workspace_id, session.id);
          if ((await tx.getRunningRun(session.id))?.id !== run_id) {
            throw new InboxKitError('conflict', `Run ${run_id} has ended; nothing more of it is committed (drained input moves to the next attempt)`);
          }
          const now = this.#deps.clock.now();
          const rows: NewSessionEvent[] = [];
          for (const m of messages) {
            const id = this.#deps.ids.next('sevt');
            const { floor, page } = await writeTurn(tx, this.#deps, session, pageContent(m.role, m.id, id, m.content));
            rows.push({
              id, session_id: session.id, type: m.role === 'user' ? SESSION_EVENT_TYPES.userMessage : SESSION_EVENT_TYPES.agentMessage,
              run_id, message_id: m.id, content: m.content as unknown as JsonValue, floor_id: floor.id, page_id: page.id, processed_at: now,
            });
          }
          return tx.appendSessionEvents(rows);
        });
        this.#publish(events);
      },
    };
  }

  #statusRunning(session_id: string, run_id: string, now: number): NewSessionEvent {
    return {
      id: this.#deps.ids.next('sevt'), session_id, type: SESSION_EVENT_TYPES.running, run_id, message_id: null, content: null,
      floor_id: null, page_id: null, processed_at: now,
    };
  }

  #statusIdle(session_id: string, run_id: string, outcome: string, now: number, error?: RunFailure): NewSessionEvent {
    return {
      id: this.#deps.ids.next('sevt'), session_id, type: SESSION_EVENT_TYPES.idle, run_id, message_id: null,
      content: error === undefined ? { outcome } : { outcome, error: { type: error.type, message: error.message } },
      floor_id: null, page_id: null, processed_at: now,
    };
  }

  #publish(events: SessionEvent[]): void {
    for (const event of events) {
      try {
        this.#deps.bus.publish({ kind: 'session_event', event });
      } catch (error) {
        this.#deps.onPublishError?.(error);
      }
    }
  }

  #runError(error: unknown, active: ActiveRun): void {
    try {
      this.#deps.onRunError?.(error, { session_id: active.session.id, run_id: active.run.id });
    } catch {
      // A failing reporter must not break the Runtime.
    }
  }

  /** Runs `fn` after every earlier holder of `session_id`'s lock has finished (FIFO). */
  async #withSessionLock<T>(session_id: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.#locks.get(session_id) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => mine);
    this.#locks.set(session_id, tail);
    await previous;
    try {
      return await fn();
    } finally {
      release();
      if (this.#locks.get(session_id) === tail) this.#locks.delete(session_id);
    }
  }
}

/**
 * What a failed Run records on its `session.status_idle` event (`content.error`): a
 * {@link ModelError}'s own `type` and `message` (the model's words, meant for Session readers);
 * any other cause (a ledger or store failure, a model bug) as `api_error` with a fixed message, so
 * no internal detail reaches a reader. The cause itself goes to `onRunError`.
 */
export interface RunFailure {
  type: string;
  message: string;
}

function runFailureOf(error: unknown): RunFailure {
  if (isModelError(error)) return { type: error.type, message: error.message };
  return { type: 'api_error', message: 'The Run failed on an internal error.' };
}

/** The Page content of one committed message. */
function pageContent(role: 'user' | 'assistant', message_id: string | null, event_id: string, content: ContentBlock[]): JsonValue {
  return { role, message_id, event_id, content: content as unknown as JsonValue };
}
