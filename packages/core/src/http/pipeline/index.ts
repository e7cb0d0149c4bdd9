/**
 * The request pipeline of `@inbox-kit/core/http` (platform.md "HTTP adapters"): `createHttpHandler`
 * and what an adapter needs to convert its framework's request in and the answer out.
 */
export { createHttpHandler } from './handler.js';
export { DEFAULT_BODY_LIMIT } from './context.js';
export { BodyTimeoutError } from './body.js';
export { defaultResponseValidation, ResponseSchemaError, responseText } from './response.js';
export { streamToReadable } from './stream.js';
export { type FetchRequestParts, pipelineRequestOf, responseOf, targetOf } from './fetch.js';
export { createHttpAttemptForwarder, type HttpAttemptForwarderOptions } from './forwarder.js';
export type {
  Caller, HttpHandler, HttpHandlerOptions, PipelineAnswer, PipelineRequest, PipelineStream, PipelineStreamSink, StreamTimingOptions,
} from './types.js';
