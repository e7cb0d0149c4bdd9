/**
 * DATABASE_PREPARED_STATEMENTS (README "Demo configuration"): true by default, "false"/"0" turn
 * PostgreSQL's named prepared statements off (transaction-mode poolers); anything else is refused.
 * And the settings of several processes: DATABASE_LISTEN_URL, the listener's checks, the lease and
 * takeover check, SQLITE_BUSY_TIMEOUT_MS, and the clock-skew test hook.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

describe('DATABASE_PREPARED_STATEMENTS', () => {
  it('defaults to true, takes true/false/1/0 in any case, refuses anything else', () => {
    expect(loadConfig({}).preparedStatements).toBe(true);
    expect(loadConfig({ DATABASE_PREPARED_STATEMENTS: '' }).preparedStatements).toBe(true);
    for (const off of ['false', 'FALSE', '0']) expect(loadConfig({ DATABASE_PREPARED_STATEMENTS: off }).preparedStatements).toBe(false);
    for (const on of ['true', 'True', '1']) expect(loadConfig({ DATABASE_PREPARED_STATEMENTS: on }).preparedStatements).toBe(true);
    expect(() => loadConfig({ DATABASE_PREPARED_STATEMENTS: 'off' })).toThrow(ConfigError);
    expect(() => loadConfig({ DATABASE_PREPARED_STATEMENTS: 'off' })).toThrow(/DATABASE_PREPARED_STATEMENTS must be true, false, 1 or 0, got "off"/);
  });
});

describe('many-processes settings (platform.md "Many processes")', () => {
  const pg = 'postgres://u@db:5432/inbox';
  it('DATABASE_LISTEN_URL: a postgres URL, only with DATABASE_URL; unset means DATABASE_URL', () => {
    expect(loadConfig({ DATABASE_URL: pg }).databaseListenUrl).toBeUndefined();
    expect(loadConfig({ DATABASE_URL: pg, DATABASE_LISTEN_URL: 'postgresql://u@direct:5432/inbox' }).databaseListenUrl).toBe('postgresql://u@direct:5432/inbox');
    expect(() => loadConfig({ DATABASE_URL: pg, DATABASE_LISTEN_URL: 'mysql://x' })).toThrow(/DATABASE_LISTEN_URL must be a postgres/);
    expect(() => loadConfig({ DATABASE_LISTEN_URL: pg })).toThrow(/DATABASE_LISTEN_URL needs DATABASE_URL/);
  });

  it('listener checks, lease, takeover and the SQLite busy timeout have their defaults and take integers', () => {
    expect(loadConfig({})).toMatchObject({
      listenCheck: { intervalMs: 5_000, timeoutMs: 3_000 }, lease: { leaseMs: 15_000, takeoverCheckMs: 5_000 }, sqliteBusyTimeoutMs: 5_000, clockOffsetMs: 0,
    });
    expect(loadConfig({ INBOX_KIT_LEASE_MS: '3000' }).lease).toEqual({ leaseMs: 3_000, takeoverCheckMs: 1_000 });
    expect(loadConfig({ INBOX_KIT_LEASE_MS: '3000', INBOX_KIT_TAKEOVER_CHECK_MS: '0', DATABASE_LISTEN_CHECK_MS: '0', SQLITE_BUSY_TIMEOUT_MS: '250' }))
      .toMatchObject({ lease: { takeoverCheckMs: 0 }, listenCheck: { intervalMs: 0 }, sqliteBusyTimeoutMs: 250 });
    for (const [name, value] of [['INBOX_KIT_LEASE_MS', '50'], ['DATABASE_LISTEN_CHECK_TIMEOUT_MS', '0'], ['SQLITE_BUSY_TIMEOUT_MS', '-1'], ['DATABASE_LISTEN_CHECK_MS', '1.5']]) {
      expect(() => loadConfig({ [name!]: value }), `${name}=${value}`).toThrow(ConfigError);
    }
  });

  it('INBOX_KIT_TEST_CLOCK_OFFSET_MS is a test hook: honoured only with NODE_ENV=test, refused otherwise', () => {
    expect(loadConfig({ INBOX_KIT_TEST_CLOCK_OFFSET_MS: '20000', NODE_ENV: 'test' }).clockOffsetMs).toBe(20_000);
    expect(loadConfig({ INBOX_KIT_TEST_CLOCK_OFFSET_MS: '-20000', NODE_ENV: 'test' }).clockOffsetMs).toBe(-20_000);
    expect(() => loadConfig({ INBOX_KIT_TEST_CLOCK_OFFSET_MS: '20000', NODE_ENV: 'production' })).toThrow(/test hook.*NODE_ENV=test/);
    expect(() => loadConfig({ INBOX_KIT_TEST_CLOCK_OFFSET_MS: '20000' })).toThrow(ConfigError);
    expect(() => loadConfig({ INBOX_KIT_TEST_CLOCK_OFFSET_MS: 'soon', NODE_ENV: 'test' })).toThrow(/integer number of ms/);
  });
});
