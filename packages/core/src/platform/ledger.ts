/**
 * The Session aggregate of the platform: Sessions (create, list, read) and their ledger of Floors
 * and Pages (commit a turn, add a Page).
 */
import { SessionCreateBudget } from '../caller-budgets.js';
import type { RequestContext, ServiceDeps } from '../context.js';
import { decodeCursor, encodeCursor, filterFingerprint } from '../cursor.js';
import { InboxKitError } from '../errors.js';
import { compareBytes, pageOf } from '../paging.js';
import type { ListPage } from '../paging.js';
import { assertWrite, gateProjectWrite, gateSessionWrite } from '../policy/write-gate.js';
import type { FloorPosition } from '../ports/store.js';
import { loadProjectAccess } from '../project-inbox/access.js';
import type { Floor, JsonValue, Page, Session } from '../records.js';
import { loadSessionAccess, writeTurn } from '../sessions/access.js';
import { DEFAULT_ENVIRONMENT_ID, runtimeAgentSnapshot } from '../sessions/managed-agents.js';
import { MAX_PAYLOAD_BYTES, measurePayload, parseOrThrow } from '../validation.js';
import { addPageBody, commitTurnBody, createSessionBody, listFloorsQuery, listPagesQuery, listSessionsQuery } from './schemas.js';
import { idTakenIsConflict, publishProjectEvents, recordProjectWrite } from './writes.js';
import type { z } from 'zod';

/** Sessions and their ledger (platform.md "Sessions"): Sessions, Floors (committed turns) and Pages (versions). */
export class SessionLedgerService {
  /** Sessions created per minute per API key (`deps.budgets.sessionsPerMinute`). */
  readonly #sessionCreates: SessionCreateBudget;

  constructor(private readonly deps: ServiceDeps) {
    this.#sessionCreates = new SessionCreateBudget(deps.budgets, () => deps.clock.now());
  }

  /**
   * Creates a session, optionally in a project (the project's owner or a deriver may).
   * `input.id` is for trusted callers only, as for `ProjectService.createProject`. `managed` carries the
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
      return [await recordProjectWrite(this.deps, tx, ctx, access.project, 'session.create', 'session', session.id, {}, 'session.created', { session_id: session.id }, { session_id: session.id })];
    }));
    publishProjectEvents(this.deps, events);
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
}

/** `a` against the position `b` in `(number, branch, id)` order (strings in byte order). */
function compareFloors(a: FloorPosition, b: FloorPosition): number {
  return a.number - b.number || compareBytes(a.branch, b.branch) || compareBytes(a.id, b.id);
}

function checkContent(content: unknown): JsonValue {
  const { value, bytes } = measurePayload(content === undefined ? null : content, MAX_PAYLOAD_BYTES);
  if (bytes > MAX_PAYLOAD_BYTES) throw new InboxKitError('payload_too_large', `content is ${bytes} bytes; the limit is ${MAX_PAYLOAD_BYTES}`);
  return value;
}
