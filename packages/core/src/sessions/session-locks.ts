/**
 * A FIFO lock per key, inside one process: the Run supervisor serialises each Session's start and
 * end decisions with it (by session id), so no durable input is missed between a Run's end and the
 * check for a follow-up Run. Across processes the store's row locks do the same.
 */

/** Runs functions one at a time per key, in call order; other keys run in parallel. */
export class KeyedLock {
  readonly #tails = new Map<string, Promise<void>>();

  /** Runs `fn` after every earlier holder of `key`'s lock has finished (FIFO); its result or rejection is the caller's. */
  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => mine);
    this.#tails.set(key, tail);
    await previous;
    try {
      return await fn();
    } finally {
      release();
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    }
  }
}
