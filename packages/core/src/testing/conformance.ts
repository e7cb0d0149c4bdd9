/**
 * The storage conformance kit: one vitest suite that any adapter of the storage port runs against
 * itself (the in-memory reference store, SQLite, PostgreSQL, a third party's).
 *
 * ```ts
 * import { runStoreConformance } from '@inbox-kit/core/testing';
 * runStoreConformance('my-adapter', async () => {
 *   const store = await openMyStore();
 *   return { store, raw: myRawReader(), close: () => store.close() };
 * }, { unsupported: { runs: 'this store keeps no Runs' } }); // optional: those checks are reported skipped
 * ```
 *
 * The factory is called once per check and must return an isolated, migrated store plus a
 * `RawReader`: a second read path with raw queries, which the assertions use instead of trusting
 * the adapter under test. vitest is an optional peer dependency of `@inbox-kit/core`, needed only
 * by this module. The checks themselves (`./conformance-checks.ts`) are plain functions.
 */
import { describe, it } from 'vitest';
import { planStoreConformance, storeConformanceChecks, type StoreConformanceSubject, type UnsupportedStorePorts } from './conformance-checks.js';

export * from './conformance-checks.js';
export { memoryConformanceSubject, memoryRawReader } from './conformance-memory.js';

/** Options of {@link runStoreConformance}. */
export interface StoreConformanceOptions {
  /** Per-check timeout in ms (default 60 000: the concurrency checks run hundreds of transactions). */
  timeout?: number;
  /**
   * Sub-ports the store does not implement (`['runs']`, or `{ runs: 'why' }`): the checks that need
   * one of them are registered as skipped, with the reason, and every other check runs.
   */
  unsupported?: UnsupportedStorePorts;
}

/**
 * Registers `describe(name)` with one `describe` per sub-port (`transactions`, `identity`,
 * `projects`, `inbox`, `events`, `sessions`, `runs`, `idempotency`) and one test per conformance
 * check. Each test creates a subject with `factory`, runs the check, and closes the subject
 * whatever happened. A check that needs a sub-port listed in `options.unsupported` is reported as
 * skipped with the reason, and creates no subject.
 *
 * @throws TypeError (at registration) when `options.unsupported` names an unknown sub-port.
 */
export function runStoreConformance(
  name: string,
  factory: () => Promise<StoreConformanceSubject>,
  options: StoreConformanceOptions = {},
): void {
  const planned = planStoreConformance(storeConformanceChecks, options.unsupported);
  const groups = [...new Set(planned.map(({ check }) => check.group))];
  describe(name, () => {
    for (const group of groups) {
      describe(group, () => {
        for (const { check, skip } of planned.filter((p) => p.check.group === group)) {
          if (skip !== undefined) {
            it(check.name, (ctx) => ctx.skip(skip));
            continue;
          }
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
  });
}
