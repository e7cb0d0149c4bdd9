/**
 * Query shapes several storage sub-ports share: bounds on a time column and one keyset page by
 * `(created_at, id)`. Part of the storage port (`../store.ts`).
 */

/** Bounds on a time column, in ms: `gt` / `gte` (after) and `lt` / `lte` (before); each optional. */
export interface TimeBounds {
  gt?: number;
  gte?: number;
  lt?: number;
  lte?: number;
}

/** One keyset page by `(created_at, id)`: rows strictly after `after` in the method's order, at most `limit`. */
export interface KeysetQuery {
  after?: { created_at: number; id: string };
  /** Maximum rows to return (≥ 1). */
  limit: number;
}
