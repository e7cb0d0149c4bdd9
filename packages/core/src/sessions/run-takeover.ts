/**
 * The takeover check (platform.md "Many processes"): with attempt routing, every process looks
 * for running Runs whose lease expired — their process died (kill -9, a lost machine), froze or
 * lost the database for longer than a lease — every `takeover_check_ms`, and ends them `failed`
 * with a recorded reason; durable input their process never ran then gets its follow-up Run on
 * the process that took over. The rule itself is the Run supervisor's recovery
 * (`RunSupervisor.recoverStaleRuns`); this module only runs it periodically, one pass at a time.
 *
 * Time to take over: a dead owner's lease was last renewed at most a third of the lease before it
 * died, so it expires within one lease of the death, and the next check (at most one interval
 * later) ends the Run: within `lease_ms + takeover_check_ms` (15 s + 5 s by default).
 */

/** A periodic, non-overlapping run of `check` (timers unref'd: they never keep a process alive). */
export class RunTakeover {
  readonly #check: () => Promise<unknown>;
  readonly #intervalMs: number;
  readonly #onError: (error: unknown) => void;
  #timer: ReturnType<typeof setInterval> | undefined;
  #running: Promise<void> | undefined;

  /**
   * @param check one takeover pass (ends leftovers, starts follow-ups); its rejection goes to `onError`.
   * @param intervalMs ms between passes (integer ≥ 1).
   */
  constructor(check: () => Promise<unknown>, intervalMs: number, onError: (error: unknown) => void) {
    if (!Number.isSafeInteger(intervalMs) || intervalMs < 1) throw new TypeError(`takeover_check_ms must be an integer ≥ 1, got ${String(intervalMs)}`);
    this.#check = check;
    this.#intervalMs = intervalMs;
    this.#onError = onError;
  }

  /** Starts the periodic passes (idempotent). */
  start(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => this.#tick(), this.#intervalMs);
    (this.#timer as { unref?: () => void }).unref?.();
  }

  /** Stops the passes and waits for one in progress (idempotent). */
  async stop(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }

  #tick(): void {
    if (this.#running !== undefined) return; // the previous pass is still running
    this.#running = this.#check().then(
      () => undefined,
      (error: unknown) => {
        try {
          this.#onError(error);
        } catch {
          // A failing reporter must not stop the checks.
        }
      },
    ).finally(() => {
      this.#running = undefined;
    });
  }
}
