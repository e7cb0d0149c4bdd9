/** Session Runtime: durable Session events, background Runs of the native agent loop, Live Inbox operations (spec live-inbox.md). */
export {
  SessionRuntimeService,
  SESSION_EVENT_TYPES,
  type LiveInboxView,
  type RunFailure,
  type SessionEventPage,
  type SessionEventReceipt,
  type SessionRuntimeDeps,
} from './service.js';
export {
  DEFAULT_ATTEMPT_LEASE_MS,
  type AttemptForwarder,
  type AttemptForwardRequest,
  type AttemptRoute,
  type AttemptRoutingErrorInfo,
  type AttemptRoutingOptions,
  type ForwardedReply,
  type LiveInboxOperation,
} from './routing.js';
export {
  MAX_EVENTS_PER_REQUEST,
  listSessionEventsQuery,
  liveInboxContentBody,
  liveInboxMessageParams,
  liveInboxOrderBody,
  sendSessionEventsBody,
  sessionEventInput,
  sessionParams,
  streamSessionEventsQuery,
  type ListSessionEventsInput,
  type LiveInboxContentInput,
  type LiveInboxOrderInput,
  type SendSessionEventsInput,
  type SessionEventInput,
} from './schemas.js';
