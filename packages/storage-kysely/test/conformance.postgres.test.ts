// The storage conformance kit against PostgreSQL: a fresh database per check on the server named
// by INBOX_KIT_TEST_PG_URL (e.g. from `node scripts/postgres.mjs`), pools of 10 connections.
// Without that variable the suite is not silently skipped: one test says so, and fails in CI.
import { describe, expect, it } from 'vitest';
import { runStoreConformance } from '@inbox-kit/core/testing';
import { PG_URL, postgresSubject } from './helpers.js';

const pgUrl = PG_URL;
if (pgUrl) {
  runStoreConformance('postgres store', () => postgresSubject(pgUrl));
} else {
  describe('postgres', () => {
    it('PostgreSQL is available for the conformance suite', () => {
      const why = 'INBOX_KIT_TEST_PG_URL is not set: the PostgreSQL conformance suite did not run. '
        + 'Start a server with `node scripts/postgres.mjs` and export the URL it prints.';
      if (process.env.CI) expect.fail(why);
      console.warn(`[storage-kysely] ${why}`);
    });
  });
}
