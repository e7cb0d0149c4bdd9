/**
 * The project aggregate: projects (create, list, read, archive) and their members.
 */
import type { RequestContext, ServiceDeps } from '../context.js';
import { decodeCursor, encodeCursor, filterFingerprint } from '../cursor.js';
import { InboxKitError } from '../errors.js';
import { compareBytes, pageOf } from '../paging.js';
import type { ListPage } from '../paging.js';
import { gateProjectWrite } from '../policy/write-gate.js';
import { droppingSessionGates } from '../sessions/gate-cache.js';
import { loadProjectAccess } from '../project-inbox/access.js';
import type { ProjectRole } from '../project-inbox/permissions.js';
import type { Membership, Project, ProjectEvent, Session } from '../records.js';
import { parseOrThrow } from '../validation.js';
import { addMemberBody, createProjectBody, listMembersQuery, listProjectsQuery } from './schemas.js';
import { idTakenIsConflict, publishProjectEvents, recordProjectWrite } from './writes.js';
import type { z } from 'zod';

/** Projects and their members (platform.md "Projects", "Members"): every write through the write gate, audited and announced. */
export class ProjectService {
  constructor(private readonly deps: ServiceDeps) {}

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
      return [await recordProjectWrite(this.deps, tx, ctx, project, 'project.create', 'project', project.id, {}, 'project.created', { project_id: project.id, name: project.name })];
    }));
    publishProjectEvents(this.deps, events);
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
    const { project, events } = await droppingSessionGates(this.deps, this.deps.store.transaction(async (tx) => {
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
      const event = await recordProjectWrite(this.deps, tx, ctx, updated, 'project.archive', 'project', updated.id, {}, 'project.archived', { project_id: updated.id });
      return { project: updated, events: [event] };
    }));
    publishProjectEvents(this.deps, events);
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
    const { membership, events } = await droppingSessionGates(this.deps, this.deps.store.transaction(async (tx) => {
      const access = await gateProjectWrite(tx, ctx.principal, project_id, 'project.member.add');
      if (body.account_id === access.project.account_id) throw new InboxKitError('conflict', 'The owner is not a member');
      if (!(await tx.getWorkspaceAccount(access.project.workspace_id, body.account_id))) {
        throw new InboxKitError('account_not_found', 'Account not found in this workspace');
      }
      const membership = await tx.upsertMembership({ project_id: access.project.id, account_id: body.account_id, role: body.role, created_at: this.deps.clock.now() });
      const event = await recordProjectWrite(this.deps, tx, ctx, access.project, 'project_member.upsert', 'account', body.account_id, { role: body.role },
        'project.member.added', { account_id: body.account_id, role: body.role });
      return { membership, events: [event] };
    }));
    publishProjectEvents(this.deps, events);
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
    const events = await droppingSessionGates(this.deps, this.deps.store.transaction(async (tx) => {
      const access = await gateProjectWrite(tx, ctx.principal, project_id, 'project.member.remove');
      if (!(await tx.deleteMembership(access.project.id, account_id))) throw new InboxKitError('member_not_found', 'Member not found');
      return [await recordProjectWrite(this.deps, tx, ctx, access.project, 'project_member.remove', 'account', account_id, {}, 'project.member.removed', { account_id })];
    }));
    publishProjectEvents(this.deps, events);
  }
}
