/** `SessionStore` on Kysely, the Session rows: soft delete, row lock, keyset pages, access in one read. */
import { sql } from 'kysely';
import type { MemberRole, Membership, Project, ProjectStatus, Session, SessionGate, SessionStore } from '@inbox-kit/core';
import { $, insertRecord, type StoreContext } from './context.js';
import type { LedgerStore } from './ledger.js';
import type { TurnStore } from './turns.js';
import {
  MEMBER, POINT_COLUMNS, PROJECT, SESSION, columnsOf, decodeProjectAccess, jsonRecordSql, jsonRecords, limitOf, num, pointReads, projectAccessRead, toJson,
} from './rows.js';

/** A {@link SessionStore.getSessionGate} row: the Session's three columns, its project's owner and status, the caller's role. */
type GateRow = { id: string; project_id: string | null; archived_at: unknown; p_account_id: string | null; p_status: string | null; m_role: string | null };

/** The `SessionGate` of a gate row (the project's role only with the project). */
function decodeGate(r: GateRow): SessionGate {
  const project = r.p_account_id === null ? undefined : { account_id: r.p_account_id, status: r.p_status as ProjectStatus };
  return {
    session: { id: r.id, project_id: r.project_id, archived_at: r.archived_at === null ? null : num(r.archived_at) },
    project, role: project === undefined || r.m_role === null ? undefined : (r.m_role as MemberRole),
  };
}

/** The Session rows of {@link SessionStore}; its turns and ledger are `turns.ts` and `ledger.ts`. */
export function sessionRowOps(ctx: StoreContext): Omit<SessionStore, keyof TurnStore | keyof LedgerStore> {
  const { db, dialect, first, all } = ctx;
  /** The live Session rows of a workspace (never a deleted one). */
  const liveSessions = (workspace_id: unknown) => db.selectFrom('sessions').select(SESSION.select(dialect))
    .where('workspace_id', '=', workspace_id as string).where('deleted_at', 'is', null);
  return {
    async insertSession(s) {
      await insertRecord(ctx, SESSION, s);
    },
    async getSession(workspace_id, session_id) {
      const r = await first<Record<string, unknown>>('getSession', () => liveSessions($(1)).where('id', '=', $(0)), session_id, workspace_id);
      return r && SESSION.decode(r);
    },
    async lockSession(workspace_id, session_id) {
      // As lockProject: the lock the `event_seq` bump takes, held until this transaction ends.
      const r = await first<Record<string, unknown>>('lockSession', () => dialect.holdRows(liveSessions($(1)).where('id', '=', $(0))), session_id, workspace_id);
      return r && SESSION.decode(r);
    },
    async findSession(session_id) {
      const r = await first<Record<string, unknown>>('findSession', () => db.selectFrom('sessions').select(SESSION.select(dialect))
        .where('id', '=', $(0)).where('deleted_at', 'is', null), session_id);
      return r && SESSION.decode(r);
    },
    async listSessions(workspace_id, filter) {
      let q = liveSessions(workspace_id);
      if (filter.project_id === null) q = q.where('project_id', 'is', null);
      else if (filter.project_id !== undefined) q = q.where('project_id', '=', filter.project_id);
      const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
      return rows.map((r) => SESSION.decode(r));
    },
    async pageSessions(workspace_id, query) {
      const dir = query.order === 'asc' ? 'asc' : 'desc';
      const cmp = dir === 'asc' ? '>' : '<';
      let q = liveSessions(workspace_id);
      const visible = query.visible_project_ids;
      if (visible !== undefined) {
        q = visible.length === 0 ? q.where('project_id', 'is', null)
          : q.where((eb) => eb.or([eb('project_id', 'is', null), eb('project_id', 'in', visible)]));
      }
      if (query.project_id !== undefined) q = q.where('project_id', '=', query.project_id);
      if (query.include_archived === false) q = q.where('archived_at', 'is', null);
      if (query.agent_id !== undefined) q = q.where(dialect.jsonField('agent', 'id'), '=', query.agent_id);
      const b = query.created_at;
      if (b?.gt !== undefined) q = q.where('created_at', '>', b.gt);
      if (b?.gte !== undefined) q = q.where('created_at', '>=', b.gte);
      if (b?.lt !== undefined) q = q.where('created_at', '<', b.lt);
      if (b?.lte !== undefined) q = q.where('created_at', '<=', b.lte);
      const after = query.after;
      if (after !== undefined) {
        q = q.where((eb) => eb.or([eb('created_at', cmp, after.created_at), eb.and([eb('created_at', '=', after.created_at), eb('id', cmp, after.id)])]));
      }
      const rows = await q.orderBy('created_at', dir).orderBy('id', dir).limit(limitOf(query.limit)).execute();
      return rows.map((r) => SESSION.decode(r));
    },
    async updateSession(workspace_id, session_id, patch) {
      const set: Record<string, unknown> = { updated_at: patch.updated_at };
      if (patch.title !== undefined) set.title = patch.title;
      if (patch.metadata !== undefined) set.metadata = toJson(patch.metadata);
      if (patch.archived_at !== undefined) set.archived_at = patch.archived_at;
      const r = await db.updateTable('sessions').set(set)
        .where('id', '=', session_id).where('workspace_id', '=', workspace_id).where('deleted_at', 'is', null)
        .returning(SESSION.select(dialect)).executeTakeFirst();
      return r && SESSION.decode(r);
    },
    async deleteSession(workspace_id, session_id, at) {
      const r = await db.updateTable('sessions').set({ deleted_at: at })
        .where('id', '=', session_id).where('workspace_id', '=', workspace_id).where('deleted_at', 'is', null).executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },
    async getSessionGate(workspace_id, session_id, account_id) {
      // One row, three columns of the Session and three of its project and membership. SQLite: scalar
      // reads by key (no join, whose plan SQLite would redo on every execution: `accessReadsWithoutJoins`).
      const r = await first<GateRow>('getSessionGate', () => (dialect.accessReadsWithoutJoins
        ? sql`SELECT s.id, s.project_id, s.archived_at,
          (SELECT p.account_id FROM projects p WHERE p.id = s.project_id AND p.workspace_id = s.workspace_id) AS p_account_id,
          (SELECT p.status FROM projects p WHERE p.id = s.project_id AND p.workspace_id = s.workspace_id) AS p_status,
          (SELECT m.role FROM project_members m WHERE m.project_id = s.project_id AND m.account_id = ${$(0)}) AS m_role
          FROM sessions s WHERE s.id = ${$(1)} AND s.workspace_id = ${$(2)} AND s.deleted_at IS NULL`
        : sql`SELECT s.id, s.project_id, s.archived_at, p.account_id AS p_account_id, p.status AS p_status, m.role AS m_role
          FROM sessions s
          LEFT JOIN projects p ON p.id = s.project_id AND p.workspace_id = s.workspace_id
          LEFT JOIN project_members m ON m.project_id = p.id AND m.account_id = ${$(0)}
          WHERE s.id = ${$(1)} AND s.workspace_id = ${$(2)} AND s.deleted_at IS NULL`) as never, account_id, session_id, workspace_id);
      return r && decodeGate(r);
    },
    async getSessionWithAccess(workspace_id, session_id, account_id) {
      if (dialect.accessReadsWithoutJoins) {
        // One statement of point reads: the session, then its project (same workspace) with the caller's membership.
        const rows = await all<Record<string, unknown>>('getSessionWithAccess', () => pointReads([
          { tag: 's', exprs: columnsOf(SESSION, dialect, 's'), from: sql`FROM sessions s WHERE s.id = ${$(1)} AND s.workspace_id = ${$(2)} AND s.deleted_at IS NULL` },
          projectAccessRead(dialect, $(0), sql`FROM projects p
            WHERE p.id = (SELECT project_id FROM sessions WHERE id = ${$(1)} AND workspace_id = ${$(2)} AND deleted_at IS NULL)
            AND p.workspace_id = ${$(2)}`),
        ]) as never, account_id, session_id, workspace_id);
        const s = rows.find((r) => r.k === 's');
        if (!s) return undefined;
        const p = rows.find((r) => r.k === 'p');
        return { session: SESSION.decodeAt(s, POINT_COLUMNS), ...(p ? decodeProjectAccess(p) : { project: undefined, membership: undefined }) };
      }
      // One statement: the session, its project (same workspace) and the caller's membership, as
      // one JSON array of the three records (see jsonRecordSql).
      const r = await first<{ a: string }>('getSessionWithAccess', () => sql`SELECT json_build_array(${sql.raw(jsonRecordSql(SESSION, 's'))},
        ${sql.raw(jsonRecordSql(PROJECT, 'p', 'id'))}, ${sql.raw(jsonRecordSql(MEMBER, 'm', 'role'))})::text AS a
        FROM sessions s
        LEFT JOIN projects p ON p.id = s.project_id AND p.workspace_id = s.workspace_id
        LEFT JOIN project_members m ON m.project_id = p.id AND m.account_id = ${$(0)}
        WHERE s.id = ${$(1)} AND s.workspace_id = ${$(2)} AND s.deleted_at IS NULL` as never, account_id, session_id, workspace_id);
      if (!r) return undefined;
      const [session, project, membership] = jsonRecords<[Session, Project, Membership]>(r.a);
      return { session: session as Session, project: project ?? undefined, membership: membership ?? undefined };
    },
  };
}
