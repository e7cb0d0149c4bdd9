/**
 * @inbox-kit/core — the pure domain of inbox-kit: errors, records, ports, the Project Inbox state
 * machine and services, permission rules, the cursor codec, and the Live Inbox queue and runtime.
 * Imports only zod; time, ids, storage and the event bus come in through ports.
 */
export * from './errors.js';
export * from './records.js';
export * from './schemas/records.js';
export * from './context.js';
export * from './validation.js';
export * from './cursor.js';
export * from './stream-resume.js';
export * from './idempotency.js';
export * from './json-numbers.js';
export * from './ports/clock.js';
export * from './ports/store.js';
export * from './ports/event-bus.js';
export * from './ports/feed.js';
export * from './project-inbox/transition.js';
export * from './project-inbox/permissions.js';
export * from './project-inbox/schemas.js';
export * from './project-inbox/access.js';
export * from './project-inbox/service.js';
export * from './platform/keys.js';
export * from './platform/schemas.js';
export { PlatformService, PROJECT_FEED_RECHECK_MS } from './platform/service.js';
export { loadSessionAccess, writeTurn, type SessionAccess } from './sessions/access.js';
export * from './live-inbox/index.js';
export * from './sessions/index.js';
