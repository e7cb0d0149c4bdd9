/**
 * Zod schemas of the Session Runtime requests: durable Session events (`POST/GET
 * /v1/sessions/{id}/events`, the SSE stream) and the five Live Inbox routes
 * (`/v1/awaken/sessions/{id}/live-inbox`). Bodies are strict: an unknown field is rejected (400).
 * The HTTP adapter validates with these same schemas. Spec: live-inbox.md "HTTP", "Drain, commit,
 * carry-over".
 */
import { z } from 'zod';
import { contentBlockSchema, contentSchema } from '../live-inbox/content.js';
import { InboxKitError } from '../errors.js';
import { idString, INTEGER_PARAMETER, parseOrThrow } from '../validation.js';

/** Most events one `POST /v1/sessions/{id}/events` may carry. */
export const MAX_EVENTS_PER_REQUEST = 50;

/** A tool-use id a client answers (`custom_tool_use_id`, `tool_use_id`): the id of its tool-use event. */
const toolUseIdField = z.string().min(1).max(256);

/** Longest `deny_message` of a `user.tool_confirmation` (code points). */
export const MAX_DENY_MESSAGE_CHARS = 10_000;

/**
 * One durable input event: `{ type: 'user.message', content }` (content = a non-empty array of
 * strict content blocks), `{ type: 'user.interrupt' }`, `{ type: 'user.custom_tool_result',
 * custom_tool_use_id, content?, is_error? }` (the result of a custom tool: text and image blocks,
 * may be empty) or `{ type: 'user.tool_confirmation', tool_use_id, result: 'allow' | 'deny',
 * deny_message? }` (`deny_message` only with `deny`). Unknown types and fields → 400. Callers never
 * send `tool_use` / `tool_result` blocks: those are the Runtime's own. Spec: live-inbox.md "Tools
 * and boundaries".
 */
export const sessionEventInput = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('user.message'), content: contentSchema }),
  z.strictObject({ type: z.literal('user.interrupt') }),
  z.strictObject({
    type: z.literal('user.custom_tool_result'),
    custom_tool_use_id: toolUseIdField,
    content: z.array(contentBlockSchema).max(100).optional(),
    is_error: z.boolean().nullable().optional(),
  }),
  z.strictObject({
    type: z.literal('user.tool_confirmation'),
    tool_use_id: toolUseIdField,
    result: z.enum(['allow', 'deny']),
    deny_message: z.string().max(MAX_DENY_MESSAGE_CHARS).nullable().optional(),
  }).refine((e) => e.result === 'deny' || e.deny_message === undefined || e.deny_message === null, {
    message: 'deny_message is only allowed when result is "deny"', path: ['deny_message'],
  }),
]);
export type SessionEventInput = z.output<typeof sessionEventInput>;

/**
 * Managed Agents input event types this Runtime does not host (client-run agent toolsets,
 * outcomes, system messages): sending one is 400 `unsupported_capability` rather than a bare
 * validation error.
 */
export const UNSUPPORTED_EVENT_TYPES: readonly string[] = ['user.tool_result', 'user.define_outcome', 'system.message'];

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
  throw new InboxKitError('unsupported_capability', `${type} is not supported by this runtime (its host tools run on the server; it hosts no outcomes or system messages)`,
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
  message_id: z.string().regex(/^-?\d{1,15}$/, 'must be an integer of at most 15 digits').transform(Number)
    .meta({ [INTEGER_PARAMETER]: { minimum: 1, maximum: 999_999_999_999_999 }, description: 'The queue-local id the queue answered (`{ id }`), an integer from 1' }),
});
