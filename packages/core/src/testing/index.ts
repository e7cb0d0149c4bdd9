/**
 * @inbox-kit/core/testing — for tests and adapter authors: the storage conformance kit (a vitest
 * suite; `vitest` is an optional peer of this package) and, re-exported for convenience, the
 * in-memory reference store. Code that only embeds the in-memory store imports it from
 * `@inbox-kit/core/memory`, which loads no test runner.
 */
export { createMemoryStore, type MemoryStore } from './memory-store.js';
export * from './conformance.js';
