/**
 * @inbox-kit/core/memory — the in-memory reference store: the whole storage port (`Store`) in one
 * process's memory, for embedding, examples and tests. Loads no test runner (the conformance kit
 * stays under `@inbox-kit/core/testing`, where `vitest` is an optional peer). Data lives as long
 * as the store object; nothing is written anywhere.
 *
 * ```ts
 * import { createMemoryStore } from '@inbox-kit/core/memory';
 * const store = createMemoryStore();
 * ```
 */
export { createMemoryStore, type MemoryStore, type MemoryStoreOptions } from './testing/memory-store.js';
