/**
 * The Session resource of the Managed Agents compatibility surface (`/v1/sessions`, what
 * `client.beta.sessions.*` of `@anthropic-ai/sdk` calls): create with a configured agent, retrieve,
 * list (cursor pages), update (title, metadata), archive, delete. Answers are in the wire shape of
 * {@link managedSession}. Spec: live-inbox.md "Managed Agents compatibility".
 */
import type { RequestContext } from '../context.js';
import { decodeCursor, encodeCursor, filterFingerprint } from '../cursor.js';
import { InboxKitError } from '../errors.js';
import type { PlatformService } from '../platform/service.js';
import { loadSessionAccess } from './access.js';
import { droppingSessionGates } from './gate-cache.js';
import { gateSessionWrite } from '../policy/write-gate.js';
import type { Clock, IdGenerator } from '../ports/clock.js';
import type { SessionPageQuery, Store } from '../ports/store.js';
import type { JsonValue, Session } from '../records.js';
import { parseOrThrow } from '../validation.js';
import {
  agentSnapshot, createAgentToolsField, RUNTIME_AGENT_ID, createManagedSessionBody, deletedSession, listManagedSessionsQuery, managedSession, timeBoundsOf, updateManagedSessionBody,
  type CreateManagedSessionInput, type ListManagedSessionsInput, type ManagedAgentDefinition, type ManagedSession, type ManagedSessionStatus, type UpdateManagedSessionInput,
} from './managed-agents.js';
import type { SessionRuntimeService } from './service.js';
import { checkCustomTools, ManagedAgentsService, storedAgentSnapshot } from './agents.js';

/** Dependencies of {@link ManagedSessionsService}. */
export interface ManagedSessionsDeps {
  store: Store;
  clock: Clock;
  /** Creates the Session (project checks, Operation Log, Project Event). */
  platform: PlatformService;
  /** Sends `initial_events`; tells whether a Session is running. */
  runtime: SessionRuntimeService;
  /**
   * The configured agents `agent` may name (ids unique); default the Runtime's
   * (`SessionRuntimeDeps.agents`). Agents created through `/v1/agents` (kept by the store) may be
   * named too.
   */
  agents?: readonly ManagedAgentDefinition[];
  /** Ids of agents created through `/v1/agents`; default random `agent_…` ids. */
  ids?: IdGenerator;
}

/** A page of `GET /v1/sessions`: `next_page` for `page` (null on the last page); `prev_page` is always null. */
export interface ManagedSessionPage {
  data: ManagedSession[];
  next_page: string | null;
  prev_page: null;
}

const unsupported = (what: string) => new InboxKitError('unsupported_capability', `${what} is not supported by this runtime`);
const SCAN = 100;

/**
 * `/v1/sessions` use cases. Who may do what follows the Session rules of the Runtime: a Session in
 * a project is readable by its owner and members and changed by the owner only (403
 * `permission_denied`); a Session outside any project is open to every account of its workspace;
 * anything else, and a deleted Session, is 404 `session_not_found`.
 */
export class ManagedSessionsService {
  readonly #deps: ManagedSessionsDeps;
  readonly #configured: readonly ManagedAgentDefinition[];
  /** The agents of `/v1/agents` (create, retrieve, list, update, archive, versions). */
  readonly agents: ManagedAgentsService;

  constructor(deps: ManagedSessionsDeps) {
    this.#deps = deps;
    this.#configured = deps.agents ?? deps.runtime.agents;
    const ids = new Set<string>();
    for (const a of this.#configured) {
      if (ids.has(a.id)) throw new TypeError(`ManagedSessionsService: agent id "${a.id}" is configured twice`);
      if (a.id === RUNTIME_AGENT_ID) throw new TypeError(`ManagedSessionsService: agent id "${RUNTIME_AGENT_ID}" is reserved for the Runtime's own agent (Sessions created without one)`);
      ids.add(a.id);
    }
    this.agents = new ManagedAgentsService({ store: deps.store, clock: deps.clock, configured: this.#configured, ...(deps.ids ? { ids: deps.ids } : {}) });
  }

  /** Ids of the configured agents `agent` may name (besides the workspace's own `agent_…`), e.g. `['assistant']`. */
  get configuredAgentIds(): string[] {
    return this.#configured.map((a) => a.id);
  }

  /**
   * `POST /v1/sessions`: a Session in the caller's workspace (in `project_id` when given) with a
   * snapshot of the named agent, `environment_id` and `metadata` as given; then `initial_events`
   * are sent as durable input (a Run starts).
   * @returns the Session ({@link managedSession}); `status` `running` when initial events started a Run.
   * @throws InboxKitError `validation_error` (400), `unsupported_capability` (400: `resources`,
   *   `vault_ids`, `budget`, agent overrides, `user.define_outcome`), `agent_not_found` (404: no
   *   configured agent has this id, or not this version), `project_not_found` (404),
   *   `permission_denied` (403: an observer), `project_archived` (409), `too_many_runs` (429: with
   *   `initial_events`, the caller is at its Run budget), `rate_limited` (429: Sessions per minute).
   */
  async create(ctx: RequestContext, input: CreateManagedSessionInput): Promise<ManagedSession> {
    const body = parseOrThrow(createManagedSessionBody, input, 'session');
    if (body.resources !== undefined && body.resources.length > 0) throw unsupported('Mounting resources');
    if (body.vault_ids !== undefined && body.vault_ids.length > 0) throw unsupported('Attaching vaults');
    if (body.budget !== undefined) throw unsupported('A spend budget');
    if (body.initial_events?.some((e) => e.type === 'user.define_outcome')) throw unsupported('user.define_outcome');
    const agent = await this.#resolveAgent(ctx, body.agent);
    const messages = (body.initial_events ?? []).flatMap((e) => (e.type === 'user.message' ? [{ type: e.type, content: e.content }] : []));
    // A create whose initial input could not start its Run leaves no Session.
    if (messages.length > 0) this.#deps.runtime.assertRunBudget(ctx);
    const session = await this.#deps.platform.createSession(ctx, { project_id: body.project_id ?? null, title: body.title },
      { agent, environment_id: body.environment_id, metadata: body.metadata ?? {} });
    if (messages.length > 0) await this.#deps.runtime.sendEvents(ctx, session.id, { events: messages });
    return managedSession(session, await this.#status(session));
  }

  /** `GET /v1/sessions/{id}`. @throws InboxKitError `session_not_found` (404). */
  async retrieve(ctx: RequestContext, session_id: string): Promise<ManagedSession> {
    const { session } = await loadSessionAccess(this.#deps.store, ctx.principal, session_id);
    return managedSession(session, await this.#status(session));
  }

  /**
   * `GET /v1/sessions`: the Sessions the caller may read, by `created_at` (`desc` by default),
   * archived ones only with `include_archived=true`; filters as {@link listManagedSessionsQuery}.
   * @throws InboxKitError `validation_error` (400), `invalid_cursor` (400: forged, foreign, or the
   *   other parameters changed).
   */
  async list(ctx: RequestContext, input: ListManagedSessionsInput = {}): Promise<ManagedSessionPage> {
    const q = parseOrThrow(listManagedSessionsQuery, input, 'query');
    const statuses = q.statuses === undefined && q['statuses[]'] === undefined ? undefined : new Set<string>([...(q.statuses ?? []), ...(q['statuses[]'] ?? [])]);
    const created_at = timeBoundsOf(q);
    const { workspace_id, account_id } = ctx.principal;
    const fingerprint = filterFingerprint({
      order: q.order, include_archived: String(q.include_archived), agent_id: q.agent_id, agent_version: q.agent_id === undefined ? undefined : q.agent_version,
      statuses: statuses === undefined ? undefined : [...statuses].sort().join(','), deployment_id: q.deployment_id, memory_store_id: q.memory_store_id,
      gt: created_at?.gt, gte: created_at?.gte, lt: created_at?.lt, lte: created_at?.lte,
    });
    const scope = `sessions:${workspace_id}:${account_id}`;
    let after = q.page === undefined ? undefined : decodeCursor(q.page, scope, fingerprint);
    // Nothing here is ever created by a deployment or mounts a memory store.
    if (q.deployment_id !== undefined || q.memory_store_id !== undefined) return { data: [], next_page: null, prev_page: null };

    const visible_project_ids = (await this.#deps.store.listProjectsForAccount(workspace_id, account_id)).map((p) => p.id);
    const base: Omit<SessionPageQuery, 'after' | 'limit'> = {
      order: q.order, visible_project_ids, include_archived: q.include_archived, agent_id: q.agent_id, created_at,
    };
    const wantsVersion = q.agent_id !== undefined && q.agent_version !== undefined;
    const matches: { session: Session; status: ManagedSessionStatus }[] = [];
    // Post-filters (status, agent version) may drop rows: scan keyset pages until one more match than asked.
    for (;;) {
      const rows = await this.#deps.store.pageSessions(workspace_id, { ...base, after, limit: statuses === undefined && !wantsVersion ? q.limit + 1 : SCAN });
      for (const session of rows) {
        if (wantsVersion && versionOf(session.agent) !== q.agent_version) continue;
        const status = await this.#status(session);
        if (statuses !== undefined && !statuses.has(status)) continue;
        matches.push({ session, status });
        if (matches.length > q.limit) break;
      }
      const last = rows[rows.length - 1];
      if (matches.length > q.limit || last === undefined || rows.length < (statuses === undefined && !wantsVersion ? q.limit + 1 : SCAN)) break;
      after = { created_at: last.created_at, id: last.id };
    }
    const page = matches.slice(0, q.limit);
    const tail = page[page.length - 1];
    return {
      data: page.map((m) => managedSession(m.session, m.status)),
      next_page: matches.length > q.limit && tail !== undefined ? encodeCursor(scope, fingerprint, { created_at: tail.session.created_at, id: tail.session.id }) : null,
      prev_page: null,
    };
  }

  /**
   * `POST /v1/sessions/{id}`: sets `title` (null clears it) and patches `metadata` (a string
   * upserts a key, null deletes it; at most 16 pairs after the patch).
   * @throws InboxKitError `validation_error` (400, also more than 16 pairs after the patch),
   *   `unsupported_capability` (400: `agent`, `budget`, `vault_ids`), `session_not_found` (404),
   *   `permission_denied` (403).
   */
  async update(ctx: RequestContext, session_id: string, input: UpdateManagedSessionInput): Promise<ManagedSession> {
    const body = parseOrThrow(updateManagedSessionBody, input, 'session');
    if (body.agent !== undefined) throw unsupported('Changing the agent\'s tools or MCP servers');
    if (body.budget !== undefined) throw unsupported('A spend budget');
    if (body.vault_ids !== undefined) throw unsupported('Attaching vaults');
    return this.#write(ctx, session_id, 'session.update', async (session) => {
      let metadata: Record<string, string> | undefined;
      if (body.metadata !== undefined && body.metadata !== null) {
        metadata = { ...session.metadata };
        for (const [k, v] of Object.entries(body.metadata)) {
          if (v === null) delete metadata[k];
          else metadata[k] = v;
        }
        if (Object.keys(metadata).length > 16) {
          throw new InboxKitError('validation_error', 'Invalid session', [{ path: 'metadata', message: 'at most 16 metadata pairs' }]);
        }
      }
      return { title: body.title === undefined ? undefined : body.title, metadata };
    });
  }

  /**
   * `POST /v1/sessions/{id}/archive`: sets `archived_at` (once; archiving again changes nothing).
   * An archived Session takes no new `user.message` (409 `session_archived`); an interrupt may
   * still stop its Run. @throws InboxKitError `session_not_found` (404), `permission_denied` (403).
   */
  async archive(ctx: RequestContext, session_id: string): Promise<ManagedSession> {
    return this.#write(ctx, session_id, 'session.archive', async (session) => (session.archived_at === null ? { archived_at: this.#deps.clock.now() } : undefined));
  }

  /**
   * `DELETE /v1/sessions/{id}`: the Session is gone from every read (404 from then on).
   * @returns `{ id, type: 'session_deleted' }`.
   * A Run parked on tool results or confirmations is ended (`cancelled`) with it.
   * @throws InboxKitError `session_not_found` (404), `permission_denied` (403), `session_running`
   *   (409: a Run is running; interrupt it first).
   */
  async delete(ctx: RequestContext, session_id: string): Promise<{ id: string; type: 'session_deleted' }> {
    // The Runtime decides, under the Session's locks: a running Run refuses it, a parked one ends with it.
    await this.#deps.runtime.deleteSession(ctx, session_id);
    return deletedSession(session_id);
  }

  // — internals —

  /** Checks write access, then applies the patch `change` returns (none: unchanged) in one transaction, holding the Session's lock. */
  async #write(
    ctx: RequestContext, session_id: string, action: 'session.update' | 'session.archive',
    change: (session: Session) => Promise<{ title?: string | null; metadata?: Record<string, string>; archived_at?: number } | undefined>,
  ): Promise<ManagedSession> {
    const session = await droppingSessionGates(this.#deps, this.#deps.store.transaction(async (tx) => {
      // Locked (project, then Session): role and archive state stay as read until commit, a
      // metadata patch applies to the metadata it read, and an archive is ordered against a
      // concurrent user.message (sendEvents checks `archived_at` under the same lock).
      const access = await gateSessionWrite(tx, ctx.principal, session_id, action);
      const patch = await change(access.session);
      if (patch === undefined || (patch.title === undefined && patch.metadata === undefined && patch.archived_at === undefined)) return access.session;
      const updated = await tx.updateSession(access.session.workspace_id, access.session.id, { ...patch, updated_at: this.#deps.clock.now() });
      if (updated === undefined) throw new InboxKitError('session_not_found', 'Session not found');
      return updated;
    }));
    return managedSession(session, await this.#status(session));
  }

  /**
   * The snapshot of the agent `ref` names: a configured agent, or one of the caller's workspace
   * created through `/v1/agents` (not archived), with the overrides of `agent_with_overrides`
   * applied (`tools`: custom tools replacing the agent's; `system`).
   */
  async #resolveAgent(ctx: RequestContext, ref: CreateManagedSessionInput['agent']): Promise<JsonValue> {
    const id = typeof ref === 'string' ? ref : ref.id;
    const version = typeof ref === 'string' ? undefined : ref.version;
    let tools: JsonValue[] | undefined;
    let system: string | null | undefined;
    if (typeof ref !== 'string' && ref.type === 'agent_with_overrides') {
      const overrides = (['model', 'mcp_servers', 'skills'] as const).filter((k) => ref[k] !== undefined);
      if (overrides.length > 0) throw unsupported(`Overriding the agent's ${overrides.join(', ')} (this runtime runs one model and hosts no MCP servers or skills)`);
      if (ref.tools !== undefined) {
        const read = createAgentToolsField.safeParse(ref.tools);
        if (!read.success) {
          throw new InboxKitError('validation_error', 'Invalid agent tools', read.error.issues.map((i) => ({ path: ['body.agent.tools', ...i.path.map(String)].join('.'), message: i.message, code: i.code })));
        }
        const parsed = read.data;
        const reserved = new Set(this.#configured.flatMap((a) => (a.tools ?? []).filter((t) => t.execute !== undefined).map((t) => t.name)));
        tools = checkCustomTools(parsed, reserved, 'body.agent.tools');
      }
      if (ref.system !== undefined) system = typeof ref.system === 'string' && ref.system !== '' ? ref.system : null;
    }
    const found = await this.agents.find(ctx, id, version);
    if (found === undefined) {
      throw new InboxKitError('agent_not_found', version === undefined ? `Agent ${JSON.stringify(id)} not found` : `Agent ${JSON.stringify(id)} version ${version} not found`);
    }
    if ('stored' in found && found.stored.archived_at !== null) throw new InboxKitError('agent_archived', `Agent ${JSON.stringify(id)} is archived; it starts no new Session`);
    const snapshot = 'configured' in found ? agentSnapshot(found.configured) : storedAgentSnapshot(found.stored);
    const out = { ...(snapshot as Record<string, JsonValue>) };
    if (tools !== undefined) out.tools = tools;
    if (system !== undefined) out.system = system;
    return out;
  }

  async #status(session: Session): Promise<ManagedSessionStatus> {
    return (await this.#deps.store.getRunningRun(session.id)) === undefined ? 'idle' : 'running';
  }
}

function versionOf(agent: JsonValue | null): number | undefined {
  if (agent === null || typeof agent !== 'object' || Array.isArray(agent)) return undefined;
  return typeof agent.version === 'number' ? agent.version : undefined;
}
