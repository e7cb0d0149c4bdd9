/**
 * The storage conformance kit: one vitest suite that any adapter of the storage port runs against
 * itself (the in-memory reference store, SQLite, PostgreSQL, a third party's).
 *
 * ```ts
 * import { runStoreConformance } from '@inbox-kit/core/testing';
 * runStoreConformance('my-adapter', async () => {
 *   const store = await openMyStore();
 *   return { store, raw: myRawReader(), close: () => store.close() };
 * });
 * ```
 *
 * The factory is called once per check and must return an isolated, migrated store plus a
 * `RawReader`: a second read path with raw queries, which the assertions use instead of trusting
 * the adapter under test. vitest is an optional peer dependency of `@inbox-kit/core`, needed only
 * by this module. The checks themselves (`./conformance-checks.ts`) are plain functions.
 */
import { describe, it } from 'vitest';
import { storeConformanceChecks, type StoreConformanceSubject } from './conformance-checks.js';

export * from './conformance-checks.js';
export { memoryConformanceSubject, memoryRawReader } from './conformance-memory.js';

/** Options of {@link runStoreConformance}. */
export interface StoreConformanceOptions {
  /** Per-check timeout in ms (default 60 000: the concurrency checks run hundreds of transactions). */
  timeout?: number;
}

/**
 * Registers `describe(name)` with one test per conformance check. Each test creates a subject with
 * `factory`, runs the check, and closes the subject whatever happened.
 */
export function runStoreConformance(
  name: string,
  factory: () => Promise<StoreConformanceSubject>,
  options: StoreConformanceOptions = {},
): void {
  describe(name, () => {
    for (const check of storeConformanceChecks) {
      it(check.name, async () => {
        const subject = await factory();
        try {
          await check.run(subject);
        } finally {
          await subject.close();
        }
      }, options.timeout ?? 60_000);
    }
  });
}
