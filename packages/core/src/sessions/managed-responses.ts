/**
 * The response side of the Managed Agents wire (live-inbox.md "Managed Agents compatibility"): the
 * pure mappers from our records to the shapes the SDK's published types declare (`type:
 * 'session'`, RFC 3339 timestamps, `stop_reason` on `session.status_idle`) and their response
 * schemas. Our own fields (`seq`, `run_id`, `workspace_id`, …) travel alongside. Re-exported by
 * `managed-agents.ts`.
 */
import { z } from 'zod';
import { contentBlockSchema, type ContentBlock } from '../live-inbox/content.js';
import type { JsonValue, Session, SessionEvent } from '../records.js';
import { jsonValueSchema } from '../schemas/records.js';
import { DEFAULT_ENVIRONMENT_ID, runtimeAgentSnapshot } from './agent-snapshots.js';
import { rfc3339 } from './managed-wire.js';

/** A Session's Run state as Managed Agents names it. */
export type ManagedSessionStatus = 'idle' | 'running';

/** A Session as `/v1/sessions` answers it (the SDK's `BetaManagedAgentsSession`, plus `workspace_id`, `project_id`). */
export function managedSession(session: Session, status: ManagedSessionStatus): ManagedSession {
  return {
    // A Session stored without them (by a store not migrated yet) answers the Runtime's agent.
    type: 'session', id: session.id, agent: (session.agent ?? runtimeAgentSnapshot()) as ManagedSession['agent'], environment_id: session.environment_id ?? DEFAULT_ENVIRONMENT_ID, title: session.title,
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
/**
 * The agent snapshot of a Session (the SDK's `BetaManagedAgentsSessionAgent`): the agent as it was
 * at creation, or the Runtime's own (`id: "runtime"`) for a Session created through `POST /sessions`.
 */
export const sessionAgentSchema = z
  .looseObject({
    type: z.literal('agent'),
    id: z.string().describe('`assistant` (the demo\'s configured agent), an `agent_…` of `/v1/agents`, or `runtime` (no agent named: the Runtime\'s model and tools)'),
    version: z.number().int().min(1),
    name: z.string(),
    description: z.string().nullable(),
    model: z.looseObject({ id: z.string() }),
    system: z.string().nullable(),
    tools: z.array(jsonValueSchema).describe('Custom tools (`{ type: "custom", name, description, input_schema }`)'),
    mcp_servers: z.array(z.never()),
    skills: z.array(z.never()),
    multiagent: z.null(),
    execution_identity: z.looseObject({ type: z.literal('service_account') }),
    host_tools: z.array(jsonValueSchema).optional().describe('Ours, for a configured agent: the tools the Runtime runs itself (`{ type: "host", name, … }`)'),
  })
  .describe('Snapshot of the agent at creation (Managed Agents shape)');

export const managedSessionSchema = z
  .object({
    type: z.literal('session'),
    id: z.string(),
    agent: sessionAgentSchema,
    environment_id: z.string().describe('As given at creation; `default` for a Session created through `POST /sessions`'),
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
