/**
 * A feed: stored history plus live delivery of one ordered stream (a project's events or a
 * session's ledger), as an HTTP adapter needs it to serve SSE with resume (platform.md "Project
 * Events": "Resume", "Authorised as of now").
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
  /** The id of the newest stored item (0 when there is none): resume positions above it name nothing. */
  latest(): Promise<number>;
  /** Live items as they are published after commit. Returns an idempotent unsubscribe. */
  subscribe(push: (item: FeedItem<T>) => void): () => void;
  /**
   * Re-checks, against storage, that the caller may still read this feed when a check is due, and
   * refreshes what {@link visible} filters by (the caller's role). Stream adapters call it before
   * every delivery with the items about to be written together (a replay page, one live item;
   * none on a heartbeat), in ascending id order, and apply {@link visible} to them right after. A
   * check is due when an item may change the caller's own access (e.g. a `project.member.*` event
   * naming the caller: exact on every process, since every stream sees it in order), and otherwise
   * when the last check is older than the feed's recheck interval (a feed may check every time),
   * so a removal, demotion or archive reaches an open stream as it would reach a fresh request.
   * Returns nothing when it answers synchronously (no check due: the items may be delivered at
   * once), else a promise of the check.
   * @throws InboxKitError the error a fresh request would get now (e.g. `project_not_found`,
   *   `session_not_found`), thrown or as the promise's rejection: the adapter ends the stream
   *   without delivering the items.
   */
  authorize(next: readonly FeedItem<T>[]): Promise<void> | void;
  /**
   * Whether the caller may see (and asked for) an item, by the access last read by
   * {@link authorize}. Stream adapters call it once per item, in ascending id order.
   */
  visible(item: FeedItem<T>): boolean;
}
