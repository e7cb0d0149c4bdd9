/**
 * Zod schemas of the Session Runtime requests: durable Session events (`POST/GET
 * /v1/sessions/{id}/events`, the SSE stream) and the five Live Inbox routes
 * (`/v1/awaken/sessions/{id}/live-inbox`). Bodies are strict: an unknown field is rejected (400).
 * The HTTP adapter validates with these same schemas. Spec: live-inbox.md "HTTP", "Drain, commit,
 * carry-over".
 */
import { z } from 'zod';
import { contentSchema } from '../live-inbox/content.js';
import { InboxKitError } from '../errors.js';
import { idString, parseOrThrow } from '../validation.js';

/** Most events one `POST /v1/sessions/{id}/events` may carry. */
export const MAX_EVENTS_PER_REQUEST = 50;

/**
 * One durable input event: `{ type: 'user.message', content }` (content = a non-empty array of
 * strict content blocks) or `{ type: 'user.interrupt' }`. Unknown types and fields → 400.
 */
export const sessionEventInput = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('user.message'), content: contentSchema }),
  z.strictObject({ type: z.literal('user.interrupt') }),
]);
export type SessionEventInput = z.output<typeof sessionEventInput>;

/**
 * Managed Agents input event types this Runtime does not host (tools, custom tools, outcomes,
 * system messages): sending one is 400 `unsupported_capability` rather than a bare validation error.
 */
export const UNSUPPORTED_EVENT_TYPES: readonly string[] = [
  'user.tool_confirmation', 'user.custom_tool_result', 'user.tool_result', 'user.define_outcome', 'system.message',
];

/**
 * Refuses, before validation, an events body holding an input type this Runtime does not host.
 * @throws InboxKitError `unsupported_capability` (400; the detail names the event).
 */
export function rejectUnsupportedEvents(input: unknown): void {
  const events = input !== null && typeof input === 'object' ? (input as { events?: unknown }).events : undefined;
  if (!Array.isArray(events)) return;
  const index = events.findIndex((e) => e !== null && typeof e === 'object' && UNSUPPORTED_EVENT_TYPES.includes(String((e as { type?: unknown }).type)));
  if (index < 0) return;
  const type = String((events[index] as { type: unknown }).type);
  throw new InboxKitError('unsupported_capability', `${type} is not supported by this runtime (it hosts no tools, outcomes or system messages)`,
    [{ path: `events.${index}.type`, message: `${type} is not supported` }]);
}

/**
 * Parses a `POST /v1/sessions/{id}/events` body.
 * @throws InboxKitError `unsupported_capability` ({@link rejectUnsupportedEvents}), `validation_error`.
 */
export function parseSendSessionEvents(input: unknown): z.output<typeof sendSessionEventsBody> {
  rejectUnsupportedEvents(input);
  return parseOrThrow(sendSessionEventsBody, input, 'events');
}

/** `POST /v1/sessions/{id}/events` body: `{ events: [1–50 events] }`, processed in order. */
export const sendSessionEventsBody = z.strictObject({
  events: z.array(sessionEventInput).min(1, 'send at least one event').max(MAX_EVENTS_PER_REQUEST, `send at most ${MAX_EVENTS_PER_REQUEST} events`),
});
export type SendSessionEventsInput = z.input<typeof sendSessionEventsBody>;

// The `GET …/events` and `…/events/stream` queries live in managed-agents.ts (the Managed Agents wire).

/** `POST …/live-inbox` and `PUT …/live-inbox/{message_id}` body: `{ content }`. */
export const liveInboxContentBody = z.strictObject({ content: contentSchema });
export type LiveInboxContentInput = z.input<typeof liveInboxContentBody>;

/** `PUT …/live-inbox/order` body: `{ order: [int, …] }`, every current id once (checked by the queue: 409). */
export const liveInboxOrderBody = z.strictObject({
  order: z.array(z.number().int().min(-Number.MAX_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER)),
});
export type LiveInboxOrderInput = z.input<typeof liveInboxOrderBody>;

/** Path parameters of the session-scoped routes. */
export const sessionParams = z.object({ session_id: idString });

/**
 * Path parameters of `PUT/DELETE …/live-inbox/{message_id}`: the id must be a decimal integer
 * (`"abc"`, `"1.5"`, `"1e3"` → 400). An integer that was never queued is a 404 from the queue.
 */
export const liveInboxMessageParams = z.object({
  session_id: idString,
  message_id: z.string().regex(/^-?\d{1,15}$/, 'must be an integer').transform(Number),
});
