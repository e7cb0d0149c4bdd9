/** The Live Inbox queue of one native attempt: pure, process-local, synchronous (spec "Queue semantics"). */
import { InboxKitError } from '../errors.js';
import { utf8ByteLength } from '../validation.js';
import { cloneContent, parseContent, type ContentBlock } from './content.js';

export { contentSchema, contentBlockSchema, type ContentBlock } from './content.js';

/**
 * One queued entry: `id` is the queue-local integer id (≥ 1), `content` a non-empty
 * {@link ContentBlock} array. Spec: live-inbox.md "Model" (entries `{ id, content }`).
 */
export interface LiveInboxMessage {
  id: number;
  content: ContentBlock[];
}

/**
 * The editable window at one instant: `version` (integer ≥ 0) and the entries in queue order.
 * Spec: live-inbox.md "HTTP" (`GET` answers `{ active, version, messages }`).
 */
export interface LiveInboxSnapshot {
  version: number;
  messages: LiveInboxMessage[];
}

/**
 * Per-inbox bounds (live-inbox.md "Limits"). Content is measured as the UTF-8 bytes of its JSON
 * text ({@link contentBytes}).
 */
export interface LiveInboxLimits {
  /** Messages one inbox holds at most (integer ≥ 1; default {@link DEFAULT_LIVE_INBOX_LIMITS}: 100). */
  maxMessages: number;
  /** Total content bytes one inbox holds at most (integer ≥ 1; default 4 MiB = 4,194,304). */
  maxBytes: number;
}

/** Default {@link LiveInboxLimits}: 100 messages, 4 MiB of content. */
export const DEFAULT_LIVE_INBOX_LIMITS: Readonly<LiveInboxLimits> = Object.freeze({ maxMessages: 100, maxBytes: 4 * 1024 * 1024 });

/**
 * Checks and completes partial limits with the defaults.
 * @throws TypeError when a limit is not an integer ≥ 1.
 */
export function liveInboxLimits(limits: Partial<LiveInboxLimits> = {}): LiveInboxLimits {
  const out = { ...DEFAULT_LIVE_INBOX_LIMITS, ...limits };
  for (const name of ['maxMessages', 'maxBytes'] as const) {
    if (!Number.isSafeInteger(out[name]) || out[name] < 1) throw new TypeError(`Live Inbox ${name} must be an integer ≥ 1, got ${String(out[name])}`);
  }
  return out;
}

/** Size of `content` in bytes: the UTF-8 bytes of its JSON text. */
export function contentBytes(content: readonly ContentBlock[]): number {
  return utf8ByteLength(JSON.stringify(content));
}

/**
 * The Live Inbox of one native attempt. Spec: live-inbox.md "Queue semantics" and "Limits".
 *
 * - Ids are integers from 1, strictly increasing, never reused (not after drain, withdraw or close).
 * - `version` starts at 0 and goes up by exactly one on every successful {@link queue},
 *   {@link replace}, {@link withdraw}, {@link reorder} and {@link close}; never on {@link drain}
 *   and never on a failed operation.
 * - Every method is synchronous and validates fully before it mutates, so in JavaScript's
 *   run-to-completion model each call is atomic with respect to every other call: an edit racing a
 *   drain has exactly one winner, a queue racing a close has exactly one owner, and a failed call
 *   leaves the queue exactly as it was.
 * - Content is copied on the way in and on the way out ({@link snapshot}); callers never share
 *   objects with the queue.
 *
 * Every mutating method and {@link drain} throw `InboxKitError('live_inbox_inactive')` once the
 * queue is closed. Reads ({@link snapshot}, {@link closed}, {@link version}, {@link size}) keep
 * working after close. Close it through `LiveInboxHost.closeAttempt`, never directly, so the
 * leftovers are carried over to the next native attempt.
 */
export class LiveInboxQueue {
  #entries: LiveInboxMessage[] = [];
  /** Content bytes of each queued entry, by id. */
  readonly #bytes = new Map<number, number>();
  #totalBytes = 0;
  #nextId = 1;
  #version = 0;
  #closed = false;
  /** The JSON text of {@link snapshot} while nothing changed since it was made (reset by every edit, drain and close). */
  #json: string | undefined;
  readonly #limits: LiveInboxLimits;

  /**
   * @param limits per-inbox bounds (defaults {@link DEFAULT_LIVE_INBOX_LIMITS}).
   * @throws TypeError when a limit is not an integer ≥ 1.
   */
  constructor(limits: Partial<LiveInboxLimits> = {}) {
    this.#limits = liveInboxLimits(limits);
  }

  /** The bounds of this inbox. */
  get limits(): LiveInboxLimits {
    return { ...this.#limits };
  }

  /** Total content bytes currently queued (0 after close). */
  get bytes(): number {
    return this.#totalBytes;
  }

  /** True once {@link close} ran; every later mutation and drain throws `live_inbox_inactive`. */
  get closed(): boolean {
    return this.#closed;
  }

  /** The edit counter (integer ≥ 0). See the class doc for what moves it. */
  get version(): number {
    return this.#version;
  }

  /** Number of entries currently queued (0 after close). */
  get size(): number {
    return this.#entries.length;
  }

  /**
   * A deep copy of the editable window: `{ version, messages }`, messages in queue order.
   * Never throws; after close it is `{ version, messages: [] }`.
   */
  snapshot(): LiveInboxSnapshot {
    return {
      version: this.#version,
      messages: this.#entries.map((m) => ({ id: m.id, content: cloneContent(m.content) })),
    };
  }

  /**
   * The JSON text of {@link snapshot} (`{"version":…,"messages":[…]}`, the same text
   * `JSON.stringify(snapshot())` makes), made once per state of the queue: repeated reads of an
   * unchanged queue share one text, and each edit, drain or close makes the next read build it
   * again. Never throws.
   */
  snapshotJson(): string {
    return (this.#json ??= JSON.stringify({ version: this.#version, messages: this.#entries }));
  }

  /**
   * Appends `content` at the tail. Version +1.
   * @param content a non-empty array of strict content blocks (copied).
   * @returns the new entry's id (integer ≥ 1, greater than every id this queue gave before).
   * @throws InboxKitError `live_inbox_inactive` after close; `validation_error` for invalid content;
   *   `live_inbox_full` when the inbox already holds `maxMessages` messages or the content would
   *   take it past `maxBytes` (nothing changes).
   */
  queue(content: readonly ContentBlock[]): number {
    this.#assertOpen();
    const copy = parseContent(content);
    const bytes = contentBytes(copy);
    if (this.#entries.length >= this.#limits.maxMessages) {
      throw full(`The Live Inbox holds its limit of ${this.#limits.maxMessages} messages.`, 'max_messages');
    }
    this.#assertFits(this.#totalBytes + bytes);
    const id = this.#nextId++;
    this.#entries.push({ id, content: copy });
    this.#bytes.set(id, bytes);
    this.#totalBytes += bytes;
    this.#version++;
    this.#json = undefined;
    return id;
  }

  /**
   * Replaces the content of entry `id`, keeping its id and position. Version +1.
   * @throws InboxKitError `live_inbox_inactive` after close; `validation_error` for invalid
   *   content; `live_inbox_message_not_found` when `id` is not queued now (drained, withdrawn or
   *   never given); `live_inbox_full` when the new content would take the inbox past `maxBytes`.
   *   Nothing changes when it throws.
   */
  replace(id: number, content: readonly ContentBlock[]): void {
    this.#assertOpen();
    const copy = parseContent(content);
    const entry = this.#entries[this.#indexOf(id)];
    if (entry === undefined) throw notFound(id);
    const bytes = contentBytes(copy);
    const total = this.#totalBytes - (this.#bytes.get(id) ?? 0) + bytes;
    this.#assertFits(total);
    entry.content = copy;
    this.#bytes.set(id, bytes);
    this.#totalBytes = total;
    this.#version++;
    this.#json = undefined;
  }

  /**
   * Removes entry `id` and only it. Version +1.
   * @throws InboxKitError `live_inbox_inactive` after close; `live_inbox_message_not_found` when
   *   `id` is not queued now. Nothing changes when it throws.
   */
  withdraw(id: number): void {
    this.#assertOpen();
    const index = this.#indexOf(id);
    if (index < 0) throw notFound(id);
    this.#entries.splice(index, 1);
    this.#forget(id);
    this.#version++;
    this.#json = undefined;
  }

  /**
   * Puts the entries in the order given. `order` must be an exact permutation of the current ids:
   * same length, every id currently queued, no duplicate. Version +1 (also when the order is
   * unchanged).
   * @throws InboxKitError `live_inbox_inactive` after close; `live_inbox_order_conflict` when
   *   `order` is not an exact permutation (the queue, version included, is left exactly as it was).
   */
  reorder(order: readonly number[]): void {
    this.#assertOpen();
    const byId = new Map(this.#entries.map((m) => [m.id, m]));
    const next: LiveInboxMessage[] = [];
    const seen = new Set<number>();
    if (order.length !== this.#entries.length) {
      throw orderConflict(`The order lists ${order.length} ids; the queue holds ${this.#entries.length}.`);
    }
    for (const id of order) {
      const entry = byId.get(id);
      if (entry === undefined) throw orderConflict(`Message ${String(id)} is not in the queue.`);
      if (seen.has(id)) throw orderConflict(`Message ${String(id)} is listed twice.`);
      seen.add(id);
      next.push(entry);
    }
    this.#entries = next;
    this.#version++;
    this.#json = undefined;
  }

  /**
   * Takes every entry in queue order and empties the queue; the drained ids stop being editable
   * (later edits throw `live_inbox_message_not_found`). Does not change `version`. The returned
   * entries belong to the caller (the Runtime). Spec: "Queue semantics", "Drain, commit, carry-over".
   * @returns the entries in queue order (possibly `[]`).
   * @throws InboxKitError `live_inbox_inactive` after close.
   */
  drain(): LiveInboxMessage[] {
    this.#assertOpen();
    const drained = this.#entries;
    this.#entries = [];
    this.#json = undefined;
    this.#bytes.clear();
    this.#totalBytes = 0;
    return drained;
  }

  /**
   * Closes the queue: returns the leftovers in queue order, empties it, bumps `version` by one and
   * refuses every later mutation and drain.
   * @throws InboxKitError `live_inbox_inactive` when already closed.
   */
  close(): LiveInboxMessage[] {
    this.#assertOpen();
    const leftovers = this.#entries;
    this.#entries = [];
    this.#bytes.clear();
    this.#totalBytes = 0;
    this.#closed = true;
    this.#version++;
    this.#json = undefined;
    return leftovers;
  }

  #forget(id: number): void {
    this.#totalBytes -= this.#bytes.get(id) ?? 0;
    this.#bytes.delete(id);
  }

  #assertFits(totalBytes: number): void {
    if (totalBytes > this.#limits.maxBytes) {
      throw full(`The Live Inbox would hold ${totalBytes} bytes of content; its limit is ${this.#limits.maxBytes}.`, 'max_bytes');
    }
  }

  #indexOf(id: number): number {
    return this.#entries.findIndex((m) => m.id === id);
  }

  #assertOpen(): void {
    if (this.#closed) throw new InboxKitError('live_inbox_inactive', 'This Live Inbox is closed; no native attempt accepts live input.');
  }
}

function notFound(id: number): InboxKitError {
  return new InboxKitError('live_inbox_message_not_found', `Live Inbox message ${String(id)} is not editable: it was drained, withdrawn or never queued.`);
}

function orderConflict(message: string): InboxKitError {
  return new InboxKitError('live_inbox_order_conflict', `${message} Submit every current id exactly once.`);
}

function full(message: string, limit: 'max_messages' | 'max_bytes'): InboxKitError {
  return new InboxKitError('live_inbox_full', `${message} Wait for the next boundary (the model drains it) or withdraw a message.`, [
    { path: 'content', message, code: limit },
  ]);
}
