/**
 * Project Inbox routes (project-inbox.md "Endpoints"): create, list, get, decide under
 * `/projects/:id/inbox`. Bodies and queries are validated by the core's zod schemas.
 */
import { createInboxItemBody, decideInboxItemBody, idString, listInboxItemsQuery, projectInboxItemSchema } from '@inbox-kit/core';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ctxOf } from '../context.js';
import type { InboxKitServices } from '../plugin.js';

const projectParams = z.object({ id: idString });
const itemParams = z.object({ id: idString, item_id: idString });

// Response bodies (serialised through these schemas, and published in the OpenAPI document).
const itemResponse = (what: string) => z.object({ item: projectInboxItemSchema }).describe(what);
const itemPage = z
  .object({
    items: z.array(projectInboxItemSchema).describe('Newest first (`created_at DESC, id DESC`); a deriver sees only the items it sent'),
    next_cursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last page'),
  })
  .describe('A page of inbox items');

export const projectInboxRoutes: FastifyPluginAsync<{ services: InboxKitServices }> = async (plain, { services }) => {
  const app = plain.withTypeProvider<ZodTypeProvider>();
  const tags = ['project-inbox'];

  app.post('/projects/:id/inbox', { schema: { tags, summary: 'File an inbox item (owner or deriver)', params: projectParams, body: createInboxItemBody, response: { 201: itemResponse('The new item (`status: pending`)') } } },
    async (request, reply) => {
      const item = await services.projectInbox.create(ctxOf(request), request.params.id, request.body);
      return reply.code(201).send({ item });
    });

  app.get('/projects/:id/inbox', { schema: { tags, summary: 'List inbox items, newest first', params: projectParams, querystring: listInboxItemsQuery, response: { 200: itemPage } } },
    async (request) => services.projectInbox.list(ctxOf(request), request.params.id, request.query));

  app.get('/projects/:id/inbox/:item_id', { schema: { tags, summary: 'Get one inbox item', params: itemParams, response: { 200: itemResponse('The item') } } },
    async (request) => ({ item: await services.projectInbox.get(ctxOf(request), request.params.id, request.params.item_id) }));

  app.patch('/projects/:id/inbox/:item_id', { schema: { tags, summary: 'Decide an inbox item (owner only)', params: itemParams, body: decideInboxItemBody, response: { 200: itemResponse('The decided item') } } },
    async (request) => ({ item: await services.projectInbox.decide(ctxOf(request), request.params.id, request.params.item_id, request.body) }));
};
