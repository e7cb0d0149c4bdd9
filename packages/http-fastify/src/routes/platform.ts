/**
 * Platform routes the inboxes stand on (platform.md): the caller, projects, members, sessions,
 * floors and pages, Project Event pages and the Operation Log.
 */
import {
  addMemberBody, addPageBody, commitTurnBody, createProjectBody, createSessionBody, idString, listOperationLogsQuery,
  listProjectEventsQuery, listSessionsQuery, streamProjectEventsQuery,
} from '@inbox-kit/core';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ctxOf } from '../context.js';
import { resumeCursor, sendEventStream, type StreamTiming } from '../sse.js';
import type { InboxKitServices } from '../plugin.js';

const idParams = z.object({ id: idString });

export const platformRoutes: FastifyPluginAsync<{ services: InboxKitServices; streamTiming?: StreamTiming }> = async (plain, { services, streamTiming }) => {
  const app = plain.withTypeProvider<ZodTypeProvider>();
  const { platform } = services;

  app.get('/me', { schema: { tags: ['identity'], summary: 'The calling account' } }, async (request) => platform.whoami(ctxOf(request)));

  // — projects —
  app.post('/projects', { schema: { tags: ['projects'], summary: 'Create a project owned by the caller', body: createProjectBody } },
    async (request, reply) => reply.code(201).send({ project: await platform.createProject(ctxOf(request), request.body) }));
  app.get('/projects', { schema: { tags: ['projects'], summary: 'Projects the caller owns or is a member of' } },
    async (request) => ({ items: await platform.listProjects(ctxOf(request)) }));
  app.get('/projects/:id', { schema: { tags: ['projects'], summary: 'A project and the caller\'s role', params: idParams } },
    async (request) => platform.getProject(ctxOf(request), request.params.id));
  app.post('/projects/:id/archive', { schema: { tags: ['projects'], summary: 'Archive a project (owner only)', params: idParams } },
    async (request) => ({ project: await platform.archiveProject(ctxOf(request), request.params.id) }));

  // — members —
  app.post('/projects/:id/members', { schema: { tags: ['members'], summary: 'Add a member or change its role (owner only)', params: idParams, body: addMemberBody } },
    async (request, reply) => reply.code(201).send({ member: await platform.addMember(ctxOf(request), request.params.id, request.body) }));
  app.get('/projects/:id/members', { schema: { tags: ['members'], summary: 'List members', params: idParams } },
    async (request) => ({ items: await platform.listMembers(ctxOf(request), request.params.id) }));
  app.delete('/projects/:id/members/:account_id', { schema: { tags: ['members'], summary: 'Remove a member (owner only)', params: z.object({ id: idString, account_id: idString }) } },
    async (request, reply) => {
      await platform.removeMember(ctxOf(request), request.params.id, request.params.account_id);
      return reply.code(204).send();
    });

  // — events and logs —
  app.get('/projects/:id/events', { schema: { tags: ['events'], summary: 'Project Events after a sequence, ascending', params: idParams, querystring: listProjectEventsQuery } },
    async (request) => platform.listProjectEvents(ctxOf(request), request.params.id, request.query));
  app.get('/projects/:id/events/stream', {
    schema: { tags: ['events'], summary: 'Live stream of Project Events (SSE); resume with ?after= or Last-Event-ID', params: idParams, querystring: streamProjectEventsQuery },
  }, async (request, reply) => {
    const feed = await platform.projectEventFeed(ctxOf(request), request.params.id, request.query);
    await sendEventStream(request, reply, feed, { after: resumeCursor(request, request.query.after), ...streamTiming });
  });
  app.get('/projects/:id/operation-logs', { schema: { tags: ['events'], summary: 'Operation Log, newest first (owner only)', params: idParams, querystring: listOperationLogsQuery } },
    async (request) => platform.listOperationLogs(ctxOf(request), request.params.id, request.query));

  // — sessions, floors, pages —
  app.post('/sessions', { schema: { tags: ['sessions'], summary: 'Create a session', body: createSessionBody } },
    async (request, reply) => reply.code(201).send({ session: await platform.createSession(ctxOf(request), request.body) }));
  app.get('/sessions', { schema: { tags: ['sessions'], summary: 'Sessions the caller may see', querystring: listSessionsQuery } },
    async (request) => ({ items: await platform.listSessions(ctxOf(request), request.query) }));
  app.get('/sessions/:id', { schema: { tags: ['sessions'], summary: 'One session', params: idParams } },
    async (request) => ({ session: await platform.getSession(ctxOf(request), request.params.id) }));
  app.get('/sessions/:id/floors', { schema: { tags: ['sessions'], summary: 'Floors (committed turns) of a session', params: idParams } },
    async (request) => ({ items: await platform.listFloors(ctxOf(request), request.params.id) }));
  app.post('/sessions/:id/floors', { schema: { tags: ['sessions'], summary: 'Commit a turn: a new Floor and its first Page', params: idParams, body: commitTurnBody } },
    async (request, reply) => reply.code(201).send(await platform.commitTurn(ctxOf(request), request.params.id, request.body)));
  const floorParams = z.object({ id: idString, floor_id: idString });
  app.get('/sessions/:id/floors/:floor_id/pages', { schema: { tags: ['sessions'], summary: 'Pages (versions) of a floor', params: floorParams } },
    async (request) => ({ items: await platform.listPages(ctxOf(request), request.params.id, request.params.floor_id) }));
  app.post('/sessions/:id/floors/:floor_id/pages', { schema: { tags: ['sessions'], summary: 'Add a Page (regeneration) to a floor', params: floorParams, body: addPageBody } },
    async (request, reply) => reply.code(201).send({ page: await platform.addPage(ctxOf(request), request.params.id, request.params.floor_id, request.body) }));
};
