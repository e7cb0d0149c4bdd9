/**
 * The Managed Agents wire of `/v1/sessions` (live-inbox.md "Managed Agents compatibility"): the
 * request schemas the official `@anthropic-ai/sdk` (`client.beta.sessions.*`) sends, and the pure
 * mappers from our records to the shapes its published types declare — RFC 3339 timestamps,
 * `type: 'session'`, `stop_reason` on `session.status_idle`. Our own fields (`seq`, `run_id`,
 * `workspace_id`, …) travel alongside; the SDK ignores what it does not declare.
 *
 * This module re-exports the three parts, so the whole wire imports from here: the configured
 * agents and their snapshots (`agent-snapshots.ts`), the request schemas (`managed-wire.ts`), the
 * response mappers and schemas (`managed-responses.ts`).
 */
export {
  customToolEntry,
  agentSnapshot,
  RUNTIME_AGENT_ID,
  DEFAULT_ENVIRONMENT_ID,
  runtimeAgentSnapshot,
  isRuntimeAgent,
  clientToolsOf,
  systemOf,
  type RunOptions,
  type ManagedAgentDefinition,
} from './agent-snapshots.js';
export {
  rfc3339,
  rfc3339Query,
  rfc3339Bound,
  betaQueryField,
  accessTokenQueryField,
  timeBoundsOf,
  listSessionEventsQuery,
  DELTA_EVENT_TYPES,
  streamSessionEventsQuery,
  metadataSchema,
  createAgentToolsField,
  agentReference,
  createManagedSessionBody,
  updateManagedSessionBody,
  listManagedSessionsQuery,
  type ListSessionEventsInput,
  type CreateManagedSessionInput,
  type UpdateManagedSessionInput,
  type ListManagedSessionsInput,
} from './managed-wire.js';
export {
  managedSession,
  deletedSession,
  stopReasonOf,
  managedSessionEvent,
  managedSessionEventSchema,
  sessionAgentSchema,
  managedSessionSchema,
  type ManagedSessionStatus,
  type ManagedSessionEvent,
  type ManagedSession,
} from './managed-responses.js';
