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
  /** The open feeds' role reads on the recheck interval, shared by the feeds of one caller and project. */
  private readonly rechecks = new SharedRoleReads();

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
    // Events up to `known` were committed before the role below was read: they are reflected in it.
    // (Read before the access check; for a project the caller may not see, the check below refuses.)
    const known = await this.deps.store.lastProjectEventSequence(project_id);
    const access = await loadProjectAccess(this.deps.store, ctx.principal, project_id);
    const types = filter.types?.split(',').map((t) => t.trim()).filter(Boolean);
    const filters = { types: types?.length ? types : undefined, session_id: filter.session_id };
    return new ProjectEventFeed(this.deps, this.rechecks, ctx, project_id, access.project.id, access.role, known, filters);
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

/**
 * One caller's feed of one project's events (see `ProjectEventService.projectEventFeed`): its whole
 * state in one object, since an open stream holds it for its lifetime (thousands per process).
 */
class ProjectEventFeed implements Feed<ProjectEvent> {
  private checkedAt: number;
  private readonly topic: string;
  private readonly types: string[] | undefined;
  private readonly session_id: string | undefined;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly rechecks: SharedRoleReads,
    private readonly ctx: RequestContext,
    /** The id the caller asked for (what `loadProjectAccess` reads again). */
    private readonly requested: string,
    private readonly project_id: string,
    private role: ProjectRole,
    /** Events up to this sequence are reflected in `role`. */
    private readonly known: number,
    filters: { types: string[] | undefined; session_id: string | undefined },
  ) {
    this.types = filters.types;
    this.session_id = filters.session_id;
    this.checkedAt = deps.clock.now();
    this.topic = `project:${project_id}`;
  }

  async replay(after: number, limit: number): Promise<FeedItem<ProjectEvent>[]> {
    return (await this.deps.store.listProjectEvents({ project_id: this.project_id, after, limit })).map(itemOf);
  }

  latest(): Promise<number> {
    return this.deps.store.lastProjectEventSequence(this.project_id);
  }

  subscribe(push: (item: FeedItem<ProjectEvent>) => void): () => void {
    return this.deps.bus.subscribe(this.topic, (m) => {
      if (m.kind === 'project_event') push(itemOf(m.event));
    });
  }

  /**
   * A check due on the interval joins a read of the same caller's role in this project started
   * within the interval by another open feed (a fan-out to thousands of streams of one caller:
   * one read, not one per stream; the role is still at most the interval old). A check forced by
   * a member event naming the caller reads again, after that event's commit.
   */
  authorize(next: readonly FeedItem<ProjectEvent>[]): Promise<void> | undefined {
    const at = this.deps.clock.now();
    const forced = this.anyChangesMyAccess(next);
    // No check due: answered at once (a fan-out's streams deliver without waiting on a promise).
    if (!forced && at - this.checkedAt < PROJECT_FEED_RECHECK_MS) return undefined;
    const { principal } = this.ctx;
    const key = `${principal.key_id}\n${principal.account_id}\n${principal.workspace_id}\n${this.requested}`;
    // Due, and another feed's shared read has answered within the interval: taken at once too.
    const done = forced ? undefined : this.rechecks.answered(key, at);
    if (done !== undefined) {
      this.role = done.role;
      this.checkedAt = done.at;
      return undefined;
    }
    return this.check(key, at, forced);
  }

  /** The role read of {@link authorize}, shared on the interval (see above). */
  private async check(key: string, at: number, forced: boolean): Promise<void> {
    const { principal } = this.ctx;
    try {
      const read = await this.rechecks.read(key, at, forced, () => loadProjectAccess(this.deps.store, principal, this.requested));
      this.role = read.role;
      this.checkedAt = read.at;
    } catch (error) {
      this.role = null;
      throw error;
    }
  }

  visible(item: FeedItem<ProjectEvent>): boolean {
    return (this.types === undefined || this.types.includes(item.type)) &&
      (this.session_id === undefined || item.data.session_id === this.session_id) &&
      canSeeEvent(this.role, this.ctx.principal.account_id, item.data);
  }

  /** Whether one of `items` is a `project.member.*` event newer than the role's read that names the caller. */
  private anyChangesMyAccess(items: readonly FeedItem<ProjectEvent>[]): boolean {
    for (const item of items) {
      if (item.id > this.known && MEMBER_EVENTS.includes(item.type) && item.data.payload['account_id'] === this.ctx.principal.account_id) return true;
    }
    return false;
  }
}

/** The last item made (a fan-out hands one event to every open stream of its project in a row: one item, not one per stream). */
let lastItem: FeedItem<ProjectEvent> | undefined;

/** A Project Event as a feed item (id = its sequence; items are never mutated, so one may be shared). */
function itemOf(e: ProjectEvent): FeedItem<ProjectEvent> {
  if (lastItem?.data !== e) lastItem = { id: e.sequence, type: e.type, data: e };
  return lastItem;
}

/** One read of a caller's role in a project: when it started (ms) and what it found. */
interface RoleRead {
  at: number;
  role: ProjectRole;
}

/** One shared role read: when it started (ms), its promise, and once it succeeded, what it found. */
interface SharedRoleRead {
  at: number;
  result: Promise<RoleRead>;
  answer?: RoleRead;
}

/**
 * Role reads in flight or done, by caller and project, joined by every feed whose check falls due
 * within {@link PROJECT_FEED_RECHECK_MS} of the read's start. A read that fails is not kept (each
 * joiner gets its error, as its own read would have); stale entries are swept as new ones come.
 */
class SharedRoleReads {
  private readonly reads = new Map<string, SharedRoleRead>();

  /** What the read {@link read} would join answered, when it has answered (undefined while in flight, failed or none). */
  answered(key: string, at: number): RoleRead | undefined {
    const known = this.reads.get(key);
    return known !== undefined && at - known.at < PROJECT_FEED_RECHECK_MS && known.at <= at ? known.answer : undefined;
  }

  read(key: string, at: number, fresh: boolean, load: () => Promise<{ role: ProjectRole }>): Promise<RoleRead> {
    const known = this.reads.get(key);
    if (!fresh && known !== undefined && at - known.at < PROJECT_FEED_RECHECK_MS && known.at <= at) return known.result;
    if (this.reads.size >= 1024) this.sweep(at);
    const entry: SharedRoleRead = {
      at,
      result: load().then((access) => (entry.answer = { at, role: access.role })),
    };
    const { result } = entry;
    this.reads.set(key, entry);
    result.catch(() => {
      if (this.reads.get(key) === entry) this.reads.delete(key);
    });
    return result;
  }

  private sweep(now: number): void {
    for (const [key, entry] of this.reads) if (now - entry.at >= PROJECT_FEED_RECHECK_MS) this.reads.delete(key);
  }
}
