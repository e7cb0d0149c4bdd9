/**
 * The `/v1` routes (live-inbox.md "HTTP", "Managed Agents compatibility"): the Session resource and agents in the Managed Agents wire shape, durable Session events, and the Live Inbox.
 * Declarations only (data): their service calls are bound in `../route-bindings.ts`.
 */
import { createAgentBody, listAgentsQuery, listAgentVersionsQuery, managedAgentSchema, retrieveAgentQuery, updateAgentBody } from '../../sessions/agents.js';
import { listSessionEventsQuery, liveInboxContentBody, liveInboxMessageParams, liveInboxOrderBody, sendSessionEventsBody, sessionParams, streamSessionEventsQuery } from '../../sessions/index.js';
import { createManagedSessionBody, listManagedSessionsQuery, updateManagedSessionBody } from '../../sessions/managed-agents.js';
import { rejectUnsupportedEvents } from '../../sessions/schemas.js';
import type { RouteDeclaration } from '../route-types.js';
import { agentParams, deletedSessionResponse, liveInboxSnapshotResponse, managedAgentPageResponse, managedSessionPageResponse, managedSessionResponse, noContent, queuedResponse, sessionEventFrame, sessionEventPageResponse, sessionEventsSentResponse } from './schemas.js';

/** The Live Inbox of a Session: `/v1/awaken/sessions/:session_id/live-inbox`. */
const liveInboxBase = '/v1/awaken/sessions/:session_id/live-inbox';

/** The v1 routes, in registration order. */
export const V1_ROUTES: readonly RouteDeclaration[] = [
  // — the Session resource (Managed Agents wire shape: what `client.beta.sessions.*` of `@anthropic-ai/sdk` calls) —
  {
    operationId: 'createManagedSession', method: 'POST', path: '/v1/sessions', tags: ['managed-sessions'], requiresManagedSessions: true,
    summary: 'Create a Session with a configured agent (sessions.create)', body: createManagedSessionBody, status: 200, response: managedSessionResponse('The new Session'),
    links: { retrieveManagedSession: { operationId: 'retrieveManagedSession', parameters: { session_id: '$response.body#/id' } }, sendSessionEvents: { operationId: 'sendSessionEvents', parameters: { session_id: '$response.body#/id' } }, streamSessionEvents: { operationId: 'streamSessionEvents', parameters: { session_id: '$response.body#/id' } }, getLiveInbox: { operationId: 'getLiveInbox', parameters: { session_id: '$response.body#/id' } } },
    errors: ['agent_not_found', 'agent_archived', 'unsupported_capability', 'project_not_found', 'project_archived', 'too_many_runs', 'actions_pending'],
  },
  {
    operationId: 'listManagedSessions', method: 'GET', path: '/v1/sessions', tags: ['managed-sessions'], requiresManagedSessions: true,
    summary: 'Sessions the caller may read, by created_at (sessions.list)', query: listManagedSessionsQuery, status: 200, response: managedSessionPageResponse,
    errors: ['invalid_cursor', 'project_not_found'],
  },
  {
    operationId: 'retrieveManagedSession', method: 'GET', path: '/v1/sessions/:session_id', tags: ['managed-sessions'], requiresManagedSessions: true,
    summary: 'One Session (sessions.retrieve)', params: sessionParams, status: 200, response: managedSessionResponse('The Session'),
    errors: ['session_not_found'],
  },
  {
    operationId: 'updateManagedSession', method: 'POST', path: '/v1/sessions/:session_id', tags: ['managed-sessions'], requiresManagedSessions: true,
    summary: 'Update title and metadata (sessions.update)', params: sessionParams, body: updateManagedSessionBody, status: 200, response: managedSessionResponse('The updated Session'),
    errors: ['unsupported_capability', 'session_not_found', 'project_archived', 'session_archived'],
  },
  {
    operationId: 'archiveManagedSession', method: 'POST', path: '/v1/sessions/:session_id/archive', tags: ['managed-sessions'], requiresManagedSessions: true,
    summary: 'Archive a Session: it takes no new user.message (sessions.archive)', params: sessionParams, status: 200, response: managedSessionResponse('The archived Session'),
    errors: ['session_not_found', 'project_archived', 'session_running'],
  },
  {
    operationId: 'deleteManagedSession', method: 'DELETE', path: '/v1/sessions/:session_id', tags: ['managed-sessions'], requiresManagedSessions: true,
    summary: 'Delete an idle Session (sessions.delete)', params: sessionParams, status: 200, response: deletedSessionResponse,
    errors: ['session_not_found', 'project_archived', 'session_running'],
  },
  // — agents (Managed Agents wire shape: what `client.beta.agents.*` of `@anthropic-ai/sdk` calls) —
  {
    operationId: 'createAgent', method: 'POST', path: '/v1/agents', tags: ['agents'], requiresManagedSessions: true,
    summary: 'Create an agent with custom tools (agents.create)', body: createAgentBody, status: 200, response: managedAgentSchema.describe('The new agent (version 1)'),
    links: { retrieveAgent: { operationId: 'retrieveAgent', parameters: { agent_id: '$response.body#/id' } }, updateAgent: { operationId: 'updateAgent', parameters: { agent_id: '$response.body#/id' } } },
    errors: ['unsupported_capability', 'conflict'],
  },
  {
    operationId: 'listAgents', method: 'GET', path: '/v1/agents', tags: ['agents'], requiresManagedSessions: true,
    summary: 'Agents of the workspace and of the deployment, by created_at (agents.list)', query: listAgentsQuery, status: 200, response: managedAgentPageResponse,
    errors: ['invalid_cursor'],
  },
  {
    operationId: 'retrieveAgent', method: 'GET', path: '/v1/agents/:agent_id', tags: ['agents'], requiresManagedSessions: true,
    summary: 'One agent, at its current version or ?version= (agents.retrieve)', params: agentParams, query: retrieveAgentQuery, status: 200,
    response: managedAgentSchema.describe('The agent'),
    errors: ['agent_not_found'],
  },
  {
    operationId: 'updateAgent', method: 'POST', path: '/v1/agents/:agent_id', tags: ['agents'], requiresManagedSessions: true,
    summary: 'Update an agent: a new version (agents.update)', params: agentParams, body: updateAgentBody, status: 200,
    response: managedAgentSchema.describe('The agent at its new version (unchanged when nothing changed)'),
    errors: ['agent_not_found', 'agent_archived', 'conflict', 'unsupported_capability'],
  },
  {
    operationId: 'archiveAgent', method: 'POST', path: '/v1/agents/:agent_id/archive', tags: ['agents'], requiresManagedSessions: true,
    summary: 'Archive an agent: it starts no new Session (agents.archive)', params: agentParams, status: 200, response: managedAgentSchema.describe('The archived agent'),
    errors: ['agent_not_found'],
  },
  {
    operationId: 'listAgentVersions', method: 'GET', path: '/v1/agents/:agent_id/versions', tags: ['agents'], requiresManagedSessions: true,
    summary: 'Versions of an agent, newest first (agents.versions.list)', params: agentParams, query: listAgentVersionsQuery, status: 200,
    response: managedAgentPageResponse,
    errors: ['agent_not_found', 'invalid_cursor'],
  },
  // — durable Session events (Managed Agents wire shape) —
  {
    // Input with a `user.interrupt` is forwarded to the process running the Session's Run, if another one does.
    operationId: 'sendSessionEvents', method: 'POST', path: '/v1/sessions/:session_id/events', tags: ['session-events'], requiresRuntime: true, forwardable: true,
    summary: 'Send durable input: user.message (starts a Run when idle), user.interrupt, user.custom_tool_result, user.tool_confirmation', params: sessionParams, body: sendSessionEventsBody,
    precheckBody: rejectUnsupportedEvents, status: 200, response: sessionEventsSentResponse,
    errors: ['session_not_found', 'project_archived', 'session_archived', 'session_running', 'actions_pending', 'unsupported_capability', 'tool_use_not_found', 'tool_use_already_resolved', 'too_many_runs', 'agent_not_found', 'agent_archived'],
  },
  {
    operationId: 'listSessionEvents', method: 'GET', path: '/v1/sessions/:session_id/events', tags: ['session-events'], requiresRuntime: true,
    summary: 'Committed Session history: cursor pages, order, types[] and created_at filters (events.list)', params: sessionParams, query: listSessionEventsQuery,
    status: 200, response: sessionEventPageResponse,
    errors: ['session_not_found', 'invalid_cursor'],
  },
  {
    operationId: 'streamSessionEvents', method: 'GET', path: '/v1/sessions/:session_id/events/stream', tags: ['session-events'], requiresRuntime: true,
    summary: 'Committed Session history as SSE: stored events, then live', params: sessionParams, query: streamSessionEventsQuery,
    status: 200, response: sessionEventFrame, stream: true,
    errors: ['session_not_found'],
  },
  // — Live Inbox —
  {
    operationId: 'getLiveInbox', method: 'GET', path: liveInboxBase, tags: ['live-inbox'], requiresRuntime: true, forwardable: true,
    summary: 'Read the editable window of the active native attempt', params: sessionParams, status: 200, response: liveInboxSnapshotResponse,
    errors: ['session_not_found'],
  },
  {
    operationId: 'queueLiveInboxMessage', method: 'POST', path: liveInboxBase, tags: ['live-inbox'], requiresRuntime: true, forwardable: true,
    summary: 'Queue content for the active native attempt (owner only)', params: sessionParams, body: liveInboxContentBody, status: 200, response: queuedResponse,
    links: { replaceLiveInboxMessage: { operationId: 'replaceLiveInboxMessage', parameters: { session_id: '$request.path.session_id', message_id: '$response.body#/id' } }, withdrawLiveInboxMessage: { operationId: 'withdrawLiveInboxMessage', parameters: { session_id: '$request.path.session_id', message_id: '$response.body#/id' } } },
    errors: ['session_not_found', 'project_archived', 'session_archived', 'live_inbox_inactive', 'live_inbox_full'],
  },
  {
    // `/order` is a static segment, so it always wins over `/:message_id`.
    operationId: 'reorderLiveInbox', method: 'PUT', path: `${liveInboxBase}/order`, tags: ['live-inbox'], requiresRuntime: true, forwardable: true,
    summary: 'Reorder the queue: every current id exactly once', params: sessionParams, body: liveInboxOrderBody, status: 204, response: noContent,
    errors: ['session_not_found', 'project_archived', 'session_archived', 'live_inbox_inactive', 'live_inbox_order_conflict'],
  },
  {
    operationId: 'replaceLiveInboxMessage', method: 'PUT', path: `${liveInboxBase}/:message_id`, tags: ['live-inbox'], requiresRuntime: true, forwardable: true,
    summary: 'Replace a queued message, keeping its id and position', params: liveInboxMessageParams, body: liveInboxContentBody, status: 204, response: noContent,
    errors: ['session_not_found', 'project_archived', 'session_archived', 'live_inbox_inactive', 'live_inbox_full', 'live_inbox_message_not_found'],
  },
  {
    operationId: 'withdrawLiveInboxMessage', method: 'DELETE', path: `${liveInboxBase}/:message_id`, tags: ['live-inbox'], requiresRuntime: true, forwardable: true,
    summary: 'Withdraw a queued message', params: liveInboxMessageParams, status: 204, response: noContent,
    errors: ['session_not_found', 'project_archived', 'session_archived', 'live_inbox_inactive', 'live_inbox_message_not_found'],
  },
];
