/**
 * Zod schemas of the Project Inbox requests (project-inbox.md "Endpoints"). The HTTP adapter
 * validates with these same schemas and publishes them in OpenAPI. Bodies are strict: unknown
 * fields are rejected.
 */
import { z } from 'zod';
import { INTEGER_PARAMETER } from '../validation.js';
import { idString, optionalText, queryText, text } from '../validation.js';
import { INBOX_DECISIONS, INBOX_STATUSES } from './transition.js';

const sourceId = idString.nullable().optional().transform((v) => v ?? null);

/** `POST /projects/:id/inbox` body. `payload` is checked for size and serialisability by the service. */
export const createInboxItemBody = z.strictObject({
  type: text({ min: 1, max: 128 }).describe('Item type, 1–128 code points after trimming'),
  title: optionalText(200).describe('Optional title, ≤ 200 code points; blank becomes null'),
  payload: z.unknown().optional().describe('Any JSON value, ≤ 262,144 UTF-8 bytes compact; null or absent becomes {}'),
  source_event_id: sourceId,
  source_session_id: sourceId,
  source_floor_id: sourceId,
  source_page_id: sourceId,
});
export type CreateInboxItemInput = z.input<typeof createInboxItemBody>;
export type CreateInboxItemBody = z.output<typeof createInboxItemBody>;

/** `PATCH /projects/:id/inbox/:item_id` body. `note` is ≤ 500 code points, trimmed. */
export const decideInboxItemBody = z.strictObject({
  decision: z.enum(INBOX_DECISIONS),
  note: optionalText(500),
});
export type DecideInboxItemInput = z.input<typeof decideInboxItemBody>;
export type DecideInboxItemBody = z.output<typeof decideInboxItemBody>;

/** A positive integer from a query string (digits only) or a number, in `[min, max]`. */
export function queryInt(min: number, max: number) {
  return z
    .union([z.number(), z.string().regex(/^\d{1,15}$/, 'must be an integer').transform(Number)], { error: `must be an integer from ${min} to ${max}` })
    .pipe(z.number().int().min(min).max(max))
    // In the OpenAPI document: `{ type: integer, minimum, maximum }` (a query string carries it as digits).
    .meta({ [INTEGER_PARAMETER]: { minimum: min, maximum: max } });
}

/** `GET /projects/:id/inbox` query. `limit` 1–200, default 50. */
export const listInboxItemsQuery = z.strictObject({
  status: z.enum(INBOX_STATUSES).optional(),
  type: queryText({ min: 1, max: 512 }).optional(),
  sender_account_id: idString.optional(),
  source_session_id: idString.optional(),
  limit: queryInt(1, 200).default(50),
  cursor: z.string().min(1).max(2048).optional(),
});
export type ListInboxItemsInput = z.input<typeof listInboxItemsQuery>;
export type ListInboxItemsQuery = z.output<typeof listInboxItemsQuery>;
