/**
 * `client.projects`: Projects, their members, the Project Inbox, Project Events (list and SSE
 * stream) and the Operation Log. Spec: platform.md "Projects, members, sources", "Project
 * Events", "Operation Log"; project-inbox.md "Endpoints", "SDK".
 */
import { fromWire, listFromWire, toWire, unwrap } from './case.js';
import { sseStream } from './sse.js';
import { cursorPage, paginate, path, splitOptions, type Transport } from './transport.js';
import type {
  AddMemberInput,
  CreateInboxItemInput,
  CreateOptions,
  CreateProjectInput,
  CursorPage,
  DecideInboxItemParams,
  InboxDecision,
  ListInboxItemsFilters,
  ListInboxItemsParams,
  ListOperationLogsParams,
  ListProjectEventsParams,
  Member,
  PageParams,
  OperationLog,
  Project,
  ProjectEvent,
  ProjectEventPage,
  ProjectInboxItem,
  ProjectRole,
  RequestOptions,
  StreamProjectEventsParams,
} from './types.js';

type Wire = Record<string, unknown>;

/** `client.projects.members`. Spec: platform.md "Projects, members, sources". */
export class ProjectMembers {
  readonly #t: Transport;
  /** @internal Use `createClient`. */
  constructor(transport: Transport) {
    this.#t = transport;
  }

  /**
   * Adds a member or changes its role (owner only). `POST /projects/:id/members` → 201 `{ member }`.
   * @returns the membership.
   * @throws {InboxKitApiError} 403 (not the owner), 404 `project_not_found` / `account_not_found`, 409 `project_archived`.
   */
  async add(projectId: string, input: AddMemberInput, opts: CreateOptions = {}): Promise<Member> {
    const body = await this.#t.request('POST', path`/projects/${projectId}/members`, { ...opts, body: toWire(input) });
    return unwrap<Member>(body, 'member');
  }

  /**
   * One page of the members, oldest first. `GET /projects/:id/members?limit=&cursor=` → `{ items, next_cursor }`.
   * @returns `{ items, nextCursor }` (`null` on the last page).
   * @throws {InboxKitApiError} 400 `invalid_cursor`, 404 `project_not_found`.
   */
  async list(projectId: string, params: PageParams = {}): Promise<CursorPage<Member>> {
    const { opts, rest } = splitOptions(params);
    const body = await this.#t.request<Wire>('GET', path`/projects/${projectId}/members`, { ...opts, query: { limit: rest.limit, cursor: rest.cursor } });
    return cursorPage(body, listFromWire<Member>(body['items']));
  }

  /** Every member, across all pages. @throws {InboxKitApiError} as {@link ProjectMembers.list}. */
  listAll(projectId: string, params: PageParams = {}): AsyncGenerator<Member, void, undefined> {
    return paginate((cursor) => this.list(projectId, { ...params, cursor }), params.cursor);
  }

  /**
   * Removes a member (owner only). `DELETE /projects/:id/members/:account_id` → 204.
   * @throws {InboxKitApiError} 403 (not the owner), 404 `project_not_found` / `member_not_found`.
   */
  async remove(projectId: string, accountId: string, opts: RequestOptions = {}): Promise<void> {
    await this.#t.request('DELETE', path`/projects/${projectId}/members/${accountId}`, opts);
  }
}

/** `client.projects.inbox`. Spec: project-inbox.md "Endpoints", "SDK". */
export class ProjectInbox {
  readonly #t: Transport;
  /** @internal Use `createClient`. */
  constructor(transport: Transport) {
    this.#t = transport;
  }

  /**
   * Files an item (owner or deriver). `POST /projects/:id/inbox` `{ type, title?, payload?,
   * source_*_id? }` → 201 `{ item }`. Top-level fields go snake_case; `payload` is sent untouched.
   * With `idempotencyKey` (sent as `Idempotency-Key`) a repeat is safe: the server answers a
   * repeat with the item the key first created, so the call is also retried like a GET (network
   * errors, 429, 502–504). Without a key it is never retried.
   * @returns the created item (`status: 'pending'`).
   * @throws {InboxKitApiError} 400 `validation_error` / `project_inbox_payload_invalid`, 403
   *   `project_inbox_write_denied`, 404 `project_not_found` / `session_not_found` /
   *   `floor_not_found` / `page_not_found`, 409 `project_archived` /
   *   `project_inbox_source_scope_mismatch` / `idempotency_key_reused` (the key was used with
   *   another body), 413 `project_inbox_payload_too_large`.
   */
  async create(projectId: string, input: CreateInboxItemInput, opts: CreateOptions = {}): Promise<ProjectInboxItem> {
    const body = await this.#t.request('POST', path`/projects/${projectId}/inbox`, { ...opts, body: toWire(input), retryWithKey: true });
    return unwrap<ProjectInboxItem>(body, 'item');
  }

  /**
   * One page of items, newest first (`created_at DESC, id DESC`). `GET /projects/:id/inbox` →
   * `{ items, next_cursor }`. Filters and per-call options share one object (the seed's
   * convention): `{ status?, type?, senderAccountId?, sourceSessionId?, limit?, cursor?,
   * accountId?, signal? }`. A deriver sees only the items it sent.
   * @returns `{ items, nextCursor }`; `nextCursor` is `null` on the last page.
   * @throws {InboxKitApiError} 400 `validation_error` / `invalid_cursor`, 403
   *   `project_inbox_read_denied`, 404 `project_not_found`.
   */
  async list(projectId: string, params: ListInboxItemsParams = {}): Promise<CursorPage<ProjectInboxItem>> {
    const { opts, rest } = splitOptions(params);
    const body = await this.#t.request<Wire>('GET', path`/projects/${projectId}/inbox`, { ...opts, query: listQuery(rest) });
    return { items: listFromWire<ProjectInboxItem>(body['items']), nextCursor: (body['next_cursor'] as string | null | undefined) ?? null };
  }

  /**
   * Every item matching the filters, across all pages (follows `nextCursor` until `null`). Takes
   * the same object as {@link ProjectInbox.list}; `cursor` starts mid-way, `limit` sets the page size.
   * @throws {InboxKitApiError} as {@link ProjectInbox.list}, from whichever page fails.
   */
  listAll(projectId: string, params: ListInboxItemsParams = {}): AsyncGenerator<ProjectInboxItem, void, undefined> {
    return paginate((cursor) => this.list(projectId, { ...params, cursor }), params.cursor);
  }

  /**
   * One item. `GET /projects/:id/inbox/:item_id` → `{ item }`.
   * @throws {InboxKitApiError} 403 `project_inbox_read_denied`, 404 `project_not_found` /
   *   `project_inbox_item_not_found` (missing, of another project, or not the deriver's own).
   */
  async get(projectId: string, itemId: string, opts: RequestOptions = {}): Promise<ProjectInboxItem> {
    const body = await this.#t.request('GET', path`/projects/${projectId}/inbox/${itemId}`, opts);
    return unwrap<ProjectInboxItem>(body, 'item');
  }

  /**
   * Accepts a pending item (owner only). Records the decision only: nothing is merged into a
   * Session. `PATCH /projects/:id/inbox/:item_id` `{ decision: 'accept', note? }` → `{ item }`.
   * @throws {InboxKitApiError} 403 `project_inbox_decide_denied`, 404, 409 `project_archived` /
   *   `project_inbox_invalid_transition`.
   */
  accept(projectId: string, itemId: string, params: DecideInboxItemParams = {}): Promise<ProjectInboxItem> {
    return this.#decide(projectId, itemId, 'accept', params);
  }

  /**
   * Rejects a pending item (owner only). `PATCH …/inbox/:item_id` `{ decision: 'reject', note? }`.
   * @throws {InboxKitApiError} as {@link ProjectInbox.accept}.
   */
  reject(projectId: string, itemId: string, params: DecideInboxItemParams = {}): Promise<ProjectInboxItem> {
    return this.#decide(projectId, itemId, 'reject', params);
  }

  /**
   * Archives an item from any state (owner only; archiving an archived item is a no-op 200).
   * `PATCH …/inbox/:item_id` `{ decision: 'archive', note? }`.
   * @throws {InboxKitApiError} as {@link ProjectInbox.accept}.
   */
  archive(projectId: string, itemId: string, params: DecideInboxItemParams = {}): Promise<ProjectInboxItem> {
    return this.#decide(projectId, itemId, 'archive', params);
  }

  async #decide(projectId: string, itemId: string, decision: InboxDecision, params: DecideInboxItemParams): Promise<ProjectInboxItem> {
    const { opts, rest } = splitOptions(params);
    const body = await this.#t.request('PATCH', path`/projects/${projectId}/inbox/${itemId}`, {
      ...opts,
      body: toWire({ decision, note: rest.note }),
    });
    return unwrap<ProjectInboxItem>(body, 'item');
  }
}

function listQuery(filters: ListInboxItemsFilters): Record<string, string | number | undefined> {
  return toWire({
    status: filters.status,
    type: filters.type,
    senderAccountId: filters.senderAccountId,
    sourceSessionId: filters.sourceSessionId,
    limit: filters.limit,
    cursor: filters.cursor,
  }) as Record<string, string | number | undefined>;
}

/** `client.projects.events`. Spec: platform.md "Project Events". */
export class ProjectEvents {
  readonly #t: Transport;
  /** @internal Use `createClient`. */
  constructor(transport: Transport) {
    this.#t = transport;
  }

  /**
   * A page of events, ascending by `sequence`, visible to the caller. `GET /projects/:id/events
   * ?after=&types=a,b&session_id=&limit=` → `{ items, next_after, has_more }`.
   * @returns `{ items, nextAfter, hasMore }`; pass `nextAfter` as `after` for the next page.
   * @throws {InboxKitApiError} 400 `validation_error`, 404 `project_not_found`.
   */
  async list(projectId: string, params: ListProjectEventsParams = {}): Promise<ProjectEventPage> {
    const { opts, rest } = splitOptions(params);
    const body = await this.#t.request<Wire>('GET', path`/projects/${projectId}/events`, {
      ...opts,
      query: { after: rest.after, types: rest.types, session_id: rest.sessionId, limit: rest.limit },
    });
    return {
      items: listFromWire<ProjectEvent>(body['items']),
      nextAfter: Number(body['next_after'] ?? rest.after ?? 0),
      hasMore: body['has_more'] === true,
    };
  }

  /**
   * Live events as an async iterator: `GET /projects/:id/events/stream?after=&types=&session_id=` (SSE,
   * `id: <sequence>`). Stored events after `after` come first, then live ones. Reconnects after a
   * dropped connection with `Last-Event-ID` (waiting the server's `retry:` hint, default 1000 ms);
   * ends without error when `signal` aborts or the loop breaks.
   * @throws {InboxKitApiError} when a (re)connection is answered non-2xx (e.g. 404 `project_not_found`).
   */
  stream(projectId: string, params: StreamProjectEventsParams = {}): AsyncGenerator<ProjectEvent, void, undefined> {
    const types = params.types !== undefined && params.types.length > 0 ? params.types : undefined;
    return sseStream<ProjectEvent>({
      transport: this.#t,
      path: path`/projects/${projectId}/events/stream`,
      query: { after: params.after, types, session_id: params.sessionId },
      resumeQuery: { types, session_id: params.sessionId },
      accountId: params.accountId,
      signal: params.signal,
      map: (data) => fromWire<ProjectEvent>(data),
      onResync: params.onResync,
    });
  }
}

/** `client.projects.operationLogs`. Spec: platform.md "Operation Log". */
export class ProjectOperationLogs {
  readonly #t: Transport;
  /** @internal Use `createClient`. */
  constructor(transport: Transport) {
    this.#t = transport;
  }

  /**
   * A page of the Project's audit rows (owner only). `GET /projects/:id/operation-logs
   * ?limit=&cursor=` → `{ items, next_cursor }`. `metadata` is passed through untouched.
   * @returns `{ items, nextCursor }`.
   * @throws {InboxKitApiError} 400 `invalid_cursor`, 403, 404 `project_not_found`.
   */
  async list(projectId: string, params: ListOperationLogsParams = {}): Promise<CursorPage<OperationLog>> {
    const { opts, rest } = splitOptions(params);
    const body = await this.#t.request<Wire>('GET', path`/projects/${projectId}/operation-logs`, {
      ...opts,
      query: { limit: rest.limit, cursor: rest.cursor },
    });
    return { items: listFromWire<OperationLog>(body['items']), nextCursor: (body['next_cursor'] as string | null | undefined) ?? null };
  }

  /** Every audit row, newest first, across all pages. @throws {InboxKitApiError} as {@link ProjectOperationLogs.list}. */
  listAll(projectId: string, params: ListOperationLogsParams = {}): AsyncGenerator<OperationLog, void, undefined> {
    return paginate((cursor) => this.list(projectId, { ...params, cursor }), params.cursor);
  }
}

/** `client.projects`. Spec: platform.md "Projects, members, sources". */
export class Projects {
  readonly #t: Transport;
  /** Members of a Project. */
  readonly members: ProjectMembers;
  /** The Project Inbox. */
  readonly inbox: ProjectInbox;
  /** Project Events: pages and the live stream. */
  readonly events: ProjectEvents;
  /** The Operation Log (owner only). */
  readonly operationLogs: ProjectOperationLogs;

  /** @internal Use `createClient`. */
  constructor(transport: Transport) {
    this.#t = transport;
    this.members = new ProjectMembers(transport);
    this.inbox = new ProjectInbox(transport);
    this.events = new ProjectEvents(transport);
    this.operationLogs = new ProjectOperationLogs(transport);
  }

  /**
   * Creates a Project owned by the caller (its id generated by the server). `POST /projects` `{ name }` → 201 `{ project }`.
   * @returns the project (`status: 'active'`).
   * @throws {InboxKitApiError} 400 `validation_error`, 409 `conflict` (id taken).
   */
  async create(input: CreateProjectInput, opts: CreateOptions = {}): Promise<Project> {
    const body = await this.#t.request('POST', '/projects', { ...opts, body: toWire(input) });
    return unwrap<Project>(body, 'project');
  }

  /**
   * One page of the Projects the caller owns or is a member of, newest first.
   * `GET /projects?limit=&cursor=` → `{ items, next_cursor }`.
   * @returns `{ items, nextCursor }` (`null` on the last page).
   * @throws {InboxKitApiError} 400 `invalid_cursor`, 401.
   */
  async list(params: PageParams = {}): Promise<CursorPage<Project>> {
    const { opts, rest } = splitOptions(params);
    const body = await this.#t.request<Wire>('GET', '/projects', { ...opts, query: { limit: rest.limit, cursor: rest.cursor } });
    return cursorPage(body, listFromWire<Project>(body['items']));
  }

  /** Every Project the caller owns or is a member of, across all pages. @throws {InboxKitApiError} as {@link Projects.list}. */
  listAll(params: PageParams = {}): AsyncGenerator<Project, void, undefined> {
    return paginate((cursor) => this.list({ ...params, cursor }), params.cursor);
  }

  /**
   * One Project and the caller's role in it. `GET /projects/:id` → `{ project, role }`.
   * @throws {InboxKitApiError} 404 `project_not_found` (missing or not visible; indistinguishable).
   */
  async get(projectId: string, opts: RequestOptions = {}): Promise<{ project: Project; role: ProjectRole }> {
    const body = await this.#t.request<Wire>('GET', path`/projects/${projectId}`, opts);
    return { project: fromWire<Project>(body['project']), role: body['role'] as ProjectRole };
  }

  /**
   * Archives a Project (owner only); reads keep working, writes get 409 `project_archived`.
   * `POST /projects/:id/archive` → `{ project }`.
   * @throws {InboxKitApiError} 403, 404 `project_not_found`.
   */
  async archive(projectId: string, opts: RequestOptions = {}): Promise<Project> {
    const body = await this.#t.request('POST', path`/projects/${projectId}/archive`, opts);
    return unwrap<Project>(body, 'project');
  }
}
