/**
 * The Live Inbox bridge of one attempt: the one place where an executor's loop meets the Live
 * Inbox — register the attempt on the host, drain at a boundary, give the drained messages their
 * Run-scoped ids `{run_id}-inbox-{n}`, commit them to the ledger (after the boundary's own output)
 * before the next model call, and close with carry-over of whatever no model saw. The native loop
 * (`agent-loop.ts`) runs on it. Spec: live-inbox.md "Drain, commit, carry-over", "Tools and
 * boundaries".
 */
import type { ContentBlock } from './content.js';
import type { LiveInboxQueue } from './queue.js';
import type { AttemptHandle, LiveInboxHost } from './registry.js';
import { cloneBlocks, type TranscriptBlock, type ToolUseDisposition, type ToolUseResolution } from './tools.js';

/**
 * One message of a Run's transcript. `id` is Run-scoped: `{run_id}-step-{k}` for assistant steps,
 * `{run_id}-inbox-{n}` for drained Live Inbox input (see {@link inboxMessageId}),
 * `{run_id}-step-{k}-results` for the tool results answering step k; the starting durable input
 * keeps the id the ledger gave it. `content` holds content blocks and, in a tool round, the
 * runtime-only `tool_use` (assistant) and `tool_result` (user) blocks.
 */
export interface TranscriptMessage {
  id: string;
  role: 'user' | 'assistant';
  content: TranscriptBlock[];
}

/** What one ledger commit holds besides its messages (a tool round's bookkeeping). */
export interface RunLedgerCommitExtras {
  /** How each `tool_use` block of the committed assistant messages is recorded, by block id. */
  tool_uses?: Readonly<Record<string, ToolUseDisposition>>;
  /** `tool_use` ids whose `tool_result` blocks are in the ledger already (a client's results; results committed as the Run parked): not recorded again. */
  recorded_results?: readonly string[];
}

/** Input of {@link RunLedger.commit}. */
export interface RunLedgerCommit extends RunLedgerCommitExtras {
  session_id: string;
  run_id: string;
  messages: TranscriptMessage[];
}

/** Input of {@link RunLedger.park}. */
export interface RunLedgerPark {
  session_id: string;
  run_id: string;
  /** Results ready now (host tools that ran, refusals), to commit with the park; may hold no block. */
  results: TranscriptMessage;
  /** The tool uses waiting for a client (custom results, confirmations), in tool-use order. */
  pending: readonly string[];
}

/**
 * What {@link RunLedger.park} decided: `parked` (the Run now awaits the client: its attempt ends),
 * or not, because every pending tool use was answered already: the answers, by tool-use id
 * (nothing was committed then; the loop goes on).
 */
export type RunLedgerParkOutcome =
  | { parked: true }
  | { parked: false; resolutions: Readonly<Record<string, ToolUseResolution>> };

/**
 * The Session ledger port, as the Runtime uses it. Spec: live-inbox.md "Drain, commit, carry-over"
 * (the Session commit, not presence in the queue, makes input authoritative), "Tools and boundaries".
 */
export interface RunLedger {
  /**
   * Commit messages of one turn to the Session ledger (durable). Must be atomic: either every
   * message is committed, in order, or none is and the promise rejects. Returns when committed.
   */
  commit(input: RunLedgerCommit): Promise<void>;
  /**
   * OPTIONAL (without it a Run cannot wait: client tool uses and confirmations get error results).
   * Atomically, conditional on the Run still running: when every `pending` tool use already has
   * its answer in the ledger, commits nothing and returns the answers; otherwise commits
   * `results`, moves the Run to `awaiting` and records the Session's `requires_action` (the ids
   * still pending).
   */
  park?(input: RunLedgerPark): Promise<RunLedgerParkOutcome>;
}

/**
 * The Run-scoped id of the `n`-th Live Inbox message a Run committed (`n` integer ≥ 0, counting all
 * attempts of the Run): `{run_id}-inbox-{n}`. Spec: live-inbox.md "Drain, commit, carry-over".
 */
export function inboxMessageId(run_id: string, n: number): string {
  return `${run_id}-inbox-${String(n)}`;
}

/** Input of {@link AttemptBridge.open}. */
export interface OpenBridgeInput {
  host: LiveInboxHost;
  ledger: RunLedger;
  session_id: string;
  run_id: string;
  /** How many inbox messages this Run committed before (first `n`). */
  inboxCounterStart: number;
}

/** A boundary in progress: what was drained (already Run-scoped) and the commit of it. */
export interface Boundary {
  /** The drained messages, `{run_id}-inbox-{n}`, in queue order (empty when nothing was drained). */
  drained: TranscriptMessage[];
  /** Resolves with every committed message (the boundary's own, then the drained) once committed. */
  committing: Promise<TranscriptMessage[]>;
}

/**
 * The bridge of one attempt (internal; issue 28 exposes it to executors of other frameworks).
 *
 * - {@link open} registers a `native` attempt on the host; its inbox starts with the Session's
 *   carry-over.
 * - {@link boundary} drains the inbox synchronously (nothing can slip in between the drain and a
 *   synchronous {@link close}) and commits, in ONE ledger commit, the boundary's own messages (a
 *   step's output, a round's tool results) first and then the drained messages as user messages
 *   `{run_id}-inbox-{n}`. Until that commit succeeds, the drained content is "undelivered".
 * - {@link close} closes the attempt; the host carries the undelivered content (first) and the
 *   leftovers over to the Session's next native attempt on this host.
 */
export class AttemptBridge {
  readonly #input: OpenBridgeInput;
  readonly #handle: AttemptHandle;
  #n: number;
  /** Drained from the inbox, not yet committed: handed back to the host on close. */
  #undelivered: ContentBlock[][] = [];

  private constructor(input: OpenBridgeInput, handle: AttemptHandle) {
    this.#input = input;
    this.#handle = handle;
    this.#n = input.inboxCounterStart;
  }

  /** Registers the attempt (`native`) on the host. */
  static open(input: OpenBridgeInput): AttemptBridge {
    return new AttemptBridge(input, input.host.openAttempt({ session_id: input.session_id, run_id: input.run_id, executor: 'native' }));
  }

  /** The attempt's inbox (null for an executor without one). */
  get inbox(): LiveInboxQueue | null {
    return this.#handle.inbox;
  }

  /** True once the inbox is closed under the attempt (a newer attempt of the Session superseded it). */
  get superseded(): boolean {
    return this.#handle.inbox === null || this.#handle.inbox.closed;
  }

  /**
   * A boundary: drains the inbox when `drain` (synchronously) and commits `own` then the drained
   * messages in one ledger commit (nothing committed when both are empty).
   */
  boundary(own: readonly TranscriptMessage[], options: { drain: boolean; extras?: RunLedgerCommitExtras }): Boundary {
    const taken = options.drain && this.#handle.inbox !== null ? this.#handle.inbox.drain() : [];
    const drained = taken.map((m, i): TranscriptMessage => ({ id: inboxMessageId(this.#input.run_id, this.#n + i), role: 'user', content: m.content }));
    const messages = [...own, ...drained];
    if (messages.length === 0) return { drained, committing: Promise.resolve([]) };
    if (drained.length > 0) this.#undelivered = taken.map((m) => m.content);
    const { ledger, session_id, run_id } = this.#input;
    const committing = ledger.commit({
      session_id, run_id, messages: messages.map((m) => ({ ...m, content: cloneBlocks(m.content) })), ...(options.extras ?? {}),
    }).then(() => {
      if (drained.length > 0) {
        this.#undelivered = [];
        this.#n += drained.length;
      }
      return messages;
    });
    return { drained, committing };
  }

  /** Closes the attempt; undelivered and leftover input is carried over by the host. Idempotent. */
  close(): void {
    this.#input.host.closeAttempt(this.#handle, { undelivered: this.#undelivered });
    this.#undelivered = [];
  }
}
