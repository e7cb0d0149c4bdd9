/**
 * A feed: stored history plus live delivery of one ordered stream (a project's events or a
 * session's ledger), as an HTTP adapter needs it to serve SSE with resume.
 */

/** One item of a feed: `id` is its gap-free position (sequence or seq). */
export interface FeedItem<T = unknown> {
  id: number;
  type: string;
  data: T;
}

export interface Feed<T = unknown> {
  /** Stored items with id > `after`, ascending, at most `limit` (unfiltered: ids are contiguous). */
  replay(after: number, limit: number): Promise<FeedItem<T>[]>;
  /** Live items as they are published after commit. Returns an idempotent unsubscribe. */
  subscribe(push: (item: FeedItem<T>) => void): () => void;
  /**
   * Whether the caller may see (and asked for) an item. Stream adapters call it once per item, in
   * ascending id order, so it may keep state (the project feed follows the caller's role changes).
   */
  visible(item: FeedItem<T>): boolean;
}
