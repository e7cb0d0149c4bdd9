/**
 * Durable Session events (live-inbox.md "Drain, commit, carry-over", "Managed Agents
 * compatibility"): send input (`user.message` commits and starts a Run when idle;
 * `user.interrupt` stops the running Run), page committed history, and stream it as SSE (stored
 * events first, then live; resume after the later of `?after=` and `Last-Event-ID`). Routes under
 * `/v1/sessions/:session_id/events`; events in the Managed Agents wire shape
 * ({@link managedSessionEvent}: RFC 3339 `processed_at`, `stop_reason` on `session.status_idle`).
 */
import {
  listSessionEventsQuery, managedSessionEvent, managedSessionEventSchema, rejectUnsupportedEvents, sendSessionEventsBody, sessionParams, streamSessionEventsQuery,
} from '@inbox-kit/core';
import type { Feed, FeedItem, SessionEvent, SessionRuntimeService } from '@inbox-kit/core';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ctxOf } from '../context.js';
import { relayForwardedReply } from '../forwarding.js';
import { resumeCursor, sendEventStream, type StreamTiming } from '../sse.js';

// Response bodies (serialised through these schemas, and published in the OpenAPI document).
const sent = z
  .object({ data: z.array(managedSessionEventSchema).describe('The committed events sent, in order') })
  .describe('The committed events');
const eventPage = z
  .object({
    data: z.array(managedSessionEventSchema).describe('Committed events, by seq in the order asked for'),
    next_page: z.string().nullable().describe('Pass as `page` (other parameters unchanged) for the next page; null on the last page'),
    has_more: z.boolean(),
  })
  .describe('A page of committed Session history');
const eventFrame = managedSessionEventSchema.describe(
  'A `text/event-stream`: a `retry:` hint, then one frame per committed event (`id: <seq>`, `event: <type>`, `data: <this event as JSON>`) '
  + 'and `: heartbeat` comment lines. Stored events first, then live ones. ' + 'Resume after the later of `?after=` and the `Last-Event-ID` header (a malformed header → 400 `validation_error`); a position after the newest event gets first one '
  + '`event: resync` frame (`id: <latest>`, `data: {"type":"resync","reason":"ahead_of_latest","requested_after":n,"latest":n}`), then the stream goes on after `latest`. '
  + 'Every delivery is authorised as of now: a caller that lost access (removed, key revoked, Session deleted) has the stream ended. `HEAD` answers with the headers only.',
);

/**
 * The Session feed with each item's data in the wire shape; `latest`, `authorize` and `visible`
 * are the feed's own (given the stored items the wire items were made from).
 */
function wireFeed(feed: Feed<SessionEvent>): Feed {
  const stored = new WeakMap<FeedItem, FeedItem<SessionEvent>>();
  const wire = (item: FeedItem<SessionEvent>): FeedItem => {
    const out = { id: item.id, type: item.type, data: managedSessionEvent(item.data) };
    stored.set(out, item);
    return out;
  };
  const original = (item: FeedItem): FeedItem<SessionEvent> => stored.get(item) ?? (item as FeedItem<SessionEvent>);
  return {
    replay: async (after, limit) => (await feed.replay(after, limit)).map(wire),
    latest: () => feed.latest(),
    subscribe: (push) => feed.subscribe((item) => push(wire(item))),
    authorize: (next) => feed.authorize(next.map(original)),
    visible: (item) => feed.visible(original(item)),
  };
}

/** Options of {@link sessionEventRoutes}. */
export interface SessionEventRoutesOptions {
  services: { runtime: SessionRuntimeService };
  streamTiming?: StreamTiming;
  /** Re-authenticates a stream's request before every delivery (the root plugin passes it). */
  reauthenticate?: (request: FastifyRequest) => Promise<void>;
}

/**
 * `POST /v1/sessions/:session_id/events` → 200 `{ data: [event] }` (the committed input events);
 * `GET /v1/sessions/:session_id/events?limit=&page=&order=&types[]=&created_at[gt]=…` → 200
 * `{ data, next_page, has_more }`; `GET /v1/sessions/:session_id/events/stream?after=&event_deltas[]=`
 * → `text/event-stream`, frames `id: <seq>`, `event: <type>`, `data: <event JSON>`.
 */
export const sessionEventRoutes: FastifyPluginAsync<SessionEventRoutesOptions> = async (plain, { services, streamTiming, reauthenticate }) => {
  const app = plain.withTypeProvider<ZodTypeProvider>();
  const { runtime } = services;
  const tags = ['session-events'];

  // Input with a `user.interrupt` is forwarded to the process running the Session's Run, if
  // another one does (attempt routing), so the interrupt stops it.
  app.post('/v1/sessions/:session_id/events', {
    config: { forwardable: true },
    // Input types of the API this Runtime does not host get their own answer, not a schema error.
    preValidation: async (request) => rejectUnsupportedEvents(request.body),
    schema: { tags, summary: 'Send durable input: user.message (starts a Run when idle) or user.interrupt', params: sessionParams, body: sendSessionEventsBody, response: { 200: sent } },
  }, async (request, reply) => {
    const ctx = ctxOf(request);
    const route = await runtime.routeLiveInbox(ctx, request.params.session_id, { type: 'send_events', body: request.body }, { forwarded: request.forwarded });
    if (route.route === 'forwarded') return relayForwardedReply(reply, route.reply);
    const { data } = await runtime.sendEvents(ctx, request.params.session_id, request.body);
    return { data: data.map(managedSessionEvent) };
  });

  app.get('/v1/sessions/:session_id/events', {
    schema: { tags, summary: 'Committed Session history: cursor pages, order, types[] and created_at filters (events.list)', params: sessionParams, querystring: listSessionEventsQuery, response: { 200: eventPage } },
  }, async (request) => {
    const page = await runtime.listEvents(ctxOf(request), request.params.session_id, request.query);
    return { ...page, data: page.data.map(managedSessionEvent) };
  });

  app.get('/v1/sessions/:session_id/events/stream', {
    schema: { tags, summary: 'Committed Session history as SSE: stored events, then live', params: sessionParams, querystring: streamSessionEventsQuery,
      produces: ['text/event-stream'], response: { 200: eventFrame } },
  }, async (request, reply) => {
    const after = resumeCursor(request, request.query.after);
    const feed = wireFeed(await runtime.eventFeed(ctxOf(request), request.params.session_id));
    await sendEventStream(request, reply, feed, { after, ...streamTiming, reauthenticate: reauthenticate && (() => reauthenticate(request)) });
  });
};
