/**
 * The Managed Agents wire of `/v1/sessions` (live-inbox.md "Managed Agents compatibility"): the
 * request schemas the official `@anthropic-ai/sdk` (`client.beta.sessions.*`) sends, and the pure
 * mappers from our records to the shapes its published types declare — RFC 3339 timestamps,
 * `type: 'session'`, `stop_reason` on `session.status_idle`. Our own fields (`seq`, `run_id`,
 * `workspace_id`, …) travel alongside; the SDK ignores what it does not declare.
 */
import { z } from 'zod';
import { contentBlockSchema, contentSchema, type ContentBlock } from '../live-inbox/content.js';
import { queryInt } from '../project-inbox/schemas.js';
import type { JsonValue, Session, SessionEvent } from '../records.js';
import type { TimeBounds } from '../ports/store.js';
import { jsonValueSchema } from '../schemas/records.js';
import { parseRfc3339, wholeMsBound, type TimeBoundOperator } from '../rfc3339.js';
import { hasNul, idString, optionalText } from '../validation.js';
import { MAX_EVENTS_PER_REQUEST } from './schemas.js';

/**
 * An agent this deployment configured (`POST /v1/sessions` names it in `agent`). Sessions keep a
 * snapshot of it ({@link agentSnapshot}); the native agent loop runs every Session on the
 * Runtime's one model.
 */
export interface ManagedAgentDefinition {
  /** What `agent` names, e.g. `assistant`. */
  id: string;
  name: string;
  /** The model id reported in the snapshot (`agent.model.id`). */
  model: string;
  description?: string | null;
  system?: string | null;
  /** Default 1. `{ type: 'agent', id, version }` must name this version. */
  version?: number;
}

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
 * `agent` of `POST /v1/sessions`: the id of a configured agent, `{ type: 'agent', id, version? }`,
 * or `{ type: 'agent_with_overrides', id, version?, … }` (its overrides ask for capabilities this
 * Runtime does not host: 400 `unsupported_capability` when any is set).
 */
export const agentReference = z.union([
  z.string().min(1).max(128),
  z.strictObject({ type: z.literal('agent'), id: z.string().min(1).max(128), version: agentVersion.optional() }),
  z.strictObject({
    type: z.literal('agent_with_overrides'), id: z.string().min(1).max(128), version: agentVersion.optional(),
    model: z.unknown().optional(), system: z.unknown().optional(), tools: z.array(z.unknown()).optional(),
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

/** The `agent` snapshot a Session keeps (the SDK's `BetaManagedAgentsSessionAgent`). */
export function agentSnapshot(agent: ManagedAgentDefinition): JsonValue {
  return {
    type: 'agent', id: agent.id, version: agent.version ?? 1, name: agent.name, description: agent.description ?? null,
    model: { id: agent.model }, system: agent.system ?? null, tools: [], mcp_servers: [], skills: [], multiagent: null,
    execution_identity: { type: 'service_account' },
  };
}

/** A Session's Run state as Managed Agents names it. */
export type ManagedSessionStatus = 'idle' | 'running';

/** A Session as `/v1/sessions` answers it (the SDK's `BetaManagedAgentsSession`, plus `workspace_id`, `project_id`). */
export function managedSession(session: Session, status: ManagedSessionStatus): ManagedSession {
  return {
    type: 'session', id: session.id, agent: session.agent, environment_id: session.environment_id, title: session.title,
    metadata: session.metadata, status, archived_at: session.archived_at === null ? null : rfc3339(session.archived_at),
    created_at: rfc3339(session.created_at), updated_at: rfc3339(session.updated_at), budget: null, deployment_id: null,
    outcome_evaluations: [], resources: [], stats: {}, usage: {}, vault_ids: [],
    workspace_id: session.workspace_id, project_id: session.project_id,
  };
}

/** `{ id, type: 'session_deleted' }`, the answer of `DELETE /v1/sessions/{id}`. */
export function deletedSession(session_id: string): { id: string; type: 'session_deleted' } {
  return { id: session_id, type: 'session_deleted' };
}

/** `stop_reason` of `session.status_idle` for a Run outcome: `failed` → `retries_exhausted`, else `end_turn`. */
export function stopReasonOf(outcome: unknown): { type: 'end_turn' | 'retries_exhausted' } {
  return { type: outcome === 'failed' ? 'retries_exhausted' : 'end_turn' };
}

/**
 * A committed Session event on the wire (`GET …/events`, the SSE `data:`, the receipts of `POST
 * …/events`): `{ id, type, processed_at (RFC 3339), … }` with `content` on `user.message` and
 * `agent.message`, `stop_reason` / `stop_details` / `outcome` on `session.status_idle`, and ours:
 * `session_id`, `seq`, `run_id`, `message_id`, `floor_id`, `page_id`.
 */
export function managedSessionEvent(event: SessionEvent): ManagedSessionEvent {
  const out: ManagedSessionEvent = {
    id: event.id, type: event.type, processed_at: rfc3339(event.processed_at), session_id: event.session_id, seq: event.seq,
    run_id: event.run_id, message_id: event.message_id, floor_id: event.floor_id, page_id: event.page_id,
  };
  if (event.type === 'user.message' || event.type === 'agent.message') out.content = event.content as unknown as ContentBlock[];
  if (event.type === 'session.status_idle') {
    const raw = event.content !== null && typeof event.content === 'object' && !Array.isArray(event.content) ? event.content.outcome : undefined;
    const outcome = typeof raw === 'string' ? raw : null;
    out.stop_reason = stopReasonOf(outcome);
    out.stop_details = null;
    out.outcome = outcome;
    const error = event.content !== null && typeof event.content === 'object' && !Array.isArray(event.content) ? event.content.error : undefined;
    if (error !== null && typeof error === 'object' && !Array.isArray(error)) {
      out.error = { type: String(error.type ?? 'api_error'), message: String(error.message ?? '') };
    }
  }
  return out;
}

const iso = () => z.string().describe('RFC 3339 timestamp');

/** Response schema of one Session event on the wire (see {@link managedSessionEvent}). */
export const managedSessionEventSchema = z
  .object({
    id: z.string(),
    type: z.string().describe('`user.message`, `user.interrupt`, `agent.message`, `session.status_running`, `session.status_idle`'),
    processed_at: iso(),
    session_id: z.string(),
    seq: z.number().int().describe('Ours: gap-free per session: 1, 2, 3 …'),
    run_id: z.string().nullable(),
    message_id: z.string().nullable().describe('Run-scoped message id (`{run_id}-inbox-{n}`, `{run_id}-step-{k}`) or null'),
    floor_id: z.string().nullable(),
    page_id: z.string().nullable(),
    content: z.array(contentBlockSchema).optional().describe('`user.message`, `agent.message`: content blocks'),
    stop_reason: z.object({ type: z.enum(['end_turn', 'retries_exhausted']) }).optional().describe('`session.status_idle`'),
    stop_details: z.null().optional().describe('`session.status_idle`'),
    outcome: z.string().nullable().optional().describe('`session.status_idle`, ours: `completed`, `cancelled` or `failed`'),
    error: z.object({ type: z.string(), message: z.string() }).optional().describe('`session.status_idle` of a failed Run, ours: why it failed'),
  })
  .describe('A committed Session event');

/** Response schema of a Session on `/v1/sessions` (see {@link managedSession}). */
export const managedSessionSchema = z
  .object({
    type: z.literal('session'),
    id: z.string(),
    agent: jsonValueSchema.describe('Snapshot of the configured agent at creation; null for a Session created through `POST /sessions`'),
    environment_id: z.string().nullable(),
    title: z.string().nullable(),
    metadata: z.record(z.string(), z.string()),
    status: z.enum(['idle', 'running']),
    archived_at: iso().nullable(),
    created_at: iso(),
    updated_at: iso(),
    budget: z.null(),
    deployment_id: z.null(),
    outcome_evaluations: z.array(z.never()),
    resources: z.array(z.never()),
    stats: z.object({}),
    usage: z.object({}),
    vault_ids: z.array(z.never()),
    workspace_id: z.string(),
    project_id: z.string().nullable(),
  })
  .describe('A Session (Managed Agents shape)');

/** A Session event on the wire. */
export type ManagedSessionEvent = z.output<typeof managedSessionEventSchema>;
/** A Session on the wire. */
export type ManagedSession = z.output<typeof managedSessionSchema>;
