/**
 * @inbox-kit/core/http — the framework-neutral HTTP contract every adapter implements: the route
 * table (declarations: method, path, request and response schemas, the error codes each route may
 * answer; and their bindings to the service calls), the error → status →
 * `error.type` table and envelope, credentials and request ids, SSE framing and resume rules, and
 * the forwarding-header checks of attempt routing, CORS, the methods of a path (405 with `Allow`),
 * the OpenAPI document of the table, and the request schemas of the routes (bodies, queries,
 * params: `createInboxItemBody`, `listSessionsQuery`, `sessionParams`, …; the root entry keeps the
 * domain). Imports zod and the core only.
 *
 * The public names, listed one by one (`scripts/public-surface.json` holds them).
 */
export {
  clientErrorResponse, DEFAULT_RETRY_AFTER_SECONDS, envelope, envelopeForStatus, envelopeOf, ERROR_KINDS, type ErrorAnswer, errorDetailSchema, type ErrorEnvelope, errorEnvelopeSchema,
  errorHeaders, errorKind, type ErrorKind, RETRY_AFTER_BY_CODE, routeNotFound, routeNotFoundAnswer, SHOULD_RETRY_HEADER, shouldRetry, STATUS_BY_CODE,
} from './errors.js';
export {
  authenticateRequest, type AuthenticateRequestInput, cachedRequestAuthentication, DEFAULT_BODY_TIMEOUT_MS, type HeaderValue, newRequestId, readCredentials, type RequestAuthenticator,
  type RequestCredentials, requestIdFor, requestIdReusing,
} from './request.js';
export {
  answerClientError, clientLeftSignal, type MountedRoutes, requestIdHeaders, servedRoutes, type ServerResponseLike, targetWithin, thrownAnswer, unroutedAnswer,
  writeEventStream,
} from './adapter.js';
export {
  CORS_EXPOSED_HEADERS, CORS_METHODS, corsApplies, type CorsOptions, type CorsPolicy, corsPolicy, DEFAULT_CORS_MAX_AGE_SECONDS, parseCorsOrigins,
} from './cors.js';
export { type MethodIndex, methodIndex, methodNotAllowedAnswer, type RouteShape } from './methods.js';
export {
  createStreamSlots, DEFAULT_MAX_STREAMS_PER_CALLER, eventFrame, type EventStreamLoop, type EventStreamLoopOptions, heartbeatFrame,
  retryFrame, runEventStream, SSE_DEFAULTS, SSE_HEADERS, type SseSink, type StreamSlots,
} from './sse.js';
export { lastEventIdOf, resumePosition, resumeStart, resyncFor, type ResyncSignal } from '../stream-resume.js';
// The request schemas of the routes (bodies, queries, params): HTTP's, not the domain's (the services take the parsed inputs).
export { idempotencyKeySchema } from '../idempotency.js';
export { createInboxItemBody, decideInboxItemBody, listInboxItemsQuery } from '../project-inbox/schemas.js';
export { createStreamTokenBody } from '../platform/stream-tokens.js';
export {
  addMemberBody, addPageBody, commitTurnBody, createProjectBody, createSessionBody, listFloorsQuery, listMembersQuery, listOperationLogsQuery,
  listPagesQuery, listProjectEventsQuery, listProjectsQuery, listSessionsQuery, streamProjectEventsQuery,
} from '../platform/schemas.js';
export { createAccountBody, createApiKeyBody, listAdminOperationLogsQuery, listApiKeysQuery, rotateApiKeyBody } from '../platform/admin.js';
export { liveInboxContentBody, liveInboxMessageParams, liveInboxOrderBody, sendSessionEventsBody, sessionParams } from '../sessions/schemas.js';
export {
  createManagedSessionBody, listManagedSessionsQuery, listSessionEventsQuery, streamSessionEventsQuery, updateManagedSessionBody,
} from '../sessions/managed-agents.js';
export { createAgentBody, listAgentsQuery, listAgentVersionsQuery, retrieveAgentQuery, updateAgentBody } from '../sessions/agents.js';
export { DEFAULT_FORWARD_TIMEOUT_MS, FORWARD_HEADERS, forwardedPrincipal, forwardHeadersFor, forwardRequestOf } from './forwarding.js';
export {
  adminAccountResponse, adminOperationLogPageResponse, deletedSessionResponse, healthResponse, HTTP_ROUTES, issuedApiKeyResponse, readyResponse, rotatedApiKeyResponse, type HttpCall, type HttpOutcome, type HttpRoute, httpRoutesFor, type HttpServices,
  inboxItemPageResponse, liveInboxSnapshotResponse, managedSessionPageResponse, meResponse, operationLogPageResponse,
  projectEventPageResponse, projectWithRoleResponse, sessionEventPageResponse, sessionEventsSentResponse, streamTokenResponse,
  bindRoute, ROUTE_DECLARATIONS,
} from './routes.js';
export { ROUTE_BINDINGS } from './route-bindings.js';
export {
  AUTHENTICATED_ERROR_CODES, BODY_ERROR_CODES, declaredErrorCodes, type ErrorDeclaration, FORWARDING_ERROR_CODES, GENERIC_ERROR_CODES, OPTIONAL_ROUTE_ERROR_CODES,
  readsBody, type RouteDeclaration, type RouteHandler, STREAM_ERROR_CODES,
} from './route-types.js';
export { documentedErrorCodes, errorResponsesFor } from './openapi-errors.js';
export {
  listOperationLogsByProjectQuery, membershipId, type MemberRecord, memberRecord, memberRecordSchema, operationLogData, operationLogDataResponse, PROJECT_KIND,
  type ProjectRecord, projectRecord, projectRecordSchema,
} from './project-records.js';
export { isWellFormedPath, malformedPathError, parseJsonBody, parseRequestPart, queryObject, type RequestPart } from './parse.js';
export {
  decorateOpenApiDocument, OPENAPI_DOCUMENT_PATH, openApiDocument, type OpenApiDocumentOptions, openApiHead, openApiOptionsFor, openApiRoute, zodToJsonSchema,
} from './openapi.js';
export {
  CONNECTION_DEFAULTS, type ConnectionEvents, type ConnectionGuard, type ConnectionPolicy, connectionPolicy, type ConnectionPolicyOptions,
  fdLimitFromProcLimits, guardConnections, type HttpServerLike, type SocketLike,
} from './connections.js';
export {
  type CallerSlots, createCallerSlots, createCredentialThrottle, createEdgeBudgets, type CredentialThrottle, type CredentialThrottleOptions,
  EDGE_BUDGET_DEFAULTS, type EdgeBudgetOptions, type EdgeBudgets,
} from './budgets.js';
export { createLoadShedder, LOAD_SHEDDING_DEFAULTS, type LoadShedder, type LoadSheddingOptions } from './load.js';
export { authenticateWithHost, type HostAuthenticate, HostPrincipalError, samePrincipal } from './host-auth.js';
export {
  type HttpObserver, type ObservedRequest, type ObservedRequestEnd, type ObservedRequestStart, observeRequest, type RequestObservation,
} from './observe.js';
export {
  createHttpAttemptForwarder, createHttpHandler, DEFAULT_BODY_LIMIT, BodyTimeoutError, defaultResponseValidation, type HttpAttemptForwarderOptions, type HttpHandler,
  type HttpHandlerOptions, type PipelineAnswer, type PipelineRequest, type PipelineStream, type PipelineStreamSink, ResponseSchemaError, responseText,
  type StreamTimingOptions, streamToReadable, type FetchRequestParts, pipelineRequestOf, responseOf, targetOf,
} from './pipeline/index.js';
