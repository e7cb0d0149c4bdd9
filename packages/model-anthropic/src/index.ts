/**
 * @inbox-kit/model-anthropic: a `Model` for the inbox-kit agent loop on the Anthropic Messages API
 * (streamed `messages.create`), steerable through the Live Inbox. Spec: docs/spec/live-inbox.md.
 */
export { ANTHROPIC_MODEL_DEFAULTS, createAnthropicModel, retryAfterOf, type AnthropicModelOptions } from './model.js';
export {
  toMessageParams, toolUseIdParam, type ImageBlockParam, type MessageParam, type TextBlockParam, type ToolResultBlockParam, type ToolUseBlockParam,
} from './messages.js';
