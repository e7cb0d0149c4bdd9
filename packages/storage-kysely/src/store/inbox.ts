/** `InboxStore` on Kysely: Project Inbox items, their keyset pages and the conditional decision. */
import { sql } from 'kysely';
import type { InboxItemQuery, InboxStore, Membership, Project, ProjectInboxItem } from '@inbox-kit/core';
import { $, insertRecord, type StoreContext } from './context.js';
import {
  ITEM, MEMBER, POINT_COLUMNS, PROJECT, columnsOf, decodeProjectAccess, jsonRecordSql, jsonRecords, fromJson, limitOf, num, pointReads, projectAccessRead,
} from './rows.js';

/** The equality filters of `listInboxItems`, in the order their values follow the project id. */
const INBOX_FILTERS = ['status', 'type', 'sender_account_id', 'source_session_id'] as const;


export function inboxOps(ctx: StoreContext): InboxStore {
  const { db, dialect, first, all } = ctx;
  /**
   * The keyset page query of `q` without its select list (`build()`), its name among the compiled
   * queries and its arguments: the project id, the filters' values, the position after; the limit
   * is the next argument.
   */
  const pageQuery = (q: InboxItemQuery) => {
    const filters = INBOX_FILTERS.filter((column) => q[column] !== undefined);
    const after = q.after;
    const args: unknown[] = [q.project_id, ...filters.map((column) => q[column])];
    if (after) args.push(after.created_at, after.id);
    const build = () => {
      let query = db.selectFrom('project_inbox_items').where('project_id', '=', $(0));
      filters.forEach((column, i) => {
        query = query.where(column, '=', $(i + 1));
      });
      if (after) {
        const [created_at, id] = [$(filters.length + 1), $(filters.length + 2)];
        query = query.where(({ eb, refTuple, tuple }) => eb(refTuple('created_at', 'id'), '<', tuple(created_at, id)));
      }
      return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit($(args.length));
    };
    return { name: `(${filters.join(',')}${after ? ';after' : ''})`, args, build };
  };
  const ops: InboxStore = {
    async insertInboxItem(i) {
      await insertRecord(ctx, ITEM, i);
    },
    async getInboxItem(project_id, item_id) {
      const r = await first<Record<string, unknown>>('getInboxItem', () => db.selectFrom('project_inbox_items').select(ITEM.select(dialect))
        .where('id', '=', $(0)).where('project_id', '=', $(1)), item_id, project_id);
      return r && ITEM.decode(r);
    },
    async getInboxItemWithAccess(workspace_id, project_id, account_id, item_id) {
      if (dialect.accessReadsWithoutJoins) {
        // One statement of point reads: the project with the caller's membership, then the item of that project.
        const rows = await all<Record<string, unknown>>('getInboxItemWithAccess', () => pointReads([
          projectAccessRead(dialect, $(0), sql`FROM projects p WHERE p.id = ${$(2)} AND p.workspace_id = ${$(3)}`),
          { tag: 'i', exprs: columnsOf(ITEM, dialect, 'i'), from: sql`FROM project_inbox_items i WHERE i.id = ${$(1)} AND i.project_id = ${$(2)}` },
        ]) as never, account_id, item_id, project_id, workspace_id);
        const p = rows.find((r) => r.k === 'p');
        if (!p) return undefined;
        const i = rows.find((r) => r.k === 'i');
        return { ...decodeProjectAccess(p), item: i && ITEM.decodeAt(i, POINT_COLUMNS) };
      }
      // One statement: the project, the caller's membership and the item (one round trip on
      // PostgreSQL), as one JSON array of the three records (see jsonRecordSql).
      const r = await first<{ a: string }>('getInboxItemWithAccess', () => sql`SELECT json_build_array(${sql.raw(jsonRecordSql(PROJECT, 'p'))},
        ${sql.raw(jsonRecordSql(MEMBER, 'm', 'role'))}, ${sql.raw(jsonRecordSql(ITEM, 'i', 'id'))})::text AS a
        FROM projects p
        LEFT JOIN project_members m ON m.project_id = p.id AND m.account_id = ${$(0)}
        LEFT JOIN project_inbox_items i ON i.project_id = p.id AND i.id = ${$(1)}
        WHERE p.id = ${$(2)} AND p.workspace_id = ${$(3)}` as never, account_id, item_id, project_id, workspace_id);
      if (!r) return undefined;
      const [project, membership, item] = jsonRecords<[Project, Membership, ProjectInboxItem]>(r.a);
      return { project: project as Project, membership: membership ?? undefined, item: item ?? undefined };
    },
    async lockInboxItemWithAccess(workspace_id, project_id, account_id, item_id) {
      if (dialect.accessReadsWithoutJoins) {
        // SQLite: the write transaction holds the database's lock (lockProject reads the row plainly,
        // see the dialect's `holdRows`): the same point reads as getInboxItemWithAccess, in the transaction.
        const rows = await all<Record<string, unknown>>('lockInboxItemWithAccess', () => pointReads([
          projectAccessRead(dialect, $(0), sql`FROM projects p WHERE p.id = ${$(2)} AND p.workspace_id = ${$(3)}`),
          { tag: 'i', exprs: columnsOf(ITEM, dialect, 'i'), from: sql`FROM project_inbox_items i WHERE i.id = ${$(1)} AND i.project_id = ${$(2)}` },
        ]) as never, account_id, item_id, project_id, workspace_id);
        const p = rows.find((r) => r.k === 'p');
        if (!p) return undefined;
        const i = rows.find((r) => r.k === 'i');
        return { ...decodeProjectAccess(p), item: i && ITEM.decodeAt(i, POINT_COLUMNS) };
      }
      // PostgreSQL (READ COMMITTED): the project's lock first, then the access and the item read by a
      // statement of its own, whose snapshot is taken once the lock is held. Not one statement: a
      // `SELECT … FOR NO KEY UPDATE OF p` that waited for the lock re-checks only the locked row, not
      // the rows it joined, so it would read the membership and the item as they were before the
      // transaction it waited for (see lockProjectWithAccess).
      const locked = await first<Record<string, unknown>>('lockInboxItemProject', () => sql`SELECT p.id FROM projects p
        WHERE p.id = ${$(0)} AND p.workspace_id = ${$(1)} FOR NO KEY UPDATE` as never, project_id, workspace_id);
      if (!locked) return undefined;
      return ops.getInboxItemWithAccess!(workspace_id, project_id, account_id, item_id);
    },
    async listInboxItems(q: InboxItemQuery) {
      const { name, args, build } = pageQuery(q);
      const rows = await all<Record<string, unknown>>(`listInboxItems${name}`, () => build().select(ITEM.select(dialect)), ...args, limitOf(q.limit));
      return rows.map((r) => ITEM.decode(r));
    },
    async decideInboxItem(project_id, item_id, seen_status, patch) {
      const r = await first<Record<string, unknown>>('decideInboxItem', () => db.updateTable('project_inbox_items')
        .set({ status: $(0), decided_by_account_id: $(1), decided_at: $(2), updated_at: $(3) })
        .where('project_id', '=', $(4)).where('id', '=', $(5)).where('status', '=', $(6))
        .returning(ITEM.select(dialect)),
      patch.status, patch.decided_by_account_id, patch.decided_at, patch.updated_at, project_id, item_id, seen_status);
      return r && ITEM.decode(r);
    },
  };
  if (dialect.pagesAsJson) {
    /**
     * SQLite: one statement — the page as `json_group_array(json_object(…))` over the page query
     * (a co-routine that hands its rows to the aggregate in the page's order; a sort inside the
     * aggregate would only repeat it, at about a quarter of the page's cost), and the keyset
     * positions of the page's last row and of the row after it (an index-only read where the
     * filters have an index).
     */
    ops.listInboxItemsJson = async (q: InboxItemQuery) => {
      const { name, args, build } = pageQuery(q);
      const size = limitOf(q.limit);
      const r = await first<{ json: string; edge: string | null }>(`listInboxItemsJson${name}`, () => {
        const pairs = ITEM.fields.map((f) => `'${f.name}', ${f.kind === 'json' ? `json(r.${f.name})` : `r.${f.name}`}`).join(', ');
        const edges = build().select(['created_at', 'id']).limit(2).offset($(args.length + 1));
        return sql`SELECT (SELECT json_group_array(json_object(${sql.raw(pairs)})) FROM (${build().select(ITEM.columns as never)}) r) AS json,
          (SELECT json_group_array(json_array(e.created_at, e.id)) FROM (${edges}) e) AS edge` as never;
      }, ...args, size, Math.max(size - 1, 0));
      // The rows from the page's last on: [last, next] when another page follows (for a size of 0, the next).
      const edge = r?.edge == null ? [] : fromJson<[unknown, string][]>(r.edge);
      const more = size === 0 ? edge.length > 0 : edge.length > 1;
      const last = size > 0 && more ? edge[0] : undefined;
      return { json: r?.json ?? '[]', more, last: last && { created_at: num(last[0]), id: last[1] } };
    };
  } else {
    /**
     * PostgreSQL: the rows of `listInboxItems`' statement (one more than the page, to tell whether
     * another follows), each written as JSON text by the codec with its JSON columns as stored
     * (`ITEM.json`): no payload is parsed only to be stringified again, and the database's work
     * is the plain page read.
     */
    ops.listInboxItemsJson = async (q: InboxItemQuery) => {
      const { name, args, build } = pageQuery(q);
      const size = limitOf(q.limit);
      const rows = await all<Record<string, unknown>>(`listInboxItems${name}`, () => build().select(ITEM.select(dialect)), ...args, size + 1);
      const count = Math.min(rows.length, size);
      let json = '[';
      for (let i = 0; i < count; i++) json += (i === 0 ? '' : ',') + ITEM.json(rows[i]!);
      const last = rows.length > size && size > 0 ? rows[size - 1]! : undefined;
      return { json: `${json}]`, more: rows.length > size, last: last && { created_at: num(last.created_at), id: last.id as string } };
    };
  }
  return ops;
}
