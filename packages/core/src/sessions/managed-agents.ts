/**
 * The Managed Agents wire of `/v1/sessions` (live-inbox.md "Managed Agents compatibility"): the
 * request schemas the official `@anthropic-ai/sdk` (`client.beta.sessions.*`) sends, and the pure
 * mappers from our records to the shapes its published types declare — RFC 3339 timestamps,
 * `type: 'session'`, `stop_reason` on `session.status_idle`. Our own fields (`seq`, `run_id`,
 * `workspace_id`, …) travel alongside; the SDK ignores what it does not declare.
 */
import { z } from 'zod';
import type { DrainPolicy } from '../live-inbox/agent-loop.js';
import { contentBlockSchema, contentSchema, type ContentBlock } from '../live-inbox/content.js';
import type { Tool } from '../live-inbox/tools.js';
import { queryInt } from '../project-inbox/schemas.js';
import type { JsonValue, Session, SessionEvent } from '../records.js';
import type { TimeBounds } from '../ports/store.js';
import { jsonValueSchema } from '../schemas/records.js';
import { parseRfc3339, wholeMsBound, type TimeBoundOperator } from '../rfc3339.js';
import { hasNul, idString, optionalText } from '../validation.js';
import { MAX_EVENTS_PER_REQUEST } from './schemas.js';

/**
 * Options of the Runs of an agent (live-inbox.md "Tools and boundaries"); unset ones take the
 * Runtime's `runDefaults`, then `RUN_DEFAULTS`.
 */
export interface RunOptions {
  /** Where the Live Inbox is drained: `every_boundary` (default) or `natural_end`. */
  drain?: DrainPolicy;
  /** Most tool rounds of one Run (integer ≥ 1; default 50); past it the Run fails (`tool_use_limit_reached_error`). */
  maxToolRounds?: number;
  /** Most host tools of one round running at once (integer ≥ 1; default 4). */
  toolConcurrency?: number;
  /** A host tool's timeout in ms unless it sets its own (default 60 000). */
  toolTimeoutMs?: number;
}

/**
 * An agent this deployment configured (`POST /v1/sessions` names it in `agent`). Sessions keep a
 * snapshot of it ({@link agentSnapshot}); the native agent loop runs every Session on the
 * Runtime's one model, with the agent's `tools`: host tools (with `execute`) run on the server
 * — give the same definitions to `SessionRuntimeService` (`agents`) so its Runs have them — and
 * client tools (without) are the Session's custom tools.
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
  /** Its tools (names unique): host tools run by the Runtime, client tools answered by the caller. */
  tools?: readonly Tool[];
  /** Options of its Runs. */
  run?: RunOptions;
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

/** A custom tool as the Managed Agents wire has it: `{ type: 'custom', name, description, input_schema }`. */
export function customToolEntry(tool: Pick<Tool, 'name' | 'description' | 'input_schema'>): JsonValue {
  return { type: 'custom', name: tool.name, description: tool.description, input_schema: tool.input_schema as unknown as JsonValue };
}

/** A host tool in a snapshot (ours: `host_tools`): `{ type: 'host', name, description, input_schema, permission_policy: { type } }`. */
function hostToolEntry(tool: Tool): JsonValue {
  return {
    type: 'host', name: tool.name, description: tool.description, input_schema: tool.input_schema as unknown as JsonValue,
    permission_policy: { type: tool.permission ?? 'always_allow' },
  };
}

/**
 * The `agent` snapshot a Session keeps (the SDK's `BetaManagedAgentsSessionAgent`): `tools` holds
 * its client tools as custom tools; its host tools, which the Runtime runs itself, are listed in
 * ours `host_tools` (with their `permission_policy`).
 */
export function agentSnapshot(agent: ManagedAgentDefinition): JsonValue {
  const tools = agent.tools ?? [];
  return {
    type: 'agent', id: agent.id, version: agent.version ?? 1, name: agent.name, description: agent.description ?? null,
    model: { id: agent.model }, system: agent.system ?? null, tools: tools.filter((t) => t.execute === undefined).map(customToolEntry),
    mcp_servers: [], skills: [], multiagent: null, execution_identity: { type: 'service_account' },
    host_tools: tools.filter((t) => t.execute !== undefined).map(hostToolEntry),
  };
}

/**
 * The client tools of a Session's agent snapshot: its `tools` entries of `type: 'custom'`, as
 * {@link Tool}s without `execute` (the Run waits for `user.custom_tool_result`).
 */
export function clientToolsOf(snapshot: JsonValue): Tool[] {
  if (snapshot === null || typeof snapshot !== 'object' || Array.isArray(snapshot) || !Array.isArray(snapshot.tools)) return [];
  const out: Tool[] = [];
  for (const t of snapshot.tools) {
    if (t === null || typeof t !== 'object' || Array.isArray(t) || t.type !== 'custom') continue;
    out.push({ name: String(t.name), description: String(t.description ?? ''), input_schema: t.input_schema as unknown as Tool['input_schema'] });
  }
  return out;
}

/** The system prompt of a Session's agent snapshot, or undefined. */
export function systemOf(snapshot: JsonValue): string | undefined {
  if (snapshot === null || typeof snapshot !== 'object' || Array.isArray(snapshot)) return undefined;
  return typeof snapshot.system === 'string' && snapshot.system !== '' ? snapshot.system : undefined;
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

type Obj = { [key: string]: JsonValue };
const objectOf = (v: JsonValue): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? v : {});

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
  if (event.type === 'user.message' || event.type === 'agent.message') {
    out.content = event.content as unknown as ContentBlock[];
    return out;
  }
  const c = objectOf(event.content);
  switch (event.type) {
    case 'session.status_idle': {
      const outcome = typeof c.outcome === 'string' ? c.outcome : null;
      const stop = objectOf(c.stop_reason ?? null);
      out.stop_reason = stop.type === 'requires_action' && Array.isArray(stop.event_ids)
        ? { type: 'requires_action', event_ids: stop.event_ids.map(String) }
        : stop.type === 'refusal' ? { type: 'refusal' } : stopReasonOf(outcome);
      out.stop_details = null;
      out.outcome = outcome;
      const error = objectOf(c.error ?? null);
      if (c.error !== undefined && c.error !== null) out.error = { type: String(error.type ?? 'api_error'), message: String(error.message ?? '') };
      break;
    }
    case 'session.error': {
      const error = objectOf(c.error ?? null);
      out.error = { type: String(error.type ?? 'unknown_error'), message: String(error.message ?? ''), retry_status: { type: 'exhausted' } };
      break;
    }
    case 'agent.tool_use':
    case 'agent.custom_tool_use':
      out.name = String(c.name ?? '');
      out.input = objectOf(c.input ?? null);
      if (event.type === 'agent.tool_use') {
        const permission = c.evaluated_permission === 'ask' || c.evaluated_permission === 'deny' ? c.evaluated_permission : 'allow';
        out.evaluated_permission = permission;
        if (permission !== 'deny') out.evaluation = { type: permission === 'ask' ? 'always_ask' : 'always_allow' };
      }
      break;
    case 'agent.tool_result':
    case 'user.custom_tool_result':
      if (event.type === 'agent.tool_result') out.tool_use_id = String(c.tool_use_id ?? '');
      else out.custom_tool_use_id = String(c.custom_tool_use_id ?? '');
      out.content = (Array.isArray(c.content) ? c.content : []) as unknown as ContentBlock[];
      out.is_error = c.is_error === true;
      break;
    case 'user.tool_confirmation':
      out.tool_use_id = String(c.tool_use_id ?? '');
      out.result = c.result === 'allow' ? 'allow' : 'deny';
      out.deny_message = typeof c.deny_message === 'string' ? c.deny_message : null;
      break;
    default:
      break;
  }
  return out;
}

const iso = () => z.string().describe('RFC 3339 timestamp');

/** Response schema of one Session event on the wire (see {@link managedSessionEvent}). */
export const managedSessionEventSchema = z
  .object({
    id: z.string(),
    type: z.string().describe('`user.message`, `user.interrupt`, `user.custom_tool_result`, `user.tool_confirmation`, `agent.message`, `agent.tool_use`, `agent.custom_tool_use`, `agent.tool_result`, `session.status_running`, `session.status_idle`, `session.error`'),
    processed_at: iso(),
    session_id: z.string(),
    seq: z.number().int().describe('Ours: gap-free per session: 1, 2, 3 …'),
    run_id: z.string().nullable(),
    message_id: z.string().nullable().describe('Run-scoped message id (`{run_id}-inbox-{n}`, `{run_id}-step-{k}`) or null'),
    floor_id: z.string().nullable(),
    page_id: z.string().nullable(),
    content: z.array(contentBlockSchema).optional().describe('`user.message`, `agent.message`: content blocks; `agent.tool_result`, `user.custom_tool_result`: the result'),
    name: z.string().optional().describe('`agent.tool_use`, `agent.custom_tool_use`: the tool'),
    input: z.record(z.string(), jsonValueSchema).optional().describe('`agent.tool_use`, `agent.custom_tool_use`: the tool input'),
    evaluated_permission: z.enum(['allow', 'ask', 'deny']).optional()
      .describe('`agent.tool_use`: `allow` (runs now), `ask` (waits for `user.tool_confirmation`), `deny` (refused: unknown tool or invalid input; an error result follows)'),
    evaluation: z.object({ type: z.enum(['always_allow', 'always_ask']) }).optional().describe('`agent.tool_use`: the permission policy that decided'),
    tool_use_id: z.string().optional().describe('`agent.tool_result`, `user.tool_confirmation`: the `agent.tool_use` event answered'),
    custom_tool_use_id: z.string().optional().describe('`user.custom_tool_result`: the `agent.custom_tool_use` event answered'),
    is_error: z.boolean().optional().describe('`agent.tool_result`, `user.custom_tool_result`'),
    result: z.enum(['allow', 'deny']).optional().describe('`user.tool_confirmation`'),
    deny_message: z.string().nullable().optional().describe('`user.tool_confirmation`'),
    stop_reason: z.union([
      z.object({ type: z.enum(['end_turn', 'retries_exhausted', 'refusal']) }),
      z.object({ type: z.literal('requires_action'), event_ids: z.array(z.string()) }),
    ]).optional().describe('`session.status_idle`: `requires_action` lists the tool uses the Run waits for'),
    stop_details: z.null().optional().describe('`session.status_idle`'),
    outcome: z.string().nullable().optional().describe('`session.status_idle`, ours: `completed`, `cancelled` or `failed`; null while the Run waits (`requires_action`)'),
    error: z.object({ type: z.string(), message: z.string(), retry_status: z.object({ type: z.literal('exhausted') }).optional() }).optional()
      .describe('`session.status_idle` of a failed Run (ours: why it failed); `session.error`: the error (`tool_use_limit_reached_error`, …)'),
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
