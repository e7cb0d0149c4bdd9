/**
 * DATABASE_PREPARED_STATEMENTS (README "Demo configuration"): true by default, "false"/"0" turn
 * PostgreSQL's named prepared statements off (transaction-mode poolers); anything else is refused.
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
