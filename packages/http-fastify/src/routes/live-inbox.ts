/**
 * Live Inbox routes (live-inbox.md "HTTP"), under `/v1/awaken/sessions/:session_id/live-inbox`:
 * read the editable window, queue, replace, withdraw, reorder. Outside the Managed Agents
 * compatibility surface. Check order (in the service): credential → Session ownership (404, or
 * 500 when it cannot be read) → write permission (403) → active native attempt (410) → the edit
 * (404 unknown id, 409 stale order). Bodies are strict (400); over the body limit → 413.
 */
import { contentSchema, liveInboxContentBody, liveInboxMessageParams, liveInboxOrderBody, sessionParams } from '@inbox-kit/core';
import type { SessionRuntimeService } from '@inbox-kit/core';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ctxOf } from '../context.js';

// Response bodies (serialised through these schemas, and published in the OpenAPI document).
const snapshotResponse = z
  .object({
    active: z.boolean().describe('Whether a native attempt accepts live input now'),
    version: z.number().int().describe('Edit counter of the queue (0 when inactive)'),
    messages: z.array(z.object({ id: z.number().int().describe('Queue-local id, never reused'), content: contentSchema })).describe('Queue order'),
  })
  .describe('The editable window');
const queuedResponse = z.object({ id: z.number().int().describe('Queue-local id of the new message') }).describe('The queued message');
const noContent = z.undefined().describe('No content');

/** Options of {@link liveInboxRoutes}. */
export interface LiveInboxRoutesOptions {
  services: { runtime: SessionRuntimeService };
}

/**
 * The five Live Inbox routes. Responses: `GET` 200 `{ active, version, messages }`, `POST` 200
 * `{ id }`, `PUT …/order`, `PUT …/:message_id`, `DELETE …/:message_id` 204. `/order` is a static
 * segment, so it always wins over `/:message_id`; a non-integer `message_id` is 400.
 */
export const liveInboxRoutes: FastifyPluginAsync<LiveInboxRoutesOptions> = async (plain, { services }) => {
  const app = plain.withTypeProvider<ZodTypeProvider>();
  const { runtime } = services;
  const tags = ['live-inbox'];
  const base = '/v1/awaken/sessions/:session_id/live-inbox';

  app.get(base, { schema: { tags, summary: 'Read the editable window of the active native attempt', params: sessionParams, response: { 200: snapshotResponse } } },
    async (request) => runtime.liveInboxSnapshot(ctxOf(request), request.params.session_id));

  app.post(base, { schema: { tags, summary: 'Queue content for the active native attempt (owner only)', params: sessionParams, body: liveInboxContentBody, response: { 200: queuedResponse } } },
    async (request) => runtime.liveInboxQueue(ctxOf(request), request.params.session_id, request.body));

  app.put(`${base}/order`, { schema: { tags, summary: 'Reorder the queue: every current id exactly once', params: sessionParams, body: liveInboxOrderBody, response: { 204: noContent } } },
    async (request, reply) => {
      await runtime.liveInboxReorder(ctxOf(request), request.params.session_id, request.body);
      return reply.code(204).send();
    });

  app.put(`${base}/:message_id`, { schema: { tags, summary: 'Replace a queued message, keeping its id and position', params: liveInboxMessageParams, body: liveInboxContentBody, response: { 204: noContent } } },
    async (request, reply) => {
      await runtime.liveInboxReplace(ctxOf(request), request.params.session_id, request.params.message_id, request.body);
      return reply.code(204).send();
    });

  app.delete(`${base}/:message_id`, { schema: { tags, summary: 'Withdraw a queued message', params: liveInboxMessageParams, response: { 204: noContent } } },
    async (request, reply) => {
      await runtime.liveInboxWithdraw(ctxOf(request), request.params.session_id, request.params.message_id);
      return reply.code(204).send();
    });
};
