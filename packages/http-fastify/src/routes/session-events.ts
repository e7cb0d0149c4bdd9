/**
 * Durable Session events (live-inbox.md "Drain, commit, carry-over"): send input (`user.message`
 * commits and starts a Run when idle; `user.interrupt` stops the running Run), page committed
 * history, and stream it as SSE (stored events first, then live; resume with `?after=` or
 * `Last-Event-ID`). Routes under `/v1/sessions/:session_id/events`.
 */
import { listSessionEventsQuery, sendSessionEventsBody, sessionEventSchema, sessionParams, streamSessionEventsQuery } from '@inbox-kit/core';
import type { SessionRuntimeService } from '@inbox-kit/core';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ctxOf } from '../context.js';
import { relayForwardedReply } from '../forwarding.js';
import { resumeCursor, sendEventStream, type StreamTiming } from '../sse.js';

// Response bodies (serialised through these schemas, and published in the OpenAPI document).
const receipts = z
  .object({
    data: z.array(z.object({
      id: z.string().describe('The committed Session event'),
      type: z.string(),
      processed_at: z.number().int().describe('ms since the epoch'),
    })).describe('One receipt per event sent, in order'),
  })
  .describe('Receipts of the committed events');
const eventPage = z
  .object({
    data: z.array(sessionEventSchema).describe('Committed events, ascending by seq'),
    next_page: z.string().nullable().describe('Pass as `after` for the next page; null on the last page'),
    has_more: z.boolean(),
  })
  .describe('A page of committed Session history');
const eventFrame = sessionEventSchema.describe(
  'A `text/event-stream`: a `retry:` hint, then one frame per committed event (`id: <seq>`, `event: <type>`, `data: <this SessionEvent as JSON>`) '
  + 'and `: heartbeat` comment lines. Stored events first, then live ones. ' + 'Resume after the later of `?after=` and the `Last-Event-ID` header (a malformed header → 400 `validation_error`); a position after the newest event gets first one '
  + '`event: resync` frame (`id: <latest>`, `data: {"type":"resync","reason":"ahead_of_latest","requested_after":n,"latest":n}`), then the stream goes on after `latest`. '
  + 'Every delivery is authorised as of now: a caller that lost access (removed, key revoked) has the stream ended. `HEAD` answers with the headers only.',
);

/** Options of {@link sessionEventRoutes}. */
export interface SessionEventRoutesOptions {
  services: { runtime: SessionRuntimeService };
  streamTiming?: StreamTiming;
  /** Re-authenticates a stream's request before every delivery (the root plugin passes it). */
  reauthenticate?: (request: FastifyRequest) => Promise<void>;
}

/**
 * `POST /v1/sessions/:session_id/events` → 200 `{ data: [{ id, type, processed_at }] }`;
 * `GET /v1/sessions/:session_id/events?after=&limit=` → 200 `{ data, next_page, has_more }`;
 * `GET /v1/sessions/:session_id/events/stream?after=` → `text/event-stream`, frames
 * `id: <seq>`, `event: <type>`, `data: <SessionEvent JSON>`.
 */
export const sessionEventRoutes: FastifyPluginAsync<SessionEventRoutesOptions> = async (plain, { services, streamTiming, reauthenticate }) => {
  const app = plain.withTypeProvider<ZodTypeProvider>();
  const { runtime } = services;
  const tags = ['session-events'];

  // Input with a `user.interrupt` is forwarded to the process running the Session's Run, if
  // another one does (attempt routing), so the interrupt stops it.
  app.post('/v1/sessions/:session_id/events', {
    config: { forwardable: true },
    schema: { tags, summary: 'Send durable input: user.message (starts a Run when idle) or user.interrupt', params: sessionParams, body: sendSessionEventsBody, response: { 200: receipts } },
  }, async (request, reply) => {
    const ctx = ctxOf(request);
    const route = await runtime.routeLiveInbox(ctx, request.params.session_id, { type: 'send_events', body: request.body }, { forwarded: request.forwarded });
    if (route.route === 'forwarded') return relayForwardedReply(reply, route.reply);
    return runtime.sendEvents(ctx, request.params.session_id, request.body);
  });

  app.get('/v1/sessions/:session_id/events', {
    schema: { tags, summary: 'Committed Session history, ascending by seq', params: sessionParams, querystring: listSessionEventsQuery, response: { 200: eventPage } },
  }, async (request) => runtime.listEvents(ctxOf(request), request.params.session_id, request.query));

  app.get('/v1/sessions/:session_id/events/stream', {
    schema: { tags, summary: 'Committed Session history as SSE: stored events, then live', params: sessionParams, querystring: streamSessionEventsQuery,
      produces: ['text/event-stream'], response: { 200: eventFrame } },
  }, async (request, reply) => {
    const after = resumeCursor(request, request.query.after);
    const feed = await runtime.eventFeed(ctxOf(request), request.params.session_id);
    await sendEventStream(request, reply, feed, { after, ...streamTiming, reauthenticate: reauthenticate && (() => reauthenticate(request)) });
  });
};
