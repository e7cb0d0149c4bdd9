/**
 * Platform routes the inboxes stand on (platform.md): the caller, projects, members, sessions,
 * floors and pages, Project Event pages and the Operation Log.
 */
import {
  accountSchema, addMemberBody, addPageBody, apiKeyKindSchema, commitTurnBody, createProjectRequest, createSessionRequest, floorSchema, idString,
  listOperationLogsQuery, listProjectEventsQuery, listSessionsQuery, membershipSchema, operationLogSchema, pageSchema, projectEventSchema,
  projectRoleSchema, projectSchema, sessionSchema, streamProjectEventsQuery,
} from '@inbox-kit/core';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ctxOf } from '../context.js';
import { resumeCursor, sendEventStream, type StreamTiming } from '../sse.js';
import type { InboxKitServices } from '../plugin.js';

const idParams = z.object({ id: idString });

// Response bodies (serialised through these schemas, and published in the OpenAPI document).
const list = <T extends z.ZodType>(item: T, what: string) => z.object({ items: z.array(item) }).describe(what);
const meResponse = z.object({ account: accountSchema, workspace_id: z.string(), key_kind: apiKeyKindSchema }).describe('The caller');
const projectResponse = (what: string) => z.object({ project: projectSchema }).describe(what);
const projectWithRole = z.object({ project: projectSchema, role: projectRoleSchema }).describe("The project and the caller's role in it");
const memberResponse = z.object({ member: membershipSchema }).describe('The membership');
const noContent = z.undefined().describe('No content');
const projectEventPage = z
  .object({
    items: z.array(projectEventSchema).describe('Events the caller may see, ascending by sequence'),
    next_after: z.number().int().describe('The last sequence examined; pass it as `after` for the next page'),
    has_more: z.boolean(),
  })
  .describe('A page of Project Events');
const projectEventFrame = projectEventSchema.describe(
  'A `text/event-stream`: a `retry:` hint, then one frame per event (`id: <sequence>`, `event: <type>`, `data: <this ProjectEvent as JSON>`) '
  + 'and `: heartbeat` comment lines. ' + 'Resume after the later of `?after=` and the `Last-Event-ID` header (a malformed header → 400 `validation_error`); a position after the newest event gets first one '
  + '`event: resync` frame (`id: <latest>`, `data: {"type":"resync","reason":"ahead_of_latest","requested_after":n,"latest":n}`), then the stream goes on after `latest`. '
  + 'Every delivery is authorised as of now: a caller that lost access (removed, key revoked) has the stream ended. `HEAD` answers with the headers only.',
);
const operationLogPage = z
  .object({ items: z.array(operationLogSchema), next_cursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last page') })
  .describe('A page of the Operation Log, newest first');
const sessionResponse = (what: string) => z.object({ session: sessionSchema }).describe(what);
const committedTurn = z.object({ floor: floorSchema, page: pageSchema }).describe('The new Floor and its first Page');
const pageResponse = z.object({ page: pageSchema }).describe('The new Page');

export const platformRoutes: FastifyPluginAsync<{
  services: InboxKitServices;
  streamTiming?: StreamTiming;
  /** Re-authenticates a stream's request before every delivery (the root plugin passes it). */
  reauthenticate?: (request: FastifyRequest) => Promise<void>;
}> = async (plain, { services, streamTiming, reauthenticate }) => {
  const app = plain.withTypeProvider<ZodTypeProvider>();
  const { platform } = services;

  app.get('/me', { schema: { tags: ['identity'], summary: 'The calling account', response: { 200: meResponse } } }, async (request) => platform.whoami(ctxOf(request)));

  // — projects —
  app.post('/projects', { schema: { tags: ['projects'], summary: 'Create a project owned by the caller (its id is generated)', body: createProjectRequest, response: { 201: projectResponse('The new project') } } },
    async (request, reply) => reply.code(201).send({ project: await platform.createProject(ctxOf(request), request.body) }));
  app.get('/projects', { schema: { tags: ['projects'], summary: 'Projects the caller owns or is a member of', response: { 200: list(projectSchema, 'Projects, newest first') } } },
    async (request) => ({ items: await platform.listProjects(ctxOf(request)) }));
  app.get('/projects/:id', { schema: { tags: ['projects'], summary: 'A project and the caller\'s role', params: idParams, response: { 200: projectWithRole } } },
    async (request) => platform.getProject(ctxOf(request), request.params.id));
  app.post('/projects/:id/archive', { schema: { tags: ['projects'], summary: 'Archive a project (owner only)', params: idParams, response: { 200: projectResponse('The archived project') } } },
    async (request) => ({ project: await platform.archiveProject(ctxOf(request), request.params.id) }));

  // — members —
  app.post('/projects/:id/members', { schema: { tags: ['members'], summary: 'Add a member or change its role (owner only)', params: idParams, body: addMemberBody, response: { 201: memberResponse } } },
    async (request, reply) => reply.code(201).send({ member: await platform.addMember(ctxOf(request), request.params.id, request.body) }));
  app.get('/projects/:id/members', { schema: { tags: ['members'], summary: 'List members', params: idParams, response: { 200: list(membershipSchema, 'The members') } } },
    async (request) => ({ items: await platform.listMembers(ctxOf(request), request.params.id) }));
  app.delete('/projects/:id/members/:account_id', { schema: { tags: ['members'], summary: 'Remove a member (owner only)', params: z.object({ id: idString, account_id: idString }), response: { 204: noContent } } },
    async (request, reply) => {
      await platform.removeMember(ctxOf(request), request.params.id, request.params.account_id);
      return reply.code(204).send();
    });

  // — events and logs —
  app.get('/projects/:id/events', { schema: { tags: ['events'], summary: 'Project Events after a sequence, ascending', params: idParams, querystring: listProjectEventsQuery, response: { 200: projectEventPage } } },
    async (request) => platform.listProjectEvents(ctxOf(request), request.params.id, request.query));
  app.get('/projects/:id/events/stream', {
    schema: { tags: ['events'], summary: 'Live stream of Project Events (SSE); resume with ?after= or Last-Event-ID', params: idParams, querystring: streamProjectEventsQuery,
      produces: ['text/event-stream'], response: { 200: projectEventFrame },
    },
  }, async (request, reply) => {
    const after = resumeCursor(request, request.query.after);
    const feed = await platform.projectEventFeed(ctxOf(request), request.params.id, request.query);
    await sendEventStream(request, reply, feed, { after, ...streamTiming, reauthenticate: reauthenticate && (() => reauthenticate(request)) });
  });
  app.get('/projects/:id/operation-logs', { schema: { tags: ['events'], summary: 'Operation Log, newest first (owner only)', params: idParams, querystring: listOperationLogsQuery, response: { 200: operationLogPage } } },
    async (request) => platform.listOperationLogs(ctxOf(request), request.params.id, request.query));

  // — sessions, floors, pages —
  app.post('/sessions', { schema: { tags: ['sessions'], summary: 'Create a session (its id is generated)', body: createSessionRequest, response: { 201: sessionResponse('The new session') } } },
    async (request, reply) => reply.code(201).send({ session: await platform.createSession(ctxOf(request), request.body) }));
  app.get('/sessions', { schema: { tags: ['sessions'], summary: 'Sessions the caller may see', querystring: listSessionsQuery, response: { 200: list(sessionSchema, 'Sessions, newest first') } } },
    async (request) => ({ items: await platform.listSessions(ctxOf(request), request.query) }));
  app.get('/sessions/:id', { schema: { tags: ['sessions'], summary: 'One session', params: idParams, response: { 200: sessionResponse('The session') } } },
    async (request) => ({ session: await platform.getSession(ctxOf(request), request.params.id) }));
  app.get('/sessions/:id/floors', { schema: { tags: ['sessions'], summary: 'Floors (committed turns) of a session', params: idParams, response: { 200: list(floorSchema, 'Floors, ascending') } } },
    async (request) => ({ items: await platform.listFloors(ctxOf(request), request.params.id) }));
  app.post('/sessions/:id/floors', { schema: { tags: ['sessions'], summary: 'Commit a turn: a new Floor and its first Page', params: idParams, body: commitTurnBody, response: { 201: committedTurn } } },
    async (request, reply) => reply.code(201).send(await platform.commitTurn(ctxOf(request), request.params.id, request.body)));
  const floorParams = z.object({ id: idString, floor_id: idString });
  app.get('/sessions/:id/floors/:floor_id/pages', { schema: { tags: ['sessions'], summary: 'Pages (versions) of a floor', params: floorParams, response: { 200: list(pageSchema, 'Pages, ascending by version') } } },
    async (request) => ({ items: await platform.listPages(ctxOf(request), request.params.id, request.params.floor_id) }));
  app.post('/sessions/:id/floors/:floor_id/pages', { schema: { tags: ['sessions'], summary: 'Add a Page (regeneration) to a floor', params: floorParams, body: addPageBody, response: { 201: pageResponse } } },
    async (request, reply) => reply.code(201).send({ page: await platform.addPage(ctxOf(request), request.params.id, request.params.floor_id, request.body) }));
};
