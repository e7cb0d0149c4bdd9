/**
 * @inbox-kit/sdk — a typed HTTP client for inbox-kit servers, on `fetch`, with no runtime
 * dependencies. Start with {@link createClient}. Spec: platform.md, project-inbox.md "SDK",
 * live-inbox.md.
 */
export { createClient } from './client.js';
export type { ClientOptions, InboxKitClient } from './client.js';
export { InboxKitApiError, LiveInboxInactiveError } from './errors.js';
export type { InboxKitApiErrorInit } from './errors.js';
export type { FetchLike, RetryOptions } from './transport.js';
// The resource classes are exported for their types (`client.projects` is a `Projects`); build
// them through createClient, not by hand.
export { Projects, ProjectMembers, ProjectInbox, ProjectEvents, ProjectOperationLogs } from './projects.js';
export { Sessions, SessionFloors, SessionPages, SessionEvents, LiveInbox } from './sessions.js';
export type * from './types.js';
