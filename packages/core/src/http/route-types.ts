/**
 * The shapes of the route table (platform.md "HTTP contract"): a {@link RouteDeclaration} is data
 * only — method, path, schemas, success status, flags, links and the error codes the route can
 * answer — and an {@link HttpRoute} is a declaration joined with its binding ({@link HttpRoute.handle},
 * the service call), what adapters iterate. The error codes every route (or every route of a kind)
 * can answer are declared once here: {@link declaredErrorCodes} is a route's full set.
 */
import type { z } from 'zod';
import type { RequestContext } from '../context.js';
import type { ErrorCode } from '../errors.js';
import type { Feed } from '../ports/feed.js';
import type { ProjectInboxService } from '../project-inbox/service.js';
import type { PlatformService } from '../platform/service.js';
import type { ManagedSessionsService } from '../sessions/managed-sessions.js';
import type { ForwardedReply, SessionRuntimeService } from '../sessions/index.js';
import type { HeaderValue } from './request.js';

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
  /**
   * JSON body (serialised through the route's `response` schema), with extra response headers;
   * or, with `text`, the body's JSON text as the service already holds it (sent as it is; `body`
   * is then not read, and response validation parses `text`).
   */
  | { kind: 'json'; status: number; body: unknown; text?: string; headers?: Record<string, string> }
  /** No body (204). */
  | { kind: 'empty'; status: number }
  /** The owning process's answer, relayed unchanged (status, `Content-Type`, body). */
  | { kind: 'forwarded'; reply: ForwardedReply }
  /**
   * An SSE stream of `feed` after the position `after` (see `./sse`: resync, authorise before every
   * delivery; `HEAD`: headers only); `lastEventId` is the request's `Last-Event-ID` (a stale `after`
   * past the newest event resumes from it: `resumeStart`). Adapters pass both to `runEventStream`.
   */
  | { kind: 'stream'; feed: Feed; after: number; lastEventId?: number };

/** One route, as data: what it accepts, answers and may fail with. */
export interface RouteDeclaration {
  /** Stable operation id (the OpenAPI `operationId`; the key of the route's binding). */
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
  /**
   * The error codes of this route's own failures (its service calls'), besides the shared ones
   * ({@link declaredErrorCodes} adds those by the route's flags). OpenAPI lists exactly these; a
   * test proves every code the route answers is declared.
   */
  errors: readonly ErrorCode[];
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
  /**
   * OpenAPI `links` of the success response: operations its answer leads to (a created item →
   * get it, decide it), with their parameters as runtime expressions (`$response.body#/item/id`).
   */
  links?: Record<string, { operationId: string; parameters: Record<string, string>; description?: string }>;
}

/** The service call behind a route. Throws `InboxKitError` for every expected failure. */
export type RouteHandler = (services: HttpServices, call: HttpCall) => Promise<HttpOutcome>;

/** One route of the table: its declaration and its binding to the services. */
export interface HttpRoute extends RouteDeclaration {
  /** Calls the service. Throws `InboxKitError` for every expected failure (one of {@link declaredErrorCodes}). */
  handle: RouteHandler;
}

/**
 * Codes every route can answer, whatever it does: a malformed request part or path
 * (`validation_error`), oversized headers, the edge's rate limit, a failure of the server
 * (`internal_error`), load shedding (`overloaded`) and storage that is locked or unreachable.
 */
export const GENERIC_ERROR_CODES = [
  'validation_error', 'request_header_too_large', 'rate_limited', 'internal_error', 'overloaded', 'storage_busy', 'storage_unavailable',
] as const satisfies readonly ErrorCode[];

/**
 * Codes of authentication, answered by every route that is not `public`: no credential, an unknown
 * or revoked one, too many failed attempts, a key naming another account or workspace it may not
 * act in (`permission_denied`), a service key's acting account not in the workspace.
 */
export const AUTHENTICATED_ERROR_CODES = [
  'authentication_required', 'invalid_credentials', 'authentication_throttled', 'permission_denied', 'account_not_found',
] as const satisfies readonly ErrorCode[];

/** Codes of reading a request body, answered by every `POST`, `PUT` and `PATCH` route: too large, not JSON, too slow, too many at once. */
export const BODY_ERROR_CODES = ['payload_too_large', 'unsupported_media_type', 'request_timeout', 'too_many_bodies'] as const satisfies readonly ErrorCode[];

/** Codes of event stream routes: the caller holds its limit of open streams. */
export const STREAM_ERROR_CODES = ['too_many_streams'] as const satisfies readonly ErrorCode[];

/** Codes of `forwardable` routes: the owner of the Session's attempt cannot be read or reached. */
export const FORWARDING_ERROR_CODES = ['session_ownership_unavailable'] as const satisfies readonly ErrorCode[];

/** Codes of the routes served only with a runtime or the Session resource (`not_found` when the table is served without them). */
export const OPTIONAL_ROUTE_ERROR_CODES = ['not_found'] as const satisfies readonly ErrorCode[];

/** Whether `route` reads a request body (its method carries one). */
export function readsBody(route: Pick<RouteDeclaration, 'method' | 'body'>): boolean {
  return route.body !== undefined || route.method === 'POST' || route.method === 'PUT' || route.method === 'PATCH';
}

/** The parts of a declaration that decide which codes it can answer. */
export type ErrorDeclaration = Pick<RouteDeclaration, 'errors' | 'method' | 'body' | 'public' | 'stream' | 'forwardable' | 'requiresRuntime' | 'requiresManagedSessions'>;

/**
 * Every code `route` can answer: its own {@link RouteDeclaration.errors} plus the shared sets its
 * flags imply ({@link GENERIC_ERROR_CODES} always; {@link AUTHENTICATED_ERROR_CODES} unless public;
 * {@link BODY_ERROR_CODES} when it reads a body; stream, forwarding and optional-route codes),
 * each once, in `ERROR_CODES`-independent order (own codes first).
 */
export function declaredErrorCodes(route: ErrorDeclaration): ErrorCode[] {
  const codes = new Set<ErrorCode>(route.errors);
  for (const code of GENERIC_ERROR_CODES) codes.add(code);
  if (!route.public) for (const code of AUTHENTICATED_ERROR_CODES) codes.add(code);
  if (readsBody(route)) for (const code of BODY_ERROR_CODES) codes.add(code);
  if (route.stream) for (const code of STREAM_ERROR_CODES) codes.add(code);
  if (route.forwardable) for (const code of FORWARDING_ERROR_CODES) codes.add(code);
  if (route.requiresRuntime || route.requiresManagedSessions) for (const code of OPTIONAL_ROUTE_ERROR_CODES) codes.add(code);
  return [...codes];
}
