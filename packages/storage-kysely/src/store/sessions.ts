/** `SessionStore` on Kysely: Sessions (soft delete, row lock, keyset pages), Floors, Pages and the Session ledger. */
import { sql } from 'kysely';
import type { NewSessionEvent, SessionEvent, SessionStore } from '@inbox-kit/core';
import { $, insertRecord, type StoreContext } from './context.js';
import { FLOOR, MEMBER, PAGE, PROJECT, SESSION, SESSION_EVENT, fromJson, limitOf, num, toJson } from './rows.js';

export function sessionOps(ctx: StoreContext): SessionStore {
  const { db, dialect, first } = ctx;
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
    async getSessionWithAccess(workspace_id, session_id, account_id) {
      // One statement: the session, its project (same workspace) and the caller's membership.
      const r = await first<Record<string, unknown>>('getSessionWithAccess', () => sql`SELECT ${sql.raw(SESSION.selectRaw(dialect, 's', 's'))},
        ${sql.raw(PROJECT.selectRaw(dialect, 'p', 'p'))}, ${sql.raw(MEMBER.selectRaw(dialect, 'm', 'm'))}
        FROM sessions s
        LEFT JOIN projects p ON p.id = s.project_id AND p.workspace_id = s.workspace_id
        LEFT JOIN project_members m ON m.project_id = p.id AND m.account_id = ${$(0)}
        WHERE s.id = ${$(1)} AND s.workspace_id = ${$(2)} AND s.deleted_at IS NULL` as never, account_id, session_id, workspace_id);
      if (!r) return undefined;
      return {
        session: SESSION.decode(r, 's'),
        project: r.p_id == null ? undefined : PROJECT.decode(r, 'p'),
        membership: r.m_role == null ? undefined : MEMBER.decode(r, 'm'),
      };
    },

    // — turns: Floors and Pages —
    async insertFloor(f) {
      await insertRecord(ctx, FLOOR, f);
    },
    async getFloor(workspace_id, floor_id) {
      const r = await db.selectFrom('floors').select(FLOOR.select(dialect))
        .where('id', '=', floor_id).where('workspace_id', '=', workspace_id).executeTakeFirst();
      return r && FLOOR.decode(r);
    },
    async listFloors(session_id) {
      const rows = await db.selectFrom('floors').select(FLOOR.select(dialect)).where('session_id', '=', session_id)
        .orderBy('number', 'asc').orderBy('branch', 'asc').orderBy('id', 'asc').execute();
      return rows.map((r) => FLOOR.decode(r));
    },
    async lastFloorNumber(session_id, branch) {
      const r = await db.selectFrom('floors')
        .select((eb) => eb.fn.max('number').as('last'))
        .where('session_id', '=', session_id).where('branch', '=', branch).executeTakeFirst();
      return r?.last === null || r?.last === undefined ? 0 : num(r.last);
    },
    async insertPage(p) {
      await insertRecord(ctx, PAGE, p);
    },
    async getPage(workspace_id, page_id) {
      const r = await db.selectFrom('pages').select(PAGE.select(dialect))
        .where('id', '=', page_id).where('workspace_id', '=', workspace_id).executeTakeFirst();
      return r && PAGE.decode(r);
    },
    async listPages(floor_id) {
      const rows = await db.selectFrom('pages').select(PAGE.select(dialect)).where('floor_id', '=', floor_id)
        .orderBy('version', 'asc').orderBy('id', 'asc').execute();
      return rows.map((r) => PAGE.decode(r));
    },

    // — the Session ledger —
    async appendSessionEvents(events: NewSessionEvent[]) {
      if (events.length === 0) return [];
      return ctx.atomically(async (trx) => {
        // Reserve a block of `seq` values per session. Sessions are locked in id order, so two calls
        // touching the same sessions cannot deadlock.
        const counts = new Map<string, number>();
        for (const e of events) counts.set(e.session_id, (counts.get(e.session_id) ?? 0) + 1);
        const next = new Map<string, number>();
        for (const session_id of [...counts.keys()].sort()) {
          const n = counts.get(session_id) ?? 0;
          const counter = await trx.updateTable('sessions')
            .set((eb) => ({ event_seq: eb('event_seq', '+', n) }))
            .where('id', '=', session_id)
            .returning('event_seq')
            .executeTakeFirst();
          if (!counter) throw new Error(`@inbox-kit/storage-kysely: appendSessionEvents: session ${session_id} does not exist`);
          next.set(session_id, num(counter.event_seq) - n + 1);
        }
        const stored: SessionEvent[] = events.map((e) => {
          const seq = next.get(e.session_id) ?? 0;
          next.set(e.session_id, seq + 1);
          return SESSION_EVENT.pick({ ...e, seq, content: fromJson(toJson(e.content)) });
        });
        await trx.insertInto('session_events').values(stored.map((s) => SESSION_EVENT.row(s)) as never).execute();
        return stored;
      });
    },
    async listSessionEvents(q) {
      let query = db.selectFrom('session_events').select(SESSION_EVENT.select(dialect))
        .where('session_id', '=', q.session_id).where('seq', '>', q.after);
      if (q.before !== undefined) query = query.where('seq', '<', q.before);
      if (q.types !== undefined) query = q.types.length === 0 ? query.where(sql<boolean>`1 = 0`) : query.where('type', 'in', q.types);
      const b = q.processed_at;
      if (b?.gt !== undefined) query = query.where('processed_at', '>', b.gt);
      if (b?.gte !== undefined) query = query.where('processed_at', '>=', b.gte);
      if (b?.lt !== undefined) query = query.where('processed_at', '<', b.lt);
      if (b?.lte !== undefined) query = query.where('processed_at', '<=', b.lte);
      const rows = await query.orderBy('seq', q.order === 'desc' ? 'desc' : 'asc').limit(limitOf(q.limit)).execute();
      return rows.map((r) => SESSION_EVENT.decode(r));
    },
    async lastSessionEventSeq(session_id) {
      const r = await db.selectFrom('session_events').select((eb) => eb.fn.max('seq').as('last'))
        .where('session_id', '=', session_id).executeTakeFirst();
      return r?.last == null ? 0 : num(r.last);
    },
  };
}
