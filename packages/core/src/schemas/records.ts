/**
 * The records inbox-kit stores, written once: each zod schema here is the source of its record
 * type (`records.ts` exports `z.infer` of it under the record's name), of the HTTP response
 * schema (responses are serialised through it and the OpenAPI document describes it) and of the
 * storage adapters' column mapping ({@link recordFields}). A new field is one edit here plus a
 * migration. Shapes as they travel on the wire: snake_case, times in integer ms since the epoch.
 * Spec: platform.md, project-inbox.md "Resource".
 */
import { z } from 'zod';
import type { JsonValue } from '../records.js';

/**
 * Any JSON value (`payload`, `content`). Passed through untouched: the value was checked when it
 * was written, so responses do not walk it again.
 */
export const jsonValueSchema = z.custom<JsonValue>(() => true).describe('Any JSON value');

/** A JSON object (`payload` of a Project Event, `metadata` of an Operation Log row). */
export const jsonObjectSchema = z.record(z.string(), jsonValueSchema).describe('A JSON object');

/** Integer ms since the epoch. */
const ms = () => z.number().int().describe('ms since the epoch');
const nullableMs = () => z.number().int().nullable().describe('ms since the epoch, or null');

export const workspaceSchema = z.object({
  id: z.string(),
  name: z.string(),
  created_at: ms(),
});

export const accountSchema = z.object({
  id: z.string(),
  name: z.string(),
  created_at: ms(),
});

/** `standard` authenticates its own account; `service` may act as any account of its workspace. */
export const apiKeyKindSchema = z.enum(['standard', 'service']);
export const projectStatusSchema = z.enum(['active', 'archived']);
export const memberRoleSchema = z.enum(['deriver', 'observer']);
/** The caller's role in a Project: the owner, or a member's role. */
export const projectRoleSchema = z.enum(['owner', 'deriver', 'observer']);
export const inboxItemStatusSchema = z.enum(['pending', 'accepted', 'rejected', 'archived']);

export const apiKeySchema = z.object({
  id: z.string(),
  workspace_id: z.string(),
  account_id: z.string(),
  kind: apiKeyKindSchema,
  /** Hex SHA-256 of the secret; the secret itself is never stored. */
  key_hash: z.string(),
  created_at: ms(),
  revoked_at: nullableMs(),
});

export const projectSchema = z.object({
  id: z.string(),
  workspace_id: z.string(),
  /** The owner's account id. */
  account_id: z.string().describe("The owner's account id"),
  name: z.string(),
  status: projectStatusSchema,
  created_at: ms(),
  updated_at: ms(),
});

export const membershipSchema = z.object({
  project_id: z.string(),
  account_id: z.string(),
  role: memberRoleSchema,
  created_at: ms(),
});

export const sessionSchema = z.object({
  id: z.string(),
  workspace_id: z.string(),
  project_id: z.string().nullable(),
  title: z.string().nullable(),
  created_by_account_id: z.string(),
  created_at: ms(),
  /**
   * Snapshot of the configured agent the Session was created with (`POST /v1/sessions`, Managed
   * Agents shape), or null for a Session created without one (`POST /sessions`).
   */
  agent: jsonValueSchema.nullable().describe('Snapshot of the configured agent (Managed Agents shape), or null'),
  /** The `environment_id` given at creation (kept as given), or null. */
  environment_id: z.string().nullable(),
  /** String key-value metadata (≤ 16 pairs, keys ≤ 64 and values ≤ 512 code points). */
  metadata: z.record(z.string(), z.string()),
  /** Last change of title, metadata or archive state (ms); `created_at` until then. */
  updated_at: ms(),
  /** When the Session was archived (ms), or null. An archived Session takes no new `user.message`. */
  archived_at: nullableMs(),
});

/** One committed turn of a Session. */
export const floorSchema = z.object({
  id: z.string(),
  workspace_id: z.string(),
  session_id: z.string(),
  /** 1, 2, 3 … per session and branch. */
  number: z.number().int().describe('1, 2, 3 … per session and branch'),
  branch: z.string(),
  state: z.literal('committed'),
  created_at: ms(),
});

/** One version of a Floor's content. */
export const pageSchema = z.object({
  id: z.string(),
  workspace_id: z.string(),
  session_id: z.string(),
  floor_id: z.string(),
  /** 1 for the first version, +1 per regeneration. */
  version: z.number().int().describe('1 for the first version, +1 per regeneration'),
  content: jsonValueSchema,
  created_at: ms(),
});

export const projectInboxItemSchema = z.object({
  id: z.string(),
  workspace_id: z.string(),
  project_id: z.string(),
  /** The Project owner's account id. */
  account_id: z.string().describe("The Project owner's account id"),
  sender_account_id: z.string(),
  type: z.string(),
  title: z.string().nullable(),
  payload: jsonValueSchema,
  source_event_id: z.string().nullable(),
  source_session_id: z.string().nullable(),
  source_floor_id: z.string().nullable(),
  source_page_id: z.string().nullable(),
  status: inboxItemStatusSchema,
  decided_by_account_id: z.string().nullable(),
  decided_at: nullableMs(),
  created_at: ms(),
  updated_at: ms(),
});

/** `project` (every member may read) or `owner` (the owner; an inbox event also its sender). */
export const projectEventVisibilitySchema = z.enum(['project', 'owner'])
  .describe('Who may read the event: `project` = every member; `owner` = the project owner (a Project Inbox event also reaches the item\'s sender while a deriver)');

/** `api`, `runtime_job` or `system`. */
export const projectEventSourceSchema = z.enum(['api', 'runtime_job', 'system'])
  .describe('What wrote the event: `api` = a request through the API; `runtime_job` = the agent runtime; `system` = start-up recovery or seeding');

export const projectEventSchema = z.object({
  id: z.string(),
  workspace_id: z.string(),
  project_id: z.string(),
  /** Gap-free per project: 1, 2, 3 … */
  sequence: z.number().int().describe('Gap-free per project: 1, 2, 3 …'),
  type: z.string(),
  actor_account_id: z.string().nullable(),
  session_id: z.string().nullable(),
  floor_id: z.string().nullable(),
  page_id: z.string().nullable(),
  operation_log_id: z.string().nullable(),
  /** The request id of the write that produced the event. */
  correlation_id: z.string().nullable().describe('The request id of the write that produced the event'),
  causation_event_id: z.string().nullable(),
  payload: jsonObjectSchema,
  /** Who may read it; fixed when it is written. */
  visibility: projectEventVisibilitySchema,
  /** What wrote it; fixed when it is written. */
  source: projectEventSourceSchema,
  created_at: ms(),
});

export const operationLogSchema = z.object({
  id: z.string(),
  workspace_id: z.string(),
  project_id: z.string().nullable(),
  actor_account_id: z.string(),
  action: z.string(),
  target_type: z.string(),
  target_id: z.string(),
  request_id: z.string().nullable(),
  metadata: jsonObjectSchema,
  created_at: ms(),
});

/**
 * `running`: an attempt executes it; `awaiting`: parked on client tool results or tool
 * confirmations (`requires_action`, live-inbox.md "Tools and boundaries"), executed by nobody
 * until they arrive; `idle`: ended.
 */
export const runStatusSchema = z.enum(['running', 'awaiting', 'idle']);

export const runSchema = z.object({
  id: z.string(),
  session_id: z.string(),
  status: runStatusSchema,
  started_at: ms(),
  ended_at: nullableMs(),
  /** How the run ended: `completed`, `cancelled` or `failed`; null while running. */
  outcome: z.string().nullable().describe('`completed`, `cancelled` or `failed`; null while running'),
});

/**
 * One version of an agent created through `POST /v1/agents` (live-inbox.md "Agents"): the Managed
 * Agents `agent` fields this Runtime keeps. `id` and `version` identify it (a new version per
 * update, from 1); `created_at` is the agent's creation (the same on every version), `updated_at`
 * this version's; `archived_at` belongs to the agent (set on every version at once).
 */
export const agentSchema = z.object({
  id: z.string(),
  workspace_id: z.string(),
  version: z.number().int().describe('1, 2, 3 … (one per update)'),
  name: z.string(),
  description: z.string().nullable(),
  /** `{ id, … }`: the model configuration as given (`model` string → `{ id }`). */
  model: jsonObjectSchema.describe('The model configuration: `{ id, … }`'),
  system: z.string().nullable(),
  /** The tool definitions: custom tools `{ type: 'custom', name, description, input_schema }`. */
  tools: z.array(jsonValueSchema).describe('Custom tool definitions'),
  /** String key-value metadata (≤ 16 pairs). */
  metadata: z.record(z.string(), z.string()),
  created_at: ms(),
  updated_at: ms(),
  archived_at: nullableMs(),
});

/** One committed entry of the Session ledger (`GET /v1/sessions/{id}/events`). */
export const sessionEventSchema = z.object({
  id: z.string(),
  session_id: z.string(),
  /** Gap-free per session: 1, 2, 3 … */
  seq: z.number().int().describe('Gap-free per session: 1, 2, 3 …'),
  /** `user.message`, `user.interrupt`, `agent.message`, `session.status_running`, `session.status_idle`. */
  type: z.string().describe('`user.message`, `user.interrupt`, `agent.message`, `session.status_running`, `session.status_idle`'),
  run_id: z.string().nullable(),
  /** Run-scoped message id (`{run_id}-inbox-{n}`) or null. */
  message_id: z.string().nullable().describe('Run-scoped message id (`{run_id}-inbox-{n}`) or null'),
  content: jsonValueSchema,
  floor_id: z.string().nullable(),
  page_id: z.string().nullable(),
  processed_at: ms(),
});


/**
 * How a storage adapter keeps a record field: `text` (a string, or one of a closed set of
 * strings), `number` (an integer: times in ms, counters) or `json` (any other value, kept as its
 * JSON text).
 */
export type RecordFieldKind = 'text' | 'number' | 'json';

/** One field of a record schema, as {@link recordFields} reads it. */
export interface RecordField<Name extends string = string> {
  name: Name;
  kind: RecordFieldKind;
  /**
   * Whether the schema allows null (`.nullable()`). A nullable `json` field keeps null as "no
   * value" (SQL `NULL`); a `json` field that is not nullable keeps every value as JSON text,
   * `null` included.
   */
  nullable: boolean;
}

/**
 * The fields of a record schema (`workspaceSchema`, `sessionSchema`, …) in declaration order,
 * each with its storage kind: the one place adapters derive column lists and row mappings from,
 * so a field added to a schema reaches every adapter without another edit (storage README
 * "One shape, written once"). Pure: reads the schema's shape only.
 *
 * @param schema a `z.object` of this module.
 * @returns one entry per key of the object's shape.
 */
export function recordFields<S extends z.ZodObject>(schema: S): ReadonlyArray<RecordField<keyof z.output<S> & string>> {
  return Object.entries(schema.shape).map(([name, field]) => {
    const nullable = field instanceof z.ZodNullable;
    const inner = nullable ? (field as z.ZodNullable).unwrap() : field;
    const kind: RecordFieldKind = inner instanceof z.ZodNumber ? 'number'
      : inner instanceof z.ZodString || inner instanceof z.ZodEnum || inner instanceof z.ZodLiteral ? 'text'
        : 'json';
    return { name: name as keyof z.output<S> & string, kind, nullable };
  });
}
