/**
 * Project Inbox routes (project-inbox.md "Endpoints"): create, list, get, decide under
 * `/projects/:id/inbox`. Bodies and queries are validated by the core's zod schemas.
 */
import {
  createInboxItemBody, decideInboxItemBody, idempotencyKeySchema, idString, listInboxItemsQuery, projectInboxItemSchema,
} from '@inbox-kit/core';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ctxOf } from '../context.js';
import type { InboxKitServices } from '../plugin.js';

const projectParams = z.object({ id: idString });
const itemParams = z.object({ id: idString, item_id: idString });
// Other headers pass through untouched (the schema only documents and checks this one).
const createHeaders = z.looseObject({ 'idempotency-key': idempotencyKeySchema.optional() });

const CREATE_DESCRIPTION = [
  'Writes the item, one Operation Log row and one Project Event in one transaction, then publishes the event.',
  '',
  '**Safe retries.** Send `Idempotency-Key` (1–255 printable ASCII characters; per workspace and acting account) to make a',
  'repeat safe: a request with a key already used for the same project and the same body (compared after',
  'normalisation) answers `201` with the item that first request created, as it is now, and the header',
  '`Idempotent-Replayed: true`; nothing is written or published again. The same key with another body or',
  'project answers `409 idempotency_key_reused`. A request that fails records nothing, so a corrected retry',
  'may reuse its key. Concurrent requests with one key create one item.',
].join('\n');

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

  app.post('/projects/:id/inbox', {
    schema: {
      tags, summary: 'File an inbox item (owner or deriver)', description: CREATE_DESCRIPTION, params: projectParams, headers: createHeaders,
      body: createInboxItemBody, response: { 201: itemResponse('The new item (`status: pending`), or on a replay the item the key created (with `Idempotent-Replayed: true`)') },
    },
  }, async (request, reply) => {
    const key = request.headers['idempotency-key'];
    const { item, replayed } = await services.projectInbox.createWithOutcome(
      ctxOf(request), request.params.id, request.body, key === undefined ? {} : { idempotency_key: key },
    );
    if (replayed) void reply.header('idempotent-replayed', 'true');
    return reply.code(201).send({ item });
  });

  app.get('/projects/:id/inbox', { schema: { tags, summary: 'List inbox items, newest first', params: projectParams, querystring: listInboxItemsQuery, response: { 200: itemPage } } },
    async (request) => services.projectInbox.list(ctxOf(request), request.params.id, request.query));

  app.get('/projects/:id/inbox/:item_id', { schema: { tags, summary: 'Get one inbox item', params: itemParams, response: { 200: itemResponse('The item') } } },
    async (request) => ({ item: await services.projectInbox.get(ctxOf(request), request.params.id, request.params.item_id) }));

  app.patch('/projects/:id/inbox/:item_id', { schema: { tags, summary: 'Decide an inbox item (owner only)', params: itemParams, body: decideInboxItemBody, response: { 200: itemResponse('The decided item') } } },
    async (request) => ({ item: await services.projectInbox.decide(ctxOf(request), request.params.id, request.params.item_id, request.body) }));
};
