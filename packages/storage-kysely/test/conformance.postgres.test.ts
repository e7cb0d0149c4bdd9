// The storage conformance kit against PostgreSQL: a fresh database per check on the server named
// by INBOX_KIT_TEST_PG_URL (e.g. from `node scripts/postgres.mjs`), pools of 10 connections.
// Without that variable the suite is not silently skipped: one test says so, and fails in CI.
import { runStoreConformance } from '@inbox-kit/core/testing';
import { PG_URL, postgresSubject, postgresUnavailable } from './helpers.js';

const pgUrl = PG_URL;
if (pgUrl) {
  runStoreConformance('postgres store', () => postgresSubject(pgUrl));
} else {
  postgresUnavailable('PostgreSQL conformance');
}
