/**
 * Zod schemas of the records as they travel on the wire (`records.ts`, one schema per record that
 * a response carries). The HTTP adapter declares them as response schemas, so responses are
 * serialised through them and the OpenAPI document describes them. Each schema's output type is
 * checked at compile time to be exactly its record interface, so the two cannot drift apart.
 * Times are integer ms since the epoch. Spec: platform.md, project-inbox.md "Resource".
 */
import { z } from 'zod';
import type {
  Account, Floor, JsonValue, Membership, OperationLog, Page, Project, ProjectEvent, ProjectInboxItem, Run, Session, SessionEvent,
  Workspace,
} from '../records.js';

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

export const apiKeyKindSchema = z.enum(['standard', 'service']);
export const projectStatusSchema = z.enum(['active', 'archived']);
export const memberRoleSchema = z.enum(['deriver', 'observer']);
/** The caller's role in a Project: the owner, or a member's role. */
export const projectRoleSchema = z.enum(['owner', 'deriver', 'observer']);
export const inboxItemStatusSchema = z.enum(['pending', 'accepted', 'rejected', 'archived']);

export const projectSchema = z.object({
  id: z.string(),
  workspace_id: z.string(),
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
  agent: jsonValueSchema.nullable().describe('Snapshot of the configured agent (Managed Agents shape), or null'),
  environment_id: z.string().nullable(),
  metadata: z.record(z.string(), z.string()),
  updated_at: ms(),
  archived_at: nullableMs(),
});

export const floorSchema = z.object({
  id: z.string(),
  workspace_id: z.string(),
  session_id: z.string(),
  number: z.number().int().describe('1, 2, 3 … per session and branch'),
  branch: z.string(),
  state: z.literal('committed'),
  created_at: ms(),
});

export const pageSchema = z.object({
  id: z.string(),
  workspace_id: z.string(),
  session_id: z.string(),
  floor_id: z.string(),
  version: z.number().int().describe('1 for the first version, +1 per regeneration'),
  content: jsonValueSchema,
  created_at: ms(),
});

export const projectInboxItemSchema = z.object({
  id: z.string(),
  workspace_id: z.string(),
  project_id: z.string(),
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
  sequence: z.number().int().describe('Gap-free per project: 1, 2, 3 …'),
  type: z.string(),
  actor_account_id: z.string().nullable(),
  session_id: z.string().nullable(),
  floor_id: z.string().nullable(),
  page_id: z.string().nullable(),
  operation_log_id: z.string().nullable(),
  correlation_id: z.string().nullable().describe('The request id of the write that produced the event'),
  causation_event_id: z.string().nullable(),
  payload: jsonObjectSchema,
  visibility: projectEventVisibilitySchema,
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

export const runSchema = z.object({
  id: z.string(),
  session_id: z.string(),
  status: z.enum(['running', 'idle']),
  started_at: ms(),
  ended_at: nullableMs(),
  outcome: z.string().nullable().describe('`completed`, `cancelled` or `failed`; null while running'),
});

export const sessionEventSchema = z.object({
  id: z.string(),
  session_id: z.string(),
  seq: z.number().int().describe('Gap-free per session: 1, 2, 3 …'),
  type: z.string().describe('`user.message`, `user.interrupt`, `agent.message`, `session.status_running`, `session.status_idle`'),
  run_id: z.string().nullable(),
  message_id: z.string().nullable().describe('Run-scoped message id (`{run_id}-inbox-{n}`) or null'),
  content: jsonValueSchema,
  floor_id: z.string().nullable(),
  page_id: z.string().nullable(),
  processed_at: ms(),
});

// — compile-time proof that every schema's output is exactly its record (a mismatch fails `tsc`) —
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Assert<T extends true> = T;
type RecordSchemasMatchRecords = [
  Assert<Equal<z.output<typeof workspaceSchema>, Workspace>>,
  Assert<Equal<z.output<typeof accountSchema>, Account>>,
  Assert<Equal<z.output<typeof projectSchema>, Project>>,
  Assert<Equal<z.output<typeof membershipSchema>, Membership>>,
  Assert<Equal<z.output<typeof sessionSchema>, Session>>,
  Assert<Equal<z.output<typeof floorSchema>, Floor>>,
  Assert<Equal<z.output<typeof pageSchema>, Page>>,
  Assert<Equal<z.output<typeof projectInboxItemSchema>, ProjectInboxItem>>,
  Assert<Equal<z.output<typeof projectEventSchema>, ProjectEvent>>,
  Assert<Equal<z.output<typeof operationLogSchema>, OperationLog>>,
  Assert<Equal<z.output<typeof runSchema>, Run>>,
  Assert<Equal<z.output<typeof sessionEventSchema>, SessionEvent>>,
];
