/**
 * @inbox-kit/core — the pure domain of inbox-kit: errors, records, ports, the Project Inbox state
 * machine and services, permission rules, the Live Inbox queue, attempt registry and agent loop,
 * and the Session services. Imports only zod; time, ids, storage and the event bus come in through
 * ports.
 *
 * The public surface, by name: whatever is not listed here is internal (query and text schema
 * builders, the cursor codec, access checks, the turn writer). A new name is a deliberate
 * decision: `scripts/public-surface.json` holds every entry point's names and the packaging
 * check fails when the build differs from it (see the core README, "API").
 */
export { ERROR_CODES, type ErrorCode, type ErrorDetail, InboxKitError, isInboxKitError } from './errors.js';
export {
  type Account, type Agent, type ApiKey, type ApiKeyKind, type Floor, type InboxDecision, type InboxItemStatus, type JsonValue,
  type MemberRole, type Membership, type OperationLog, type Page, type Project, type ProjectEvent,
  type ProjectEventSource, type ProjectEventVisibility, type ProjectInboxItem, type ProjectStatus, type Run,
  type RunStatus, type Session, type SessionEvent, type Workspace, type WorkspaceAccount,
} from './records.js';
export {
  accountSchema, agentSchema, apiKeyKindSchema, apiKeySchema, apiKeyViewSchema, floorSchema, inboxItemStatusSchema, jsonObjectSchema, jsonValueSchema,
  memberRoleSchema, membershipSchema, operationLogSchema, pageSchema, projectEventSchema, projectEventSourceSchema,
  projectEventVisibilitySchema, projectInboxItemSchema, projectRoleSchema, projectSchema, projectStatusSchema,
  type RecordField, type RecordFieldKind, recordFields, runSchema, runStatusSchema, sessionEventSchema, sessionSchema,
  workspaceAccountSchema, workspaceSchema,
} from './schemas/records.js';
export { DEFAULT_IDEMPOTENCY_TTL_MS, type Principal, type RequestContext, type ServiceDeps } from './context.js';
export {
  decideWrite, WRITE_ACTIONS, WRITE_POLICY, WRITE_ROLES, WRITE_STATE_VALUES, type WriteAction, type WritePolicyRow, type WriteRefusal,
  type WriteRole, type WriteState,
} from './policy/write-policy.js';
export { type ListPage } from './paging.js';
export { CALLER_BUDGET_DEFAULTS, type CallerBudgetOptions, RunBudget, SessionCreateBudget } from './caller-budgets.js';
export { MAX_PAYLOAD_BYTES, MAX_PAYLOAD_DEPTH } from './validation.js';
export { LAST_EVENT_ID_HEADER, type ResyncSignal } from './stream-resume.js';
export { idempotencyRequestHash, parseIdempotencyKey } from './idempotency.js';
export { findInexactJsonNumber, type InexactJsonNumber, isExactJsonNumber } from './json-numbers.js';
export {
  type Clock, createIdGenerator, createManualClock, createSequentialIdGenerator, type IdGenerator, type IdGeneratorOptions, type IdPrefix,
  systemClock,
} from './ports/clock.js';
export {
  type AgentPageQuery, type AgentStore, type ApiKeyQuery, type AttemptOwnership, type AttemptOwnershipKey, type FloorPosition, type IdempotencyRecord, type KeysetQuery, type IdempotencyScope,
  type IdempotencyStore, type IdentityStore, type InboxDecisionPatch, type InboxItemQuery, type InboxItemWithAccess, type InboxItemsJson, type InboxItemsWithAccess, type InboxPageQuery,
  type UnchangedMembership, type UnchangedProject,
  type InboxStore, type NewProjectEvent, type NewSessionEvent, type ProjectEventQuery, type ProjectEventStore,
  type ProjectStore, type RunStatusChange, type RunStore, type SessionEventQuery, type SessionPageQuery, type SessionPatch,
  type SessionGate, type SessionStore, type SessionWithAccess, type Store, type StoreReadiness, type StoreTx, type TimeBounds,
} from './ports/store.js';
export { type BusListener, type BusMessage, createLocalEventBus, type EventBus, topicOf } from './ports/event-bus.js';
export { type Feed, type FeedItem } from './ports/feed.js';
export {
  decisionEventType, INBOX_DECISIONS, INBOX_STATUSES, type InboxTransition, transition,
} from './project-inbox/transition.js';
export {
  canSeeEvent, inboxPermissions, type InboxPermissions, type ProjectRole, roleOf, visibilityOfEventType,
} from './project-inbox/permissions.js';
export {
  type CreateInboxItemBody, type CreateInboxItemInput, type DecideInboxItemBody, type DecideInboxItemInput, type ListInboxItemsInput,
  type ListInboxItemsQuery,
} from './project-inbox/schemas.js';
export {
  type CreateInboxItemOptions, type CreateInboxItemOutcome, type InboxItemPage, ProjectInboxService,
} from './project-inbox/service.js';
export { constantTimeEqual, generateApiKeySecret, hashApiKey } from './platform/keys.js';
export { isStreamToken, MAX_STREAM_TOKEN_TTL_SECONDS, STREAM_TOKEN_PREFIX } from './platform/stream-tokens.js';
export { createProjectRequest, createSessionRequest } from './platform/schemas.js';
export { API_KEY_USE_RESOLUTION_MS, PlatformService, PROJECT_FEED_RECHECK_MS, READINESS_TIMEOUT_MS } from './platform/service.js';
export { IdentityService } from './platform/identity.js';
export { ProjectService } from './platform/projects.js';
export { SessionLedgerService } from './platform/ledger.js';
export { ProjectEventService } from './platform/project-events.js';
export { type CoreServices, createServices, type CreateServicesOptions } from './services.js';
export {
  AdminService, apiKeyView, type ApiKeyView, type IssuedApiKey, MAX_ROTATION_GRACE_MS, systemAdminContext,
} from './platform/admin.js';
export {
  type Base64ImageSource, type ContentBlock, contentBlockSchema, contentSchema, IMAGE_MEDIA_TYPES, type ImageBlock,
  isBlockedImageHost, MAX_IMAGE_BASE64_CHARS, type TextBlock, type UrlImageSource,
} from './live-inbox/content.js';
export {
  contentBytes, DEFAULT_LIVE_INBOX_LIMITS, liveInboxLimits, type LiveInboxLimits, type LiveInboxMessage,
  LiveInboxQueue, type LiveInboxSnapshot,
} from './live-inbox/queue.js';
export {
  type AttemptExecutor, type AttemptHandle, type CloseAttemptOptions, DEFAULT_MAX_CARRY_OVER_BYTES, LiveInboxHost,
  type LiveInboxHostOptions, type LiveInboxHostStats, type OpenAttemptInput,
} from './live-inbox/registry.js';
export { observeEventBus, type EventBusObserver, observeStore, type StoreObserver } from './observe.js';
export {
  type DrainPolicy, isModelError, isToolUseLimitError, type Model, ModelError, type ModelStepContext, type ModelStepResult,
  type ModelStopReason, type NativeAttemptResult, RUN_DEFAULTS, runNativeAttempt, type RunNativeAttemptOptions, stepMessageId,
  ToolUseLimitError,
} from './live-inbox/agent-loop.js';
export {
  type Boundary, type BridgeCloseOptions, type BridgeCommitOptions, type BridgeToolCall, type BridgeToolResult, inboxMessageId, LiveInboxBridge,
  type OpenBridgeInput, type RunLedger, type RunLedgerCommit, type RunLedgerCommitExtras, type RunLedgerPark, type RunLedgerParkOutcome,
  type TranscriptMessage,
} from './live-inbox/bridge.js';
export { nativeExecutor, type RunAttempt, type RunExecutor, type RunFinish, type RunHandle, type RunOutcome, type StartRunOptions } from './sessions/executor.js';
export {
  type JsonSchemaObject, MAX_TOOL_DESCRIPTION_CHARS, MAX_TOOL_RESULT_BYTES, MAX_TOOL_SCHEMA_BYTES, type OpenRound, type OpenToolUse,
  type Tool, TOOL_NAME, type ToolContext, toolDefinitionProblems, type ToolOutput, type ToolPermission, type ToolResultBlock,
  toolResultsMessageId, type ToolSpec, type ToolUseBlock, toolUseId, type ToolUseDisposition, type ToolUseResolution,
  type TranscriptBlock,
} from './live-inbox/tools.js';
export { type SessionRuntimeDeps, SessionRuntimeService } from './sessions/service.js';
export { type IdleStopReason, SESSION_EVENT_TYPES, type SessionEventPage } from './sessions/ledger.js';
export { type RunFailure } from './sessions/run-outcomes.js';
export { type LiveInboxView } from './sessions/steering.js';
export {
  type AttemptForwarder, type AttemptForwardRequest, type AttemptRoute, type AttemptRoutingErrorInfo,
  type AttemptRoutingOptions, DEFAULT_ATTEMPT_LEASE_MS, type ForwardedReply, type LiveInboxOperation,
} from './sessions/routing.js';
export {
  type LiveInboxContentInput, type LiveInboxOrderInput, MAX_DENY_MESSAGE_CHARS, MAX_EVENTS_PER_REQUEST, type SendSessionEventsInput,
  sessionEventInput, type SessionEventInput, UNSUPPORTED_EVENT_TYPES,
} from './sessions/schemas.js';
export {
  agentReference, agentSnapshot, type CreateManagedSessionInput, DEFAULT_ENVIRONMENT_ID, deletedSession,
  DELTA_EVENT_TYPES, isRuntimeAgent, RUNTIME_AGENT_ID, runtimeAgentSnapshot, sessionAgentSchema, type ListManagedSessionsInput,
  type ListSessionEventsInput, type ManagedAgentDefinition, managedSession, type ManagedSession, managedSessionEvent,
  type ManagedSessionEvent, managedSessionEventSchema, managedSessionSchema, type ManagedSessionStatus, metadataSchema,
  rfc3339, type RunOptions, type UpdateManagedSessionInput,
} from './sessions/managed-agents.js';
export {
  type ManagedSessionPage, type ManagedSessionsDeps, ManagedSessionsService,
} from './sessions/managed-sessions.js';
export {
  configuredAgent, type CreateAgentInput, type ListAgentsInput,
  type ListAgentVersionsInput, managedAgent, type ManagedAgent, type ManagedAgentPage, managedAgentSchema, type ManagedAgentsDeps,
  ManagedAgentsService, MAX_AGENT_TOOLS, type UpdateAgentInput,
} from './sessions/agents.js';
