/**
 * The response bodies of the route table (and the request parts several routes share): zod schemas,
 * with the descriptions the OpenAPI document shows. Data only.
 */
import { z } from 'zod';
import { idempotencyKeySchema } from '../../idempotency.js';
import { contentSchema } from '../../live-inbox/content.js';
import { accountSchema, apiKeyKindSchema, apiKeyViewSchema, floorSchema, operationLogSchema, pageSchema, projectEventSchema, projectInboxItemSchema, projectRoleSchema, sessionSchema, workspaceAccountSchema } from '../../schemas/records.js';
import { managedAgentSchema } from '../../sessions/agents.js';
import { managedSessionEventSchema, managedSessionSchema } from '../../sessions/managed-agents.js';
import { idString } from '../../validation.js';
import { memberRecordSchema, projectRecordSchema } from '../project-records.js';

// — response bodies —
/** A keyset page of a list route (platform.md "Lists and pages"): `{ items, next_cursor }`. */
export const list = <T extends z.ZodType>(item: T, what: string) => z
  .object({ items: z.array(item).describe(what), next_cursor: z.string().nullable().describe('Pass as `cursor` (other parameters unchanged) for the next page; null on the last page') })
  .describe(`A page: ${what}`);
export const noContent = z.undefined().describe('No content');
export const idParams = z.object({ id: idString });
export const floorParams = z.object({ id: idString, floor_id: idString });
export const itemParams = z.object({ id: idString, item_id: idString });
// Other headers pass through untouched (the schema only documents and checks this one).
export const createItemHeaders = z.looseObject({ 'idempotency-key': idempotencyKeySchema.optional() });

/** `GET /health` body. */
export const healthResponse = z.object({ status: z.literal('ok') });
/** `GET /ready` body (when ready; otherwise 503 `storage_unavailable` in the envelope, the reason in `details[0].code`). */
export const readyResponse = z.object({ status: z.literal('ready') }).describe('Storage is reachable and migrated');
/** `POST /admin/accounts`, `POST /admin/accounts/:id/disable` body. */
export const adminAccountResponse = z.object({ account: workspaceAccountSchema }).describe('The account');
/** `POST /admin/accounts/:id/keys` body. */
export const issuedApiKeyResponse = z
  .object({ key: apiKeyViewSchema, secret: z.string().describe('The secret (`ik_…`): shown only in this answer; send it as `Authorization: Bearer <secret>`') })
  .describe('The new key and its secret');
/** `POST /admin/keys/:id/rotate` body. */
export const rotatedApiKeyResponse = issuedApiKeyResponse
  .extend({ previous: apiKeyViewSchema.describe('The rotated key: refused from its `revoked_at` (now, or after the grace period)') })
  .describe('The new key, its secret, and the key it replaces');
/** `GET /admin/operation-logs` body. */
export const adminOperationLogPageResponse = z
  .object({ items: z.array(operationLogSchema), next_cursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last page') })
  .describe('A page of the administration writes (Operation Log rows without a project), newest first');
/** `POST /stream-tokens` body. */
export const streamTokenResponse = z
  .object({
    token: z.string().describe('`ikst_…`: pass it as `access_token` on a stream route (`/projects/{id}/events/stream`, `/v1/sessions/{id}/events/stream`)'),
    expires_at: z.number().int().describe('ms since the epoch; a stream must be opened (or reopened) before it'),
  })
  .describe('The stream token');
/** `GET /me` body. */
export const meResponse = z.object({ account: accountSchema, workspace_id: z.string(), key_kind: apiKeyKindSchema }).describe('The caller');
export const projectResponse = (what: string) => z.object({ project: projectRecordSchema }).describe(what);
/** `GET /projects/:id` body: the project record (with the caller's `role` and `kind`) and the role again at the top. */
export const projectWithRoleResponse = z.object({ project: projectRecordSchema, role: projectRoleSchema }).describe("The project and the caller's role in it");
export const memberResponse = z.object({ member: memberRecordSchema }).describe('The membership');
/** `GET /projects/:id/events` body. */
export const projectEventPageResponse = z
  .object({
    items: z.array(projectEventSchema).describe('Events the caller may see, ascending by sequence'),
    next_after: z.number().int().describe('The last sequence examined; pass it as `after` for the next page'),
    has_more: z.boolean(),
  })
  .describe('A page of Project Events');
export const RESUME_AND_ACCESS = 'Resume after the later of `?after=` and the `Last-Event-ID` header (a malformed header → 400 `validation_error`); a position after the newest event gets first one '
  + '`event: resync` frame (`id: <latest>`, `data: {"type":"resync","reason":"ahead_of_latest","requested_after":n,"latest":n}`), then the stream goes on after `latest`. '
  + 'Every delivery is authorised as of now: a caller that lost access (removed, key revoked) has the stream ended. `HEAD` answers with the headers only.';
export const projectEventFrame = projectEventSchema.describe(
  'A `text/event-stream`: a `retry:` hint, then one frame per event (`id: <sequence>`, `event: <type>`, `data: <this ProjectEvent as JSON>`) '
  + 'and `: heartbeat` comment lines. ' + RESUME_AND_ACCESS,
);
/** `GET /projects/:id/operation-logs` body. */
export const operationLogPageResponse = z
  .object({ items: z.array(operationLogSchema), next_cursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last page') })
  .describe('A page of the Operation Log, newest first');
export const sessionResponse = (what: string) => z.object({ session: sessionSchema }).describe(what);
export const committedTurn = z.object({ floor: floorSchema, page: pageSchema }).describe('The new Floor and its first Page');
export const pageResponse = z.object({ page: pageSchema }).describe('The new Page');
export const itemResponse = (what: string) => z.object({ item: projectInboxItemSchema }).describe(what);
/** `GET /projects/:id/inbox` body. */
export const inboxItemPageResponse = z
  .object({
    items: z.array(projectInboxItemSchema).describe('Newest first (`created_at DESC, id DESC`); a deriver sees only the items it sent'),
    next_cursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last page'),
  })
  .describe('A page of inbox items');
/** `POST /v1/sessions/:session_id/events` body. */
export const sessionEventsSentResponse = z
  .object({ data: z.array(managedSessionEventSchema).describe('The committed events sent, in order') })
  .describe('The committed events');
/** `GET /v1/sessions/:session_id/events` body. */
export const sessionEventPageResponse = z
  .object({
    data: z.array(managedSessionEventSchema).describe('Committed events, by seq in the order asked for'),
    next_page: z.string().nullable().describe('Pass as `page` (other parameters unchanged) for the next page; null on the last page'),
    has_more: z.boolean(),
  })
  .describe('A page of committed Session history');
export const sessionEventFrame = managedSessionEventSchema.describe(
  'A `text/event-stream`: a `retry:` hint, then one frame per committed event (`id: <seq>`, `event: <type>`, `data: <this event as JSON>`) '
  + 'and `: heartbeat` comment lines. Stored events first, then live ones. ' + RESUME_AND_ACCESS.replace('(removed, key revoked)', '(removed, key revoked, Session deleted)'),
);

/** `GET /v1/awaken/sessions/:session_id/live-inbox` body. */
export const liveInboxSnapshotResponse = z
  .object({
    active: z.boolean().describe('Whether a native attempt accepts live input now'),
    version: z.number().int().describe('Edit counter of the queue (0 when inactive)'),
    messages: z.array(z.object({ id: z.number().int().describe('Queue-local id, never reused'), content: contentSchema })).describe('Queue order'),
  })
  .describe('The editable window');
export const queuedResponse = z.object({ id: z.number().int().describe('Queue-local id of the new message') }).describe('The queued message');
/** `GET /v1/sessions` body. */
export const managedSessionPageResponse = z
  .object({
    data: z.array(managedSessionSchema),
    next_page: z.string().nullable().describe('Pass as `page` (other parameters unchanged) for the next page; null on the last page'),
    prev_page: z.null(),
  })
  .describe('A page of Sessions');
/** `GET /v1/agents` (and `…/versions`) body. */
export const managedAgentPageResponse = z
  .object({
    data: z.array(managedAgentSchema),
    next_page: z.string().nullable().describe('Pass as `page` (other parameters unchanged) for the next page; null on the last page'),
  })
  .describe('A page of agents');
export const agentParams = z.object({ agent_id: z.string().min(1).max(128) });
/** `DELETE /v1/sessions/:session_id` body. */
export const deletedSessionResponse = z.object({ id: z.string(), type: z.literal('session_deleted') }).describe('The deleted Session');
export const managedSessionResponse = (what: string) => managedSessionSchema.describe(what);
