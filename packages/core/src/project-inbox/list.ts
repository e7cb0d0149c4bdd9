/**
 * One page of a Project Inbox as the caller may read it (project-inbox.md "GET /projects/:id/inbox"):
 * the owner every item, a deriver only its own, an observer none. Where the store reads the
 * project, the caller's membership and the page in one go (`listInboxItemsWithAccess`, one round
 * trip on PostgreSQL), that read; else the project and membership first, then the page.
 */
import { InboxKitError } from '../errors.js';
import type { Principal } from '../context.js';
import { decodeCursor, encodeCursor, filterFingerprint, type CursorPosition } from '../cursor.js';
import type { InboxItemQuery, InboxPageQuery, Store } from '../ports/store.js';
import type { ProjectInboxItem } from '../records.js';
import { accessOf, loadProjectAccess, type ProjectAccess } from './access.js';
import { inboxPermissions } from './permissions.js';
import type { ListInboxItemsQuery } from './schemas.js';

/** One page of items, newest first; `next_cursor` is null on the last page. */
export interface InboxItemPage {
  items: ProjectInboxItem[];
  next_cursor: string | null;
}

/** The equality filters of a list query (the cursor's fingerprint is taken of them, before any rewrite). */
type PageFilters = Pick<InboxPageQuery, 'status' | 'type' | 'sender_account_id' | 'source_session_id'>;

/** The equality filters of `query`. */
const pageFilters = (query: ListInboxItemsQuery): PageFilters => ({
  status: query.status,
  type: query.type,
  sender_account_id: query.sender_account_id,
  source_session_id: query.source_session_id,
});

const readDenied = () => new InboxKitError('project_inbox_read_denied', 'This role may not read the inbox');

/**
 * The page of `query` (already validated) for `principal`. Check order, on either path: project
 * visible (404 `project_not_found`) → may read (403 `project_inbox_read_denied`) → cursor
 * (400 `invalid_cursor`).
 */
export async function listInboxPage(store: Store, principal: Principal, project_id: string, query: ListInboxItemsQuery): Promise<InboxItemPage> {
  const filters = pageFilters(query);
  const fingerprint = filterFingerprint(filters);
  if (store.listInboxItemsWithAccess) {
    const page = await listInOneRead(store, principal, project_id, query, filters, fingerprint);
    if (page !== undefined) return page;
  }
  const { access, page } = await twoStepQuery(store, principal, project_id, query, filters, fingerprint);
  if (page === undefined) return { items: [], next_cursor: null };
  const rows = await store.listInboxItems({ ...page, limit: query.limit + 1 });
  return pageOf(access, fingerprint, rows, query.limit);
}

/** The JSON text of an empty page. */
const EMPTY_PAGE_JSON = '{"items":[],"next_cursor":null}';

/**
 * {@link listInboxPage} as the JSON text of its {@link InboxItemPage} (what `GET
 * /projects/:id/inbox` answers). Where the store reads pages as JSON (`listInboxItemsJson`), the
 * project and membership are read first, then the page's text, which is sent as the store built
 * it (the same value `JSON.stringify` of the page gives; key order and white space may differ);
 * else `JSON.stringify(await listInboxPage(…))`. Same checks, same order, same errors.
 */
export async function listInboxPageJson(store: Store, principal: Principal, project_id: string, query: ListInboxItemsQuery): Promise<string> {
  if (store.listInboxItemsJson === undefined) return JSON.stringify(await listInboxPage(store, principal, project_id, query));
  const filters = pageFilters(query);
  const fingerprint = filterFingerprint(filters);
  const { access, page } = await twoStepQuery(store, principal, project_id, query, filters, fingerprint);
  if (page === undefined) return EMPTY_PAGE_JSON;
  const read = await store.listInboxItemsJson({ ...page, limit: query.limit });
  const next = read.more && read.last !== undefined ? encodeCursor(access.project.id, fingerprint, read.last) : null;
  return `{"items":${read.json},"next_cursor":${JSON.stringify(next)}}`;
}

/**
 * The two-step path's reads and checks: the project and the caller's access (404, 403), the cursor
 * (400), and the store query of the page without its limit — `undefined` when the caller may read
 * only its own items and the query names another sender (an empty page).
 */
async function twoStepQuery(
  store: Store, principal: Principal, project_id: string, query: ListInboxItemsQuery, filters: PageFilters, fingerprint: string,
): Promise<{ access: ProjectAccess; page: Omit<InboxItemQuery, 'limit'> | undefined }> {
  const access = await loadProjectAccess(store, principal, project_id);
  const read = inboxPermissions(access.role).read;
  if (read === 'none') throw readDenied();
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor, access.project.id, fingerprint);
  const own = ownFilters(principal, read, filters);
  return { access, page: own === undefined ? undefined : { project_id: access.project.id, ...own, after } };
}

/**
 * The page through `listInboxItemsWithAccess`: the cursor is decoded first, for the project of the
 * path (a cursor binds the project id the store then matches), and the page read with the access —
 * the owner's page, or, for anyone else, the page narrowed to the caller's own items. `undefined`
 * — nothing decided — when the cursor does not decode for that id, or the store returned a
 * project whose id is not exactly the path's, or (a broken store) another sender's item for a
 * caller that may read only its own: the two-step path then answers, with its errors in its order.
 */
async function listInOneRead(
  store: Store, principal: Principal, project_id: string, query: ListInboxItemsQuery, filters: PageFilters, fingerprint: string,
): Promise<InboxItemPage | undefined> {
  let after: CursorPosition | undefined;
  if (query.cursor !== undefined) {
    try {
      after = decodeCursor(query.cursor, project_id, fingerprint);
    } catch {
      return undefined;
    }
  }
  const read = await store.listInboxItemsWithAccess!(principal.workspace_id, project_id, principal.account_id, { ...filters, after, limit: query.limit + 1 });
  if (read !== undefined && read.project.id !== project_id) return undefined;
  const access = accessOf(read?.project, principal, read?.membership);
  const rights = inboxPermissions(access.role).read;
  if (rights === 'none') throw readDenied();
  const items = read!.items;
  if (rights === 'own' && !items.every((i) => i.sender_account_id === principal.account_id)) return undefined;
  return pageOf(access, fingerprint, items, query.limit);
}

/**
 * The filters a caller with read right `read` may page with: as asked for `all`; for `own`, with
 * its own `sender_account_id` — `undefined` (an empty page) when the query names another sender.
 */
function ownFilters(principal: Principal, read: 'all' | 'own', filters: PageFilters): PageFilters | undefined {
  if (read === 'all') return filters;
  if (filters.sender_account_id !== undefined && filters.sender_account_id !== principal.account_id) return undefined;
  return { ...filters, sender_account_id: principal.account_id };
}

/** The first `limit` of `rows` (read with `limit + 1`), and a cursor after the last when more follow. */
function pageOf(access: ProjectAccess, fingerprint: string, rows: ProjectInboxItem[], limit: number): InboxItemPage {
  const items = rows.length > limit ? rows.slice(0, limit) : rows;
  const last = items[items.length - 1];
  return {
    items,
    next_cursor: rows.length > limit && last ? encodeCursor(access.project.id, fingerprint, last) : null,
  };
}
