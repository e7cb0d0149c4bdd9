/** `ProjectStore` on Kysely: projects (conditional status, row lock) and their members. */
import { sql } from 'kysely';
import type { Membership, Project, ProjectStore } from '@inbox-kit/core';
import { $, insertRecord, type StoreContext } from './context.js';
import { MEMBER, PROJECT, decodeProjectAccess, jsonRecordSql, jsonRecords, limitOf, pointReads, projectAccessRead } from './rows.js';

export function projectOps(ctx: StoreContext): ProjectStore {
  const { db, dialect, first } = ctx;
  /** SQLite: the project with the caller's membership, point reads by key in one statement (`name`: its compiled-statement key). */
  const pointReadAccess = async (name: string, workspace_id: string, project_id: string, account_id: string) => {
    const rows = await ctx.all<Record<string, unknown>>(name, () => pointReads([
      projectAccessRead(dialect, $(0), sql`FROM projects p WHERE p.id = ${$(1)} AND p.workspace_id = ${$(2)}`),
    ]) as never, account_id, project_id, workspace_id);
    const p = rows[0];
    return p && decodeProjectAccess(p);
  };
  const ops: ProjectStore = {
    async insertProject(p) {
      await insertRecord(ctx, PROJECT, p);
    },
    async getProject(workspace_id, project_id) {
      const r = await first<Record<string, unknown>>('getProject', () => db.selectFrom('projects').select(PROJECT.select(dialect))
        .where('id', '=', $(0)).where('workspace_id', '=', $(1)), project_id, workspace_id);
      return r && PROJECT.decode(r);
    },
    async lockProject(workspace_id, project_id) {
      // The row lock an UPDATE of the project (archive, sequence bump) takes, so those wait for this
      // transaction and it waits for them; it does not block foreign-key checks (inserts of items,
      // events and members). See the dialect's `holdRows`.
      const r = await first<Record<string, unknown>>('lockProject', () => dialect.holdRows(db.selectFrom('projects').select(PROJECT.select(dialect))
        .where('id', '=', $(0)).where('workspace_id', '=', $(1))), project_id, workspace_id);
      return r && PROJECT.decode(r);
    },
    async getProjectWithAccess(workspace_id, project_id, account_id) {
      // SQLite: as lockProjectWithAccess (the same read; unlocked outside a write transaction).
      if (dialect.accessReadsWithoutJoins) return pointReadAccess('getProjectWithAccess', workspace_id, project_id, account_id);
      // PostgreSQL: the project and the caller's membership row, one statement (one round trip).
      // Both records in one JSON array (see jsonRecordSql).
      const r = await first<{ a: string }>('getProjectWithAccess', () => sql`SELECT json_build_array(${sql.raw(jsonRecordSql(PROJECT, 'p'))},
        ${sql.raw(jsonRecordSql(MEMBER, 'm', 'role'))})::text AS a
        FROM projects p
        LEFT JOIN project_members m ON m.project_id = p.id AND m.account_id = ${$(0)}
        WHERE p.id = ${$(1)} AND p.workspace_id = ${$(2)}` as never, account_id, project_id, workspace_id);
      if (!r) return undefined;
      const [project, membership] = jsonRecords<[Project, Membership]>(r.a);
      return { project: project as Project, membership: membership ?? undefined };
    },
    async lockProjectWithAccess(workspace_id, project_id, account_id) {
      // SQLite: the write transaction holds the database's lock (see lockProject).
      if (dialect.accessReadsWithoutJoins) return pointReadAccess('lockProjectWithAccess', workspace_id, project_id, account_id);
      // PostgreSQL (READ COMMITTED): the lock first, then the membership in a statement of its own,
      // whose snapshot is taken once the lock is held. Not one statement: a `SELECT … FOR NO KEY
      // UPDATE OF p` that waited for the lock re-checks only the locked row, not the rows it joined,
      // so a member removed by the transaction it waited for would still be read as a member
      // (apps/demo/test/write-races.test.ts, "member removal racing that member's creates").
      const project = await ops.lockProject(workspace_id, project_id);
      if (!project) return undefined;
      return { project, membership: project.account_id === account_id ? undefined : await ops.getMembership(project.id, account_id) };
    },
    async listProjectsForAccount(workspace_id, account_id) {
      const rows = await db.selectFrom('projects').select(PROJECT.select(dialect))
        .where('workspace_id', '=', workspace_id)
        .where((eb) => eb.or([
          eb('account_id', '=', account_id),
          eb.exists(eb.selectFrom('project_members').select(sql`1`.as('one'))
            .whereRef('project_members.project_id', '=', 'projects.id')
            .where('project_members.account_id', '=', account_id)),
        ]))
        .orderBy('created_at', 'desc').orderBy('id', 'desc')
        .execute();
      return rows.map((r) => PROJECT.decode(r));
    },
    async pageProjectsForAccount(workspace_id, account_id, query) {
      let q = db.selectFrom('projects').select(PROJECT.select(dialect))
        .where('workspace_id', '=', workspace_id)
        .where((eb) => eb.or([
          eb('account_id', '=', account_id),
          eb.exists(eb.selectFrom('project_members').select(sql`1`.as('one'))
            .whereRef('project_members.project_id', '=', 'projects.id')
            .where('project_members.account_id', '=', account_id)),
        ]));
      const after = query.after;
      if (after !== undefined) {
        q = q.where((eb) => eb.or([eb('created_at', '<', after.created_at), eb.and([eb('created_at', '=', after.created_at), eb('id', '<', after.id)])]));
      }
      const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limitOf(query.limit)).execute();
      return rows.map((r) => PROJECT.decode(r));
    },
    async setProjectStatus(project_id, status, at) {
      const r = await db.updateTable('projects').set({ status, updated_at: at })
        .where('id', '=', project_id).where('status', '<>', status)
        .returning(PROJECT.select(dialect)).executeTakeFirst();
      return r && PROJECT.decode(r);
    },
    async getMembership(project_id, account_id) {
      const r = await first<Record<string, unknown>>('getMembership', () => db.selectFrom('project_members').select(MEMBER.select(dialect))
        .where('project_id', '=', $(0)).where('account_id', '=', $(1)), project_id, account_id);
      return r && MEMBER.decode(r);
    },
    async upsertMembership(m) {
      const r = await db.insertInto('project_members')
        .values(MEMBER.row(m) as never)
        .onConflict((oc) => oc.columns(['project_id', 'account_id']).doUpdateSet((eb) => ({ role: eb.ref('excluded.role') })))
        .returning(MEMBER.select(dialect)).executeTakeFirstOrThrow();
      return MEMBER.decode(r);
    },
    async deleteMembership(project_id, account_id) {
      const r = await db.deleteFrom('project_members')
        .where('project_id', '=', project_id).where('account_id', '=', account_id).executeTakeFirst();
      return r.numDeletedRows > 0n;
    },
    async listMemberships(project_id) {
      const rows = await db.selectFrom('project_members').select(MEMBER.select(dialect)).where('project_id', '=', project_id)
        .orderBy('created_at', 'asc').orderBy('account_id', 'asc').execute();
      return rows.map((r) => MEMBER.decode(r));
    },
    async pageMemberships(project_id, query) {
      let q = db.selectFrom('project_members').select(MEMBER.select(dialect)).where('project_id', '=', project_id);
      const after = query.after;
      if (after !== undefined) {
        q = q.where((eb) => eb.or([eb('created_at', '>', after.created_at), eb.and([eb('created_at', '=', after.created_at), eb('account_id', '>', after.id)])]));
      }
      const rows = await q.orderBy('created_at', 'asc').orderBy('account_id', 'asc').limit(limitOf(query.limit)).execute();
      return rows.map((r) => MEMBER.decode(r));
    },
  };
  return ops;
}
