/** The runtime host's process-local registry of attempts per Session, with Live Inbox carry-over. */
import { cloneContent, type ContentBlock } from './content.js';
import { contentBytes, liveInboxLimits, LiveInboxQueue, type LiveInboxLimits, type LiveInboxMessage } from './queue.js';

/**
 * Executor kind of an attempt: `native` (the in-process agent loop), `framework` (an application's
 * own loop on the Live Inbox bridge, e.g. the AI SDK, LangGraph.js, the OpenAI Agents SDK) or `acp`
 * (an external agent process). `native` and `framework` attempts own a Live Inbox; `acp` ones do
 * not. Spec: live-inbox.md "Model".
 */
export type AttemptExecutor = 'native' | 'framework' | 'acp';

/**
 * One attempt as the host registered it (frozen). `attempt_id` is unique within the host;
 * `generation` is an integer that increases strictly with every attempt the host opens (so it also
 * increases per Session); `inbox` is the attempt's {@link LiveInboxQueue} for a `native` executor
 * or `framework` executor and `null` for `acp`. Spec: live-inbox.md "Model" (Attempt).
 */
export interface AttemptHandle {
  readonly session_id: string;
  readonly run_id: string;
  readonly attempt_id: string;
  readonly generation: number;
  readonly executor: AttemptExecutor;
  readonly inbox: LiveInboxQueue | null;
}

/** Input of {@link LiveInboxHost.openAttempt}. */
export interface OpenAttemptInput {
  session_id: string;
  run_id: string;
  executor: AttemptExecutor;
}

/** Options of {@link LiveInboxHost.closeAttempt}. */
export interface CloseAttemptOptions {
  /**
   * Content the caller drained from this attempt's inbox but could not commit (e.g. the ledger
   * commit failed). It is carried over ahead of the leftovers so it is never lost.
   */
  undelivered?: readonly (readonly ContentBlock[])[];
}

/** Options of {@link LiveInboxHost}. */
export interface LiveInboxHostOptions {
  /** Tag in every `attempt_id` (`att_<hostId>_<generation>`). Default: 8 random URL-safe characters. */
  hostId?: string;
  /**
   * Bounds of every inbox this host opens, and of each Session's pending carry-over (defaults
   * `DEFAULT_LIVE_INBOX_LIMITS`: 100 messages, 4 MiB). Spec: live-inbox.md "Limits".
   * @throws TypeError (from the constructor) when a limit is not an integer ≥ 1.
   */
  limits?: Partial<LiveInboxLimits>;
  /**
   * Told when carry-over past the limits is dropped (`dropped` messages, the newest ones), e.g. to
   * log it. Default: nothing.
   */
  onCarryOverDropped?: (info: { session_id: string; dropped: number }) => void;
  /**
   * Content bytes the pending carry-over of all Sessions together may hold (integer ≥ 1; default
   * {@link DEFAULT_MAX_CARRY_OVER_BYTES}: 64 MiB), so many abandoned Sessions cannot add up
   * without bound. Past it, a closing attempt's carry-over is dropped (newest first, reported).
   */
  maxCarryOverBytes?: number;
}

/** What {@link LiveInboxHost.stats} answers: counts, and content bytes. */
export interface LiveInboxHostStats {
  attempts: number;
  inboxes: number;
  messages: number;
  bytes: number;
  deepest: number;
  carry_over_messages: number;
  carry_over_bytes: number;
}

/** Default {@link LiveInboxHostOptions.maxCarryOverBytes}: 64 MiB across all Sessions of a host. */
export const DEFAULT_MAX_CARRY_OVER_BYTES = 64 * 1024 * 1024;

interface SessionSlot {
  active: AttemptHandle | undefined;
  pending: ContentBlock[][];
  /** Content bytes of `pending`. */
  pendingBytes: number;
}

/**
 * The attempt registry of one Runtime host process. Spec: live-inbox.md "Model" and "Drain,
 * commit, carry-over".
 *
 * - At most one active attempt per Session; {@link openAttempt} closes the previous one first.
 * - Only native attempts own a Live Inbox; {@link liveInbox} finds the open one (or `undefined`,
 *   which the HTTP layer answers with 410).
 * - When a native attempt closes, its leftovers become the Session's pending carry-over; the next
 *   native attempt of that Session re-queues them in order with new queue ids. A message is never
 *   lost nor duplicated. Carry-over is process-local: it is not a cross-process recovery channel.
 * - A stale handle (superseded by a newer attempt) can never close or shadow its replacement.
 * - Bounded (spec "Limits"): every inbox holds at most `limits.maxMessages` messages and
 *   `limits.maxBytes` of content, and a Session's pending carry-over keeps at most as much: past
 *   it, the newest carried messages are dropped (reported to `onCarryOverDropped`), so the
 *   carry-over always fits the next inbox and an abandoned Session holds at most one inbox's worth;
 *   all Sessions' carry-over together holds at most `maxCarryOverBytes`.
 *
 * All methods are synchronous, hence atomic with respect to one another and to queue operations.
 */
export class LiveInboxHost {
  readonly #sessions = new Map<string, SessionSlot>();
  readonly #hostId: string;
  readonly #limits: LiveInboxLimits;
  readonly #onDropped: LiveInboxHostOptions['onCarryOverDropped'];
  readonly #maxCarryOverBytes: number;
  /** Content bytes of every Session's pending carry-over. */
  #carryOverBytes = 0;
  #generation = 0;

  constructor(options: LiveInboxHostOptions = {}) {
    this.#hostId = options.hostId ?? randomTag();
    this.#limits = liveInboxLimits(options.limits);
    this.#onDropped = options.onCarryOverDropped;
    this.#maxCarryOverBytes = options.maxCarryOverBytes ?? DEFAULT_MAX_CARRY_OVER_BYTES;
    if (!Number.isSafeInteger(this.#maxCarryOverBytes) || this.#maxCarryOverBytes < 1) {
      throw new TypeError(`maxCarryOverBytes must be an integer ≥ 1, got ${String(options.maxCarryOverBytes)}`);
    }
  }

  /** Content bytes held by the pending carry-over of all Sessions (at most `maxCarryOverBytes`). */
  get carryOverBytes(): number {
    return this.#carryOverBytes;
  }

  /**
   * What this host holds now (for metrics; platform.md "Observing"): `attempts` active,
   * `inboxes` of them owning a Live Inbox, the `messages` and content `bytes` queued in those
   * inboxes together, the `deepest` inbox's message count, and the pending carry-over
   * (`carry_over_messages`, `carry_over_bytes`) of Sessions with no active attempt. O(Sessions).
   */
  stats(): LiveInboxHostStats {
    const out: LiveInboxHostStats = { attempts: 0, inboxes: 0, messages: 0, bytes: 0, deepest: 0, carry_over_messages: 0, carry_over_bytes: this.#carryOverBytes };
    for (const slot of this.#sessions.values()) {
      out.carry_over_messages += slot.pending.length;
      const inbox = slot.active?.inbox;
      if (slot.active !== undefined) out.attempts++;
      if (inbox == null) continue;
      out.inboxes++;
      out.messages += inbox.size;
      out.bytes += inbox.bytes;
      out.deepest = Math.max(out.deepest, inbox.size);
    }
    return out;
  }

  /** The bounds of this host's inboxes and carry-over. */
  get limits(): LiveInboxLimits {
    return { ...this.#limits };
  }

  /**
   * Registers a new attempt for `session_id` and makes it the active one. An attempt still active
   * for that Session is closed first (as by {@link closeAttempt}). A `native` or `framework` attempt gets a fresh
   * inbox into which the Session's pending carry-over is re-queued in order (new ids, via
   * `queue()`); an `acp` attempt gets `inbox: null` and leaves the carry-over pending.
   * @returns the frozen {@link AttemptHandle}.
   */
  openAttempt(input: OpenAttemptInput): AttemptHandle {
    const previous = this.active(input.session_id);
    if (previous !== undefined) this.closeAttempt(previous);
    // Fetched after the close, which may have dropped an emptied slot.
    const slot = this.#slot(input.session_id);
    let inbox: LiveInboxQueue | null = null;
    if (input.executor !== 'acp') {
      inbox = new LiveInboxQueue(this.#limits);
      // Fits: the pending carry-over is kept within the same limits (#bound).
      for (const content of slot.pending) inbox.queue(content);
      slot.pending = [];
      this.#carryOverBytes -= slot.pendingBytes;
      slot.pendingBytes = 0;
    }
    const generation = ++this.#generation;
    const handle: AttemptHandle = Object.freeze({
      session_id: input.session_id,
      run_id: input.run_id,
      attempt_id: `att_${this.#hostId}_${generation}`,
      generation,
      executor: input.executor,
      inbox,
    });
    slot.active = handle;
    return handle;
  }

  /**
   * Ends `handle`'s attempt if it is still the active one for its Session: closes its inbox and
   * keeps the leftovers (preceded by `options.undelivered`) as that Session's pending carry-over.
   * A stale handle (already closed, or superseded by a newer generation) changes nothing for the
   * active attempt and returns `[]`; its `undelivered` content is still carried (queued into the
   * active native inbox if one is open, else kept pending), so it is never lost within the limits.
   * @returns the leftovers with the ids they had in the closed queue (for logging; their content is
   *   now owned by the carry-over), or `[]`.
   */
  closeAttempt(handle: AttemptHandle, options: CloseAttemptOptions = {}): LiveInboxMessage[] {
    const undelivered = (options.undelivered ?? []).map((c) => cloneContent(c));
    const slot = this.#sessions.get(handle.session_id);
    const isActive = slot?.active !== undefined && slot.active.attempt_id === handle.attempt_id;
    if (slot === undefined || !isActive) {
      if (undelivered.length > 0) this.#carry(handle.session_id, undelivered);
      return [];
    }
    const inbox = handle.inbox;
    const leftovers = inbox !== null && !inbox.closed ? inbox.close() : [];
    slot.active = undefined;
    slot.pending.push(...undelivered, ...leftovers.map((m) => m.content));
    this.#bound(handle.session_id, slot);
    this.#forgetIfEmpty(handle.session_id, slot);
    return leftovers.map((m) => ({ id: m.id, content: cloneContent(m.content) }));
  }

  /** The active attempt of `session_id` (native or ACP), or `undefined` when none is active. */
  active(session_id: string): AttemptHandle | undefined {
    return this.#sessions.get(session_id)?.active;
  }

  /**
   * The open Live Inbox of the active native attempt of `session_id`, or `undefined` (no active
   * attempt, an ACP attempt, or an inbox already closed) — the HTTP layer answers 410.
   * Spec: live-inbox.md "HTTP" (check order: active native attempt → 410).
   */
  liveInbox(session_id: string): LiveInboxQueue | undefined {
    const inbox = this.active(session_id)?.inbox;
    return inbox !== null && inbox !== undefined && !inbox.closed ? inbox : undefined;
  }

  /**
   * A deep copy of the content waiting for the next native attempt of `session_id`, oldest first
   * (`[]` when none). Reading it changes nothing.
   */
  pendingCarryOver(session_id: string): ContentBlock[][] {
    return (this.#sessions.get(session_id)?.pending ?? []).map((c) => cloneContent(c));
  }

  /**
   * Takes the content waiting for the next native attempt of `session_id` (oldest first) and
   * forgets it: for a caller that committed it itself (an interrupt of a Run parked on tool
   * results commits it ahead of the interrupt). `[]` when none.
   */
  takeCarryOver(session_id: string): ContentBlock[][] {
    const slot = this.#sessions.get(session_id);
    if (slot === undefined || slot.pending.length === 0) return [];
    const taken = slot.pending.splice(0);
    this.#carryOverBytes -= slot.pendingBytes;
    slot.pendingBytes = 0;
    this.#forgetIfEmpty(session_id, slot);
    return taken;
  }

  #carry(session_id: string, contents: ContentBlock[][]): void {
    const inbox = this.liveInbox(session_id);
    let rest = contents;
    if (inbox !== undefined) {
      // Into the open inbox while it has room; what does not fit waits for the next attempt.
      let queued = 0;
      for (const content of contents) {
        if (inbox.size >= this.#limits.maxMessages || inbox.bytes + contentBytes(content) > this.#limits.maxBytes) break;
        inbox.queue(content);
        queued++;
      }
      rest = contents.slice(queued);
      if (rest.length === 0) return;
    }
    const slot = this.#slot(session_id);
    slot.pending.push(...rest);
    this.#bound(session_id, slot);
  }

  /**
   * Keeps the oldest pending messages of `slot` that fit the per-inbox limits and the host's
   * carry-over budget (what the other Sessions do not hold); drops (and reports) the rest.
   */
  #bound(session_id: string, slot: SessionSlot): void {
    const budget = Math.min(this.#limits.maxBytes, this.#maxCarryOverBytes - (this.#carryOverBytes - slot.pendingBytes));
    let bytes = 0;
    let kept = 0;
    for (const content of slot.pending) {
      const size = contentBytes(content);
      if (kept >= this.#limits.maxMessages || bytes + size > budget) break;
      bytes += size;
      kept++;
    }
    this.#carryOverBytes += bytes - slot.pendingBytes;
    slot.pendingBytes = bytes;
    const dropped = slot.pending.length - kept;
    if (dropped === 0) return;
    slot.pending.length = kept;
    this.#onDropped?.({ session_id, dropped });
  }

  #slot(session_id: string): SessionSlot {
    let slot = this.#sessions.get(session_id);
    if (slot === undefined) {
      slot = { active: undefined, pending: [], pendingBytes: 0 };
      this.#sessions.set(session_id, slot);
    }
    return slot;
  }

  #forgetIfEmpty(session_id: string, slot: SessionSlot): void {
    if (slot.active === undefined && slot.pending.length === 0) this.#sessions.delete(session_id);
  }
}

const TAG_ALPHABET = 'useandom26T198340PX75pxJACKVERYMINDBUSHWOLFGQZbfghjklqvwyzrict';

function randomTag(): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(8));
  let out = '';
  for (const b of bytes) out += TAG_ALPHABET[b % TAG_ALPHABET.length] ?? 'x';
  return out;
}
