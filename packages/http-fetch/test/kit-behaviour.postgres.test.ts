/**
 * The behaviour checks of the HTTP kit in-process (see `kit-behaviour.memory.test.ts`) on a fresh
 * PostgreSQL database per world; without `INBOX_KIT_TEST_PG_URL` the run registers as skipped, with the reason.
 */
import { runHttpBehaviour } from '@inbox-kit/core/testing';
import { describe, it } from 'vitest';
import { kitHandler } from './kit-handler.js';
import { NO_POSTGRES, openPostgresKitStore, PG_ADMIN_URL } from './kit-stores.js';

if (PG_ADMIN_URL) runHttpBehaviour('the HTTP kit in-process on postgres', { handler: kitHandler, openStore: openPostgresKitStore });
else describe('the HTTP kit in-process on postgres', () => it.skip(NO_POSTGRES, () => {}));
