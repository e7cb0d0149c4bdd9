/**
 * The Live Inbox bridge of one attempt (public): the one place where an executor's loop — the
 * native loop (`agent-loop.ts`) or an application's framework loop (`@inbox-kit/ai-sdk`,
 * `@inbox-kit/langgraph`, `@inbox-kit/openai-agents`) — meets the Live Inbox: register the attempt
 * on the host, drain at the caller's boundary, give the drained messages their Run-scoped ids
 * `{run_id}-inbox-{n}`, commit them to the Session ledger (after the boundary's own output) before
 * the next model call, and close with carry-over of whatever no model saw. Spec: live-inbox.md
 * "The bridge", "Drain, commit, carry-over", "Tools and boundaries".
 */
import { cloneContent, type ContentBlock } from './content.js';
import type { LiveInboxMessage, LiveInboxQueue } from './queue.js';
import type { AttemptExecutor, AttemptHandle, LiveInboxHost } from './registry.js';
import {
  cloneBlocks, resultOf, toolResultsMessageId, toolUseId, type ToolOutput, type ToolResultBlock, type ToolUseBlock, type TranscriptBlock,
  type ToolUseDisposition, type ToolUseResolution,
} from './tools.js';

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

/** Input of {@link LiveInboxBridge.open}. */
export interface OpenBridgeInput {
  host: LiveInboxHost;
  ledger: RunLedger;
  session_id: string;
  run_id: string;
  /**
   * The Run's committed history so far (what the attempt starts from): the bridge counts in it how
   * many inbox messages, steps and tool uses this Run committed in earlier attempts, so its ids go
   * on from there. Not kept.
   */
  transcript?: readonly TranscriptMessage[];
  /** How many inbox messages this Run committed before (first `n`); default counted in `transcript`, else 0. */
  inboxCounterStart?: number;
  /** How many assistant steps this Run committed before (first `k`); default counted in `transcript`, else 0. */
  stepCounterStart?: number;
  /** How many tool uses this Run committed before (first `j`); default counted in `transcript`, else 0. */
  toolUseCounterStart?: number;
  /** The attempt's executor kind on the host (default `native`); `framework` for an application's loop. Both own a Live Inbox. */
  executor?: Exclude<AttemptExecutor, 'acp'>;
}

/** A boundary in progress: what was drained (already Run-scoped) and the commit of it. */
export interface Boundary {
  /** The drained messages, `{run_id}-inbox-{n}`, in queue order (empty when nothing was drained). */
  drained: TranscriptMessage[];
  /** Resolves with every committed message (the boundary's own, then the drained) once committed. */
  committing: Promise<TranscriptMessage[]>;
}

/** Options of {@link LiveInboxBridge.commit}. */
export interface BridgeCommitOptions {
  /**
   * The boundary's own messages, committed first in the same ledger commit: the step that just
   * ended ({@link LiveInboxBridge.step}) and its tool results ({@link LiveInboxBridge.results}).
   */
  output?: readonly TranscriptMessage[];
  /**
   * How each `tool_use` block of `output` is recorded (by its Run-scoped id). Default for a block
   * not listed: `{ kind: 'host', permission: 'allow' }` — a tool the executor ran itself
   * (`agent.tool_use`, `evaluated_permission: 'allow'`).
   */
  tool_uses?: Readonly<Record<string, ToolUseDisposition>>;
  /** `tool_use` ids whose results are in the ledger already (not recorded again). */
  recorded_results?: readonly string[];
}

/** One tool call of a framework step, with the framework's own id (see {@link LiveInboxBridge.step}). */
export interface BridgeToolCall {
  /** The framework's id of the call (`toolCallId`, `tool_call.id`, `callId`). */
  id: string;
  name: string;
  /** The call's input; anything but a plain object is recorded as `{}`. */
  input: unknown;
}

/** One tool result of a framework step (see {@link LiveInboxBridge.results}). */
export interface BridgeToolResult {
  /** The framework's id of the call it answers (as given to {@link LiveInboxBridge.step}). */
  id: string;
  /** What the tool returned: text, content blocks, or (anything else) its JSON text. */
  output: unknown;
  is_error?: boolean;
}

/** Options of {@link LiveInboxBridge.close}. */
export interface BridgeCloseOptions {
  /**
   * Drained messages no model will see (the framework stopped before its next model call): carried
   * over to the Session's next attempt on this host, ahead of the leftovers. Drained messages whose
   * commit did not succeed are carried over whether listed or not; a message already committed is
   * never carried (it is in the ledger: the next Run's transcript has it).
   */
  undelivered?: readonly TranscriptMessage[];
}

/**
 * The bridge of one attempt of a Run: an executor's loop at the Live Inbox. Spec: live-inbox.md
 * "The bridge".
 *
 * - {@link open} registers the attempt on the host (so `GET …/live-inbox` answers `active: true`
 *   and, with attempt routing, other processes forward to this one while the Run's lease is held);
 *   its inbox starts with the Session's carry-over.
 * - {@link drain} (synchronous) takes everything queued, in queue order, as user messages with the
 *   Run-scoped ids `{run_id}-inbox-{n}`; from then on edits of those messages answer 404. Call it at
 *   the loop's boundary: after a step's tool results, before the next model call.
 * - {@link commit} commits, in ONE ledger commit, the boundary's own output (a step, its tool
 *   results) and then the drained messages (`user.message` events with those ids). Commit before
 *   the next model call: the Session commit, not the queue, makes input authoritative.
 * - {@link step} / {@link results} turn a framework's step into transcript messages with Run-scoped
 *   ids (`{run_id}-step-{k}`, `{run_id}-tool-{j}`, `{step}-results`).
 * - {@link close} ends the attempt; drained messages never committed (or listed `undelivered`) and
 *   everything still queued move to the Session's next attempt on this host.
 *
 * Not safe for concurrent commits: one loop drives it. {@link boundary} is drain + commit, for the
 * native loop.
 */
export class LiveInboxBridge {
  readonly #input: OpenBridgeInput;
  readonly #handle: AttemptHandle;
  #n: number;
  #k: number;
  #j: number;
  /** Drained from the inbox, not yet committed, by id: handed back to the host on close. */
  readonly #undelivered = new Map<string, ContentBlock[]>();
  /** The framework's tool-call ids → Run-scoped tool-use ids. */
  readonly #toolIds = new Map<string, string>();
  #closed = false;
  #carried = 0;

  private constructor(input: OpenBridgeInput, handle: AttemptHandle) {
    this.#input = input;
    this.#handle = handle;
    const counted = countersOf(input.transcript ?? [], input.run_id);
    this.#n = input.inboxCounterStart ?? counted.inbox;
    this.#k = input.stepCounterStart ?? counted.steps;
    this.#j = input.toolUseCounterStart ?? counted.toolUses;
  }

  /**
   * Registers the attempt on the host (executor `native` unless `input.executor` says
   * `framework`); an attempt still active for the Session is closed first (its leftovers carried).
   */
  static open(input: OpenBridgeInput): LiveInboxBridge {
    return new LiveInboxBridge(input, input.host.openAttempt({ session_id: input.session_id, run_id: input.run_id, executor: input.executor ?? 'native' }));
  }

  get session_id(): string {
    return this.#input.session_id;
  }

  get run_id(): string {
    return this.#input.run_id;
  }

  /** The attempt as the host registered it. */
  get attempt(): AttemptHandle {
    return this.#handle;
  }

  /** The attempt's inbox (null for an executor without one). */
  get inbox(): LiveInboxQueue | null {
    return this.#handle.inbox;
  }

  /**
   * True once the attempt's inbox is closed under it: an interrupt took it, a newer attempt of the
   * Session superseded it, or {@link close} was called. Stop the loop: nothing more is accepted.
   */
  get superseded(): boolean {
    return this.#closed || this.#handle.inbox === null || this.#handle.inbox.closed;
  }

  /** Whether anything is queued right now (a cheap look, no drain). */
  get pending(): boolean {
    const inbox = this.#handle.inbox;
    return inbox !== null && !inbox.closed && inbox.size > 0;
  }

  /**
   * Drains the inbox (synchronously): every queued message in queue order, as a user message with
   * the next Run-scoped id `{run_id}-inbox-{n}`. `[]` when nothing is queued or the attempt is over.
   * The messages count as undelivered until {@link commit} succeeds.
   */
  drain(): TranscriptMessage[] {
    const inbox = this.#handle.inbox;
    if (inbox === null || inbox.closed || this.#closed) return [];
    const taken = inbox.drain();
    return taken.map((m) => {
      const message: TranscriptMessage = { id: inboxMessageId(this.#input.run_id, this.#n++), role: 'user', content: cloneContent(m.content) };
      this.#undelivered.set(message.id, m.content);
      return message;
    });
  }

  /**
   * Commits `options.output` (first) and then `drained` in ONE ledger commit, conditional on the Run
   * still running. Resolves with every committed message; rejects with the ledger's error (an
   * `InboxKitError` `conflict` once the Run has ended) — the drained messages then stay undelivered
   * and are carried over on {@link close}. Nothing is committed when both are empty.
   */
  async commit(drained: readonly TranscriptMessage[], options: BridgeCommitOptions = {}): Promise<TranscriptMessage[]> {
    const output = options.output ?? [];
    const messages = [...output, ...drained];
    if (messages.length === 0) return [];
    const tool_uses: Record<string, ToolUseDisposition> = {};
    for (const m of output) {
      for (const b of m.content) if (b.type === 'tool_use') tool_uses[b.id] = options.tool_uses?.[b.id] ?? { kind: 'host', permission: 'allow' };
    }
    const { ledger, session_id, run_id } = this.#input;
    await ledger.commit({
      session_id, run_id, messages: messages.map((m) => ({ ...m, content: cloneBlocks(m.content) })),
      ...(Object.keys(tool_uses).length > 0 ? { tool_uses } : {}),
      ...(options.recorded_results !== undefined ? { recorded_results: options.recorded_results } : {}),
    });
    for (const m of drained) this.#undelivered.delete(m.id);
    return messages;
  }

  /**
   * A boundary of the native loop: drains the inbox when `drain` (synchronously: nothing can slip
   * in between the drain and a synchronous {@link close}) and commits `own` then the drained
   * messages in one ledger commit.
   */
  boundary(own: readonly TranscriptMessage[], options: { drain: boolean; extras?: RunLedgerCommitExtras }): Boundary {
    const drained = options.drain ? this.drain() : [];
    const committing = this.commit(drained, { output: own, ...(options.extras ?? {}) });
    return { drained, committing };
  }

  /**
   * The next assistant step of the Run as a transcript message `{run_id}-step-{k}`: its text (a
   * string, or text blocks) and its tool calls as `tool_use` blocks with Run-scoped ids
   * `{run_id}-tool-{j}` (the framework's ids are remembered for {@link results} and
   * {@link toolUseIdOf}). Commit it with {@link commit} (`output`).
   */
  step(input: { text?: string | readonly ContentBlock[]; tool_calls?: readonly BridgeToolCall[] }): TranscriptMessage {
    const content: TranscriptBlock[] = [];
    const text = typeof input.text === 'string' ? [{ type: 'text' as const, text: input.text }] : (input.text ?? []);
    for (const b of text) if (b.type === 'text' && b.text !== '') content.push({ type: 'text', text: b.text });
    for (const call of input.tool_calls ?? []) {
      const id = toolUseId(this.#input.run_id, this.#j++);
      this.#toolIds.set(call.id, id);
      const value = call.input !== null && typeof call.input === 'object' && !Array.isArray(call.input) ? structuredClone(call.input as Record<string, unknown>) : {};
      content.push({ type: 'tool_use', id, name: String(call.name), input: value } satisfies ToolUseBlock);
    }
    return { id: stepMessageId(this.#input.run_id, this.#k++), role: 'assistant', content };
  }

  /**
   * The tool results answering `step` as the user message `{step}-results`: one `tool_result` per
   * result, in the step's tool-use order (a call without a result gets an error result, so the
   * transcript stays valid). Text output as it is, content blocks as they are, anything else as
   * its JSON text.
   */
  results(step: TranscriptMessage, results: readonly BridgeToolResult[]): TranscriptMessage {
    const byId = new Map<string, BridgeToolResult>();
    for (const r of results) byId.set(this.#toolIds.get(r.id) ?? r.id, r);
    const content: ToolResultBlock[] = [];
    for (const b of step.content) {
      if (b.type !== 'tool_use') continue;
      const r = byId.get(b.id);
      if (r === undefined) {
        content.push({ type: 'tool_result', tool_use_id: b.id, content: [{ type: 'text', text: 'No result was recorded for this call.' }], is_error: true });
        continue;
      }
      const output: ToolOutput = typeof r.output === 'string' || isBlocks(r.output) ? (r.output as ToolOutput) : JSON.stringify(r.output ?? null) ?? 'null';
      const result = resultOf(b.id, r.is_error === true ? { content: output as string | ContentBlock[], is_error: true } : output);
      content.push(result);
    }
    return { id: toolResultsMessageId(step.id), role: 'user', content };
  }

  /** The Run-scoped id (`{run_id}-tool-{j}`) given to the framework's tool call `id` by {@link step}, if any. */
  toolUseIdOf(id: string): string | undefined {
    return this.#toolIds.get(id);
  }

  /**
   * Closes the attempt (idempotent). Drained messages not committed — `undelivered`, and any whose
   * commit failed — and everything still queued are carried over by the host to the Session's next
   * attempt (re-queued there with new queue ids, drained at its first boundary).
   * @returns the leftovers that were still queued (with their queue ids), for logging.
   */
  close(options: BridgeCloseOptions = {}): LiveInboxMessage[] {
    if (this.#closed) return [];
    this.#closed = true;
    // Every drained message not committed is carried, listed or not; a listed one that was
    // committed is in the ledger already and is not carried (never committed twice).
    for (const m of options.undelivered ?? []) {
      if (!this.#undelivered.has(m.id) && !m.id.startsWith(`${this.#input.run_id}-inbox-`)) {
        throw new TypeError(`close: ${m.id} is not a message this bridge drained`);
      }
    }
    const undelivered = [...this.#undelivered.values()];
    this.#undelivered.clear();
    const leftovers = this.#input.host.closeAttempt(this.#handle, { undelivered });
    this.#carried = undelivered.length + leftovers.length;
    return leftovers;
  }

  /**
   * How many messages {@link close} carried over (drained but not committed, plus the leftovers);
   * 0 before the close. A completed Run whose close carried something gets a follow-up Run (the
   * input was queued after its last drain).
   */
  get carried(): number {
    return this.#carried;
  }
}

/** @deprecated The internal name of {@link LiveInboxBridge} before it was public. */
export const AttemptBridge = LiveInboxBridge;
/** @deprecated The internal name of {@link LiveInboxBridge} before it was public. */
export type AttemptBridge = LiveInboxBridge;

/** The Run-scoped id of the `k`-th assistant step of a Run (`k` integer ≥ 0): `{run_id}-step-{k}`. */
export function stepMessageId(run_id: string, k: number): string {
  return `${run_id}-step-${String(k)}`;
}

const isBlocks = (v: unknown): v is ContentBlock[] =>
  Array.isArray(v) && v.length > 0 && v.every((b) => b !== null && typeof b === 'object' && ((b as { type?: unknown }).type === 'text' || (b as { type?: unknown }).type === 'image'));

/** How many of this Run's steps, inbox messages, tool uses and tool rounds `transcript` holds. */
export function countersOf(transcript: readonly TranscriptMessage[], run_id: string): { steps: number; inbox: number; toolUses: number; rounds: number } {
  const step = `${run_id}-step-`;
  const inbox = `${run_id}-inbox-`;
  const tool = `${run_id}-tool-`;
  let steps = 0;
  let inboxCount = 0;
  let toolUses = 0;
  let rounds = 0;
  for (const m of transcript) {
    if (m.role === 'assistant' && m.id.startsWith(step)) {
      steps++;
      const uses = m.content.filter((b) => b.type === 'tool_use' && b.id.startsWith(tool)).length;
      toolUses += uses;
      if (uses > 0) rounds++;
    } else if (m.role === 'user' && m.id.startsWith(inbox)) inboxCount++;
  }
  return { steps, inbox: inboxCount, toolUses, rounds };
}
