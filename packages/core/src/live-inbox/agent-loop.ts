/** The native agent loop: model steps, boundary drain of the Live Inbox, commits to the Session ledger. */
import { isInboxKitError } from '../errors.js';
import { cloneContent, type ContentBlock } from './content.js';
import type { LiveInboxHost } from './registry.js';

/**
 * What one model step produced: the assistant `content`, and `continue: true` when the model wants
 * another step (e.g. after a tool call). Spec: live-inbox.md "Drain, commit, carry-over".
 */
export interface ModelStepResult {
  content: ContentBlock[];
  continue: boolean;
}

/**
 * One message of a Run's transcript. `id` is Run-scoped: `{run_id}-step-{k}` for assistant steps,
 * `{run_id}-inbox-{n}` for drained Live Inbox input (see {@link inboxMessageId}); the starting
 * durable input keeps the id the ledger gave it.
 */
export interface TranscriptMessage {
  id: string;
  role: 'user' | 'assistant';
  content: ContentBlock[];
}

/**
 * The model port. `step` decides the next assistant message from the whole transcript (oldest
 * first; it MUST NOT mutate it). It SHOULD reject promptly once `signal` is aborted.
 */
export interface Model {
  step(transcript: readonly TranscriptMessage[], signal: AbortSignal): Promise<ModelStepResult>;
}

/**
 * A model provider failure whose `type` and `message` are safe to show to every reader of the
 * Session (no secret, no stack). A {@link Model} throws it when a step cannot be completed (after
 * whatever retries it does itself); the Runtime records it on the failed Run's
 * `session.status_idle` event as `content.error: { type, message }`. Spec: live-inbox.md
 * "Drain, commit, carry-over" (a failed Run).
 *
 * `type` is a short snake_case kind, e.g. `rate_limit_error`, `overloaded_error`, `api_error`,
 * `timeout_error`, `connection_error`, `authentication_error`, `invalid_request_error`;
 * `status` is the provider's HTTP status when there was one; `attempts` how many requests the
 * step made (≥ 1) when known.
 */
export class ModelError extends Error {
  override readonly name = 'ModelError';
  readonly type: string;
  readonly status: number | undefined;
  readonly attempts: number | undefined;

  constructor(type: string, message: string, options: { status?: number; attempts?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.type = type;
    this.status = options.status;
    this.attempts = options.attempts;
  }
}

/** Whether `error` is a {@link ModelError} (also across copies of the core package). */
export function isModelError(error: unknown): error is ModelError {
  return error instanceof ModelError || (error instanceof Error && error.name === 'ModelError' && typeof (error as { type?: unknown }).type === 'string');
}

/**
 * The Session ledger port, as the Runtime uses it. Spec: live-inbox.md "Drain, commit, carry-over"
 * (the Session commit, not presence in the queue, makes input authoritative).
 */
export interface RunLedger {
  /**
   * Commit messages of one turn to the Session ledger (durable). Must be atomic: either every
   * message is committed, in order, or none is and the promise rejects. Returns when committed.
   */
  commit(input: { session_id: string; run_id: string; messages: TranscriptMessage[] }): Promise<void>;
}

/** Input of {@link runNativeAttempt}. */
export interface RunNativeAttemptOptions {
  /** The host that registers the attempt and owns its Live Inbox. */
  host: LiveInboxHost;
  model: Model;
  ledger: RunLedger;
  session_id: string;
  run_id: string;
  /** Committed history including the starting user message (copied; the array is not mutated). */
  transcript: TranscriptMessage[];
  /** Aborting it cancels the attempt (the model gets it too). */
  signal?: AbortSignal;
  /** How many inbox messages this Run committed in earlier attempts (first `n`); default 0. */
  inboxCounterStart?: number;
  /** How many assistant steps this Run committed in earlier attempts (first `k`); default 0. */
  stepCounterStart?: number;
}

/**
 * Outcome of {@link runNativeAttempt}: `committed` lists, in order, every message this attempt
 * committed to the ledger; `error` is the cause for `failed` (and the abort reason for `cancelled`).
 */
export interface NativeAttemptResult {
  status: 'completed' | 'cancelled' | 'failed';
  error?: unknown;
  committed: TranscriptMessage[];
}

/**
 * The Run-scoped id of the `n`-th Live Inbox message a Run committed (`n` integer ≥ 0, counting all
 * attempts of the Run): `{run_id}-inbox-{n}`. Spec: live-inbox.md "Drain, commit, carry-over".
 */
export function inboxMessageId(run_id: string, n: number): string {
  return `${run_id}-inbox-${String(n)}`;
}

/** The Run-scoped id of the `k`-th assistant step of a Run (`k` integer ≥ 0): `{run_id}-step-{k}`. */
export function stepMessageId(run_id: string, k: number): string {
  return `${run_id}-step-${String(k)}`;
}

/**
 * Runs one native attempt of a Run. Spec: live-inbox.md "Drain, commit, carry-over".
 *
 * Opens a `native` attempt on `host` (its inbox starts with the Session's carry-over), then loops:
 * 1. boundary: drain the inbox; drained entries become user messages `{run_id}-inbox-{n}`,
 *    appended to the transcript and committed to the ledger before the next model call (the
 *    attempt's start is a boundary too, so carried-over input reaches the first decision);
 * 2. `model.step(transcript, signal)`; then the boundary again: the assistant message
 *    `{run_id}-step-{k}` and the drained entries are committed together, in one ledger commit
 *    (the step first);
 * 3. go on while the model wants another step OR anything was drained — input queued during the
 *    final step (or while it commits) keeps the Run going one more step.
 *
 * After the final drain finds nothing, the attempt is closed synchronously (no await in between);
 * whatever is queued later is refused with 410 by the HTTP layer, and anything still queued is
 * carried over by the host, never lost. The attempt is always closed in `finally`; on abort or
 * model/ledger error the leftovers (and drained-but-uncommitted input) go to the Session's next
 * native attempt on this host.
 *
 * Never throws: `cancelled` when `signal` aborted or the attempt was superseded by a newer one
 * (its inbox closed under it), `failed` with `error` when the model or ledger rejected.
 */
export async function runNativeAttempt(opts: RunNativeAttemptOptions): Promise<NativeAttemptResult> {
  const { host, model, ledger, session_id, run_id } = opts;
  const signal = opts.signal ?? new AbortController().signal;
  const handle = host.openAttempt({ session_id, run_id, executor: 'native' });
  const inbox = handle.inbox;
  const transcript: TranscriptMessage[] = opts.transcript.map((m) => ({ ...m, content: cloneContent(m.content) }));
  const committed: TranscriptMessage[] = [];
  let n = opts.inboxCounterStart ?? 0;
  let k = opts.stepCounterStart ?? 0;
  /** Drained from the inbox, not yet committed: handed back to the host if the commit fails. */
  let undelivered: ContentBlock[][] = [];

  const commit = async (messages: TranscriptMessage[]): Promise<void> => {
    await ledger.commit({ session_id, run_id, messages: messages.map((m) => ({ ...m, content: cloneContent(m.content) })) });
    transcript.push(...messages);
    committed.push(...messages);
  };

  /**
   * The boundary: drains the inbox synchronously (so nothing can slip in between this drain and a
   * synchronous close), then commits what it took — after `step`, the output of the step that
   * just ended, in the same commit when given. Returns how many messages were drained.
   */
  const boundary = (step?: TranscriptMessage): { count: number; committing: Promise<void> } => {
    const drained = inbox === null ? [] : inbox.drain();
    if (drained.length === 0) return { count: 0, committing: step === undefined ? Promise.resolve() : commit([step]) };
    undelivered = drained.map((m) => m.content);
    const messages = drained.map((m, i): TranscriptMessage => ({ id: inboxMessageId(run_id, n + i), role: 'user', content: m.content }));
    const committing = commit(step === undefined ? messages : [step, ...messages]).then(() => {
      undelivered = [];
      n += messages.length;
    });
    return { count: messages.length, committing };
  };

  const interrupted = (): boolean => signal.aborted || inbox === null || inbox.closed;

  try {
    if (interrupted()) return cancelled(signal, committed);
    await boundary().committing;
    for (;;) {
      if (interrupted()) return cancelled(signal, committed);
      const result = await model.step(transcript.slice(), signal);
      if (interrupted()) return cancelled(signal, committed);
      // The boundary after a step: its output and what the inbox holds now commit together, in one
      // ledger commit (output first), so steering waits for one commit after the step, not two.
      const step: TranscriptMessage = { id: stepMessageId(run_id, k), role: 'assistant', content: cloneContent(result.content) };
      const drained = boundary(step);
      await drained.committing;
      k++;
      if (interrupted()) return cancelled(signal, committed);
      if (!result.continue && drained.count === 0) {
        // The final step: input queued while it committed keeps the Run going. Nothing there:
        // return now, with no await between this drain and the close in `finally`.
        const late = boundary();
        if (late.count === 0) return { status: 'completed', committed };
        await late.committing;
      }
    }
  } catch (error) {
    if (signal.aborted || (isInboxKitError(error) && error.code === 'live_inbox_inactive')) return cancelled(signal, committed);
    return { status: 'failed', error, committed };
  } finally {
    host.closeAttempt(handle, { undelivered });
  }
}

function cancelled(signal: AbortSignal, committed: TranscriptMessage[]): NativeAttemptResult {
  return signal.aborted ? { status: 'cancelled', error: signal.reason, committed } : { status: 'cancelled', committed };
}
