/**
 * Every HTTP suite runs on each available engine (`describe.each(engines)`). SQLite is always
 * there; PostgreSQL needs `INBOX_KIT_TEST_PG_URL` (scripts/test.mjs starts a throw-away server).
 * In CI a missing PostgreSQL is a failure, locally a warning.
 */
import { describe, expect, it } from 'vitest';
import { PG_ADMIN_URL, engines } from './harness.js';

describe('test engines', () => {
  it('runs on SQLite, and on PostgreSQL when INBOX_KIT_TEST_PG_URL is set (required in CI)', () => {
    expect(engines).toContain('sqlite');
    if (PG_ADMIN_URL) {
      expect(engines).toEqual(['sqlite', 'postgres']);
      return;
    }
    if (process.env.CI) {
      expect.fail('INBOX_KIT_TEST_PG_URL is not set: the PostgreSQL suites did not run (CI requires them)');
    }
    console.warn('http-fastify: INBOX_KIT_TEST_PG_URL is not set; the HTTP suites ran on SQLite only');
    expect(engines).toEqual(['sqlite']);
  });
});
