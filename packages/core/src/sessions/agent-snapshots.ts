/**
 * The agents a deployment configures for `/v1/sessions` (live-inbox.md "Managed Agents
 * compatibility", "Tools and boundaries"): their Run options, the snapshot a Session keeps of its
 * agent (the Runtime's own agent when none is named), and what a Run reads back from a snapshot —
 * its client tools and system prompt. Re-exported by `managed-agents.ts`.
 */
import type { DrainPolicy } from '../live-inbox/agent-loop.js';
import type { Tool } from '../live-inbox/tools.js';
import type { JsonValue } from '../records.js';

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
 * The id of the Runtime's own agent: what a Session created without one (`POST /sessions`, or
 * `PlatformService.createSession` by trusted code) runs with — the Runtime's model and its
 * `SessionRuntimeDeps.tools`. Its snapshot ({@link runtimeAgentSnapshot}) fills the Managed Agents
 * fields such a Session must have (`agent`, `environment_id`: the official SDKs type both non-null).
 * A configured agent cannot take this id.
 */
export const RUNTIME_AGENT_ID = 'runtime';

/** The `environment_id` of a Session created without one: `default`. */
export const DEFAULT_ENVIRONMENT_ID = 'default';

/**
 * The agent snapshot of a Session created without an agent (live-inbox.md "Managed Agents
 * compatibility"): `{ type: 'agent', id: 'runtime', version: 1, name: 'Runtime', model: { id:
 * 'runtime' }, tools: [], … }`. Its Runs get the Runtime's tools (`SessionRuntimeDeps.tools`) and
 * model. Stored with the Session (migration 0011 wrote it into the Sessions stored before).
 */
export function runtimeAgentSnapshot(): JsonValue {
  return {
    type: 'agent', id: RUNTIME_AGENT_ID, version: 1, name: 'Runtime',
    description: "No agent was named: the Runtime's own model and tools (a Session created through POST /sessions)",
    model: { id: RUNTIME_AGENT_ID }, system: null, tools: [], mcp_servers: [], skills: [], multiagent: null, execution_identity: { type: 'service_account' },
  };
}

/** True when `snapshot` is the Runtime's own agent ({@link runtimeAgentSnapshot}), or no snapshot at all. */
export function isRuntimeAgent(snapshot: JsonValue | null): boolean {
  if (snapshot === null || typeof snapshot !== 'object' || Array.isArray(snapshot)) return true;
  return snapshot.id === RUNTIME_AGENT_ID;
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
