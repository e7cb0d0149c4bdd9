/**
 * Platform use cases the inboxes stand on (platform.md): authentication, projects and members,
 * sessions with their floors and pages, Project Event and Operation Log pages.
 */
import { appendAudited } from '../audit.js';
import { InboxKitError } from '../errors.js';
import type { Principal, RequestContext, ServiceDeps } from '../context.js';
import { decodeCursor, encodeCursor, filterFingerprint } from '../cursor.js';
import type { FloorPosition, StoreReadiness, StoreTx } from '../ports/store.js';
import type { Feed, FeedItem } from '../ports/feed.js';
import { loadProjectAccess } from '../project-inbox/access.js';
import { canSeeEvent, visibilityOfEventType, type ProjectRole } from '../project-inbox/permissions.js';
import { loadSessionAccess, writeTurn } from '../sessions/access.js';
import { DEFAULT_ENVIRONMENT_ID, runtimeAgentSnapshot } from '../sessions/managed-agents.js';
import { assertWrite, gateProjectWrite, gateSessionWrite } from '../policy/write-gate.js';
import type {
  Account, ApiKey, ApiKeyKind, Floor, JsonValue, Membership, OperationLog, Page, Project, ProjectEvent, Session, Workspace,
} from '../records.js';
import { MAX_PAYLOAD_BYTES, measurePayload, parseOrThrow } from '../validation.js';
import { AdminService } from './admin.js';
import { constantTimeEqual, generateApiKeySecret, hashApiKey } from './keys.js';
import { PrincipalCache } from './principal-cache.js';
import { createStreamTokenBody, MAX_STREAM_TOKEN_TTL_SECONDS, readStreamToken, signStreamToken, streamTokenSignatureValid } from './stream-tokens.js';
import { SessionCreateBudget } from '../caller-budgets.js';
import {
  addMemberBody, addPageBody, commitTurnBody, createProjectBody, createSessionBody, listFloorsQuery, listMembersQuery, listOperationLogsQuery,
  listPagesQuery, listProjectEventsQuery, listProjectsQuery, listSessionsQuery,
} from './schemas.js';
import { compareBytes, pageOf, type ListPage } from '../paging.js';
import type { z } from 'zod';

/**
 * True for a store's unique-key violation: PostgreSQL SQLSTATE 23505, SQLite's
 * `SQLITE_CONSTRAINT_PRIMARYKEY` / `SQLITE_CONSTRAINT_UNIQUE`, the in-memory store's `duplicate …`.
 * Ids are unique across workspaces, so a caller-chosen id taken in another workspace passes the
 * workspace-scoped existence check and only the insert finds it.
 */
function isDuplicateKey(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  return code === '23505' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE'
    || (code === undefined && typeof message === 'string' && message.startsWith('duplicate '));
}

/** Runs a create with a caller-chosen id: a duplicate key on insert is 409 `conflict`, not a 500. */
async function idTakenIsConflict<T>(id: string | undefined, what: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (id !== undefined && isDuplicateKey(error)) throw new InboxKitError('conflict', `A ${what} with this id already exists`);
    throw error;
  }
}
const forbidden = (msg: string) => new InboxKitError('permission_denied', msg);

/** Project Event types that change a member's role (their payload names `account_id`). */
const MEMBER_EVENTS = ['project.member.added', 'project.member.removed'];

/**
 * How long (ms) a project event stream trusts its last read of the caller's role when no event
 * about the caller's membership passed through it. Every change made through the services writes
 * such an event, which forces a check at once; this bounds only how late a change made without
 * one (storage edited directly) reaches an open stream. Kept well above a heartbeat's share of
 * work: thousands of open streams then cost no query per delivery.
 */
export const PROJECT_FEED_RECHECK_MS = 10_000;

/**
 * How stale (ms) a key's `last_used_at` may get: a key that authenticates is recorded as used at
 * most once per this period (and only when its principal is not cached), so a busy key costs no
 * write per request. `last_used_at` is therefore exact to within a minute.
 */
export const API_KEY_USE_RESOLUTION_MS = 60_000;

/** How long (ms) {@link PlatformService.readiness} waits for the store before answering not ready. */
export const READINESS_TIMEOUT_MS = 2_000;

export class PlatformService {
  /** Principals by key hash: see `principal-cache.ts` (1 s lifetime; revocations here drop them at once). */
  readonly #principals: PrincipalCache;
  /**
   * Storage lookups in flight, by cache generation, key hash and acting account: concurrent
   * requests presenting one key share one read (when the cache entry of a key held by a thousand
   * open streams expires, their next deliveries make one lookup, not a thousand). A lookup started
   * before a revocation is never joined after it (the generation changed).
   */
  readonly #lookups = new Map<string, Promise<Principal>>();
  /** Keys whose use is being recorded (one write in flight per key). */
  readonly #recordingUse = new Set<string>();
  /** Workspace administration: accounts and API keys (`/admin/*`, platform.md "Administration"). */
  readonly admin: AdminService;

  /** Sessions created per minute per API key (`deps.budgets.sessionsPerMinute`). */
  readonly #sessionCreates: SessionCreateBudget;

  constructor(private readonly deps: ServiceDeps) {
    this.#principals = new PrincipalCache(() => deps.clock.now());
    this.admin = new AdminService(deps, {
      forgetKey: (key_id) => this.#principals.forgetKey(key_id),
      forgetAccount: (workspace_id, account_id, key_ids) => this.#principals.forgetAccount(workspace_id, account_id, key_ids),
    });
    this.#sessionCreates = new SessionCreateBudget(deps.budgets, () => deps.clock.now());
  }

  // — identity —

  /**
   * Resolves a secret to the principal it authenticates. A `service` key may act as any account
   * of its workspace through `as_account_id`; a standard or admin key may only name its own account.
   * A key whose `revoked_at` has come (a rotated key once its grace period is over) is refused.
   * @throws InboxKitError authentication_required (no secret), invalid_credentials (unknown or
   *   revoked), permission_denied (standard or admin key naming another account), account_not_found
   *   (service key naming an account outside its workspace, or disabled there).
   *
   * Successful results are cached in the process for 1 s by key hash (`principal-cache.ts`), never
   * past the key's scheduled revocation: {@link revokeApiKey} and the `admin` revocations take
   * effect at once; a key revoked in another process or directly in storage is refused within
   * 1 s. Concurrent misses for one key share one storage lookup. A lookup records the key's use
   * (`last_used_at`) when the stored one is over {@link API_KEY_USE_RESOLUTION_MS} old, without
   * waiting for the write.
   *
   * `options.workspace_id` is the workspace the caller says it acts in (the Managed Agents
   * `anthropic-workspace-id` header): a key may only name its own workspace, else 403
   * `permission_denied` (live-inbox.md "Managed Agents compatibility").
   */
  async authenticate(secret: string | undefined, as_account_id?: string, options: { workspace_id?: string } = {}): Promise<Principal> {
    const principal = await this.#authenticate(secret, as_account_id);
    if (options.workspace_id !== undefined && options.workspace_id !== principal.workspace_id) {
      throw forbidden('This API key belongs to another workspace than the one the request names');
    }
    return principal;
  }

  async #authenticate(secret: string | undefined, as_account_id: string | undefined): Promise<Principal> {
    if (!secret) throw new InboxKitError('authentication_required', 'An API key is required (Authorization: Bearer <key> or x-api-key)');
    const hash = await (this.deps.hashApiKey ?? hashApiKey)(secret);
    const cached = this.#principals.get(hash, as_account_id);
    if (cached) return cached;
    const generation = this.#principals.generation;
    const flight = `${generation}\n${hash}\n${as_account_id ?? ''}`;
    let lookup = this.#lookups.get(flight);
    if (lookup === undefined) {
      lookup = this.#lookUp(hash, as_account_id, generation).finally(() => this.#lookups.delete(flight));
      this.#lookups.set(flight, lookup);
    }
    return { ...(await lookup) };
  }

  /** The storage half of {@link authenticate}: reads the key (and the acting account), caches a success. */
  async #lookUp(hash: string, as_account_id: string | undefined, generation: number): Promise<Principal> {
    const key = await this.deps.store.findApiKeyByHash(hash);
    const now = this.deps.clock.now();
    if (!key || !constantTimeEqual(key.key_hash, hash) || (key.revoked_at !== null && key.revoked_at <= now)) {
      throw new InboxKitError('invalid_credentials', 'The API key is unknown or revoked');
    }
    let account_id = key.account_id;
    if (as_account_id !== undefined && as_account_id !== key.account_id) {
      if (key.kind !== 'service') throw forbidden('Only a service key may act as another account');
      const account = await this.deps.store.getWorkspaceAccount(key.workspace_id, as_account_id);
      if (!account) throw new InboxKitError('account_not_found', 'Account not found in this workspace');
      account_id = account.id;
    }
    const principal: Principal = { workspace_id: key.workspace_id, account_id, key_id: key.id, key_kind: key.kind };
    this.#principals.set(hash, as_account_id, principal, generation, key.revoked_at ?? undefined);
    this.#recordUse(key.id, key.last_used_at, now);
    return principal;
  }

  /**
   * `POST /stream-tokens` (platform.md "Browsers" → "Stream tokens"): a token that opens the
   * caller's event streams (as this API key and acting account) until `expires_at`, passed as the
   * `access_token` query parameter by an `EventSource`, which cannot send `Authorization`.
   * `ttl_seconds` 1–900 (default 900). Signed by the key's stored hash: it stops working when the
   * key is revoked (or its rotation's grace period ends).
   * @returns `{ token, expires_at }` (`expires_at` in ms).
   * @throws InboxKitError `validation_error` (400), `unsupported_capability` (400: the store has no
   *   `getApiKey`), `invalid_credentials` (401: the key was revoked meanwhile).
   */
  async issueStreamToken(ctx: RequestContext, input?: z.input<typeof createStreamTokenBody>): Promise<{ token: string; expires_at: number }> {
    const body = parseOrThrow(createStreamTokenBody, input, 'stream token');
    const { store, clock } = this.deps;
    if (store.getApiKey === undefined) throw new InboxKitError('unsupported_capability', "This server's store does not implement getApiKey, which stream tokens need");
    const key = await store.getApiKey(ctx.principal.workspace_id, ctx.principal.key_id);
    const now = clock.now();
    if (key === undefined || (key.revoked_at !== null && key.revoked_at <= now)) throw new InboxKitError('invalid_credentials', 'The API key is unknown or revoked');
    // Never past the key's scheduled revocation (a rotation's grace period).
    const expires_at = Math.min(now + (body?.ttl_seconds ?? MAX_STREAM_TOKEN_TTL_SECONDS) * 1000, key.revoked_at ?? Number.MAX_SAFE_INTEGER);
    const { principal } = ctx;
    const token = await signStreamToken({ key_id: key.id, account_id: principal.account_id, workspace_id: principal.workspace_id, expires_at }, key.key_hash);
    return { token, expires_at };
  }

  /**
   * The principal a stream token authenticates (as {@link authenticate} does for an API key, cached
   * the same way, 1 s): the key it names must still be valid (not revoked, the signature its own),
   * and a service key's acting account still a member of the workspace.
   * @param options.expiry check the expiry (default true; false when an open stream re-checks
   *   its credential before a delivery: a stream opened in time stays open until the key is revoked).
   * @throws InboxKitError `invalid_credentials` (401: malformed, forged, expired, or its key revoked),
   *   `account_not_found` (404: the acting account left the workspace), `unsupported_capability` (400: no `getApiKey`).
   */
  async authenticateStreamToken(token: string, options: { expiry?: boolean; workspace_id?: string } = {}): Promise<Principal> {
    const { store, clock } = this.deps;
    const claims = readStreamToken(token);
    if (claims === undefined) throw new InboxKitError('invalid_credentials', 'The stream token is not valid');
    if (options.expiry !== false && claims.expires_at <= clock.now()) {
      throw new InboxKitError('invalid_credentials', 'The stream token has expired; ask POST /stream-tokens for a new one');
    }
    if (options.workspace_id !== undefined && options.workspace_id !== claims.workspace_id) {
      throw forbidden('This stream token belongs to another workspace than the one the request names');
    }
    const cacheKey = `stream-token\n${token}`;
    const cached = this.#principals.get(cacheKey, undefined);
    if (cached) return cached;
    if (store.getApiKey === undefined) throw new InboxKitError('unsupported_capability', "This server's store does not implement getApiKey, which stream tokens need");
    const generation = this.#principals.generation;
    const key = await store.getApiKey(claims.workspace_id, claims.key_id);
    const now = clock.now();
    if (key === undefined || (key.revoked_at !== null && key.revoked_at <= now) || !(await streamTokenSignatureValid(claims.payload, claims.signature, key.key_hash))) {
      throw new InboxKitError('invalid_credentials', 'The stream token is not valid, or its API key was revoked');
    }
    if (claims.account_id !== key.account_id) {
      // Only a service key mints tokens acting as another account; that account must still be here.
      if (key.kind !== 'service') throw new InboxKitError('invalid_credentials', 'The stream token is not valid');
      if (!(await store.getWorkspaceAccount(key.workspace_id, claims.account_id))) throw new InboxKitError('account_not_found', 'Account not found in this workspace');
    }
    const principal: Principal = { workspace_id: key.workspace_id, account_id: claims.account_id, key_id: key.id, key_kind: key.kind };
    this.#principals.set(cacheKey, undefined, principal, generation, key.revoked_at ?? undefined);
    this.#recordUse(key.id, key.last_used_at, now);
    return principal;
  }

  /** Records a key's use when the stored `last_used_at` is stale; never awaited, a failure is dropped (the value is informational). */
  #recordUse(key_id: string, last_used_at: number | null | undefined, now: number): void {
    const store = this.deps.store;
    if (store.recordApiKeyUse === undefined || this.#recordingUse.has(key_id)) return;
    if (typeof last_used_at === 'number' && now - last_used_at < API_KEY_USE_RESOLUTION_MS) return;
    this.#recordingUse.add(key_id);
    void store.recordApiKeyUse(key_id, now).catch(() => undefined).finally(() => this.#recordingUse.delete(key_id));
  }

  /**
   * Whether the store can serve now (`GET /ready`, platform.md "Health"): its `readiness()` (the
   * database answers and is migrated), or — for a store without it — a read that answers. Waits
   * at most `timeoutMs` ({@link READINESS_TIMEOUT_MS}); never throws.
   */
  async readiness(timeoutMs = READINESS_TIMEOUT_MS): Promise<StoreReadiness> {
    const store = this.deps.store;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const unreachable = (message: string): StoreReadiness => ({ ready: false, reason: 'unreachable', message });
    const check = (async (): Promise<StoreReadiness> => {
      if (store.readiness) return store.readiness();
      await store.getWorkspace('ws_readiness_probe');
      return { ready: true };
    })().catch(() => unreachable('The database cannot be reached'));
    const deadline = new Promise<StoreReadiness>((resolve) => {
      timer = setTimeout(() => resolve(unreachable(`The database did not answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      return await Promise.race([check, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Every workspace, oldest first (trusted code: the command line). @throws unsupported_capability when the store has no `listWorkspaces`. */
  async listWorkspaces(): Promise<Workspace[]> {
    if (this.deps.store.listWorkspaces === undefined) throw new InboxKitError('unsupported_capability', "This server's store does not implement listWorkspaces");
    return this.deps.store.listWorkspaces();
  }

  /** Creates a workspace (administration; no principal). */
  async createWorkspace(input: { id?: string; name: string }): Promise<Workspace> {
    const ws: Workspace = { id: input.id ?? this.deps.ids.next('ws'), name: input.name, created_at: this.deps.clock.now() };
    await this.deps.store.insertWorkspace(ws);
    return ws;
  }

  /** Creates an account that is a member of the given workspaces (administration). */
  async createAccount(input: { id?: string; name: string; workspace_ids: string[] }): Promise<Account> {
    const account: Account = { id: input.id ?? this.deps.ids.next('acc'), name: input.name, created_at: this.deps.clock.now() };
    await this.deps.store.insertAccount(account, input.workspace_ids);
    return account;
  }

  /** Issues an API key; the secret is returned once and only its hash is stored (administration). */
  async issueApiKey(input: { workspace_id: string; account_id: string; kind?: ApiKeyKind }): Promise<{ key: ApiKey; secret: string }> {
    const secret = generateApiKeySecret();
    const key: ApiKey = {
      id: this.deps.ids.next('key'),
      workspace_id: input.workspace_id,
      account_id: input.account_id,
      kind: input.kind ?? 'standard',
      key_hash: await (this.deps.hashApiKey ?? hashApiKey)(secret),
      created_at: this.deps.clock.now(),
      revoked_at: null,
      last_used_at: null,
    };
    await this.deps.store.insertApiKey(key);
    return { key, secret };
  }

  /** Revokes a key; later requests with it get 401 invalid_credentials. */
  async revokeApiKey(key_id: string): Promise<void> {
    await this.deps.store.revokeApiKey(key_id, this.deps.clock.now());
    this.#principals.forgetKey(key_id);
  }

  /** The caller's own account. */
  async whoami(ctx: RequestContext): Promise<{ account: Account; workspace_id: string; key_kind: ApiKeyKind }> {
    const account = await this.deps.store.getWorkspaceAccount(ctx.principal.workspace_id, ctx.principal.account_id);
    if (!account) throw new InboxKitError('account_not_found', 'Account not found');
    return { account, workspace_id: ctx.principal.workspace_id, key_kind: ctx.principal.key_kind };
  }

  // — projects —

  /**
   * Creates a project owned by the caller. `input.id` is for trusted callers only (seeding):
   * an adapter never passes a caller's id (`POST /projects` takes none, see `createProjectRequest`),
   * because ids are unique across workspaces and a taken id would reveal another workspace's.
   * @throws validation_error, conflict (a trusted caller's id is taken).
   */
  async createProject(ctx: RequestContext, input: z.input<typeof createProjectBody>): Promise<Project> {
    const body = parseOrThrow(createProjectBody, input, 'project');
    const now = this.deps.clock.now();
    const project: Project = {
      id: body.id ?? this.deps.ids.next('proj'),
      workspace_id: ctx.principal.workspace_id,
      account_id: ctx.principal.account_id,
      name: body.name,
      status: 'active',
      created_at: now,
      updated_at: now,
    };
    const events = await idTakenIsConflict(body.id, 'project', () => this.deps.store.transaction(async (tx) => {
      if (body.id !== undefined && (await tx.getProject(ctx.principal.workspace_id, body.id))) {
        throw new InboxKitError('conflict', 'A project with this id already exists');
      }
      await tx.insertProject(project);
      return [await this.record(tx, ctx, project, 'project.create', 'project', project.id, {}, 'project.created', { project_id: project.id, name: project.name })];
    }));
    this.publish(events);
    return project;
  }

  /**
   * One page of the projects the caller owns or is a member of, newest first
   * (`created_at DESC, id DESC`). `input`: `{ limit?: 1–200 (50), cursor? }`.
   * @throws validation_error, invalid_cursor (forged, or minted for another caller or list).
   */
  async listProjects(ctx: RequestContext, input: z.input<typeof listProjectsQuery> = {}): Promise<ListPage<Project>> {
    const query = parseOrThrow(listProjectsQuery, input, 'query');
    const { workspace_id, account_id } = ctx.principal;
    const scope = `projects:${workspace_id}:${account_id}`;
    const fp = filterFingerprint({ list: 'projects' });
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor, scope, fp);
    const { store } = this.deps;
    const rows = store.pageProjectsForAccount
      ? await store.pageProjectsForAccount(workspace_id, account_id, { after, limit: query.limit + 1 })
      : (await store.listProjectsForAccount(workspace_id, account_id))
        .filter((p) => after === undefined || p.created_at < after.created_at || (p.created_at === after.created_at && compareBytes(p.id, after.id) < 0))
        .slice(0, query.limit + 1);
    return pageOf(rows, query.limit, (last) => encodeCursor(scope, fp, last));
  }

  /** A project with the caller's role. @throws project_not_found. */
  async getProject(ctx: RequestContext, project_id: string): Promise<{ project: Project; role: Exclude<ProjectRole, null> }> {
    return loadProjectAccess(this.deps.store, ctx.principal, project_id);
  }

  /**
   * Archives a project (owner only). Archiving an archived project returns it unchanged.
   * @throws project_not_found, permission_denied.
   */
  async archiveProject(ctx: RequestContext, project_id: string): Promise<Project> {
    const { project, events } = await this.deps.store.transaction(async (tx) => {
      const access = await gateProjectWrite(tx, ctx.principal, project_id, 'project.archive');
      // A Run commit locks only its Session: holding every Session of the project orders each
      // commit wholly before the archive or after it (when the gate then refuses it).
      if (access.project.status === 'active') {
        for (const session of await tx.listSessions(access.project.workspace_id, { project_id: access.project.id })) {
          await tx.lockSession(session.workspace_id, session.id);
        }
      }
      const updated = await tx.setProjectStatus(access.project.id, 'archived', this.deps.clock.now());
      if (!updated) return { project: access.project, events: [] as ProjectEvent[] };
      const event = await this.record(tx, ctx, updated, 'project.archive', 'project', updated.id, {}, 'project.archived', { project_id: updated.id });
      return { project: updated, events: [event] };
    });
    this.publish(events);
    return project;
  }

  // — members —

  /**
   * Adds a member or changes its role (owner only).
   * @throws project_not_found, permission_denied, project_archived, account_not_found (not in the
   *   workspace), conflict (the owner cannot be a member).
   */
  async addMember(ctx: RequestContext, project_id: string, input: z.input<typeof addMemberBody>): Promise<Membership> {
    const body = parseOrThrow(addMemberBody, input, 'member');
    const { membership, events } = await this.deps.store.transaction(async (tx) => {
      const access = await gateProjectWrite(tx, ctx.principal, project_id, 'project.member.add');
      if (body.account_id === access.project.account_id) throw new InboxKitError('conflict', 'The owner is not a member');
      if (!(await tx.getWorkspaceAccount(access.project.workspace_id, body.account_id))) {
        throw new InboxKitError('account_not_found', 'Account not found in this workspace');
      }
      const membership = await tx.upsertMembership({ project_id: access.project.id, account_id: body.account_id, role: body.role, created_at: this.deps.clock.now() });
      const event = await this.record(tx, ctx, access.project, 'project_member.upsert', 'account', body.account_id, { role: body.role },
        'project.member.added', { account_id: body.account_id, role: body.role });
      return { membership, events: [event] };
    });
    this.publish(events);
    return membership;
  }

  /**
   * One page of a project's members, oldest first (`created_at, account_id`; any member may list).
   * `input`: `{ limit?: 1–200 (50), cursor? }`.
   * @throws project_not_found, validation_error, invalid_cursor.
   */
  async listMembers(ctx: RequestContext, project_id: string, input: z.input<typeof listMembersQuery> = {}): Promise<ListPage<Membership>> {
    const query = parseOrThrow(listMembersQuery, input, 'query');
    const access = await loadProjectAccess(this.deps.store, ctx.principal, project_id);
    const pid = access.project.id;
    const scope = `members:${pid}`;
    const fp = filterFingerprint({ list: 'members' });
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor, scope, fp);
    const { store } = this.deps;
    const rows = store.pageMemberships
      ? await store.pageMemberships(pid, { after, limit: query.limit + 1 })
      : (await store.listMemberships(pid))
        .filter((m) => after === undefined || m.created_at > after.created_at || (m.created_at === after.created_at && compareBytes(m.account_id, after.id) > 0))
        .slice(0, query.limit + 1);
    return pageOf(rows, query.limit, (last) => encodeCursor(scope, fp, { created_at: last.created_at, id: last.account_id }));
  }

  /** Removes a member (owner only). @throws project_not_found, permission_denied, project_archived, member_not_found. */
  async removeMember(ctx: RequestContext, project_id: string, account_id: string): Promise<void> {
    const events = await this.deps.store.transaction(async (tx) => {
      const access = await gateProjectWrite(tx, ctx.principal, project_id, 'project.member.remove');
      if (!(await tx.deleteMembership(access.project.id, account_id))) throw new InboxKitError('member_not_found', 'Member not found');
      return [await this.record(tx, ctx, access.project, 'project_member.remove', 'account', account_id, {}, 'project.member.removed', { account_id })];
    });
    this.publish(events);
  }

  // — sessions, floors, pages —

  /**
   * Creates a session, optionally in a project (the project's owner or a deriver may).
   * `input.id` is for trusted callers only, as for {@link createProject}. `managed` carries the
   * Managed Agents fields of `POST /v1/sessions` (see `ManagedSessionsService`).
   * @throws project_not_found, permission_denied, project_archived, conflict (a trusted caller's id
   *   is taken), rate_limited (429: the caller's API key created `budgets.sessionsPerMinute` Sessions
   *   in the last minute; `retryAfterSeconds` says when one is back).
   */
  async createSession(
    ctx: RequestContext, input: z.input<typeof createSessionBody>,
    managed?: { agent: JsonValue; environment_id: string; metadata: Record<string, string> },
  ): Promise<Session> {
    const body = parseOrThrow(createSessionBody, input, 'session');
    // The caller's budget (trusted creates with their own id — seeding, imports — are not counted).
    if (body.id === undefined) this.#sessionCreates.take(ctx.principal);
    const now = this.deps.clock.now();
    const session: Session = {
      id: body.id ?? this.deps.ids.next('sess'),
      workspace_id: ctx.principal.workspace_id,
      project_id: body.project_id ?? null,
      title: body.title,
      created_by_account_id: ctx.principal.account_id,
      created_at: now,
      // Without an agent: the Runtime's own (its model and tools), so every Session has the
      // Managed Agents fields the official SDKs require (live-inbox.md "Managed Agents compatibility").
      agent: managed?.agent ?? runtimeAgentSnapshot(),
      environment_id: managed?.environment_id ?? DEFAULT_ENVIRONMENT_ID,
      metadata: managed?.metadata ?? {},
      updated_at: now,
      archived_at: null,
    };
    const events = await idTakenIsConflict(body.id, 'session', () => this.deps.store.transaction(async (tx) => {
      if (body.id !== undefined && (await tx.getSession(ctx.principal.workspace_id, body.id))) {
        throw new InboxKitError('conflict', 'A session with this id already exists');
      }
      if (session.project_id === null) {
        assertWrite('session.create', 'workspace', { project: 'none', session: 'none', run: 'idle' });
        await tx.insertSession(session);
        return [];
      }
      const access = await gateProjectWrite(tx, ctx.principal, session.project_id, 'session.create');
      await tx.insertSession(session);
      return [await this.record(tx, ctx, access.project, 'session.create', 'session', session.id, {}, 'session.created', { session_id: session.id }, { session_id: session.id })];
    }));
    this.publish(events);
    return session;
  }

  /**
   * One page of the Sessions the caller may see (outside every project, or in a project it owns
   * or is a member of; archived ones included), newest first (`created_at DESC, id DESC`);
   * `project_id` narrows to one project. `input`: `{ project_id?, limit?: 1–200 (50), cursor? }`.
   * @throws project_not_found (`project_id` not visible), validation_error, invalid_cursor.
   */
  async listSessions(ctx: RequestContext, input: z.input<typeof listSessionsQuery> = {}): Promise<ListPage<Session>> {
    const query = parseOrThrow(listSessionsQuery, input, 'query');
    const { workspace_id, account_id } = ctx.principal;
    const { store } = this.deps;
    const scope = `platform_sessions:${workspace_id}:${account_id}`;
    const fp = filterFingerprint({ list: 'sessions', project_id: query.project_id });
    let after = query.cursor === undefined ? undefined : decodeCursor(query.cursor, scope, fp);
    let visible_project_ids: string[];
    if (query.project_id !== undefined) {
      visible_project_ids = [(await loadProjectAccess(store, ctx.principal, query.project_id)).project.id];
    } else {
      visible_project_ids = (await store.listProjectsForAccount(workspace_id, account_id)).map((p) => p.id);
    }
    const wanted = query.limit + 1;
    const matches: Session[] = [];
    // A store that ignores the `project_id` filter returns Sessions outside projects too: drop them and read on.
    for (;;) {
      const rows = await store.pageSessions(workspace_id, { order: 'desc', visible_project_ids, include_archived: true, project_id: query.project_id, after, limit: wanted });
      for (const session of rows) {
        if (query.project_id === undefined || session.project_id === query.project_id) matches.push(session);
        if (matches.length === wanted) break;
      }
      const last = rows[rows.length - 1];
      if (matches.length === wanted || last === undefined || rows.length < wanted) break;
      after = { created_at: last.created_at, id: last.id };
    }
    return pageOf(matches, query.limit, (last) => encodeCursor(scope, fp, last));
  }

  /** One session. @throws session_not_found (missing, foreign, or not visible). */
  async getSession(ctx: RequestContext, session_id: string): Promise<Session> {
    return (await loadSessionAccess(this.deps.store, ctx.principal, session_id)).session;
  }

  /**
   * One page of a session's Floors by `(number, branch, id)` ascending. `input`: `{ limit?: 1–200
   * (50), cursor? }`. @throws session_not_found, validation_error, invalid_cursor.
   */
  async listFloors(ctx: RequestContext, session_id: string, input: z.input<typeof listFloorsQuery> = {}): Promise<ListPage<Floor>> {
    const query = parseOrThrow(listFloorsQuery, input, 'query');
    const { session } = await loadSessionAccess(this.deps.store, ctx.principal, session_id);
    const scope = `floors:${session.id}`;
    const fp = filterFingerprint({ list: 'floors' });
    let after: FloorPosition | undefined;
    if (query.cursor !== undefined) {
      const position = decodeCursor(query.cursor, scope, fp);
      const slash = position.id.indexOf('/');
      if (slash <= 0) throw new InboxKitError('invalid_cursor', 'Cursor is invalid');
      after = { number: position.created_at, branch: position.id.slice(0, slash), id: position.id.slice(slash + 1) };
    }
    const { store } = this.deps;
    const rows = store.pageFloors
      ? await store.pageFloors(session.id, { after, limit: query.limit + 1 })
      : (await store.listFloors(session.id)).filter((f) => after === undefined || compareFloors(f, after) > 0).slice(0, query.limit + 1);
    return pageOf(rows, query.limit, (last) => encodeCursor(scope, fp, { created_at: last.number, id: `${last.branch}/${last.id}` }));
  }

  /**
   * One page of a floor's Pages by `version` ascending. `input`: `{ limit?: 1–200 (50), cursor? }`.
   * @throws session_not_found, floor_not_found, validation_error, invalid_cursor.
   */
  async listPages(ctx: RequestContext, session_id: string, floor_id: string, input: z.input<typeof listPagesQuery> = {}): Promise<ListPage<Page>> {
    const query = parseOrThrow(listPagesQuery, input, 'query');
    const { session } = await loadSessionAccess(this.deps.store, ctx.principal, session_id);
    const floor = await this.deps.store.getFloor(session.workspace_id, floor_id);
    if (!floor || floor.session_id !== session.id) throw new InboxKitError('floor_not_found', 'Floor not found');
    const scope = `pages:${floor.id}`;
    const fp = filterFingerprint({ list: 'pages' });
    const after_version = query.cursor === undefined ? undefined : decodeCursor(query.cursor, scope, fp).created_at;
    const { store } = this.deps;
    const rows = store.pagePages
      ? await store.pagePages(floor.id, { after_version, limit: query.limit + 1 })
      : (await store.listPages(floor.id)).filter((p) => after_version === undefined || p.version > after_version).slice(0, query.limit + 1);
    return pageOf(rows, query.limit, (last) => encodeCursor(scope, fp, { created_at: last.version, id: last.id }));
  }

  /**
   * Commits a turn: a new Floor (next number on the branch) with its first Page. Used by the
   * Runtime and by callers that write turns directly.
   * @throws session_not_found, permission_denied, project_archived, session_archived, validation_error,
   *   project_inbox_payload_invalid/too_large.
   */
  async commitTurn(ctx: RequestContext, session_id: string, input: z.input<typeof commitTurnBody>): Promise<{ floor: Floor; page: Page }> {
    const body = parseOrThrow(commitTurnBody, input, 'turn');
    const content = checkContent(body.content);
    return this.deps.store.transaction(async (tx) => {
      const access = await gateSessionWrite(tx, ctx.principal, session_id, 'session.turn.commit');
      return writeTurn(tx, this.deps, access.session, content, body.branch ?? 'main');
    });
  }

  /** Adds a Page (a regeneration) to a floor. @throws session_not_found, floor_not_found, permission_denied, project_archived, session_archived. */
  async addPage(ctx: RequestContext, session_id: string, floor_id: string, input: z.input<typeof addPageBody>): Promise<Page> {
    const body = parseOrThrow(addPageBody, input, 'page');
    const content = checkContent(body.content);
    return this.deps.store.transaction(async (tx) => {
      const access = await gateSessionWrite(tx, ctx.principal, session_id, 'session.page.add');
      const floor = await tx.getFloor(access.session.workspace_id, floor_id);
      if (!floor || floor.session_id !== access.session.id) throw new InboxKitError('floor_not_found', 'Floor not found');
      const pages = await tx.listPages(floor.id);
      const page: Page = {
        id: this.deps.ids.next('page'), workspace_id: floor.workspace_id, session_id: floor.session_id, floor_id: floor.id,
        version: pages.length + 1, content, created_at: this.deps.clock.now(),
      };
      await tx.insertPage(page);
      return page;
    });
  }

  // — events and logs —

  /**
   * One page of Project Events after a sequence, ascending, filtered to what the caller may see.
   * `next_after` is the last sequence examined (pass it as `after` for the next page).
   * @throws project_not_found, validation_error.
   */
  async listProjectEvents(ctx: RequestContext, project_id: string, input: z.input<typeof listProjectEventsQuery> = {}) {
    const query = parseOrThrow(listProjectEventsQuery, input, 'query');
    const access = await loadProjectAccess(this.deps.store, ctx.principal, project_id);
    const types = query.types?.split(',').map((t) => t.trim()).filter(Boolean);
    const rows = await this.deps.store.listProjectEvents({
      project_id: access.project.id, after: query.after, types: types?.length ? types : undefined,
      session_id: query.session_id, limit: query.limit + 1,
    });
    const page = rows.slice(0, query.limit);
    const last = page[page.length - 1];
    return {
      items: page.filter((e) => canSeeEvent(access.role, ctx.principal.account_id, e)),
      next_after: last ? last.sequence : query.after,
      has_more: rows.length > query.limit,
    };
  }

  /**
   * The caller's feed of a project's events, for a live stream with resume (platform.md
   * "Project Events"): replay is unfiltered so ids stay contiguous; `visible` applies the read
   * rights (`owner` events reach the owner, inbox events also their item's sender) and the
   * requested filters. `authorize` re-reads the caller's role from storage before delivering a
   * `project.member.*` event that names the caller (so on every process, in stream order) and at
   * least every {@link PROJECT_FEED_RECHECK_MS} otherwise: a member removed (or a project gone)
   * ends the stream with `project_not_found`; a demotion filters what is delivered from then on.
   * @throws project_not_found.
   */
  async projectEventFeed(ctx: RequestContext, project_id: string, filter: { types?: string; session_id?: string } = {}): Promise<Feed<ProjectEvent>> {
    const me = ctx.principal.account_id;
    const clock = this.deps.clock;
    // Events up to `known` were committed before the role below was read: they are reflected in it.
    // (Read before the access check; for a project the caller may not see, the check below refuses.)
    const known = await this.deps.store.lastProjectEventSequence(project_id);
    const access = await loadProjectAccess(this.deps.store, ctx.principal, project_id);
    let role: ProjectRole = access.role;
    let checkedAt = clock.now();
    const types = filter.types?.split(',').map((t) => t.trim()).filter(Boolean);
    const pid = access.project.id;
    const toItem = (e: ProjectEvent): FeedItem<ProjectEvent> => ({ id: e.sequence, type: e.type, data: e });
    const changesMyAccess = (item: FeedItem<ProjectEvent>) => item.id > known && MEMBER_EVENTS.includes(item.type) && item.data.payload['account_id'] === me;
    return {
      replay: async (after, limit) => (await this.deps.store.listProjectEvents({ project_id: pid, after, limit })).map(toItem),
      latest: () => this.deps.store.lastProjectEventSequence(pid),
      subscribe: (push) => this.deps.bus.subscribe(`project:${pid}`, (m) => { if (m.kind === 'project_event') push(toItem(m.event)); }),
      authorize: async (next) => {
        const at = clock.now();
        if (!next.some(changesMyAccess) && at - checkedAt < PROJECT_FEED_RECHECK_MS) return;
        try {
          role = (await loadProjectAccess(this.deps.store, ctx.principal, project_id)).role;
          checkedAt = at;
        } catch (error) {
          role = null;
          throw error;
        }
      },
      visible: (item) => (!types?.length || types.includes(item.type)) &&
        (filter.session_id === undefined || item.data.session_id === filter.session_id) &&
        canSeeEvent(role, me, item.data),
    };
  }

  /** Operation Log of a project, newest first (owner only). @throws project_not_found, permission_denied, invalid_cursor. */
  async listOperationLogs(ctx: RequestContext, project_id: string, input: z.input<typeof listOperationLogsQuery> = {}): Promise<ListPage<OperationLog>> {
    const query = parseOrThrow(listOperationLogsQuery, input, 'query');
    const access = await loadProjectAccess(this.deps.store, ctx.principal, project_id);
    if (access.role !== 'owner') throw forbidden('Only the project owner may read the operation log');
    const fp = filterFingerprint({ log: 'operation' });
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor, access.project.id, fp);
    const rows = await this.deps.store.listOperationLogs({ project_id: access.project.id, after, limit: query.limit + 1 });
    return pageOf(rows, query.limit, (last) => encodeCursor(access.project.id, fp, last));
  }

  private async record(
    tx: StoreTx, ctx: RequestContext, project: Project, action: string, target_type: string, target_id: string,
    metadata: OperationLog['metadata'], type: string, payload: ProjectEvent['payload'], refs: { session_id?: string } = {},
  ): Promise<ProjectEvent> {
    const now = this.deps.clock.now();
    const logId = this.deps.ids.next('oplog');
    return appendAudited(tx, {
      id: logId, workspace_id: project.workspace_id, project_id: project.id, actor_account_id: ctx.principal.account_id,
      action, target_type, target_id, request_id: ctx.request_id, metadata, created_at: now,
    }, {
      id: this.deps.ids.next('evt'), workspace_id: project.workspace_id, project_id: project.id, type,
      actor_account_id: ctx.principal.account_id, session_id: refs.session_id ?? null, floor_id: null, page_id: null,
      operation_log_id: logId, correlation_id: ctx.request_id, causation_event_id: null, payload,
      visibility: visibilityOfEventType(type), source: ctx.source ?? 'api', created_at: now,
    });
  }

  private publish(events: ProjectEvent[]): void {
    for (const event of events) {
      try {
        this.deps.bus.publish({ kind: 'project_event', event });
      } catch (error) {
        this.deps.onPublishError?.(error);
      }
    }
  }
}

/** `a` against the position `b` in `(number, branch, id)` order (strings in byte order). */
function compareFloors(a: FloorPosition, b: FloorPosition): number {
  return a.number - b.number || compareBytes(a.branch, b.branch) || compareBytes(a.id, b.id);
}

function checkContent(content: unknown): JsonValue {
  const { value, bytes } = measurePayload(content === undefined ? null : content);
  if (bytes > MAX_PAYLOAD_BYTES) throw new InboxKitError('payload_too_large', `content is ${bytes} bytes; the limit is ${MAX_PAYLOAD_BYTES}`);
  return value;
}
