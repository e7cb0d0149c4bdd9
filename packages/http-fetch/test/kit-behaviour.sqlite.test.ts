/** The behaviour checks of the HTTP kit in-process (see `kit-behaviour.memory.test.ts`) on a fresh SQLite file per world. */
import { runHttpBehaviour } from '@inbox-kit/core/testing';
import { kitHandler } from './kit-handler.js';
import { openSqliteKitStore } from './kit-stores.js';

runHttpBehaviour('the HTTP kit in-process on sqlite', { handler: kitHandler, openStore: openSqliteKitStore });
