/**
 * The request side of the Managed Agents wire (live-inbox.md "Managed Agents compatibility"): the
 * query and body schemas the official `@anthropic-ai/sdk` (`client.beta.sessions.*`, `…agents.*`)
 * sends to `/v1/sessions` and `/v1/agents` — RFC 3339 timestamps and time bounds, `name[]=` lists,
 * metadata, agent references, the create / update / list bodies and queries, event listing and
 * streaming queries. Re-exported by `managed-agents.ts`.
 */
import { z } from 'zod';
import { contentSchema } from '../live-inbox/content.js';
import { queryInt } from '../project-inbox/schemas.js';
import type { TimeBounds } from '../ports/store.js';
import { jsonValueSchema } from '../schemas/records.js';
import { parseRfc3339, wholeMsBound, type TimeBoundOperator } from '../rfc3339.js';
import { hasNul, idString, optionalText } from '../validation.js';
import { MAX_EVENTS_PER_REQUEST } from './schemas.js';

/** An RFC 3339 timestamp of integer ms since the epoch, in UTC (`2026-11-30T14:37:57.000Z`). */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString();
}

/** A query timestamp (`bound` absent) or time bound, parsed by {@link parseRfc3339}. */
function rfc3339Field(bound: TimeBoundOperator | undefined) {
  // One union of the accepted types, then one transform: a refused timestamp is one issue with
  // its own sentence (not a union's "Invalid input").
  return z.union([z.number().int(), z.string().max(64)]).transform((value, ctx) => {
    if (typeof value === 'number') return value;
    const instant = parseRfc3339(value);
    if ('error' in instant) {
      ctx.addIssue({ code: 'custom', message: instant.error });
      return z.NEVER;
    }
    if (bound === undefined && instant.subMs) {
      ctx.addIssue({ code: 'custom', message: 'has digits below the millisecond, which times here do not hold; give at most 3 fraction digits (or trailing zeros)' });
      return z.NEVER;
    }
    return bound === undefined ? instant.ms : wholeMsBound(instant, bound);
  });
}

/**
 * A query timestamp: RFC 3339 (`2026-11-30T14:00:00Z`, offsets allowed; parsed exactly by
 * {@link parseRfc3339}: impossible dates and times are refused) → ms since the epoch. Non-zero
 * digits below the millisecond are refused (they name no whole-ms instant). An integer (ms) passes
 * as is, so an already parsed query parses again.
 */
export const rfc3339Query = rfc3339Field(undefined);

/**
 * A time bound of a query (`created_at[gt|gte|lt|lte]`): an RFC 3339 timestamp as
 * {@link rfc3339Query}, whose sub-millisecond digits are kept by turning the bound into the whole-ms
 * bound that selects exactly the same stored (whole-ms) times ({@link wholeMsBound}): e.g.
 * `gte 00:00:00.0005Z` selects from `00:00:00.001Z`, `lte` of it up to `00:00:00.000Z`.
 */
export function rfc3339Bound(op: TimeBoundOperator) {
  return rfc3339Field(op);
}

/** A query list: `name[]=a&name[]=b` (what the SDK sends), `name=a&name=b`, or one value. */
const queryList = <T extends z.ZodType>(item: T) => z.union([item, z.array(item).max(64)]).transform((v) => (Array.isArray(v) ? v : [v]) as z.output<T>[]);

const orderQuery = z.enum(['asc', 'desc']);

/**
 * `beta`, which the official Python SDK (`anthropic`) adds to every beta path (`?beta=true`):
 * accepted and ignored on every `/v1` route (live-inbox.md "Managed Agents compatibility").
 */
export const betaQueryField = z.enum(['true', 'false']).optional().describe('Sent by the official Python SDK on every beta route (`?beta=true`); ignored');

/**
 * `access_token`: a stream token (`POST /stream-tokens`) for a client that cannot send
 * `Authorization` (a browser's `EventSource`); stream routes only, never an API key (platform.md "Browsers").
 */
export const accessTokenQueryField = z.string().min(1).max(1024).regex(/^ikst_[A-Za-z0-9_.-]+$/, 'must be a stream token (ikst_…)').optional()
  .describe('A stream token from `POST /stream-tokens` (RFC 6750 `access_token`), for an `EventSource` that cannot send `Authorization`; an API key is never accepted here');
const timeBoundKeys = ['created_at[gt]', 'created_at[gte]', 'created_at[lt]', 'created_at[lte]'] as const;
const timeBoundFields = {
  'created_at[gt]': rfc3339Bound('gt').optional(),
  'created_at[gte]': rfc3339Bound('gte').optional(),
  'created_at[lt]': rfc3339Bound('lt').optional(),
  'created_at[lte]': rfc3339Bound('lte').optional(),
};

/** The `created_at[gt|gte|lt|lte]` query fields as {@link TimeBounds}, or undefined when none. */
export function timeBoundsOf(q: Partial<Record<(typeof timeBoundKeys)[number], number | undefined>>): TimeBounds | undefined {
  const b: TimeBounds = {};
  if (q['created_at[gt]'] !== undefined) b.gt = q['created_at[gt]'];
  if (q['created_at[gte]'] !== undefined) b.gte = q['created_at[gte]'];
  if (q['created_at[lt]'] !== undefined) b.lt = q['created_at[lt]'];
  if (q['created_at[lte]'] !== undefined) b.lte = q['created_at[lte]'];
  return Object.keys(b).length === 0 ? undefined : b;
}

const eventType = z.string().min(1).max(64).regex(/^[a-z_]+(\.[a-z_]+)*$/, 'must be an event type such as user.message');

/**
 * `GET /v1/sessions/{id}/events` query (`client.beta.sessions.events.list`): `limit` 1–1000
 * (default 100); `page` = the previous answer's `next_page` (the other parameters must stay the
 * same, else 400 `invalid_cursor`); `order` `asc` (default, by `seq` = processing order) or
 * `desc`; `types[]` (any of these types); `created_at[gt|gte|lt|lte]` (RFC 3339, on
 * `processed_at`); `after` (ours: a `seq`, events after it). Unknown parameters → 400.
 */
export const listSessionEventsQuery = z.strictObject({
  beta: betaQueryField,
  limit: queryInt(1, 1000).default(100),
  page: z.string().min(1).max(2048).optional(),
  after: queryInt(0, Number.MAX_SAFE_INTEGER).optional().describe('Ours: only events with a greater `seq`'),
  order: orderQuery.default('asc'),
  types: queryList(eventType).optional(),
  'types[]': queryList(eventType).optional(),
  ...timeBoundFields,
});
export type ListSessionEventsInput = z.input<typeof listSessionEventsQuery>;

/** Event types `event_deltas` may preview (`client.beta.sessions.events.stream`). */
export const DELTA_EVENT_TYPES = ['agent.message', 'agent.thinking'] as const;

/**
 * `GET /v1/sessions/{id}/events/stream` query: `after` (a `seq`; or the `Last-Event-ID` header),
 * `event_deltas[]` (`agent.message`, `agent.thinking`): accepted; previews are best-effort and this
 * Runtime's model commits whole steps, so the complete event is what arrives.
 */
export const streamSessionEventsQuery = z.strictObject({
  beta: betaQueryField,
  access_token: accessTokenQueryField,
  after: queryInt(0, Number.MAX_SAFE_INTEGER).optional(),
  event_deltas: queryList(z.enum(DELTA_EVENT_TYPES)).optional(),
  'event_deltas[]': queryList(z.enum(DELTA_EVENT_TYPES)).optional(),
});

const metadataKey = z.string().min(1).max(64).refine((s) => !hasNul(s), { message: 'must not contain U+0000' });
const metadataValue = z.string().max(512).refine((s) => !hasNul(s), { message: 'must not contain U+0000' });
const MAX_METADATA_PAIRS = 16;
/** Session metadata: at most 16 pairs, keys 1–64 and values ≤ 512 code points. */
export const metadataSchema = z
  .record(metadataKey, metadataValue)
  .refine((m) => Object.keys(m).length <= MAX_METADATA_PAIRS, { message: `at most ${MAX_METADATA_PAIRS} metadata pairs` });

const agentVersion = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

/**
 * A `tools` list of an agent or of `agent_with_overrides`: custom tools
 * (`{ type: 'custom', name, description, input_schema }`, checked further by the agents
 * service), or the Managed Agents tool types this Runtime does not host (refused there).
 */
export const createAgentToolsField = z.array(z.union([
  z.strictObject({ type: z.literal('custom'), name: z.string(), description: z.string(), input_schema: z.record(z.string(), jsonValueSchema) }),
  z.looseObject({ type: z.enum(['agent_toolset_20260401', 'mcp_toolset']) }),
])).max(128);
/**
 * `agent` of `POST /v1/sessions`: an agent's id, `{ type: 'agent', id, version? }`, or
 * `{ type: 'agent_with_overrides', id, version?, tools?, system?, … }` (`tools`: custom tools
 * replacing the agent's; `model`, `mcp_servers`, `skills` ask for what this Runtime does not
 * host: 400 `unsupported_capability`).
 */
export const agentReference = z.union([
  z.string().min(1).max(128),
  z.strictObject({ type: z.literal('agent'), id: z.string().min(1).max(128), version: agentVersion.optional() }),
  z.strictObject({
    type: z.literal('agent_with_overrides'), id: z.string().min(1).max(128), version: agentVersion.optional(),
    model: z.unknown().optional(), system: z.string().max(100_000).nullable().optional(), tools: z.array(z.unknown()).optional(),
    mcp_servers: z.array(z.unknown()).optional(), skills: z.array(z.unknown()).optional(),
  }),
]);

const userMessageInput = z.strictObject({ type: z.literal('user.message'), content: contentSchema });
const defineOutcomeInput = z.object({ type: z.literal('user.define_outcome') }).passthrough();

/**
 * `POST /v1/sessions` body (`client.beta.sessions.create`). `environment_id` and `metadata` are
 * kept as given; `project_id` (ours) puts the Session in a project. `initial_events` (≤ 50
 * `user.message`) are sent right after creation. Capabilities this Runtime does not host —
 * non-empty `resources` or `vault_ids`, a `budget`, `user.define_outcome` — are 400
 * `unsupported_capability`; unknown fields 400 `validation_error`.
 */
export const createManagedSessionBody = z.strictObject({
  agent: agentReference,
  environment_id: z.string().min(1).max(128).refine((s) => !hasNul(s), { message: 'must not contain U+0000' }),
  metadata: metadataSchema.optional(),
  title: optionalText(500),
  initial_events: z.array(z.union([userMessageInput, defineOutcomeInput])).max(MAX_EVENTS_PER_REQUEST).optional(),
  resources: z.array(z.unknown()).optional(),
  vault_ids: z.array(z.string()).optional(),
  budget: z.unknown().optional(),
  project_id: idString.nullable().optional().describe('Ours: the project the Session belongs to (default: none)'),
});
export type CreateManagedSessionInput = z.input<typeof createManagedSessionBody>;

/**
 * `POST /v1/sessions/{id}` body (`client.beta.sessions.update`): `title` (null clears it),
 * `metadata` patch (a string upserts a key, null deletes it; `null` for the whole field changes
 * nothing). `agent` updates (tools, MCP servers), `budget` and `vault_ids` are 400 `unsupported_capability`.
 */
export const updateManagedSessionBody = z.strictObject({
  title: z.union([z.null(), optionalText(500)]).optional(),
  metadata: z.record(metadataKey, metadataValue.nullable()).nullable().optional(),
  agent: z.unknown().optional(),
  budget: z.unknown().optional(),
  vault_ids: z.array(z.string()).optional(),
});
export type UpdateManagedSessionInput = z.input<typeof updateManagedSessionBody>;

/**
 * `GET /v1/sessions` query (`client.beta.sessions.list`): `limit` 1–100 (default 20), `page` (the
 * previous `next_page`; other parameters unchanged), `order` by `created_at` (`desc` default),
 * `created_at[gt|gte|lt|lte]`, `include_archived` (default false), `agent_id`, `agent_version`,
 * `statuses[]` (`idle`, `running`, …). `deployment_id` and `memory_store_id` name things this
 * Runtime has none of: the answer is empty.
 */
export const listManagedSessionsQuery = z.strictObject({
  beta: betaQueryField,
  limit: queryInt(1, 100).default(20),
  page: z.string().min(1).max(2048).optional(),
  order: orderQuery.default('desc'),
  include_archived: z.enum(['true', 'false']).transform((s) => s === 'true').or(z.boolean()).default(false),
  agent_id: z.string().min(1).max(128).optional(),
  agent_version: queryInt(1, Number.MAX_SAFE_INTEGER).optional(),
  statuses: queryList(z.enum(['rescheduling', 'running', 'idle', 'terminated'])).optional(),
  'statuses[]': queryList(z.enum(['rescheduling', 'running', 'idle', 'terminated'])).optional(),
  deployment_id: z.string().min(1).max(128).optional(),
  memory_store_id: z.string().min(1).max(128).optional(),
  ...timeBoundFields,
});
export type ListManagedSessionsInput = z.input<typeof listManagedSessionsQuery>;
