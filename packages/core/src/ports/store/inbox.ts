/**
 * The Project Inbox sub-port of the storage port (`../store.ts`): inbox items, their pages and the
 * conditional decision update (project-inbox.md "Resource: ProjectInboxItem", "Endpoints"). Conformance group `inbox`.
 */
import type { InboxItemStatus, Membership, OperationLog, Project, ProjectEvent, ProjectInboxItem } from '../../records.js';
import type { NewProjectEvent } from './events.js';

/** Filters and keyset position of one inbox page. Order is `created_at DESC, id DESC`. */
export interface InboxItemQuery {
  project_id: string;
  status?: InboxItemStatus;
  type?: string;
  sender_account_id?: string;
  source_session_id?: string;
  /** Return only rows strictly after this position in the order (i.e. older, or same ms and smaller id). */
  after?: { created_at: number; id: string };
  /** Maximum rows to return (1–1000). */
  limit: number;
}

/** What {@link InboxStore.getInboxItemWithAccess} reads in one go. */
export interface InboxItemWithAccess {
  /** The project (of the asked workspace). */
  project: Project;
  /** `account_id`'s membership row of the project, or `undefined` when it has none (an owner usually has none). */
  membership: Membership | undefined;
  /** The item, only if it belongs to the project; `undefined` when missing or of another project. */
  item: ProjectInboxItem | undefined;
}

/** The filters, keyset position and size of a {@link InboxStore.listInboxItemsWithAccess} page: an {@link InboxItemQuery} without its project. */
export type InboxPageQuery = Omit<InboxItemQuery, 'project_id'>;

/** What {@link InboxStore.listInboxItemsJson} reads: one page as JSON text. */
export interface InboxItemsJson {
  /** The JSON array of the page's items (at most `query.limit`), newest first, each a {@link ProjectInboxItem}. */
  json: string;
  /** Whether rows follow the page (the query matched more than `query.limit`). */
  more: boolean;
  /** When `more`: the keyset position of the page's last item (its `created_at` in epoch ms, its `id`), where the next page starts after; else `undefined`. */
  last: { created_at: number; id: string } | undefined;
}

/** What {@link InboxStore.listInboxItemsWithAccess} reads in one go. */
export interface InboxItemsWithAccess {
  /** The project (of the asked workspace). */
  project: Project;
  /** `account_id`'s membership row of the project, or `undefined` when it has none (an owner usually has none). */
  membership: Membership | undefined;
  /**
   * The page of the project's items as {@link InboxStore.listInboxItems} gives it for the query
   * when `account_id` owns the project (`project.account_id`); else the page of the query narrowed
   * to the items `account_id` sent (`sender_account_id`; empty when the query names another
   * sender). The caller decides from `project` and `membership` whether it may be shown.
   */
  items: ProjectInboxItem[];
}

/** The state of a project a write was allowed on (see {@link InboxStore.decideInboxItemIfUnchanged}). */
export interface UnchangedProject {
  workspace_id: string;
  project_id: string;
  owner_account_id: string;
  project_status: Project['status'];
}

/**
 * The caller's membership a create was allowed on (see {@link InboxStore.insertInboxItemIfUnchanged}):
 * its account and role in the project. Not given for the project's owner (whose right is the
 * project row's `account_id`).
 */
export interface UnchangedMembership {
  account_id: string;
  role: Membership['role'];
}

/** The decision columns a conditional update writes. */
export interface InboxDecisionPatch {
  status: InboxItemStatus;
  decided_by_account_id: string;
  decided_at: number;
  updated_at: number;
}

/**
 * Project Inbox items: insert, read, keyset pages and the conditional decision
 * (project-inbox.md "Resource: ProjectInboxItem"). Conformance group `inbox`.
 */
export interface InboxStore {
  insertInboxItem(item: ProjectInboxItem): Promise<void>;
  /** The item only if it belongs to `project_id`. */
  getInboxItem(project_id: string, item_id: string): Promise<ProjectInboxItem | undefined>;
  /**
   * OPTIONAL (a store without it still works: the Project Inbox then calls `getProject`,
   * `getMembership` and `getInboxItem`). Everything a get needs in one read, one round trip on a
   * networked database: the project `project_id` only if it is in `workspace_id` (else
   * `undefined`, exactly as for a missing project — scoping rule), `account_id`'s membership of it,
   * and the item `item_id` only if it belongs to that project. MUST return exactly what those three
   * methods would return at one moment (one statement, or one snapshot), never a membership or an
   * item of another project.
   */
  getInboxItemWithAccess?(workspace_id: string, project_id: string, account_id: string, item_id: string): Promise<InboxItemWithAccess | undefined>;
  /**
   * OPTIONAL (a store without it still works: a decision then calls `lockProject`, `getMembership`
   * and `getInboxItem`). Inside a transaction, what a decision reads before it writes: the project
   * locked exactly as {@link ProjectStore.lockProject} locks it (only if it is in `workspace_id`,
   * else `undefined`), then `account_id`'s membership of it and the item `item_id` only if it
   * belongs to that project — as {@link getInboxItemWithAccess} reads them, read once the lock is
   * held: a change committed by the transaction the lock waited for MUST be seen (on PostgreSQL's
   * READ COMMITTED a `SELECT … FOR UPDATE` joining them does not: the read is a statement of its
   * own after the lock). project-inbox.md "Decide".
   */
  lockInboxItemWithAccess?(workspace_id: string, project_id: string, account_id: string, item_id: string): Promise<InboxItemWithAccess | undefined>;
  /** One keyset page in `created_at DESC, id DESC` order; never skips or repeats rows that share a `created_at`. */
  listInboxItems(query: InboxItemQuery): Promise<ProjectInboxItem[]>;
  /**
   * OPTIONAL (a store without it still works: the HTTP list then stringifies
   * {@link listInboxItems}' rows). The page {@link listInboxItems} reads for `query`, as the JSON
   * text an HTTP answer sends (project-inbox.md "GET /projects/:id/inbox"): the database builds it,
   * so no row becomes an object only to be stringified again. `query.limit` is the page's size;
   * the store reads one row more to tell whether another page follows. MUST be, at one moment
   * (one statement), exactly that page: `JSON.parse(json)` deep-equals the first `query.limit`
   * rows of `listInboxItems({ ...query, limit: query.limit + 1 })`, in that order (key order and
   * white space may differ; every number and string the same value).
   */
  listInboxItemsJson?(query: InboxItemQuery): Promise<InboxItemsJson>;
  /**
   * OPTIONAL (a store without it still works: a list then calls `getProject`, `getMembership`
   * and {@link listInboxItems}). Everything a list needs in one read, one round trip on a
   * networked database (e.g. PostgreSQL: one statement): the project `project_id` only if it is
   * in `workspace_id` (else `undefined`, exactly as for a missing project — scoping rule),
   * `account_id`'s membership of it, and the page `listInboxItems({ project_id, ...query })`
   * returns if `account_id` owns the project (`project.account_id`), else the page of the query
   * with `sender_account_id = account_id` as well (the only items anyone but the owner can ever
   * read; empty when the query names another sender). The store checks no role: the Project Inbox
   * shows the page only to a caller whose role may read it. MUST return exactly what those methods
   * would return at one moment (one statement, or one snapshot): the same rows in the same
   * `created_at DESC, id DESC` order, never a membership or an item of another project, never,
   * to another account than the owner, an item it did not send. project-inbox.md
   * "GET /projects/:id/inbox".
   */
  listInboxItemsWithAccess?(workspace_id: string, project_id: string, account_id: string, query: InboxPageQuery): Promise<InboxItemsWithAccess | undefined>;
  /**
   * Conditional update: applies `patch` only if the item's status is still `seen_status`
   * (`… WHERE id = ? AND status = ?`), and returns the updated item, or `undefined` when another
   * writer changed it first. MUST NOT be check-then-write: of N concurrent calls with the same
   * `seen_status`, exactly one returns an item.
   */
  decideInboxItem(project_id: string, item_id: string, seen_status: InboxItemStatus, patch: InboxDecisionPatch): Promise<ProjectInboxItem | undefined>;
  /**
   * OPTIONAL (without it the services call {@link insertInboxItem}, then `appendAudited` or
   * `appendOperationLog` + `appendProjectEvent`). The item, its Operation Log row `entry` and its
   * Project Event `event` (with the project's next `sequence`) written as those calls would, in one
   * round trip where the engine can (a data-modifying `WITH` on PostgreSQL). MUST write all three
   * or none (inside the caller's transaction, or atomically on its own), with the guarantees of
   * `appendProjectEvent` (gap-free, no duplicate, released by a rollback); returns the stored
   * event. @throws as those calls (a unique violation, a missing project). project-inbox.md "Create".
   */
  insertInboxItemAudited?(item: ProjectInboxItem, entry: OperationLog, event: NewProjectEvent): Promise<ProjectEvent>;
  /**
   * OPTIONAL (without it the services call {@link decideInboxItem}, then the audit). The
   * conditional update of {@link decideInboxItem} and, only when it updated the item, `entry` and
   * `event` appended as `appendAudited` appends them — in one round trip where the engine can.
   * Returns the updated item and the stored event, or `undefined` when another writer changed the
   * item first (then nothing at all is written and no sequence is used). MUST keep
   * {@link decideInboxItem}'s rule: of N concurrent calls with the same `seen_status`, exactly one
   * returns a result. project-inbox.md "Decide".
   */
  decideInboxItemAudited?(
    project_id: string, item_id: string, seen_status: InboxItemStatus, patch: InboxDecisionPatch, entry: OperationLog, event: NewProjectEvent,
  ): Promise<{ item: ProjectInboxItem; event: ProjectEvent } | undefined>;
  /**
   * OPTIONAL (for engines that can decide it in one statement, e.g. PostgreSQL; without it every
   * decision runs under the project's lock in a transaction). Called on the store itself, never
   * inside a transaction: {@link decideInboxItemAudited}, made only if the project is still as
   * the caller read it — `seen.project_id` in `seen.workspace_id`, owned by `seen.owner_account_id`,
   * status `seen.project_status` — checked on the project row held as {@link ProjectStore.lockProject}
   * holds it, for the one atomic statement. Returns `undefined` and writes nothing when the project
   * or the item changed (the caller then decides again under the lock). MUST be one atomic unit:
   * a concurrent archive or change of owner commits wholly before it (then it writes nothing) or
   * after it. project-inbox.md "Decide".
   */
  decideInboxItemIfUnchanged?(
    seen: UnchangedProject, item_id: string, seen_status: InboxItemStatus, patch: InboxDecisionPatch, entry: OperationLog, event: NewProjectEvent,
  ): Promise<{ item: ProjectInboxItem; event: ProjectEvent } | undefined>;
  /**
   * OPTIONAL (for engines that can create it in one statement, e.g. PostgreSQL; without it every
   * create runs under the project's lock in a transaction). Called on the store itself, never
   * inside a transaction: {@link insertInboxItemAudited}, made only if the project is still as the
   * caller read it (`seen`, as for {@link decideInboxItemIfUnchanged}) and, with `member`, the
   * caller still has that membership with that role. The project row is held as
   * {@link ProjectStore.lockProject} holds it, THEN the membership row against its removal or
   * change — the order a membership write takes them, so the two never deadlock — and both are
   * checked as they are once held (a membership removed or changed by a transaction the statement
   * waited for is not read as it was). Returns the stored event, or `undefined` and writes nothing
   * when anything differs (the caller then creates under the lock). MUST be one atomic unit: a
   * concurrent archive, change of owner or membership removal commits wholly before it (then it
   * writes nothing) or after it. project-inbox.md "Create".
   */
  insertInboxItemIfUnchanged?(
    seen: UnchangedProject, member: UnchangedMembership | undefined, item: ProjectInboxItem, entry: OperationLog, event: NewProjectEvent,
  ): Promise<ProjectEvent | undefined>;
}
