/**
 * Keyset pages of the list routes (platform.md "Lists and pages"): every list takes `limit`
 * (1–200, default 50) and `cursor` (the previous page's `next_cursor`), and answers
 * `{ items, next_cursor }`; cursors are the codec's (`cursor.ts`), bound to the list's scope and
 * filters. Internal to the core.
 */
import { z } from 'zod';
import { queryInt } from './project-inbox/schemas.js';

/** A page of a list: `next_cursor` names the last row returned, or is null on the last page. */
export interface ListPage<T> {
  items: T[];
  next_cursor: string | null;
}

/** The paging parameters every list route's query has. */
export const pageParams = {
  limit: queryInt(1, 200).default(50).describe('Rows per page, 1–200 (default 50)'),
  cursor: z.string().min(1).max(2048).optional().describe('The `next_cursor` of the previous page (same filters)'),
};

/** The page of `rows` (read with `limit + 1`): the first `limit`, and a cursor for the last when more follow. */
export function pageOf<T>(rows: T[], limit: number, cursorOf: (last: T) => string): ListPage<T> {
  const items = rows.length > limit ? rows.slice(0, limit) : rows;
  const last = items[items.length - 1];
  return { items, next_cursor: rows.length > limit && last !== undefined ? cursorOf(last) : null };
}

/** Byte-order comparison of two strings (as `collate "C"`), for keyset positions compared in memory. */
export function compareBytes(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
