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
export { paginate } from './transport.js';
// The resource classes are exported for their types (`client.projects` is a `Projects`); build
// them through createClient, not by hand.
export { Projects, ProjectMembers, ProjectInbox, ProjectEvents, ProjectOperationLogs } from './projects.js';
export { Sessions, SessionFloors, SessionPages, SessionEvents, LiveInbox } from './sessions.js';
export { Admin, AdminAccounts, AdminKeys, AdminOperationLogs } from './admin.js';
export type {
  Account, AddMemberInput, AddPageInput, ApiKey, ApiKeyKind, CreateAccountInput, CreateApiKeyParams, IssuedApiKey, ListApiKeysFilters,
  RotateApiKeyParams, RotatedApiKey, WorkspaceAccount, Base64ImageSource, CommitFloorInput, CommittedFloor,
  ContentBlock, CreateInboxItemInput, CreateOptions, CreateProjectInput, CreateSessionInput, CursorPage,
  DecideInboxItemParams, Floor, ImageBlock, InboxDecision, InboxItemStatus, ItemList, JsonObject, JsonValue,
  ListInboxItemsFilters, ListInboxItemsParams, ListOperationLogsParams, ListProjectEventsParams,
  ListSessionEventsParams, ListSessionsParams, LiveInboxMessage, PageParams, LiveInboxSnapshot, Me, Member, MemberRole,
  OperationLog, Page, Project, ProjectEvent, ProjectEventPage, ProjectEventSource, ProjectEventVisibility,
  ProjectInboxItem, ProjectRole, ProjectStatus, QueueOrSendResult, RequestOptions, Session, SessionEvent,
  SessionEventAck, SessionEventInput, SessionEventPage, StreamProjectEventsParams, StreamResync,
  StreamSessionEventsParams, StreamToken, TextBlock, UrlImageSource,
} from './types.js';
