/**
 * `client.sessions`: Sessions, their Floors and Pages, the Live Inbox (best-effort steering of an
 * active native Run, under `/v1/awaken`) and durable Session events (`/v1/sessions/:id/events`:
 * send, page, stream). Spec: platform.md "Projects, members, sources"; live-inbox.md "HTTP",
 * "Errors", "Drain, commit, carry-over".
 */
import { fromWire, listFromWire, toWire, unwrap } from './case.js';
import { LiveInboxInactiveError } from './errors.js';
import { sseStream } from './sse.js';
import { cursorPage, paginate, path, splitOptions, type Transport } from './transport.js';
import type {
  AddPageInput,
  CommitFloorInput,
  CommittedFloor,
  ContentBlock,
  CreateOptions,
  CreateSessionInput,
  CursorPage,
  Floor,
  ListSessionEventsParams,
  ListSessionsParams,
  LiveInboxMessage,
  LiveInboxSnapshot,
  Page,
  PageParams,
  QueueOrSendResult,
  RequestOptions,
  Session,
  SessionEvent,
  SessionEventAck,
  SessionEventInput,
  SessionEventPage,
  StreamSessionEventsParams,
} from './types.js';

type Wire = Record<string, unknown>;

/** `client.sessions.floors`. Spec: platform.md "Projects, members, sources" (Floor). */
export class SessionFloors {
  readonly #t: Transport;
  /** @internal Use `createClient`. */
  constructor(transport: Transport) {
    this.#t = transport;
  }

  /**
   * One page of the committed turns of a Session, by `(number, branch, id)`.
   * `GET /sessions/:id/floors?limit=&cursor=` → `{ items, next_cursor }`.
   * @returns `{ items, nextCursor }` (`null` on the last page).
   * @throws {InboxKitApiError} 400 `invalid_cursor`, 404 `session_not_found`.
   */
  async list(sessionId: string, params: PageParams = {}): Promise<CursorPage<Floor>> {
    const { opts, rest } = splitOptions(params);
    const body = await this.#t.request<Wire>('GET', path`/sessions/${sessionId}/floors`, { ...opts, query: { limit: rest.limit, cursor: rest.cursor } });
    return cursorPage(body, listFromWire<Floor>(body['items']));
  }

  /** Every Floor of a Session, across all pages. @throws {InboxKitApiError} as {@link SessionFloors.list}. */
  listAll(sessionId: string, params: PageParams = {}): AsyncGenerator<Floor, void, undefined> {
    return paginate((cursor) => this.list(sessionId, { ...params, cursor }), params.cursor);
  }

  /**
   * Commits a turn: one Floor and its first Page. `POST /sessions/:id/floors` `{ content,
   * branch? }` → 201 `{ floor, page }`. `content` is any JSON (≤ 256 KiB), sent untouched.
   * @throws {InboxKitApiError} 400, 403, 404 `session_not_found`, 413.
   */
  async commit(sessionId: string, input: CommitFloorInput, opts: CreateOptions = {}): Promise<CommittedFloor> {
    const body = await this.#t.request<Wire>('POST', path`/sessions/${sessionId}/floors`, { ...opts, body: toWire(input) });
    return { floor: fromWire<Floor>(body['floor']), page: fromWire<Page>(body['page']) };
  }
}

/** `client.sessions.pages`. Spec: platform.md "Projects, members, sources" (Page). */
export class SessionPages {
  readonly #t: Transport;
  /** @internal Use `createClient`. */
  constructor(transport: Transport) {
    this.#t = transport;
  }

  /**
   * One page of the versions of one Floor's content, by version.
   * `GET /sessions/:id/floors/:floor_id/pages?limit=&cursor=` → `{ items, next_cursor }`.
   * @returns `{ items, nextCursor }` (`null` on the last page).
   * @throws {InboxKitApiError} 400 `invalid_cursor`, 404 `session_not_found` / `floor_not_found`.
   */
  async list(sessionId: string, floorId: string, params: PageParams = {}): Promise<CursorPage<Page>> {
    const { opts, rest } = splitOptions(params);
    const body = await this.#t.request<Wire>('GET', path`/sessions/${sessionId}/floors/${floorId}/pages`, { ...opts, query: { limit: rest.limit, cursor: rest.cursor } });
    return cursorPage(body, listFromWire<Page>(body['items']));
  }

  /** Every Page of a Floor, across all pages. @throws {InboxKitApiError} as {@link SessionPages.list}. */
  listAll(sessionId: string, floorId: string, params: PageParams = {}): AsyncGenerator<Page, void, undefined> {
    return paginate((cursor) => this.list(sessionId, floorId, { ...params, cursor }), params.cursor);
  }

  /**
   * Adds a Page (a regeneration) to a Floor. `POST /sessions/:id/floors/:floor_id/pages`
   * `{ content }` → 201 `{ page }`. `content` is sent untouched.
   * @throws {InboxKitApiError} 400, 403, 404 `session_not_found` / `floor_not_found`, 413.
   */
  async add(sessionId: string, floorId: string, input: AddPageInput, opts: CreateOptions = {}): Promise<Page> {
    const body = await this.#t.request('POST', path`/sessions/${sessionId}/floors/${floorId}/pages`, { ...opts, body: toWire(input) });
    return unwrap<Page>(body, 'page');
  }
}

/**
 * `client.sessions.events`: the durable input path and committed Session history.
 * Spec: live-inbox.md "Drain, commit, carry-over" (durable input path).
 */
export class SessionEvents {
  readonly #t: Transport;
  /** @internal Use `createClient`. */
  constructor(transport: Transport) {
    this.#t = transport;
  }

  /**
   * Sends durable input: commits the events and starts a Run if none is running.
   * `POST /v1/sessions/:id/events` `{ events }` → `{ data: [event] }` (the committed events).
   * Event `content` blocks are sent untouched; the other fields go snake_case (`customToolUseId` →
   * `custom_tool_use_id`, `toolUseId`, `isError`, `denyMessage`). Never retried (POST).
   * @returns the committed events, camelCase (`processedAt` RFC 3339).
   * @throws {InboxKitApiError} 400 `invalid_request_error` (bad event or block), 404 `not_found_error`.
   */
  async send(sessionId: string, events: SessionEventInput[], opts: CreateOptions = {}): Promise<SessionEventAck[]> {
    const body = await this.#t.request<Wire>('POST', path`/v1/sessions/${sessionId}/events`, { ...opts, body: { events: events.map((e) => toWire(e)) } });
    return listFromWire<SessionEventAck>(body['data']);
  }

  /**
   * Interrupts the running Run: {@link SessionEvents.send} with `[{ type: 'user.interrupt' }]`.
   * @throws {InboxKitApiError} as {@link SessionEvents.send}.
   */
  interrupt(sessionId: string, opts: CreateOptions = {}): Promise<SessionEventAck[]> {
    return this.send(sessionId, [{ type: 'user.interrupt' }], opts);
  }

  /**
   * A page of committed Session history. `GET /v1/sessions/:id/events?page=&limit=&order=` →
   * `{ data, next_page, has_more }`.
   * @returns `{ data, nextPage, hasMore }`; `nextPage` is opaque: pass it back as `page` (same
   *   `order` and `limit`).
   * @throws {InboxKitApiError} 400 (also `invalid_cursor`), 404 `not_found_error`.
   */
  async list(sessionId: string, params: ListSessionEventsParams = {}): Promise<SessionEventPage> {
    const { opts, rest } = splitOptions(params);
    const body = await this.#t.request<Wire>('GET', path`/v1/sessions/${sessionId}/events`, {
      ...opts,
      query: { page: rest.page, limit: rest.limit, order: rest.order },
    });
    return {
      data: listFromWire<SessionEvent>(body['data']),
      nextPage: (body['next_page'] as string | null | undefined) ?? null,
      hasMore: body['has_more'] === true,
    };
  }

  /**
   * Committed history as an async iterator: `GET /v1/sessions/:id/events/stream?after=` (SSE;
   * stored events first, then live). Reconnects after a dropped connection with
   * `Last-Event-ID` (server `retry:` hint, default 1000 ms); ends without error when `signal`
   * aborts or the loop breaks.
   * @throws {InboxKitApiError} when a (re)connection is answered non-2xx (e.g. 404).
   */
  stream(sessionId: string, params: StreamSessionEventsParams = {}): AsyncGenerator<SessionEvent, void, undefined> {
    return sseStream<SessionEvent>({
      transport: this.#t,
      path: path`/v1/sessions/${sessionId}/events/stream`,
      query: { after: params.after === undefined ? undefined : String(params.after) },
      resumeQuery: {},
      accountId: params.accountId,
      signal: params.signal,
      map: (data) => fromWire<SessionEvent>(data),
      onResync: params.onResync,
    });
  }
}

/**
 * `client.sessions.liveInbox`: the best-effort steering window of an active native Run. Every
 * mutation throws {@link LiveInboxInactiveError} (410) when no native attempt accepts live input;
 * then send the content durably ({@link SessionEvents.send}) or use {@link LiveInbox.queueOrSend}.
 * Spec: live-inbox.md.
 */
export class LiveInbox {
  readonly #t: Transport;
  readonly #events: SessionEvents;
  /** @internal Use `createClient`. */
  constructor(transport: Transport, events: SessionEvents) {
    this.#t = transport;
    this.#events = events;
  }

  /**
   * The editable window. `GET /v1/awaken/sessions/:id/live-inbox` → `{ active, version, messages }`;
   * with no active native attempt `{ active: false, version: 0, messages: [] }` (never 410).
   * @throws {InboxKitApiError} 404 `not_found_error` (Session unknown or not visible), 500.
   */
  async get(sessionId: string, opts: RequestOptions = {}): Promise<LiveInboxSnapshot> {
    const body = await this.#t.request<Wire>('GET', base(sessionId), opts);
    return {
      active: body['active'] === true,
      version: Number(body['version'] ?? 0),
      messages: Array.isArray(body['messages']) ? (body['messages'] as LiveInboxMessage[]) : [],
    };
  }

  /**
   * Queues content at the tail. `POST …/live-inbox` `{ content }` → `{ id }`. Never retried (POST).
   * @param content a non-empty array of content blocks, sent untouched.
   * @returns the queue-local message id (an integer, never reused).
   * @throws {LiveInboxInactiveError} 410 — no active native attempt.
   * @throws {InboxKitApiError} 400 (bad block), 404 (Session), 413, 500.
   */
  async queue(sessionId: string, content: ContentBlock[], opts: RequestOptions = {}): Promise<number> {
    const body = await this.#t.request<Wire>('POST', base(sessionId), { ...opts, body: { content } });
    return Number(body['id']);
  }

  /**
   * Replaces a queued message's content, keeping its id and position. `PUT …/live-inbox/:message_id`
   * `{ content }` → 204.
   * @throws {LiveInboxInactiveError} 410.
   * @throws {InboxKitApiError} 404 (message already drained, withdrawn or unknown), 400, 413.
   */
  async replace(sessionId: string, messageId: number, content: ContentBlock[], opts: RequestOptions = {}): Promise<void> {
    await this.#t.request('PUT', `${base(sessionId)}${path`/${messageId}`}`, { ...opts, body: { content } });
  }

  /**
   * Withdraws a queued message. `DELETE …/live-inbox/:message_id` → 204.
   * @throws {LiveInboxInactiveError} 410.
   * @throws {InboxKitApiError} 404 (message already drained, withdrawn or unknown).
   */
  async withdraw(sessionId: string, messageId: number, opts: RequestOptions = {}): Promise<void> {
    await this.#t.request('DELETE', `${base(sessionId)}${path`/${messageId}`}`, opts);
  }

  /**
   * Reorders the queue. `PUT …/live-inbox/order` `{ order }` → 204. `order` must be every current
   * id exactly once (read a fresh snapshot first).
   * @throws {LiveInboxInactiveError} 410.
   * @throws {InboxKitApiError} 409 (not an exact permutation of the current ids; nothing changed), 400.
   */
  async reorder(sessionId: string, order: number[], opts: RequestOptions = {}): Promise<void> {
    await this.#t.request('PUT', `${base(sessionId)}/order`, { ...opts, body: { order } });
  }

  /**
   * Queues the content live when a native Run accepts it, else sends it as a durable
   * `user.message` Session event (on {@link LiveInboxInactiveError} only).
   * @returns `{ delivery: 'live', id }` or `{ delivery: 'durable', events }`.
   * @throws {InboxKitApiError} any other error of {@link LiveInbox.queue} or {@link SessionEvents.send}.
   */
  async queueOrSend(sessionId: string, content: ContentBlock[], opts: RequestOptions = {}): Promise<QueueOrSendResult> {
    try {
      return { delivery: 'live', id: await this.queue(sessionId, content, opts) };
    } catch (error) {
      if (!(error instanceof LiveInboxInactiveError)) throw error;
    }
    const events = await this.#events.send(sessionId, [{ type: 'user.message', content }], opts);
    return { delivery: 'durable', events };
  }
}

function base(sessionId: string): string {
  return path`/v1/awaken/sessions/${sessionId}/live-inbox`;
}

/** `client.sessions`. Spec: platform.md "Projects, members, sources" (Session). */
export class Sessions {
  readonly #t: Transport;
  /** Committed turns. */
  readonly floors: SessionFloors;
  /** Versions of a turn's content. */
  readonly pages: SessionPages;
  /** Durable input and committed history. */
  readonly events: SessionEvents;
  /** Best-effort steering of an active native Run. */
  readonly liveInbox: LiveInbox;

  /** @internal Use `createClient`. */
  constructor(transport: Transport) {
    this.#t = transport;
    this.floors = new SessionFloors(transport);
    this.pages = new SessionPages(transport);
    this.events = new SessionEvents(transport);
    this.liveInbox = new LiveInbox(transport, this.events);
  }

  /**
   * Creates a Session, optionally in a Project (its id generated by the server). `POST /sessions` `{ project_id?, title? }`
   * → 201 `{ session }`.
   * @throws {InboxKitApiError} 400, 403 (observer of the Project), 404 `project_not_found`, 409.
   */
  async create(input: CreateSessionInput = {}, opts: CreateOptions = {}): Promise<Session> {
    const body = await this.#t.request('POST', '/sessions', { ...opts, body: toWire(input) });
    return unwrap<Session>(body, 'session');
  }

  /**
   * One page of the Sessions visible to the caller, newest first, optionally of one Project.
   * `GET /sessions?project_id=&limit=&cursor=` → `{ items, next_cursor }`.
   * @returns `{ items, nextCursor }` (`null` on the last page).
   * @throws {InboxKitApiError} 400 (also `invalid_cursor`), 401, 404 `project_not_found`.
   */
  async list(params: ListSessionsParams = {}): Promise<CursorPage<Session>> {
    const { opts, rest } = splitOptions(params);
    const body = await this.#t.request<Wire>('GET', '/sessions', { ...opts, query: { project_id: rest.projectId, limit: rest.limit, cursor: rest.cursor } });
    return cursorPage(body, listFromWire<Session>(body['items']));
  }

  /** Every visible Session (of `projectId`, when given), across all pages. @throws {InboxKitApiError} as {@link Sessions.list}. */
  listAll(params: ListSessionsParams = {}): AsyncGenerator<Session, void, undefined> {
    return paginate((cursor) => this.list({ ...params, cursor }), params.cursor);
  }

  /**
   * One Session. `GET /sessions/:id` → `{ session }`.
   * @throws {InboxKitApiError} 404 `session_not_found` (missing or not visible).
   */
  async get(sessionId: string, opts: RequestOptions = {}): Promise<Session> {
    const body = await this.#t.request('GET', path`/sessions/${sessionId}`, opts);
    return unwrap<Session>(body, 'session');
  }
}
