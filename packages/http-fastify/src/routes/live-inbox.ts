/**
 * Live Inbox routes (live-inbox.md "HTTP"), under `/v1/awaken/sessions/:session_id/live-inbox`:
 * read the editable window, queue, replace, withdraw, reorder. Outside the Managed Agents
 * compatibility surface. Check order (in the service): credential → Session ownership (404, or
 * 500 when it cannot be read) → write permission (403) → active native attempt (410) → the edit
 * (404 unknown id, 409 stale order). Bodies are strict (400); over the body limit → 413.
 *
 * Attempt routing (live-inbox.md "Scale"): each route first asks `runtime.routeLiveInbox`; when
 * another process owns the Session's attempt, the request is forwarded there (after the local
 * visibility and permission checks) and the owner's status and body are relayed unchanged.
 */
import { contentSchema, liveInboxContentBody, liveInboxMessageParams, liveInboxOrderBody, sessionParams } from '@inbox-kit/core';
import type { LiveInboxOperation, RequestContext, SessionRuntimeService } from '@inbox-kit/core';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ctxOf } from '../context.js';
import { relayForwardedReply } from '../forwarding.js';

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
  const config = { forwardable: true };

  /** Answers here (`local`) or relays the owner's answer. */
  const routed = async <T>(
    request: FastifyRequest, session_id: string, reply: FastifyReply, operation: LiveInboxOperation,
    local: (ctx: RequestContext) => Promise<T>,
  ): Promise<T | FastifyReply> => {
    const ctx = ctxOf(request);
    const route = await runtime.routeLiveInbox(ctx, session_id, operation, { forwarded: request.forwarded });
    return route.route === 'forwarded' ? relayForwardedReply(reply, route.reply) : local(ctx);
  };

  app.get(base, { config, schema: { tags, summary: 'Read the editable window of the active native attempt', params: sessionParams, response: { 200: snapshotResponse } } },
    async (request, reply) => routed(request, request.params.session_id, reply, { type: 'snapshot' }, (ctx) => runtime.liveInboxSnapshot(ctx, request.params.session_id)));

  app.post(base, { config, schema: { tags, summary: 'Queue content for the active native attempt (owner only)', params: sessionParams, body: liveInboxContentBody, response: { 200: queuedResponse } } },
    async (request, reply) => routed(request, request.params.session_id, reply, { type: 'queue', body: request.body }, (ctx) => runtime.liveInboxQueue(ctx, request.params.session_id, request.body)));

  app.put(`${base}/order`, { config, schema: { tags, summary: 'Reorder the queue: every current id exactly once', params: sessionParams, body: liveInboxOrderBody, response: { 204: noContent } } },
    async (request, reply) => routed(request, request.params.session_id, reply, { type: 'reorder', body: request.body }, async (ctx) => {
      await runtime.liveInboxReorder(ctx, request.params.session_id, request.body);
      return reply.code(204).send();
    }));

  app.put(`${base}/:message_id`, { config, schema: { tags, summary: 'Replace a queued message, keeping its id and position', params: liveInboxMessageParams, body: liveInboxContentBody, response: { 204: noContent } } },
    async (request, reply) => routed(request, request.params.session_id, reply, { type: 'replace', message_id: request.params.message_id, body: request.body }, async (ctx) => {
      await runtime.liveInboxReplace(ctx, request.params.session_id, request.params.message_id, request.body);
      return reply.code(204).send();
    }));

  app.delete(`${base}/:message_id`, { config, schema: { tags, summary: 'Withdraw a queued message', params: liveInboxMessageParams, response: { 204: noContent } } },
    async (request, reply) => routed(request, request.params.session_id, reply, { type: 'withdraw', message_id: request.params.message_id }, async (ctx) => {
      await runtime.liveInboxWithdraw(ctx, request.params.session_id, request.params.message_id);
      return reply.code(204).send();
    }));
};
