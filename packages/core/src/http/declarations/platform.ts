/**
 * Platform routes: liveness and readiness, identity, projects, members, Project Events and the Operation Log, Sessions with their Floors and Pages (platform.md "Endpoints").
 * Declarations only (data): their service calls are bound in `../route-bindings.ts`.
 */
import { z } from 'zod';
import { addMemberBody, addPageBody, commitTurnBody, createProjectRequest, createSessionRequest, listFloorsQuery, listMembersQuery, listOperationLogsQuery, listPagesQuery, listProjectEventsQuery, listProjectsQuery, listSessionsQuery, streamProjectEventsQuery } from '../../platform/schemas.js';
import { createStreamTokenBody } from '../../platform/stream-tokens.js';
import { floorSchema, pageSchema, sessionSchema } from '../../schemas/records.js';
import { idString } from '../../validation.js';
import { listOperationLogsByProjectQuery, memberRecordSchema, operationLogDataResponse, projectRecordSchema } from '../project-records.js';
import type { RouteDeclaration } from '../route-types.js';
import { committedTurn, floorParams, healthResponse, idParams, list, memberResponse, meResponse, noContent, operationLogPageResponse, pageResponse, projectEventFrame, projectEventPageResponse, projectResponse, projectWithRoleResponse, readyResponse, sessionResponse, streamTokenResponse } from './schemas.js';

/** The platform routes, in registration order. */
export const PLATFORM_ROUTES: readonly RouteDeclaration[] = [
  {
    operationId: 'health', method: 'GET', path: '/health', public: true, tags: ['meta'], summary: 'Liveness: 200 once the server serves',
    status: 200, response: healthResponse,
    errors: [],
  },
  {
    operationId: 'ready', method: 'GET', path: '/ready', public: true, tags: ['meta'],
    summary: 'Readiness: 200 while storage is reachable and migrated, else 503 storage_unavailable (reason in details[0].code)',
    description: 'For load balancers and orchestrators: `/health` says the process serves (liveness); this says it can answer requests that need storage. '
      + 'Not ready: 503 `storage_unavailable` with `Retry-After`, `details[0].code` `unreachable` (the database does not answer within 2 s) or `not_migrated` (run the migrations).',
    status: 200, response: readyResponse,
    errors: [],
  },
  // — identity —
  {
    operationId: 'getMe', method: 'GET', path: '/me', tags: ['identity'], summary: 'The calling account', status: 200, response: meResponse,
    errors: [],
  },
  {
    operationId: 'createStreamToken', method: 'POST', path: '/stream-tokens', tags: ['identity'],
    summary: 'A short-lived token that opens the caller\'s event streams from a browser (EventSource: ?access_token=)',
    description: 'An `EventSource` cannot send `Authorization`: open the stream with `?access_token=<token>` instead. The token acts as this API key and '
      + 'acting account, on the event stream routes only, until `expires_at` (at most 15 minutes; reconnections until then too); revoking the key ends it. '
      + 'An API key is never accepted in a URL.',
    body: createStreamTokenBody, status: 201, response: streamTokenResponse,
    errors: ['unsupported_capability'],
  },
  // — projects —
  {
    operationId: 'createProject', method: 'POST', path: '/projects', tags: ['projects'], summary: 'Create a project owned by the caller (its id is generated)',
    body: createProjectRequest, status: 201, response: projectResponse('The new project'),
    links: { getProject: { operationId: 'getProject', parameters: { id: '$response.body#/project/id' } }, archiveProject: { operationId: 'archiveProject', parameters: { id: '$response.body#/project/id' } } },
    errors: ['conflict'],
  },
  {
    operationId: 'listProjects', method: 'GET', path: '/projects', tags: ['projects'], summary: 'Projects the caller owns or is a member of',
    query: listProjectsQuery, status: 200, response: list(projectRecordSchema, "Projects, newest first, each with the caller's role"),
    errors: ['invalid_cursor', 'project_not_found'],
  },
  {
    operationId: 'getProject', method: 'GET', path: '/projects/:id', tags: ['projects'], summary: 'A project and the caller\'s role', params: idParams,
    status: 200, response: projectWithRoleResponse,
    errors: ['project_not_found'],
  },
  {
    operationId: 'archiveProject', method: 'POST', path: '/projects/:id/archive', tags: ['projects'], summary: 'Archive a project (owner only)', params: idParams,
    status: 200, response: projectResponse('The archived project'),
    errors: ['project_not_found', 'conflict'],
  },
  // — members —
  {
    operationId: 'addMember', method: 'POST', path: '/projects/:id/members', tags: ['members'], summary: 'Add a member or change its role (owner only)',
    params: idParams, body: addMemberBody, status: 201, response: memberResponse,
    links: { removeMember: { operationId: 'removeMember', parameters: { id: '$request.path.id', account_id: '$response.body#/member/account_id' } } },
    errors: ['project_not_found', 'project_archived', 'conflict'],
  },
  {
    operationId: 'listMembers', method: 'GET', path: '/projects/:id/members', tags: ['members'], summary: 'List members', params: idParams,
    query: listMembersQuery, status: 200, response: list(memberRecordSchema, 'The members, oldest first'),
    errors: ['project_not_found', 'invalid_cursor'],
  },
  {
    operationId: 'removeMember', method: 'DELETE', path: '/projects/:id/members/:account_id', tags: ['members'], summary: 'Remove a member (owner only)',
    params: z.object({ id: idString, account_id: idString }), status: 204, response: noContent,
    errors: ['project_not_found', 'project_archived', 'member_not_found', 'conflict'],
  },
  // — events and logs —
  {
    operationId: 'listProjectEvents', method: 'GET', path: '/projects/:id/events', tags: ['events'], summary: 'Project Events after a sequence, ascending',
    params: idParams, query: listProjectEventsQuery, status: 200, response: projectEventPageResponse,
    errors: ['project_not_found'],
  },
  {
    operationId: 'streamProjectEvents', method: 'GET', path: '/projects/:id/events/stream', tags: ['events'],
    summary: 'Live stream of Project Events (SSE); resume with ?after= or Last-Event-ID', params: idParams, query: streamProjectEventsQuery,
    status: 200, response: projectEventFrame, stream: true,
    errors: ['project_not_found'],
  },
  {
    operationId: 'listOperationLogs', method: 'GET', path: '/projects/:id/operation-logs', tags: ['events'], summary: 'Operation Log, newest first (owner only)',
    params: idParams, query: listOperationLogsQuery, status: 200, response: operationLogPageResponse,
    errors: ['project_not_found', 'invalid_cursor'],
  },
  {
    operationId: 'listOperationLogsByProject', method: 'GET', path: '/operation-logs', tags: ['events'],
    summary: 'Operation Log of a project, newest first (owner only), as `{ data, meta }`',
    description: 'The same rows and pages as `GET /projects/{id}/operation-logs`, in the `{ data, meta: { next_cursor, has_more, limit } }` shape TavernHeadless clients read.',
    query: listOperationLogsByProjectQuery, status: 200, response: operationLogDataResponse,
    errors: ['project_not_found', 'invalid_cursor'],
  },
  {
    operationId: 'listProjectSessions', method: 'GET', path: '/projects/:id/sessions', tags: ['sessions'], summary: 'Sessions of a project, newest first (members)',
    description: 'The same as `GET /sessions?project_id={id}`: 404 `project_not_found` when the project is not the caller\'s to see.',
    params: idParams, query: listProjectsQuery, status: 200, response: list(sessionSchema, 'Sessions of the project, newest first'),
    errors: ['project_not_found', 'invalid_cursor'],
  },
  // — sessions, floors, pages —
  {
    operationId: 'createSession', method: 'POST', path: '/sessions', tags: ['sessions'], summary: 'Create a session (its id is generated)',
    body: createSessionRequest, status: 201, response: sessionResponse('The new session'),
    links: { getSession: { operationId: 'getSession', parameters: { id: '$response.body#/session/id' } }, listFloors: { operationId: 'listFloors', parameters: { id: '$response.body#/session/id' } } },
    errors: ['project_not_found', 'project_archived', 'conflict'],
  },
  {
    operationId: 'listSessions', method: 'GET', path: '/sessions', tags: ['sessions'], summary: 'Sessions the caller may see', query: listSessionsQuery,
    status: 200, response: list(sessionSchema, 'Sessions, newest first'),
    errors: ['project_not_found', 'invalid_cursor'],
  },
  {
    operationId: 'getSession', method: 'GET', path: '/sessions/:id', tags: ['sessions'], summary: 'One session', params: idParams,
    status: 200, response: sessionResponse('The session'),
    errors: ['session_not_found'],
  },
  {
    operationId: 'listFloors', method: 'GET', path: '/sessions/:id/floors', tags: ['sessions'], summary: 'Floors (committed turns) of a session', params: idParams,
    query: listFloorsQuery, status: 200, response: list(floorSchema, 'Floors, ascending by (number, branch, id)'),
    errors: ['session_not_found', 'invalid_cursor'],
  },
  {
    operationId: 'commitTurn', method: 'POST', path: '/sessions/:id/floors', tags: ['sessions'], summary: 'Commit a turn: a new Floor and its first Page',
    params: idParams, body: commitTurnBody, status: 201, response: committedTurn,
    links: { listPages: { operationId: 'listPages', parameters: { id: '$request.path.id', floor_id: '$response.body#/floor/id' } }, addPage: { operationId: 'addPage', parameters: { id: '$request.path.id', floor_id: '$response.body#/floor/id' } } },
    errors: ['session_not_found', 'project_archived', 'session_archived', 'session_running', 'project_inbox_payload_invalid', 'project_inbox_payload_too_large'],
  },
  {
    operationId: 'listPages', method: 'GET', path: '/sessions/:id/floors/:floor_id/pages', tags: ['sessions'], summary: 'Pages (versions) of a floor',
    params: floorParams, query: listPagesQuery, status: 200, response: list(pageSchema, 'Pages, ascending by version'),
    errors: ['session_not_found', 'floor_not_found', 'invalid_cursor'],
  },
  {
    operationId: 'addPage', method: 'POST', path: '/sessions/:id/floors/:floor_id/pages', tags: ['sessions'], summary: 'Add a Page (regeneration) to a floor',
    params: floorParams, body: addPageBody, status: 201, response: pageResponse,
    errors: ['session_not_found', 'floor_not_found', 'project_archived', 'session_archived', 'session_running', 'project_inbox_payload_invalid', 'project_inbox_payload_too_large'],
  },
];
