/**
 * @inbox-kit/model-anthropic/testing: a local Messages API stub (node:http on 127.0.0.1) that
 * speaks the streaming wire format, so an application tests its agent offline and for free.
 */
export {
  echoAnswer,
  startMessagesStub,
  type MessagesStub,
  type MessagesStubOptions,
  type StubAnswer,
  type StubRequest,
} from './stub-server.js';
