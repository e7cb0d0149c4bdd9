/**
 * The Project Inbox as the SDK sees it (project-inbox.md): items, their create / list / decide
 * inputs, cursor pages, and the queries of Project Events and the Operation Log (platform.md
 * "Project Events", "Operation Log"). Re-exported by `../types.ts`.
 */
import type { JsonValue, RequestOptions } from './common.js';
import type { ProjectEvent, StreamResync } from './platform.js';

// ---------------------------------------------------------------------------------------------
// Project Inbox
// ---------------------------------------------------------------------------------------------

export type InboxItemStatus = 'pending' | 'accepted' | 'rejected' | 'archived';
export type InboxDecision = 'accept' | 'reject' | 'archive';

/** Spec: project-inbox.md "Resource: ProjectInboxItem". `payload` is passed through untouched. */
export interface ProjectInboxItem {
  id: string;
  workspaceId: string;
  projectId: string;
  /** The Project owner's account id. */
  accountId: string;
  senderAccountId: string;
  type: string;
  title: string | null;
  payload: JsonValue;
  sourceEventId: string | null;
  sourceSessionId: string | null;
  sourceFloorId: string | null;
  sourcePageId: string | null;
  status: InboxItemStatus;
  decidedByAccountId: string | null;
  decidedAt: number | null;
  createdAt: number;
  updatedAt: number;
}

/** Body of `client.projects.inbox.create`. Spec: project-inbox.md "POST /projects/:id/inbox". */
export interface CreateInboxItemInput {
  /** 1–128 code points after trimming. */
  type: string;
  /** ≤ 200 code points; blank becomes `null`. */
  title?: string | null;
  /** Any JSON, ≤ 262,144 UTF-8 bytes compact. Sent untouched. */
  payload?: unknown;
  sourceEventId?: string | null;
  sourceSessionId?: string | null;
  sourceFloorId?: string | null;
  sourcePageId?: string | null;
}

/** Filters of `client.projects.inbox.list` / `listAll`. Spec: project-inbox.md "GET /projects/:id/inbox". */
export interface ListInboxItemsFilters {
  status?: InboxItemStatus;
  /** Exact item type. */
  type?: string;
  senderAccountId?: string;
  sourceSessionId?: string;
  /** Page size, 1–200 (server default 50). */
  limit?: number;
  /** `nextCursor` of the previous page. */
  cursor?: string;
}

/** Filters and per-call options in one object, as the seed's calling convention mixes them. */
export type ListInboxItemsParams = ListInboxItemsFilters & RequestOptions;

/** Options of a decision: the per-call options plus the `note` (≤ 500 code points, Operation Log only). */
export interface DecideInboxItemParams extends RequestOptions {
  note?: string | null;
}

/** A cursor page. `nextCursor` is `null` on the last page. */
export interface CursorPage<T> {
  items: T[];
  nextCursor: string | null;
}

/** A plain list (no paging); every list route now pages: see {@link CursorPage} (which has `items` too). */
export interface ItemList<T> {
  items: T[];
}

/**
 * Paging of a list (platform.md "Lists and pages"): `limit` 1–200 (server default 50) and the
 * `nextCursor` of the previous page as `cursor` (with the same other parameters).
 */
export interface PageParams extends RequestOptions {
  limit?: number;
  cursor?: string;
}

// ---------------------------------------------------------------------------------------------
// Project events and Operation Log queries
// ---------------------------------------------------------------------------------------------

/** Query of `client.projects.events.list`. Spec: platform.md "Project Events". */
export interface ListProjectEventsParams extends RequestOptions {
  /** Return events with `sequence` greater than this (default 0). */
  after?: number;
  /** Only these event types (sent comma-separated). */
  types?: string[];
  sessionId?: string;
  /** 1–500 (server default 100). */
  limit?: number;
}

/** A page of Project Events, ascending by `sequence`. */
export interface ProjectEventPage {
  items: ProjectEvent[];
  /** Pass as `after` to read the next page. */
  nextAfter: number;
  hasMore: boolean;
}

/** Options of `client.projects.events.stream`. */
export interface StreamProjectEventsParams extends RequestOptions {
  /** Start after this `sequence` (the first connection only; reconnects use `Last-Event-ID`). */
  after?: number;
  /** Only these event types (sent comma-separated). */
  types?: string[];
  /** Only events of this Session (`session_id`). */
  sessionId?: string;
  /**
   * Called when the server answers a resume position after its newest event with a `resync`
   * frame (the iterator yields no item for it; the stream goes on after `latest`).
   */
  onResync?: (resync: StreamResync) => void;
}

/** Query of `client.projects.operationLogs.list`. */
export type ListOperationLogsParams = PageParams;
