/**
 * The behaviour checks of the HTTP kit (`runHttpBehaviour` of `@inbox-kit/core/testing`) in-process
 * on the in-memory store: every request goes to the core pipeline's fetch handler (`kit-handler.ts`), no socket.
 */
import { runHttpBehaviour } from '@inbox-kit/core/testing';
import { kitHandler } from './kit-handler.js';

runHttpBehaviour('the HTTP kit in-process on the in-memory store', { handler: kitHandler });
