/** Live Inbox: the per-attempt steering queue, the host's attempt registry and the native agent loop (spec live-inbox.md). */
export {
  contentBlockSchema,
  contentSchema,
  cloneContent,
  isBlockedImageHost,
  IMAGE_MEDIA_TYPES,
  MAX_IMAGE_BASE64_CHARS,
  parseContent,
  type ContentBlock,
  type Base64ImageSource,
  type ImageBlock,
  type TextBlock,
  type UrlImageSource,
} from './content.js';
export {
  DEFAULT_LIVE_INBOX_LIMITS, LiveInboxQueue, contentBytes, liveInboxLimits, type LiveInboxLimits, type LiveInboxMessage, type LiveInboxSnapshot,
} from './queue.js';
export {
  DEFAULT_MAX_CARRY_OVER_BYTES,
  LiveInboxHost,
  type AttemptExecutor,
  type AttemptHandle,
  type CloseAttemptOptions,
  type LiveInboxHostOptions,
  type OpenAttemptInput,
} from './registry.js';
export {
  inboxMessageId,
  isModelError,
  ModelError,
  runNativeAttempt,
  stepMessageId,
  type Model,
  type ModelStepResult,
  type NativeAttemptResult,
  type RunLedger,
  type RunNativeAttemptOptions,
  type TranscriptMessage,
} from './agent-loop.js';
