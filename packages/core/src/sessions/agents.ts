/**
 * The agents of the Managed Agents compatibility surface (`/v1/agents`, what
 * `client.beta.agents.*` of `@anthropic-ai/sdk` calls; live-inbox.md "Agents"): create, retrieve
 * (a version), list (cursor pages), update (a new version), archive, list versions. Agents are
 * workspace-scoped and declare custom tools (client tools: the Run waits for
 * `user.custom_tool_result`); the deployment's configured agents (e.g. the demo's `assistant`,
 * with host tools) answer too but cannot be changed. Request schemas, the wire mapper and the
 * service.
 */
import { z } from 'zod';
import type { RequestContext } from '../context.js';
import { decodeCursor, encodeCursor, filterFingerprint } from '../cursor.js';
import { InboxKitError, type ErrorDetail } from '../errors.js';
import { toolDefinitionProblems } from '../live-inbox/tools.js';
import { gateWorkspaceWrite } from '../policy/write-gate.js';
import { queryInt } from '../project-inbox/schemas.js';
import { createIdGenerator, type Clock, type IdGenerator } from '../ports/clock.js';
import type { AgentPageQuery, Store } from '../ports/store.js';
import type { Agent, JsonValue } from '../records.js';
import { jsonValueSchema } from '../schemas/records.js';
import { hasNul, parseOrThrow } from '../validation.js';
import { betaQueryField, createAgentToolsField, customToolEntry, metadataSchema, rfc3339, rfc3339Query, type ManagedAgentDefinition } from './managed-agents.js';

/** Most custom tools one agent declares. */
export const MAX_AGENT_TOOLS = 128;

const noNul = (max: number) => z.string().max(max).refine((s) => !hasNul(s), { message: 'must not contain U+0000' });
const modelConfig = z.strictObject({
  id: z.string().min(1).max(256),
  effort: z.union([z.enum(['low', 'medium', 'high', 'xhigh', 'max']), z.strictObject({ type: z.enum(['low', 'medium', 'high', 'xhigh', 'max']) })]).nullable().optional(),
  inference_geo: z.string().max(64).nullable().optional(),
  speed: z.enum(['standard', 'fast']).nullable().optional(),
});
/** `model`: a model id, or `{ id, effort?, inference_geo?, speed? }` (kept as given). */
const modelField = z.union([z.string().min(1).max(256), modelConfig]);
const toolsField = createAgentToolsField;
type ToolField = z.output<typeof createAgentToolsField>[number];
const executionIdentity = z.looseObject({ type: z.string() }).nullable().optional();

/**
 * `POST /v1/agents` body (`client.beta.agents.create`): `model` and `name` (1–256) required;
 * `description` (≤ 2,048), `system` (≤ 100,000), `metadata` (≤ 16 pairs), `tools` (≤ 128 custom
 * tools). MCP servers, skills, multiagent orchestration, an execution identity other than the
 * service account, and tool types other than `custom` → 400 `unsupported_capability`.
 */
export const createAgentBody = z.strictObject({
  model: modelField,
  name: noNul(256).min(1),
  description: noNul(2048).nullable().optional(),
  system: noNul(100_000).nullable().optional(),
  metadata: metadataSchema.optional(),
  tools: toolsField.optional(),
  mcp_servers: z.array(z.unknown()).optional(),
  skills: z.array(z.unknown()).optional(),
  multiagent: z.unknown().optional(),
  execution_identity: executionIdentity,
});
export type CreateAgentInput = z.input<typeof createAgentBody>;

/**
 * `POST /v1/agents/{id}` body (`client.beta.agents.update`): every field optional (omit to keep);
 * `description` / `system` null or "" clear; `metadata` is a patch (null deletes a key); `tools`
 * replaces the list (null or [] clears); `version` (the caller's current version) makes the update
 * conditional (another current version → 409 `conflict`).
 */
export const updateAgentBody = z.strictObject({
  model: modelField.optional(),
  name: noNul(256).min(1).optional(),
  description: noNul(2048).nullable().optional(),
  system: noNul(100_000).nullable().optional(),
  metadata: z.record(z.string().min(1).max(64), noNul(512).nullable()).nullable().optional(),
  tools: toolsField.nullable().optional(),
  mcp_servers: z.array(z.unknown()).nullable().optional(),
  skills: z.array(z.unknown()).nullable().optional(),
  multiagent: z.unknown().optional(),
  execution_identity: executionIdentity,
  version: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional(),
});
export type UpdateAgentInput = z.input<typeof updateAgentBody>;

/** `GET /v1/agents/{id}` query: `version` (≥ 1; default the current one). */
export const retrieveAgentQuery = z.strictObject({ beta: betaQueryField, version: queryInt(1, Number.MAX_SAFE_INTEGER).optional() });

/**
 * `GET /v1/agents` query (`client.beta.agents.list`): `limit` 1–100 (default 20), `page` (the
 * previous `next_page`), `created_at[gte|lte]` (RFC 3339), `include_archived` (default false);
 * ours: `order` (`desc` default).
 */
export const listAgentsQuery = z.strictObject({
  beta: betaQueryField,
  limit: queryInt(1, 100).default(20),
  page: z.string().min(1).max(2048).optional(),
  order: z.enum(['asc', 'desc']).default('desc'),
  include_archived: z.enum(['true', 'false']).transform((s) => s === 'true').or(z.boolean()).default(false),
  'created_at[gte]': rfc3339Query.optional(),
  'created_at[lte]': rfc3339Query.optional(),
});
export type ListAgentsInput = z.input<typeof listAgentsQuery>;

/** `GET /v1/agents/{id}/versions` query: `limit` 1–100 (default 20), `page`; newest version first. */
export const listAgentVersionsQuery = z.strictObject({
  beta: betaQueryField,
  limit: queryInt(1, 100).default(20),
  page: z.string().min(1).max(2048).optional(),
});
export type ListAgentVersionsInput = z.input<typeof listAgentVersionsQuery>;

const iso = () => z.string().describe('RFC 3339 timestamp');

/** Response schema of an agent (the SDK's `BetaManagedAgentsAgent`, plus ours `workspace_id`, `host_tools`). */
export const managedAgentSchema = z
  .object({
    type: z.literal('agent'),
    id: z.string(),
    version: z.number().int(),
    name: z.string(),
    description: z.string().nullable(),
    model: z.record(z.string(), jsonValueSchema).describe('`{ id, … }`'),
    system: z.string().nullable(),
    tools: z.array(jsonValueSchema).describe('Custom tools: `{ type: "custom", name, description, input_schema }`'),
    mcp_servers: z.array(z.never()),
    skills: z.array(z.never()),
    multiagent: z.null(),
    execution_identity: z.object({ type: z.literal('service_account') }),
    metadata: z.record(z.string(), z.string()),
    created_at: iso(),
    updated_at: iso(),
    archived_at: iso().nullable(),
    workspace_id: z.string().nullable().describe('Ours: the workspace; null for an agent the deployment configured'),
    host_tools: z.array(jsonValueSchema).optional().describe('Ours: tools the Runtime runs itself (configured agents)'),
  })
  .describe('An agent (Managed Agents shape)');
export type ManagedAgent = z.output<typeof managedAgentSchema>;

/** A page of `GET /v1/agents` (and of its versions): `next_page` for `page`, null on the last page. */
export interface ManagedAgentPage {
  data: ManagedAgent[];
  next_page: string | null;
}

/** A stored agent on the wire. */
export function managedAgent(agent: Agent): ManagedAgent {
  return {
    type: 'agent', id: agent.id, version: agent.version, name: agent.name, description: agent.description, model: agent.model, system: agent.system,
    tools: agent.tools, mcp_servers: [], skills: [], multiagent: null, execution_identity: { type: 'service_account' }, metadata: agent.metadata,
    created_at: rfc3339(agent.created_at), updated_at: rfc3339(agent.updated_at), archived_at: agent.archived_at === null ? null : rfc3339(agent.archived_at),
    workspace_id: agent.workspace_id,
  };
}

/** A configured agent on the wire (created and updated "at the epoch": it is the deployment's). */
export function configuredAgent(agent: ManagedAgentDefinition): ManagedAgent {
  const tools = agent.tools ?? [];
  return {
    type: 'agent', id: agent.id, version: agent.version ?? 1, name: agent.name, description: agent.description ?? null, model: { id: agent.model },
    system: agent.system ?? null, tools: tools.filter((t) => t.execute === undefined).map(customToolEntry), mcp_servers: [], skills: [], multiagent: null,
    execution_identity: { type: 'service_account' }, metadata: {}, created_at: rfc3339(0), updated_at: rfc3339(0), archived_at: null,
    workspace_id: null,
    host_tools: tools.filter((t) => t.execute !== undefined).map((t) => ({
      type: 'host', name: t.name, description: t.description, input_schema: t.input_schema as unknown as JsonValue, permission_policy: { type: t.permission ?? 'always_allow' },
    })),
  };
}

/** The agent snapshot a Session created with a stored agent keeps (the SDK's `BetaManagedAgentsSessionAgent`). */
export function storedAgentSnapshot(agent: Agent): JsonValue {
  return {
    type: 'agent', id: agent.id, version: agent.version, name: agent.name, description: agent.description, model: agent.model, system: agent.system,
    tools: agent.tools, mcp_servers: [], skills: [], multiagent: null, execution_identity: { type: 'service_account' },
  };
}

const unsupported = (what: string) => new InboxKitError('unsupported_capability', `${what} is not supported by this runtime`);

/**
 * Checks `tools` of a create or update: only `custom` tools (others → 400
 * `unsupported_capability`), each a valid definition (`toolDefinitionProblems`: name 1–128 of
 * letters, digits, `_`, `-`; an object JSON Schema of ≤ 64 KiB this runtime can check), names
 * unique and not a name a configured host tool of `reserved` uses. Detail paths start with `path`.
 * @throws InboxKitError `unsupported_capability`, `validation_error` (one detail per problem).
 */
export function checkCustomTools(tools: readonly ToolField[], reserved: ReadonlySet<string> = new Set(), path = 'body.tools'): JsonValue[] {
  const details: ErrorDetail[] = [];
  const names = new Set<string>();
  tools.forEach((tool, i) => {
    if (tool.type !== 'custom') throw unsupported(`A ${tool.type} tool (this runtime runs custom tools declared on the agent and its own host tools)`);
    for (const p of toolDefinitionProblems(tool as never)) details.push({ path: `${path}.${i}.${p.path}`, message: p.message });
    if (names.has(tool.name)) details.push({ path: `${path}.${i}.name`, message: `the name ${JSON.stringify(tool.name)} is used twice` });
    else if (reserved.has(tool.name)) details.push({ path: `${path}.${i}.name`, message: `the name ${JSON.stringify(tool.name)} is a host tool's` });
    names.add(tool.name);
  });
  if (details.length > 0) throw new InboxKitError('validation_error', 'Invalid agent tools', details);
  return tools.map((t) => customToolEntry(t as never));
}

/** Refuses the Managed Agents capabilities this Runtime does not host. */
function refuseUnhosted(body: { mcp_servers?: unknown[] | null; skills?: unknown[] | null; multiagent?: unknown; execution_identity?: { type: string } | null }): void {
  if (body.mcp_servers !== undefined && body.mcp_servers !== null && body.mcp_servers.length > 0) throw unsupported('Connecting MCP servers');
  if (body.skills !== undefined && body.skills !== null && body.skills.length > 0) throw unsupported('Skills');
  if (body.multiagent !== undefined && body.multiagent !== null) throw unsupported('Multiagent orchestration');
  if (body.execution_identity !== undefined && body.execution_identity !== null && body.execution_identity.type !== 'service_account') {
    throw unsupported(`The execution identity ${JSON.stringify(body.execution_identity.type)}`);
  }
}

const modelOf = (m: z.output<typeof modelField>): Record<string, JsonValue> =>
  typeof m === 'string' ? { id: m } : (Object.fromEntries(Object.entries(m).filter(([, v]) => v !== undefined && v !== null)) as Record<string, JsonValue>);
const textOrNull = (s: string | null | undefined): string | null => (s === undefined || s === null || s === '' ? null : s);

/** Dependencies of {@link ManagedAgentsService}. */
export interface ManagedAgentsDeps {
  store: Store;
  clock: Clock;
  /** Default: random ids (`agent_…`). */
  ids?: IdGenerator;
  /** The deployment's configured agents: readable, never changed through the API. */
  configured: readonly ManagedAgentDefinition[];
}

const notFound = (id: string, version?: number) =>
  new InboxKitError('agent_not_found', version === undefined ? `Agent ${JSON.stringify(id)} not found` : `Agent ${JSON.stringify(id)} version ${version} not found`);

/**
 * `/v1/agents` use cases (live-inbox.md "Agents"). Every account of a workspace may read, create,
 * update and archive its agents; another workspace's agent is 404 `agent_not_found`. A store
 * without the agent methods (`AgentStore`) answers every write 400 `unsupported_capability` and
 * lists only the configured agents.
 */
export class ManagedAgentsService {
  readonly #deps: ManagedAgentsDeps;
  readonly #ids: IdGenerator;
  readonly #hostToolNames: Set<string>;

  constructor(deps: ManagedAgentsDeps) {
    this.#deps = deps;
    this.#ids = deps.ids ?? createIdGenerator();
    this.#hostToolNames = new Set(deps.configured.flatMap((a) => (a.tools ?? []).filter((t) => t.execute !== undefined).map((t) => t.name)));
  }

  #store(): Required<Pick<Store, 'insertAgent' | 'getAgent' | 'pageAgents' | 'listAgentVersions' | 'updateAgent' | 'archiveAgent'>> {
    const s = this.#deps.store;
    if (!s.insertAgent || !s.getAgent || !s.pageAgents || !s.listAgentVersions || !s.updateAgent || !s.archiveAgent) {
      throw unsupported('Keeping agents (this store has no agent table)');
    }
    return s as never;
  }

  /**
   * `POST /v1/agents`: a new agent (version 1) in the caller's workspace.
   * @throws InboxKitError `validation_error` (400), `unsupported_capability` (400: MCP servers,
   *   skills, multiagent, another execution identity, non-custom tools; a store without agents).
   */
  async create(ctx: RequestContext, input: CreateAgentInput): Promise<ManagedAgent> {
    gateWorkspaceWrite(ctx.principal, 'agent.create');
    const body = parseOrThrow(createAgentBody, input, 'agent');
    refuseUnhosted(body);
    const tools = checkCustomTools(body.tools ?? [], this.#hostToolNames);
    const store = this.#store();
    const now = this.#deps.clock.now();
    const agent: Agent = {
      id: this.#ids.next('agent'), workspace_id: ctx.principal.workspace_id, version: 1, name: body.name, description: textOrNull(body.description),
      model: modelOf(body.model), system: textOrNull(body.system), tools, metadata: body.metadata ?? {}, created_at: now, updated_at: now, archived_at: null,
    };
    await store.insertAgent(agent);
    return managedAgent(agent);
  }

  /**
   * The agent `agent_id` (at `version`, default its current one) as the caller's workspace has
   * it: a configured agent, else a stored one. Undefined when there is none such.
   */
  async find(ctx: RequestContext, agent_id: string, version?: number): Promise<{ configured: ManagedAgentDefinition } | { stored: Agent } | undefined> {
    const configured = this.#deps.configured.find((a) => a.id === agent_id);
    if (configured !== undefined) return version === undefined || version === (configured.version ?? 1) ? { configured } : undefined;
    const getAgent = this.#deps.store.getAgent;
    if (getAgent === undefined) return undefined;
    const stored = await getAgent.call(this.#deps.store, ctx.principal.workspace_id, agent_id, version);
    return stored === undefined ? undefined : { stored };
  }

  /** `GET /v1/agents/{id}`. @throws InboxKitError `validation_error` (400), `agent_not_found` (404). */
  async retrieve(ctx: RequestContext, agent_id: string, input: z.input<typeof retrieveAgentQuery> = {}): Promise<ManagedAgent> {
    const q = parseOrThrow(retrieveAgentQuery, input, 'query');
    const found = await this.find(ctx, agent_id, q.version);
    if (found === undefined) throw notFound(agent_id, q.version);
    return 'configured' in found ? configuredAgent(found.configured) : managedAgent(found.stored);
  }

  /**
   * `GET /v1/agents`: the workspace's agents (each at its current version) and the configured
   * ones (created "at the epoch"), by `(created_at, id)` (`desc` by default); archived ones only
   * with `include_archived=true`.
   * @throws InboxKitError `validation_error` (400), `invalid_cursor` (400: forged, foreign, or
   *   the other parameters changed).
   */
  async list(ctx: RequestContext, input: ListAgentsInput = {}): Promise<ManagedAgentPage> {
    const q = parseOrThrow(listAgentsQuery, input, 'query');
    const created_at = { ...(q['created_at[gte]'] !== undefined ? { gte: q['created_at[gte]'] } : {}), ...(q['created_at[lte]'] !== undefined ? { lte: q['created_at[lte]'] } : {}) };
    const scope = `agents:${ctx.principal.workspace_id}`;
    const fingerprint = filterFingerprint({ order: q.order, include_archived: String(q.include_archived), gte: created_at.gte, lte: created_at.lte });
    const after = q.page === undefined ? undefined : decodeCursor(q.page, scope, fingerprint);
    const asc = q.order === 'asc';
    const cmp = (a: { created_at: number; id: string }, b: { created_at: number; id: string }) =>
      (a.created_at - b.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)) * (asc ? 1 : -1);
    const inBounds = (t: number) => (created_at.gte === undefined || t >= created_at.gte) && (created_at.lte === undefined || t <= created_at.lte);
    const rows: Array<{ created_at: number; id: string; wire: ManagedAgent }> = this.#deps.configured
      .map((a) => ({ created_at: 0, id: a.id, wire: configuredAgent(a) }))
      .filter((r) => inBounds(r.created_at) && (after === undefined || cmp(r, after) > 0));
    const pageAgents = this.#deps.store.pageAgents;
    if (pageAgents !== undefined) {
      const query: AgentPageQuery = {
        order: q.order, limit: q.limit + 1, include_archived: q.include_archived, ...(Object.keys(created_at).length > 0 ? { created_at } : {}),
        ...(after !== undefined ? { after } : {}),
      };
      for (const a of await pageAgents.call(this.#deps.store, ctx.principal.workspace_id, query)) rows.push({ created_at: a.created_at, id: a.id, wire: managedAgent(a) });
    }
    rows.sort(cmp);
    const page = rows.slice(0, q.limit);
    const tail = page[page.length - 1];
    return {
      data: page.map((r) => r.wire),
      next_page: rows.length > q.limit && tail !== undefined ? encodeCursor(scope, fingerprint, { created_at: tail.created_at, id: tail.id }) : null,
    };
  }

  /**
   * `GET /v1/agents/{id}/versions`: the agent's versions, newest first.
   * @throws InboxKitError `validation_error`, `invalid_cursor` (400), `agent_not_found` (404).
   */
  async listVersions(ctx: RequestContext, agent_id: string, input: ListAgentVersionsInput = {}): Promise<ManagedAgentPage> {
    const q = parseOrThrow(listAgentVersionsQuery, input, 'query');
    const configured = this.#deps.configured.find((a) => a.id === agent_id);
    if (configured !== undefined) return { data: [configuredAgent(configured)], next_page: null };
    const store = this.#store();
    if ((await store.getAgent(ctx.principal.workspace_id, agent_id)) === undefined) throw notFound(agent_id);
    const scope = `agent_versions:${ctx.principal.workspace_id}:${agent_id}`;
    const after = q.page === undefined ? undefined : decodeCursor(q.page, scope, '[]').created_at;
    const rows = await store.listAgentVersions(ctx.principal.workspace_id, agent_id, { order: 'desc', limit: q.limit + 1, ...(after !== undefined ? { after_version: after } : {}) });
    const page = rows.slice(0, q.limit);
    const tail = page[page.length - 1];
    return {
      data: page.map(managedAgent),
      next_page: rows.length > q.limit && tail !== undefined ? encodeCursor(scope, '[]', { created_at: tail.version, id: tail.id }) : null,
    };
  }

  /**
   * `POST /v1/agents/{id}`: a new version with the changes (none: the current version, unchanged).
   * @throws InboxKitError `validation_error` (400), `unsupported_capability` (400), `agent_not_found`
   *   (404), `permission_denied` (403: a configured agent), `agent_archived` (409), `conflict`
   *   (409: `version` is not the current one, or another update won).
   */
  async update(ctx: RequestContext, agent_id: string, input: UpdateAgentInput): Promise<ManagedAgent> {
    gateWorkspaceWrite(ctx.principal, 'agent.update');
    const body = parseOrThrow(updateAgentBody, input, 'agent');
    if (this.#deps.configured.some((a) => a.id === agent_id)) throw new InboxKitError('permission_denied', `Agent ${JSON.stringify(agent_id)} is configured by the deployment and cannot be changed`);
    refuseUnhosted(body);
    const tools = body.tools === undefined ? undefined : checkCustomTools(body.tools ?? [], this.#hostToolNames);
    const store = this.#store();
    const current = await store.getAgent(ctx.principal.workspace_id, agent_id);
    if (current === undefined) throw notFound(agent_id);
    if (current.archived_at !== null) throw new InboxKitError('agent_archived', `Agent ${JSON.stringify(agent_id)} is archived`);
    if (body.version !== undefined && body.version !== current.version) {
      throw new InboxKitError('conflict', `Agent ${JSON.stringify(agent_id)} is at version ${current.version}, not ${body.version}`);
    }
    let metadata = current.metadata;
    if (body.metadata !== undefined && body.metadata !== null) {
      metadata = { ...current.metadata };
      for (const [k, v] of Object.entries(body.metadata)) {
        if (v === null) delete metadata[k];
        else metadata[k] = v;
      }
      if (Object.keys(metadata).length > 16) throw new InboxKitError('validation_error', 'Invalid agent', [{ path: 'metadata', message: 'at most 16 metadata pairs' }]);
    }
    const next: Agent = {
      ...current,
      name: body.name ?? current.name,
      description: body.description === undefined ? current.description : textOrNull(body.description),
      system: body.system === undefined ? current.system : textOrNull(body.system),
      model: body.model === undefined ? current.model : modelOf(body.model),
      tools: tools ?? current.tools,
      metadata,
    };
    const same = (a: Agent, b: Agent) => JSON.stringify([a.name, a.description, a.system, a.model, a.tools, a.metadata]) === JSON.stringify([b.name, b.description, b.system, b.model, b.tools, b.metadata]);
    if (same(current, next)) return managedAgent(current);
    const stored = await store.updateAgent(ctx.principal.workspace_id, agent_id, current.version, { ...next, version: current.version + 1, updated_at: this.#deps.clock.now() });
    if (stored === undefined) throw new InboxKitError('conflict', `Agent ${JSON.stringify(agent_id)} was changed or archived meanwhile; read it again`);
    return managedAgent(stored);
  }

  /**
   * `POST /v1/agents/{id}/archive`: sets `archived_at` once (again: unchanged). An archived agent
   * starts no new Session (409 `agent_archived`); its Sessions go on.
   * @throws InboxKitError `agent_not_found` (404), `permission_denied` (403: a configured agent).
   */
  async archive(ctx: RequestContext, agent_id: string): Promise<ManagedAgent> {
    gateWorkspaceWrite(ctx.principal, 'agent.archive');
    if (this.#deps.configured.some((a) => a.id === agent_id)) throw new InboxKitError('permission_denied', `Agent ${JSON.stringify(agent_id)} is configured by the deployment and cannot be archived`);
    const archived = await this.#store().archiveAgent(ctx.principal.workspace_id, agent_id, this.#deps.clock.now());
    if (archived === undefined) throw notFound(agent_id);
    return managedAgent(archived);
  }
}
