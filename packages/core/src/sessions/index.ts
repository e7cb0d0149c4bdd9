/**
 * The sessions area in one import, for the core's own modules (the HTTP route table): the Session
 * Runtime (ledger, Run supervisor, attempt leases, Live Inbox steering), routing types, request
 * schemas and the Managed Sessions resource. Internal: the package's public names are listed in
 * `src/index.ts`. Spec: live-inbox.md.
 */
export { SessionRuntimeService, type SessionRuntimeDeps } from './service.js';
export { SESSION_EVENT_TYPES, type IdleStopReason, type SessionEventPage } from './ledger.js';
export {
  checkCustomTools, configuredAgent, createAgentBody, listAgentsQuery, listAgentVersionsQuery, managedAgent, managedAgentSchema, MAX_AGENT_TOOLS,
  ManagedAgentsService, retrieveAgentQuery, updateAgentBody, type CreateAgentInput, type ListAgentsInput, type ListAgentVersionsInput, type ManagedAgent,
  type ManagedAgentPage, type ManagedAgentsDeps, type UpdateAgentInput,
} from './agents.js';
export type { RunFailure } from './run-outcomes.js';
export type { LiveInboxView } from './steering.js';
export {
  DEFAULT_ATTEMPT_LEASE_MS,
  type AttemptForwarder,
  type AttemptForwardRequest,
  type AttemptRoute,
  type AttemptRoutingErrorInfo,
  type AttemptRoutingOptions,
  type ForwardedReply,
  type LiveInboxOperation,
} from './routing.js';
export {
  MAX_DENY_MESSAGE_CHARS,
  MAX_EVENTS_PER_REQUEST,
  UNSUPPORTED_EVENT_TYPES,
  parseSendSessionEvents,
  rejectUnsupportedEvents,
  liveInboxContentBody,
  liveInboxMessageParams,
  liveInboxOrderBody,
  sendSessionEventsBody,
  sessionEventInput,
  sessionParams,
  type LiveInboxContentInput,
  type LiveInboxOrderInput,
  type SendSessionEventsInput,
  type SessionEventInput,
} from './schemas.js';
export {
  DELTA_EVENT_TYPES,
  agentReference,
  agentSnapshot,
  clientToolsOf,
  customToolEntry,
  createManagedSessionBody,
  deletedSession,
  listManagedSessionsQuery,
  listSessionEventsQuery,
  managedSession,
  managedSessionEvent,
  managedSessionEventSchema,
  managedSessionSchema,
  metadataSchema,
  rfc3339,
  rfc3339Bound,
  rfc3339Query,
  stopReasonOf,
  streamSessionEventsQuery,
  timeBoundsOf,
  updateManagedSessionBody,
  type CreateManagedSessionInput,
  type ListManagedSessionsInput,
  type ListSessionEventsInput,
  type ManagedAgentDefinition,
  type ManagedSession,
  type ManagedSessionEvent,
  type ManagedSessionStatus,
  type RunOptions,
  type UpdateManagedSessionInput,
} from './managed-agents.js';
export { ManagedSessionsService, type ManagedSessionsDeps, type ManagedSessionPage } from './managed-sessions.js';
