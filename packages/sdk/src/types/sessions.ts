/**
 * Sessions as the SDK sees them (live-inbox.md, platform.md): the inputs that create Projects,
 * members, Sessions, Floors and Pages; content blocks; the Live Inbox and durable Session events.
 * Re-exported by `../types.ts`.
 */
import type { JsonValue, RequestOptions } from './common.js';
import type { PageParams } from './inbox.js';
import type { Floor, MemberRole, Page, StreamResync } from './platform.js';

// ---------------------------------------------------------------------------------------------
// Sessions, floors, pages
// ---------------------------------------------------------------------------------------------

/** The server generates the project's id (`proj_…`); ids are not chosen by callers. */
export interface CreateProjectInput {
  /** 1–200 code points. */
  name: string;
}

export interface AddMemberInput {
  accountId: string;
  role: MemberRole;
}

/** The server generates the session's id (`sess_…`); ids are not chosen by callers. */
export interface CreateSessionInput {
  projectId?: string | null;
  title?: string | null;
}

export interface ListSessionsParams extends PageParams {
  projectId?: string;
}

export interface CommitFloorInput {
  /** Any JSON, sent untouched. */
  content: unknown;
  /** `[A-Za-z0-9._-]{1,64}`; server default branch when absent. */
  branch?: string;
}

export interface AddPageInput {
  /** Any JSON, sent untouched. */
  content: unknown;
}

/** A committed turn: its Floor and first Page. */
export interface CommittedFloor {
  floor: Floor;
  page: Page;
}

// ---------------------------------------------------------------------------------------------
// Content blocks, Live Inbox, durable Session events
// ---------------------------------------------------------------------------------------------

/** `{ type: 'text', text }`; `text` must hold a non-whitespace character (else 400). Spec: live-inbox.md "Content blocks". */
export interface TextBlock {
  type: 'text';
  text: string;
}

/**
 * An inline image (wire shape, untouched): MIME `media_type` (`image/jpeg`, `image/png`,
 * `image/gif` or `image/webp`) and standard base64 `data` of those bytes, at most 5,242,880
 * characters; anything else is 400. Spec: live-inbox.md "Content blocks".
 */
export interface Base64ImageSource {
  type: 'base64';
  media_type: string;
  data: string;
}

/** An image by reference: an absolute public `http(s):` URL (loopback, link-local, private hosts → 400). Spec: live-inbox.md "Content blocks". */
export interface UrlImageSource {
  type: 'url';
  url: string;
}

export interface ImageBlock {
  type: 'image';
  source: Base64ImageSource | UrlImageSource;
}

/** One content block; content is a non-empty array of these, passed through untouched. */
export type ContentBlock = TextBlock | ImageBlock;

/** One queued Live Inbox message. `id` is a small queue-local integer. */
export interface LiveInboxMessage {
  id: number;
  content: ContentBlock[];
}

/** The editable window. With no active native attempt: `{ active: false, version: 0, messages: [] }`. */
export interface LiveInboxSnapshot {
  active: boolean;
  version: number;
  messages: LiveInboxMessage[];
}

/** A durable input event for `client.sessions.events.send`. */
export type SessionEventInput =
  | { type: 'user.message'; content: ContentBlock[] }
  | { type: 'user.interrupt' }
  /** The result of a custom (client-run) tool: answers the `agent.custom_tool_use` event `customToolUseId`. */
  | { type: 'user.custom_tool_result'; customToolUseId: string; content?: ContentBlock[]; isError?: boolean }
  /** Allows or denies an `always_ask` tool use (`agent.tool_use` with `evaluatedPermission: 'ask'`); `denyMessage` only with `deny`. */
  | { type: 'user.tool_confirmation'; toolUseId: string; result: 'allow' | 'deny'; denyMessage?: string };

/** The server's acknowledgement of one sent Session event: the committed event itself. */
export type SessionEventAck = SessionEvent;

/** Result of `client.sessions.liveInbox.queueOrSend`. */
export type QueueOrSendResult = { delivery: 'live'; id: number } | { delivery: 'durable'; events: SessionEventAck[] };

/**
 * One committed entry of the Session ledger, in the Managed Agents wire shape (live-inbox.md
 * "Managed Agents compatibility"). `content` (message events only) is passed through untouched.
 */
export interface SessionEvent {
  id: string;
  sessionId: string;
  /** Gap-free per session: 1, 2, 3 … */
  seq: number;
  /**
   * `user.message`, `user.interrupt`, `user.custom_tool_result`, `user.tool_confirmation`,
   * `agent.message`, `agent.tool_use`, `agent.custom_tool_use`, `agent.tool_result`,
   * `session.status_running`, `session.status_idle`, `session.error`, …
   */
  type: string;
  runId: string | null;
  /** Run-scoped message id (`{run_id}-inbox-{n}`, `{run_id}-step-{k}`) or null. */
  messageId: string | null;
  /** Content blocks of `user.message` and `agent.message`, the result of `agent.tool_result` and `user.custom_tool_result`; absent on other types. */
  content?: ContentBlock[];
  /** `agent.tool_use`, `agent.custom_tool_use`: the tool called and its input. */
  name?: string;
  input?: { [key: string]: JsonValue };
  /** `agent.tool_use`: `allow` (runs now), `ask` (waits for `user.tool_confirmation`), `deny` (refused: an error result follows). */
  evaluatedPermission?: 'allow' | 'ask' | 'deny';
  /** `agent.tool_use`: the permission policy that decided. */
  evaluation?: { type: 'always_allow' | 'always_ask' };
  /** `agent.tool_result`, `user.tool_confirmation`: the `agent.tool_use` event answered. */
  toolUseId?: string;
  /** `user.custom_tool_result`: the `agent.custom_tool_use` event answered. */
  customToolUseId?: string;
  /** `agent.tool_result`, `user.custom_tool_result`. */
  isError?: boolean;
  /** `user.tool_confirmation`. */
  result?: 'allow' | 'deny';
  denyMessage?: string | null;
  floorId: string | null;
  pageId: string | null;
  /** RFC 3339 timestamp (UTC, ms precision), e.g. `2026-11-30T14:37:57.123Z`. */
  processedAt: string;
  /**
   * `session.status_idle`: `end_turn`, `retries_exhausted` when the Run failed, `refusal`, or
   * `requires_action` while the Run waits for the tool uses `event_ids`.
   */
  stopReason?: { type: 'end_turn' | 'retries_exhausted' | 'refusal' } | { type: 'requires_action'; event_ids: string[] };
  /** `session.status_idle`: always null. */
  stopDetails?: null;
  /** `session.status_idle`: how the Run ended (`completed`, `cancelled`, `failed`). */
  outcome?: string | null;
  /**
   * `session.status_idle` of a failed Run (ours): why it failed, e.g. `{ type: 'overloaded_error',
   * message }`; `session.error`: the error, e.g. `tool_use_limit_reached_error`, with `retry_status`.
   */
  error?: { type: string; message: string; retry_status?: { type: 'exhausted' } };
}

/** Query of `client.sessions.events.list`. */
export interface ListSessionEventsParams extends RequestOptions {
  /** The `nextPage` of the previous page (opaque; keep the other parameters unchanged). */
  page?: string;
  /** 1–1000, default 100. */
  limit?: number;
  /** By `seq`: `asc` (default) or `desc`. */
  order?: 'asc' | 'desc';
}

/** A page of committed Session history. */
export interface SessionEventPage {
  data: SessionEvent[];
  /** Opaque; pass back as `page`. `null` when there is no next page. */
  nextPage: string | null;
  hasMore: boolean;
}

/** Options of `client.sessions.events.stream`. */
export interface StreamSessionEventsParams extends RequestOptions {
  /** Start after this position (the first connection only; reconnects use `Last-Event-ID`). */
  after?: string | number;
  /**
   * Called when the server answers a resume position after its newest event with a `resync`
   * frame (the iterator yields no item for it; the stream goes on after `latest`).
   */
  onResync?: (resync: StreamResync) => void;
}

/** A stream token (`client.createStreamToken`): pass `token` as `access_token` on a stream route until `expiresAt` (ms since the epoch). */
export interface StreamToken {
  token: string;
  expiresAt: number;
}
