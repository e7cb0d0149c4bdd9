/**
 * The project's record of what happened: Project Events (pages and the feed a live stream reads)
 * and the Operation Log.
 */
import type { RequestContext, ServiceDeps } from '../context.js';
import { decodeCursor, encodeCursor, filterFingerprint } from '../cursor.js';
import { pageOf } from '../paging.js';
import type { ListPage } from '../paging.js';
import type { Feed, FeedItem } from '../ports/feed.js';
import { loadProjectAccess } from '../project-inbox/access.js';
import { canSeeEvent } from '../project-inbox/permissions.js';
import type { ProjectRole } from '../project-inbox/permissions.js';
import type { OperationLog, Project, ProjectEvent } from '../records.js';
import { parseOrThrow } from '../validation.js';
import { listOperationLogsQuery, listProjectEventsQuery } from './schemas.js';
import { forbidden } from './writes.js';
import type { z } from 'zod';

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

/** Project Events and the Operation Log (platform.md "Project Events", "Operation Log"): pages, the live feed, the owner's log. */
export class ProjectEventService {
  constructor(private readonly deps: ServiceDeps) {}

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
}
