/**
 * @inbox-kit/core/testing/memory — the in-memory reference store alone, without the conformance
 * kits, so it loads without vitest (for demos, examples and tests on other runners).
 */
export { createMemoryStore, type MemoryStore } from './memory-store.js';
