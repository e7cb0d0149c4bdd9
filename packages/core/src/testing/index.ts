/**
 * @inbox-kit/core/testing — for tests and adapter authors: the in-memory reference store.
 */
export { createMemoryStore, type MemoryStore } from './memory-store.js';
export * from './conformance.js';
export * from './http-conformance.js';
