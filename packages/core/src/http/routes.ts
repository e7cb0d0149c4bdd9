/**
 * The route table of inbox-kit's HTTP API (platform.md, project-inbox.md "Endpoints",
 * live-inbox.md "HTTP"): for every route its method, path (`:name` parameters), request schemas
 * (params, query, headers, body), success status and response schema, summary and tags, whether
 * it is public or may be forwarded (attempt routing), and which service call answers it.
 *
 * An adapter iterates {@link HTTP_ROUTES}: it registers each route, validates the request parts
 * with the schemas (400 `validation_error` on failure), authenticates non-public routes
 * ({@link readCredentials} → `PlatformService.authenticate`), calls {@link HttpRoute.handle}
 * and sends the {@link HttpOutcome}: JSON serialised through `response`, no body for 204, the
 * owner's answer relayed unchanged for `forwarded`, or an SSE stream for `stream`. Errors it
 * catches go through {@link envelopeOf}.
 */
import { z } from 'zod';
import type { RequestContext } from '../context.js';
import { InboxKitError } from '../errors.js';
import type { Feed, FeedItem } from '../ports/feed.js';
import type { SessionEvent } from '../records.js';
import {
  createManagedSessionBody, listManagedSessionsQuery, managedSessionEvent, managedSessionEventSchema, managedSessionSchema, updateManagedSessionBody,
} from '../sessions/managed-agents.js';
import type { ManagedSessionsService } from '../sessions/managed-sessions.js';
import { createAgentBody, listAgentsQuery, listAgentVersionsQuery, managedAgentSchema, retrieveAgentQuery, updateAgentBody } from '../sessions/agents.js';
import { rejectUnsupportedEvents } from '../sessions/schemas.js';
import {
  accountSchema, apiKeyKindSchema, apiKeyViewSchema, floorSchema, membershipSchema, operationLogSchema, pageSchema, projectEventSchema, projectInboxItemSchema,
  projectRoleSchema, projectSchema, sessionSchema, workspaceAccountSchema,
} from '../schemas/records.js';
import { createAccountBody, createApiKeyBody, listAccountsQuery, listAdminOperationLogsQuery, listApiKeysQuery, rotateApiKeyBody } from '../platform/admin.js';
import { idString } from '../validation.js';
import { createInboxItemBody, decideInboxItemBody, listInboxItemsQuery } from '../project-inbox/schemas.js';
import { idempotencyKeySchema } from '../idempotency.js';
import type { ProjectInboxService } from '../project-inbox/service.js';
import {
  addMemberBody, addPageBody, commitTurnBody, createProjectRequest, createSessionRequest, listFloorsQuery, listMembersQuery, listOperationLogsQuery,
  listPagesQuery, listProjectEventsQuery, listProjectsQuery, listSessionsQuery, streamProjectEventsQuery,
} from '../platform/schemas.js';
import type { PlatformService } from '../platform/service.js';
import { contentSchema } from '../live-inbox/content.js';
import {
  listSessionEventsQuery, liveInboxContentBody, liveInboxMessageParams, liveInboxOrderBody, sendSessionEventsBody, sessionParams,
  streamSessionEventsQuery, type SessionRuntimeService, type ForwardedReply, type LiveInboxOperation,
} from '../sessions/index.js';
import type { HeaderValue } from './request.js';
import { resumePosition } from '../stream-resume.js';

/**
 * The services the routes call. Without `runtime`, the Session event and Live Inbox routes are not
 * served; without `runtime` and `managedSessions` both, the Session resource (`/v1/sessions`) is not.
 */
export interface HttpServices {
  platform: PlatformService;
  projectInbox: ProjectInboxService;
  /** The Session Runtime: durable Session events (`/v1/sessions/:id/events`) and the Live Inbox (`/v1/awaken/sessions/:id/live-inbox`). */
  runtime?: SessionRuntimeService;
  /** The Session resource of the Managed Agents surface (`POST/GET /v1/sessions`, `GET/POST/DELETE /v1/sessions/:id`, `POST /v1/sessions/:id/archive`). */
  managedSessions?: ManagedSessionsService;
}

/** What an adapter hands a route's `handle`: the validated request parts and the caller. */
export interface HttpCall<P = any, Q = any, B = any, H = any> {
  /**
   * The use-case context of the authenticated caller.
   * @throws InboxKitError `authentication_required` on a request that was not authenticated.
   */
  ctx(): RequestContext;
  params: P;
  query: Q;
  body: B;
  headers: H;
  /** True when another process forwarded this request (it is never forwarded again). */
  forwarded: boolean;
  /** The raw `Last-Event-ID` header (stream routes resume from it when `?after=` is absent). */
  lastEventId: HeaderValue;
}

/** How a route answers. */
export type HttpOutcome =
  /** JSON body (serialised through the route's `response` schema), with extra response headers. */
  | { kind: 'json'; status: number; body: unknown; headers?: Record<string, string> }
  /** No body (204). */
  | { kind: 'empty'; status: number }
  /** The owning process's answer, relayed unchanged (status, `Content-Type`, body). */
  | { kind: 'forwarded'; reply: ForwardedReply }
  /** An SSE stream of `feed` after the position `after` (see `./sse`: resync, authorise before every delivery; `HEAD`: headers only). */
  | { kind: 'stream'; feed: Feed; after: number };

/** One route of the table. */
export interface HttpRoute {
  /** Stable operation id (the OpenAPI `operationId`). */
  operationId: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path with `:name` parameters, e.g. `/projects/:id/inbox/:item_id`. */
  path: string;
  summary: string;
  description?: string;
  tags: string[];
  params?: z.ZodType;
  query?: z.ZodType;
  /** Checks (and documents) the headers named in it; other headers pass through. */
  headers?: z.ZodType;
  body?: z.ZodType;
  /** Success status. */
  status: number;
  /** Success body (a `z.undefined()` for 204; the frame data for `text/event-stream`). */
  response: z.ZodType;
  /** `text/event-stream` route (answers with a `stream` outcome). */
  stream?: boolean;
  /** No authentication. */
  public?: boolean;
  /** Another process may forward it here (attempt routing, with the internal credential). */
  forwardable?: boolean;
  /** Served only when `services.runtime` is given. */
  requiresRuntime?: boolean;
  /** Served only when `services.managedSessions` (and `services.runtime`) are given. */
  requiresManagedSessions?: boolean;
  /**
   * Checked on the raw body before `body` validates it (e.g. input types this runtime does not
   * host get their own error, not a schema error). Throws `InboxKitError`.
   */
  precheckBody?: (body: unknown) => void;
  /** Calls the service. Throws `InboxKitError` for every expected failure. */
  handle(services: HttpServices, call: HttpCall): Promise<HttpOutcome>;
}

// — response bodies —
/** A keyset page of a list route (platform.md "Lists and pages"): `{ items, next_cursor }`. */
const list = <T extends z.ZodType>(item: T, what: string) => z
  .object({ items: z.array(item).describe(what), next_cursor: z.string().nullable().describe('Pass as `cursor` (other parameters unchanged) for the next page; null on the last page') })
  .describe(`A page: ${what}`);
const noContent = z.undefined().describe('No content');
const idParams = z.object({ id: idString });
const floorParams = z.object({ id: idString, floor_id: idString });
const itemParams = z.object({ id: idString, item_id: idString });
// Other headers pass through untouched (the schema only documents and checks this one).
const createItemHeaders = z.looseObject({ 'idempotency-key': idempotencyKeySchema.optional() });

/** `GET /health` body. */
export const healthResponse = z.object({ status: z.literal('ok') });
/** `GET /ready` body (when ready; otherwise 503 `storage_unavailable` in the envelope, the reason in `details[0].code`). */
export const readyResponse = z.object({ status: z.literal('ready') }).describe('Storage is reachable and migrated');
/** `POST /admin/accounts`, `POST /admin/accounts/:id/disable` body. */
export const adminAccountResponse = z.object({ account: workspaceAccountSchema }).describe('The account');
/** `POST /admin/accounts/:id/keys` body. */
export const issuedApiKeyResponse = z
  .object({ key: apiKeyViewSchema, secret: z.string().describe('The secret (`ik_…`): shown only in this answer; send it as `Authorization: Bearer <secret>`') })
  .describe('The new key and its secret');
/** `POST /admin/keys/:id/rotate` body. */
export const rotatedApiKeyResponse = issuedApiKeyResponse
  .extend({ previous: apiKeyViewSchema.describe('The rotated key: refused from its `revoked_at` (now, or after the grace period)') })
  .describe('The new key, its secret, and the key it replaces');
/** `GET /admin/operation-logs` body. */
export const adminOperationLogPageResponse = z
  .object({ items: z.array(operationLogSchema), next_cursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last page') })
  .describe('A page of the administration writes (Operation Log rows without a project), newest first');
/** `GET /me` body. */
export const meResponse = z.object({ account: accountSchema, workspace_id: z.string(), key_kind: apiKeyKindSchema }).describe('The caller');
const projectResponse = (what: string) => z.object({ project: projectSchema }).describe(what);
/** `GET /projects/:id` body. */
export const projectWithRoleResponse = z.object({ project: projectSchema, role: projectRoleSchema }).describe("The project and the caller's role in it");
const memberResponse = z.object({ member: membershipSchema }).describe('The membership');
/** `GET /projects/:id/events` body. */
export const projectEventPageResponse = z
  .object({
    items: z.array(projectEventSchema).describe('Events the caller may see, ascending by sequence'),
    next_after: z.number().int().describe('The last sequence examined; pass it as `after` for the next page'),
    has_more: z.boolean(),
  })
  .describe('A page of Project Events');
const RESUME_AND_ACCESS = 'Resume after the later of `?after=` and the `Last-Event-ID` header (a malformed header → 400 `validation_error`); a position after the newest event gets first one '
  + '`event: resync` frame (`id: <latest>`, `data: {"type":"resync","reason":"ahead_of_latest","requested_after":n,"latest":n}`), then the stream goes on after `latest`. '
  + 'Every delivery is authorised as of now: a caller that lost access (removed, key revoked) has the stream ended. `HEAD` answers with the headers only.';
const projectEventFrame = projectEventSchema.describe(
  'A `text/event-stream`: a `retry:` hint, then one frame per event (`id: <sequence>`, `event: <type>`, `data: <this ProjectEvent as JSON>`) '
  + 'and `: heartbeat` comment lines. ' + RESUME_AND_ACCESS,
);
/** `GET /projects/:id/operation-logs` body. */
export const operationLogPageResponse = z
  .object({ items: z.array(operationLogSchema), next_cursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last page') })
  .describe('A page of the Operation Log, newest first');
const sessionResponse = (what: string) => z.object({ session: sessionSchema }).describe(what);
const committedTurn = z.object({ floor: floorSchema, page: pageSchema }).describe('The new Floor and its first Page');
const pageResponse = z.object({ page: pageSchema }).describe('The new Page');
const itemResponse = (what: string) => z.object({ item: projectInboxItemSchema }).describe(what);
/** `GET /projects/:id/inbox` body. */
export const inboxItemPageResponse = z
  .object({
    items: z.array(projectInboxItemSchema).describe('Newest first (`created_at DESC, id DESC`); a deriver sees only the items it sent'),
    next_cursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last page'),
  })
  .describe('A page of inbox items');
/** `POST /v1/sessions/:session_id/events` body. */
export const sessionEventsSentResponse = z
  .object({ data: z.array(managedSessionEventSchema).describe('The committed events sent, in order') })
  .describe('The committed events');
/** `GET /v1/sessions/:session_id/events` body. */
export const sessionEventPageResponse = z
  .object({
    data: z.array(managedSessionEventSchema).describe('Committed events, by seq in the order asked for'),
    next_page: z.string().nullable().describe('Pass as `page` (other parameters unchanged) for the next page; null on the last page'),
    has_more: z.boolean(),
  })
  .describe('A page of committed Session history');
const sessionEventFrame = managedSessionEventSchema.describe(
  'A `text/event-stream`: a `retry:` hint, then one frame per committed event (`id: <seq>`, `event: <type>`, `data: <this event as JSON>`) '
  + 'and `: heartbeat` comment lines. Stored events first, then live ones. ' + RESUME_AND_ACCESS.replace('(removed, key revoked)', '(removed, key revoked, Session deleted)'),
);

/**
 * The Session feed with each item's data in the Managed Agents wire shape; `latest`, `authorize`
 * and `visible` are the feed's own (given the stored items the wire items were made from).
 */
export function wireSessionFeed(feed: Feed<SessionEvent>): Feed {
  const stored = new WeakMap<FeedItem, FeedItem<SessionEvent>>();
  const wire = (item: FeedItem<SessionEvent>): FeedItem => {
    const out = { id: item.id, type: item.type, data: managedSessionEvent(item.data) };
    stored.set(out, item);
    return out;
  };
  const original = (item: FeedItem): FeedItem<SessionEvent> => stored.get(item) ?? (item as FeedItem<SessionEvent>);
  return {
    replay: async (after, limit) => (await feed.replay(after, limit)).map(wire),
    latest: () => feed.latest(),
    subscribe: (push) => feed.subscribe((item) => push(wire(item))),
    authorize: (next) => feed.authorize(next.map(original)),
    visible: (item) => feed.visible(original(item)),
  };
}
/** `GET /v1/awaken/sessions/:session_id/live-inbox` body. */
export const liveInboxSnapshotResponse = z
  .object({
    active: z.boolean().describe('Whether a native attempt accepts live input now'),
    version: z.number().int().describe('Edit counter of the queue (0 when inactive)'),
    messages: z.array(z.object({ id: z.number().int().describe('Queue-local id, never reused'), content: contentSchema })).describe('Queue order'),
  })
  .describe('The editable window');
const queuedResponse = z.object({ id: z.number().int().describe('Queue-local id of the new message') }).describe('The queued message');

const CREATE_ITEM_DESCRIPTION = [
  'Writes the item, one Operation Log row and one Project Event in one transaction, then publishes the event.',
  '',
  '**Safe retries.** Send `Idempotency-Key` (1–255 printable ASCII characters; per workspace and acting account) to make a',
  'repeat safe: a request with a key already used for the same project and the same body (compared after',
  'normalisation) answers `201` with the item that first request created, as it is now, and the header',
  '`Idempotent-Replayed: true`; nothing is written or published again. The same key with another body or',
  'project answers `409 idempotency_key_reused`. A request that fails records nothing, so a corrected retry',
  'may reuse its key. Concurrent requests with one key create one item.',
].join('\n');

const json = (status: number, body: unknown, headers?: Record<string, string>): HttpOutcome => (headers ? { kind: 'json', status, body, headers } : { kind: 'json', status, body });
const empty: HttpOutcome = { kind: 'empty', status: 204 };
const runtimeOf = (services: HttpServices): SessionRuntimeService => {
  if (services.runtime === undefined) throw new InboxKitError('not_found', 'The Session Runtime is not served here');
  return services.runtime;
};
const managedSessionsOf = (services: HttpServices): ManagedSessionsService => {
  if (services.managedSessions === undefined) throw new InboxKitError('not_found', 'The Session resource is not served here');
  return services.managedSessions;
};
/** `GET /v1/sessions` body. */
export const managedSessionPageResponse = z
  .object({
    data: z.array(managedSessionSchema),
    next_page: z.string().nullable().describe('Pass as `page` (other parameters unchanged) for the next page; null on the last page'),
    prev_page: z.null(),
  })
  .describe('A page of Sessions');
/** `GET /v1/agents` (and `…/versions`) body. */
export const managedAgentPageResponse = z
  .object({
    data: z.array(managedAgentSchema),
    next_page: z.string().nullable().describe('Pass as `page` (other parameters unchanged) for the next page; null on the last page'),
  })
  .describe('A page of agents');
const agentParams = z.object({ agent_id: z.string().min(1).max(128) });
/** `DELETE /v1/sessions/:session_id` body. */
export const deletedSessionResponse = z.object({ id: z.string(), type: z.literal('session_deleted') }).describe('The deleted Session');
const managedSessionResponse = (what: string) => managedSessionSchema.describe(what);

/**
 * A Live Inbox (or durable input) operation: answered here by `local`, or — when another process
 * owns the Session's attempt — forwarded there, after the local visibility and permission checks.
 */
async function routed(services: HttpServices, call: HttpCall, operation: LiveInboxOperation, local: (ctx: RequestContext) => Promise<HttpOutcome>): Promise<HttpOutcome> {
  const runtime = runtimeOf(services);
  const ctx = call.ctx();
  const route = await runtime.routeLiveInbox(ctx, call.params.session_id, operation, { forwarded: call.forwarded });
  return route.route === 'forwarded' ? { kind: 'forwarded', reply: route.reply } : local(ctx);
}

const liveInboxBase = '/v1/awaken/sessions/:session_id/live-inbox';

/** Every route, in registration order. */
export const HTTP_ROUTES: readonly HttpRoute[] = [
  {
    operationId: 'health', method: 'GET', path: '/health', public: true, tags: ['meta'], summary: 'Liveness: 200 once the server serves',
    status: 200, response: healthResponse, handle: async () => json(200, { status: 'ok' }),
  },
  {
    operationId: 'ready', method: 'GET', path: '/ready', public: true, tags: ['meta'],
    summary: 'Readiness: 200 while storage is reachable and migrated, else 503 storage_unavailable (reason in details[0].code)',
    description: 'For load balancers and orchestrators: `/health` says the process serves (liveness); this says it can answer requests that need storage. '
      + 'Not ready: 503 `storage_unavailable` with `Retry-After`, `details[0].code` `unreachable` (the database does not answer within 2 s) or `not_migrated` (run the migrations).',
    status: 200, response: readyResponse,
    handle: async (s) => {
      const readiness = await s.platform.readiness();
      if (!readiness.ready) {
        throw new InboxKitError('storage_unavailable', readiness.message, [{ path: 'storage', message: readiness.message, code: readiness.reason }]);
      }
      return json(200, { status: 'ready' });
    },
  },
  // — identity —
  {
    operationId: 'getMe', method: 'GET', path: '/me', tags: ['identity'], summary: 'The calling account', status: 200, response: meResponse,
    handle: async (s, c) => json(200, await s.platform.whoami(c.ctx())),
  },
  // — projects —
  {
    operationId: 'createProject', method: 'POST', path: '/projects', tags: ['projects'], summary: 'Create a project owned by the caller (its id is generated)',
    body: createProjectRequest, status: 201, response: projectResponse('The new project'),
    handle: async (s, c) => json(201, { project: await s.platform.createProject(c.ctx(), c.body) }),
  },
  {
    operationId: 'listProjects', method: 'GET', path: '/projects', tags: ['projects'], summary: 'Projects the caller owns or is a member of',
    query: listProjectsQuery, status: 200, response: list(projectSchema, 'Projects, newest first'),
    handle: async (s, c) => json(200, await s.platform.listProjects(c.ctx(), c.query)),
  },
  {
    operationId: 'getProject', method: 'GET', path: '/projects/:id', tags: ['projects'], summary: 'A project and the caller\'s role', params: idParams,
    status: 200, response: projectWithRoleResponse, handle: async (s, c) => json(200, await s.platform.getProject(c.ctx(), c.params.id)),
  },
  {
    operationId: 'archiveProject', method: 'POST', path: '/projects/:id/archive', tags: ['projects'], summary: 'Archive a project (owner only)', params: idParams,
    status: 200, response: projectResponse('The archived project'),
    handle: async (s, c) => json(200, { project: await s.platform.archiveProject(c.ctx(), c.params.id) }),
  },
  // — members —
  {
    operationId: 'addMember', method: 'POST', path: '/projects/:id/members', tags: ['members'], summary: 'Add a member or change its role (owner only)',
    params: idParams, body: addMemberBody, status: 201, response: memberResponse,
    handle: async (s, c) => json(201, { member: await s.platform.addMember(c.ctx(), c.params.id, c.body) }),
  },
  {
    operationId: 'listMembers', method: 'GET', path: '/projects/:id/members', tags: ['members'], summary: 'List members', params: idParams,
    query: listMembersQuery, status: 200, response: list(membershipSchema, 'The members, oldest first'),
    handle: async (s, c) => json(200, await s.platform.listMembers(c.ctx(), c.params.id, c.query)),
  },
  {
    operationId: 'removeMember', method: 'DELETE', path: '/projects/:id/members/:account_id', tags: ['members'], summary: 'Remove a member (owner only)',
    params: z.object({ id: idString, account_id: idString }), status: 204, response: noContent,
    handle: async (s, c) => {
      await s.platform.removeMember(c.ctx(), c.params.id, c.params.account_id);
      return empty;
    },
  },
  // — events and logs —
  {
    operationId: 'listProjectEvents', method: 'GET', path: '/projects/:id/events', tags: ['events'], summary: 'Project Events after a sequence, ascending',
    params: idParams, query: listProjectEventsQuery, status: 200, response: projectEventPageResponse,
    handle: async (s, c) => json(200, await s.platform.listProjectEvents(c.ctx(), c.params.id, c.query)),
  },
  {
    operationId: 'streamProjectEvents', method: 'GET', path: '/projects/:id/events/stream', tags: ['events'],
    summary: 'Live stream of Project Events (SSE); resume with ?after= or Last-Event-ID', params: idParams, query: streamProjectEventsQuery,
    status: 200, response: projectEventFrame, stream: true,
    handle: async (s, c) => {
      // The position is read first: a malformed Last-Event-ID is 400 whatever the access.
      const after = resumePosition(c.query.after, c.lastEventId);
      return { kind: 'stream', feed: await s.platform.projectEventFeed(c.ctx(), c.params.id, c.query), after };
    },
  },
  {
    operationId: 'listOperationLogs', method: 'GET', path: '/projects/:id/operation-logs', tags: ['events'], summary: 'Operation Log, newest first (owner only)',
    params: idParams, query: listOperationLogsQuery, status: 200, response: operationLogPageResponse,
    handle: async (s, c) => json(200, await s.platform.listOperationLogs(c.ctx(), c.params.id, c.query)),
  },
  // — sessions, floors, pages —
  {
    operationId: 'createSession', method: 'POST', path: '/sessions', tags: ['sessions'], summary: 'Create a session (its id is generated)',
    body: createSessionRequest, status: 201, response: sessionResponse('The new session'),
    handle: async (s, c) => json(201, { session: await s.platform.createSession(c.ctx(), c.body) }),
  },
  {
    operationId: 'listSessions', method: 'GET', path: '/sessions', tags: ['sessions'], summary: 'Sessions the caller may see', query: listSessionsQuery,
    status: 200, response: list(sessionSchema, 'Sessions, newest first'),
    handle: async (s, c) => json(200, await s.platform.listSessions(c.ctx(), c.query)),
  },
  {
    operationId: 'getSession', method: 'GET', path: '/sessions/:id', tags: ['sessions'], summary: 'One session', params: idParams,
    status: 200, response: sessionResponse('The session'),
    handle: async (s, c) => json(200, { session: await s.platform.getSession(c.ctx(), c.params.id) }),
  },
  {
    operationId: 'listFloors', method: 'GET', path: '/sessions/:id/floors', tags: ['sessions'], summary: 'Floors (committed turns) of a session', params: idParams,
    query: listFloorsQuery, status: 200, response: list(floorSchema, 'Floors, ascending by (number, branch, id)'),
    handle: async (s, c) => json(200, await s.platform.listFloors(c.ctx(), c.params.id, c.query)),
  },
  {
    operationId: 'commitTurn', method: 'POST', path: '/sessions/:id/floors', tags: ['sessions'], summary: 'Commit a turn: a new Floor and its first Page',
    params: idParams, body: commitTurnBody, status: 201, response: committedTurn,
    handle: async (s, c) => json(201, await s.platform.commitTurn(c.ctx(), c.params.id, c.body)),
  },
  {
    operationId: 'listPages', method: 'GET', path: '/sessions/:id/floors/:floor_id/pages', tags: ['sessions'], summary: 'Pages (versions) of a floor',
    params: floorParams, query: listPagesQuery, status: 200, response: list(pageSchema, 'Pages, ascending by version'),
    handle: async (s, c) => json(200, await s.platform.listPages(c.ctx(), c.params.id, c.params.floor_id, c.query)),
  },
  {
    operationId: 'addPage', method: 'POST', path: '/sessions/:id/floors/:floor_id/pages', tags: ['sessions'], summary: 'Add a Page (regeneration) to a floor',
    params: floorParams, body: addPageBody, status: 201, response: pageResponse,
    handle: async (s, c) => json(201, { page: await s.platform.addPage(c.ctx(), c.params.id, c.params.floor_id, c.body) }),
  },
  // — Project Inbox —
  {
    operationId: 'createInboxItem', method: 'POST', path: '/projects/:id/inbox', tags: ['project-inbox'], summary: 'File an inbox item (owner or deriver)',
    description: CREATE_ITEM_DESCRIPTION, params: idParams, headers: createItemHeaders, body: createInboxItemBody, status: 201,
    response: itemResponse('The new item (`status: pending`), or on a replay the item the key created (with `Idempotent-Replayed: true`)'),
    handle: async (s, c) => {
      const key = c.headers['idempotency-key'] as string | undefined;
      const { item, replayed } = await s.projectInbox.createWithOutcome(c.ctx(), c.params.id, c.body, key === undefined ? {} : { idempotency_key: key });
      return json(201, { item }, replayed ? { 'idempotent-replayed': 'true' } : undefined);
    },
  },
  {
    operationId: 'listInboxItems', method: 'GET', path: '/projects/:id/inbox', tags: ['project-inbox'], summary: 'List inbox items, newest first',
    params: idParams, query: listInboxItemsQuery, status: 200, response: inboxItemPageResponse,
    handle: async (s, c) => json(200, await s.projectInbox.list(c.ctx(), c.params.id, c.query)),
  },
  {
    operationId: 'getInboxItem', method: 'GET', path: '/projects/:id/inbox/:item_id', tags: ['project-inbox'], summary: 'Get one inbox item',
    params: itemParams, status: 200, response: itemResponse('The item'),
    handle: async (s, c) => json(200, { item: await s.projectInbox.get(c.ctx(), c.params.id, c.params.item_id) }),
  },
  {
    operationId: 'decideInboxItem', method: 'PATCH', path: '/projects/:id/inbox/:item_id', tags: ['project-inbox'], summary: 'Decide an inbox item (owner only)',
    params: itemParams, body: decideInboxItemBody, status: 200, response: itemResponse('The decided item'),
    handle: async (s, c) => json(200, { item: await s.projectInbox.decide(c.ctx(), c.params.id, c.params.item_id, c.body) }),
  },
  // — workspace administration (an API key of kind `admin`) —
  {
    operationId: 'adminCreateAccount', method: 'POST', path: '/admin/accounts', tags: ['admin'], summary: 'Create an account in the workspace',
    body: createAccountBody, status: 201, response: adminAccountResponse,
    handle: async (s, c) => json(201, { account: await s.platform.admin.createAccount(c.ctx(), c.body) }),
  },
  {
    operationId: 'adminListAccounts', method: 'GET', path: '/admin/accounts', tags: ['admin'], summary: 'Accounts of the workspace, disabled ones included, newest first',
    query: listAccountsQuery, status: 200, response: list(workspaceAccountSchema, 'The accounts'),
    handle: async (s, c) => json(200, await s.platform.admin.listAccounts(c.ctx(), c.query)),
  },
  {
    operationId: 'adminDisableAccount', method: 'POST', path: '/admin/accounts/:id/disable', tags: ['admin'],
    summary: 'Disable an account in the workspace: it is no member any more and its keys are revoked', params: idParams, status: 200, response: adminAccountResponse,
    handle: async (s, c) => json(200, { account: await s.platform.admin.disableAccount(c.ctx(), c.params.id) }),
  },
  {
    operationId: 'adminCreateApiKey', method: 'POST', path: '/admin/accounts/:id/keys', tags: ['admin'],
    summary: 'Issue an API key for an account (kind standard unless given); the secret is in this answer only', params: idParams, body: createApiKeyBody,
    status: 201, response: issuedApiKeyResponse,
    handle: async (s, c) => json(201, await s.platform.admin.createKey(c.ctx(), c.params.id, c.body)),
  },
  {
    operationId: 'adminListApiKeys', method: 'GET', path: '/admin/keys', tags: ['admin'], summary: 'API keys of the workspace (never a secret), newest first',
    query: listApiKeysQuery, status: 200, response: list(apiKeyViewSchema, 'The keys'),
    handle: async (s, c) => json(200, await s.platform.admin.listKeys(c.ctx(), c.query)),
  },
  {
    operationId: 'adminRotateApiKey', method: 'POST', path: '/admin/keys/:id/rotate', tags: ['admin'],
    summary: 'Rotate an API key: a new secret; the old one works for grace_ms more (default 0)', params: idParams, body: rotateApiKeyBody,
    status: 200, response: rotatedApiKeyResponse,
    handle: async (s, c) => json(200, await s.platform.admin.rotateKey(c.ctx(), c.params.id, c.body)),
  },
  {
    operationId: 'adminRevokeApiKey', method: 'DELETE', path: '/admin/keys/:id', tags: ['admin'],
    summary: 'Revoke an API key: it answers 401 from now on (other processes: within 1 s)', params: idParams, status: 204, response: noContent,
    handle: async (s, c) => {
      await s.platform.admin.revokeKey(c.ctx(), c.params.id);
      return empty;
    },
  },
  {
    operationId: 'adminListOperationLogs', method: 'GET', path: '/admin/operation-logs', tags: ['admin'],
    summary: 'The administration writes (Operation Log rows without a project), newest first', query: listAdminOperationLogsQuery,
    status: 200, response: adminOperationLogPageResponse,
    handle: async (s, c) => json(200, await s.platform.admin.listOperationLogs(c.ctx(), c.query)),
  },
  // — the Session resource (Managed Agents wire shape: what `client.beta.sessions.*` of `@anthropic-ai/sdk` calls) —
  {
    operationId: 'createManagedSession', method: 'POST', path: '/v1/sessions', tags: ['managed-sessions'], requiresManagedSessions: true,
    summary: 'Create a Session with a configured agent (sessions.create)', body: createManagedSessionBody, status: 200, response: managedSessionResponse('The new Session'),
    handle: async (s, c) => json(200, await managedSessionsOf(s).create(c.ctx(), c.body)),
  },
  {
    operationId: 'listManagedSessions', method: 'GET', path: '/v1/sessions', tags: ['managed-sessions'], requiresManagedSessions: true,
    summary: 'Sessions the caller may read, by created_at (sessions.list)', query: listManagedSessionsQuery, status: 200, response: managedSessionPageResponse,
    handle: async (s, c) => json(200, await managedSessionsOf(s).list(c.ctx(), c.query)),
  },
  {
    operationId: 'retrieveManagedSession', method: 'GET', path: '/v1/sessions/:session_id', tags: ['managed-sessions'], requiresManagedSessions: true,
    summary: 'One Session (sessions.retrieve)', params: sessionParams, status: 200, response: managedSessionResponse('The Session'),
    handle: async (s, c) => json(200, await managedSessionsOf(s).retrieve(c.ctx(), c.params.session_id)),
  },
  {
    operationId: 'updateManagedSession', method: 'POST', path: '/v1/sessions/:session_id', tags: ['managed-sessions'], requiresManagedSessions: true,
    summary: 'Update title and metadata (sessions.update)', params: sessionParams, body: updateManagedSessionBody, status: 200, response: managedSessionResponse('The updated Session'),
    handle: async (s, c) => json(200, await managedSessionsOf(s).update(c.ctx(), c.params.session_id, c.body)),
  },
  {
    operationId: 'archiveManagedSession', method: 'POST', path: '/v1/sessions/:session_id/archive', tags: ['managed-sessions'], requiresManagedSessions: true,
    summary: 'Archive a Session: it takes no new user.message (sessions.archive)', params: sessionParams, status: 200, response: managedSessionResponse('The archived Session'),
    handle: async (s, c) => json(200, await managedSessionsOf(s).archive(c.ctx(), c.params.session_id)),
  },
  {
    operationId: 'deleteManagedSession', method: 'DELETE', path: '/v1/sessions/:session_id', tags: ['managed-sessions'], requiresManagedSessions: true,
    summary: 'Delete an idle Session (sessions.delete)', params: sessionParams, status: 200, response: deletedSessionResponse,
    handle: async (s, c) => json(200, await managedSessionsOf(s).delete(c.ctx(), c.params.session_id)),
  },
  // — agents (Managed Agents wire shape: what `client.beta.agents.*` of `@anthropic-ai/sdk` calls) —
  {
    operationId: 'createAgent', method: 'POST', path: '/v1/agents', tags: ['agents'], requiresManagedSessions: true,
    summary: 'Create an agent with custom tools (agents.create)', body: createAgentBody, status: 200, response: managedAgentSchema.describe('The new agent (version 1)'),
    handle: async (s, c) => json(200, await managedSessionsOf(s).agents.create(c.ctx(), c.body)),
  },
  {
    operationId: 'listAgents', method: 'GET', path: '/v1/agents', tags: ['agents'], requiresManagedSessions: true,
    summary: 'Agents of the workspace and of the deployment, by created_at (agents.list)', query: listAgentsQuery, status: 200, response: managedAgentPageResponse,
    handle: async (s, c) => json(200, await managedSessionsOf(s).agents.list(c.ctx(), c.query)),
  },
  {
    operationId: 'retrieveAgent', method: 'GET', path: '/v1/agents/:agent_id', tags: ['agents'], requiresManagedSessions: true,
    summary: 'One agent, at its current version or ?version= (agents.retrieve)', params: agentParams, query: retrieveAgentQuery, status: 200,
    response: managedAgentSchema.describe('The agent'),
    handle: async (s, c) => json(200, await managedSessionsOf(s).agents.retrieve(c.ctx(), c.params.agent_id, c.query)),
  },
  {
    operationId: 'updateAgent', method: 'POST', path: '/v1/agents/:agent_id', tags: ['agents'], requiresManagedSessions: true,
    summary: 'Update an agent: a new version (agents.update)', params: agentParams, body: updateAgentBody, status: 200,
    response: managedAgentSchema.describe('The agent at its new version (unchanged when nothing changed)'),
    handle: async (s, c) => json(200, await managedSessionsOf(s).agents.update(c.ctx(), c.params.agent_id, c.body)),
  },
  {
    operationId: 'archiveAgent', method: 'POST', path: '/v1/agents/:agent_id/archive', tags: ['agents'], requiresManagedSessions: true,
    summary: 'Archive an agent: it starts no new Session (agents.archive)', params: agentParams, status: 200, response: managedAgentSchema.describe('The archived agent'),
    handle: async (s, c) => json(200, await managedSessionsOf(s).agents.archive(c.ctx(), c.params.agent_id)),
  },
  {
    operationId: 'listAgentVersions', method: 'GET', path: '/v1/agents/:agent_id/versions', tags: ['agents'], requiresManagedSessions: true,
    summary: 'Versions of an agent, newest first (agents.versions.list)', params: agentParams, query: listAgentVersionsQuery, status: 200,
    response: managedAgentPageResponse,
    handle: async (s, c) => json(200, await managedSessionsOf(s).agents.listVersions(c.ctx(), c.params.agent_id, c.query)),
  },
  // — durable Session events (Managed Agents wire shape) —
  {
    // Input with a `user.interrupt` is forwarded to the process running the Session's Run, if another one does.
    operationId: 'sendSessionEvents', method: 'POST', path: '/v1/sessions/:session_id/events', tags: ['session-events'], requiresRuntime: true, forwardable: true,
    summary: 'Send durable input: user.message (starts a Run when idle), user.interrupt, user.custom_tool_result, user.tool_confirmation', params: sessionParams, body: sendSessionEventsBody,
    precheckBody: rejectUnsupportedEvents, status: 200, response: sessionEventsSentResponse,
    handle: (s, c) => routed(s, c, { type: 'send_events', body: c.body }, async (ctx) => {
      const { data } = await runtimeOf(s).sendEvents(ctx, c.params.session_id, c.body);
      return json(200, { data: data.map(managedSessionEvent) });
    }),
  },
  {
    operationId: 'listSessionEvents', method: 'GET', path: '/v1/sessions/:session_id/events', tags: ['session-events'], requiresRuntime: true,
    summary: 'Committed Session history: cursor pages, order, types[] and created_at filters (events.list)', params: sessionParams, query: listSessionEventsQuery,
    status: 200, response: sessionEventPageResponse,
    handle: async (s, c) => {
      const page = await runtimeOf(s).listEvents(c.ctx(), c.params.session_id, c.query);
      return json(200, { ...page, data: page.data.map(managedSessionEvent) });
    },
  },
  {
    operationId: 'streamSessionEvents', method: 'GET', path: '/v1/sessions/:session_id/events/stream', tags: ['session-events'], requiresRuntime: true,
    summary: 'Committed Session history as SSE: stored events, then live', params: sessionParams, query: streamSessionEventsQuery,
    status: 200, response: sessionEventFrame, stream: true,
    handle: async (s, c) => {
      const after = resumePosition(c.query.after, c.lastEventId);
      return { kind: 'stream', feed: wireSessionFeed(await runtimeOf(s).eventFeed(c.ctx(), c.params.session_id)), after };
    },
  },
  // — Live Inbox —
  {
    operationId: 'getLiveInbox', method: 'GET', path: liveInboxBase, tags: ['live-inbox'], requiresRuntime: true, forwardable: true,
    summary: 'Read the editable window of the active native attempt', params: sessionParams, status: 200, response: liveInboxSnapshotResponse,
    handle: (s, c) => routed(s, c, { type: 'snapshot' }, async (ctx) => json(200, await runtimeOf(s).liveInboxSnapshot(ctx, c.params.session_id))),
  },
  {
    operationId: 'queueLiveInboxMessage', method: 'POST', path: liveInboxBase, tags: ['live-inbox'], requiresRuntime: true, forwardable: true,
    summary: 'Queue content for the active native attempt (owner only)', params: sessionParams, body: liveInboxContentBody, status: 200, response: queuedResponse,
    handle: (s, c) => routed(s, c, { type: 'queue', body: c.body }, async (ctx) => json(200, await runtimeOf(s).liveInboxQueue(ctx, c.params.session_id, c.body))),
  },
  {
    // `/order` is a static segment, so it always wins over `/:message_id`.
    operationId: 'reorderLiveInbox', method: 'PUT', path: `${liveInboxBase}/order`, tags: ['live-inbox'], requiresRuntime: true, forwardable: true,
    summary: 'Reorder the queue: every current id exactly once', params: sessionParams, body: liveInboxOrderBody, status: 204, response: noContent,
    handle: (s, c) => routed(s, c, { type: 'reorder', body: c.body }, async (ctx) => {
      await runtimeOf(s).liveInboxReorder(ctx, c.params.session_id, c.body);
      return empty;
    }),
  },
  {
    operationId: 'replaceLiveInboxMessage', method: 'PUT', path: `${liveInboxBase}/:message_id`, tags: ['live-inbox'], requiresRuntime: true, forwardable: true,
    summary: 'Replace a queued message, keeping its id and position', params: liveInboxMessageParams, body: liveInboxContentBody, status: 204, response: noContent,
    handle: (s, c) => routed(s, c, { type: 'replace', message_id: c.params.message_id, body: c.body }, async (ctx) => {
      await runtimeOf(s).liveInboxReplace(ctx, c.params.session_id, c.params.message_id, c.body);
      return empty;
    }),
  },
  {
    operationId: 'withdrawLiveInboxMessage', method: 'DELETE', path: `${liveInboxBase}/:message_id`, tags: ['live-inbox'], requiresRuntime: true, forwardable: true,
    summary: 'Withdraw a queued message', params: liveInboxMessageParams, status: 204, response: noContent,
    handle: (s, c) => routed(s, c, { type: 'withdraw', message_id: c.params.message_id }, async (ctx) => {
      await runtimeOf(s).liveInboxWithdraw(ctx, c.params.session_id, c.params.message_id);
      return empty;
    }),
  },
];

/**
 * The routes served for `services`: all of them, minus the runtime routes when `services.runtime`
 * is absent and the Session resource when `services.managedSessions` (or `runtime`) is.
 */
export function httpRoutesFor(services: HttpServices): HttpRoute[] {
  const runtime = services.runtime !== undefined;
  const managed = runtime && services.managedSessions !== undefined;
  return HTTP_ROUTES.filter((r) => (!r.requiresRuntime || runtime) && (!r.requiresManagedSessions || managed));
}
