/**
 * The Session resource of the Managed Agents compatibility surface (live-inbox.md "Managed Agents
 * compatibility"), what `client.beta.sessions.*` of `@anthropic-ai/sdk` calls: create, retrieve,
 * list, update, archive, delete under `/v1/sessions`. Bodies and answers in the SDK's shapes.
 */
import { createManagedSessionBody, listManagedSessionsQuery, managedSessionSchema, sessionParams, updateManagedSessionBody } from '@inbox-kit/core';
import type { ManagedSessionsService } from '@inbox-kit/core';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ctxOf } from '../context.js';

const sessionPage = z
  .object({
    data: z.array(managedSessionSchema),
    next_page: z.string().nullable().describe('Pass as `page` (other parameters unchanged) for the next page; null on the last page'),
    prev_page: z.null(),
  })
  .describe('A page of Sessions');
const deleted = z.object({ id: z.string(), type: z.literal('session_deleted') }).describe('The deleted Session');

/** Options of {@link managedSessionRoutes}. */
export interface ManagedSessionRoutesOptions {
  services: { managedSessions: ManagedSessionsService };
}

/**
 * `POST /v1/sessions` → 200 Session; `GET /v1/sessions` → 200 `{ data, next_page, prev_page }`;
 * `GET /v1/sessions/:session_id` → 200 Session; `POST /v1/sessions/:session_id` (update) → 200
 * Session; `POST /v1/sessions/:session_id/archive` → 200 Session; `DELETE /v1/sessions/:session_id`
 * → 200 `{ id, type: 'session_deleted' }`.
 */
export const managedSessionRoutes: FastifyPluginAsync<ManagedSessionRoutesOptions> = async (plain, { services }) => {
  const app = plain.withTypeProvider<ZodTypeProvider>();
  const { managedSessions } = services;
  const tags = ['managed-sessions'];
  const one = { 200: managedSessionSchema };

  app.post('/v1/sessions', { schema: { tags, summary: 'Create a Session with a configured agent (sessions.create)', body: createManagedSessionBody, response: one } },
    async (request) => managedSessions.create(ctxOf(request), request.body));
  app.get('/v1/sessions', { schema: { tags, summary: 'Sessions the caller may read, by created_at (sessions.list)', querystring: listManagedSessionsQuery, response: { 200: sessionPage } } },
    async (request) => managedSessions.list(ctxOf(request), request.query));
  app.get('/v1/sessions/:session_id', { schema: { tags, summary: 'One Session (sessions.retrieve)', params: sessionParams, response: one } },
    async (request) => managedSessions.retrieve(ctxOf(request), request.params.session_id));
  app.post('/v1/sessions/:session_id', { schema: { tags, summary: 'Update title and metadata (sessions.update)', params: sessionParams, body: updateManagedSessionBody, response: one } },
    async (request) => managedSessions.update(ctxOf(request), request.params.session_id, request.body));
  app.post('/v1/sessions/:session_id/archive', { schema: { tags, summary: 'Archive a Session: it takes no new user.message (sessions.archive)', params: sessionParams, response: one } },
    async (request) => managedSessions.archive(ctxOf(request), request.params.session_id));
  app.delete('/v1/sessions/:session_id', { schema: { tags, summary: 'Delete an idle Session (sessions.delete)', params: sessionParams, response: { 200: deleted } } },
    async (request) => managedSessions.delete(ctxOf(request), request.params.session_id));
};
