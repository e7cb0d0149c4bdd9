/**
 * The lines scripts/test.mjs prints about PostgreSQL, Python (the `anthropic` contract test) and
 * Chromium (the browser tests): each says what was found, where, and what the tests then do.
 */
import { expect, it } from 'vitest';
// @ts-expect-error a plain .mjs script without types
import { chromiumLine, postgresLine, postgresVersion, probeChromium, pythonLine } from '../test-environment.mjs';

it('PostgreSQL: started with its version and directory, given by URL, not found, or failed to start', () => {
  const bin = '/usr/lib/postgresql/15/bin';
  expect(postgresLine({ state: 'started', bin, url: 'postgres://postgres@127.0.0.1:5555/inbox_kit_test', version: '15.18' }))
    .toBe('test: PostgreSQL 15.18 found in /usr/lib/postgresql/15/bin and started (postgres://postgres@127.0.0.1:5555/inbox_kit_test); the PostgreSQL tests run on it');
  expect(postgresLine({ state: 'given', url: 'postgres://u:secret@db:5432/x' })).toBe('test: PostgreSQL: INBOX_KIT_TEST_PG_URL is set (postgres://u:***@db:5432/x); the PostgreSQL tests run on it');
  expect(postgresLine({ state: 'missing', bin: '/nowhere' }))
    .toBe('test: PostgreSQL not found (no initdb in /nowhere; INBOX_KIT_PG_BIN names another directory); the PostgreSQL tests skip, each saying why');
  expect(postgresLine({ state: 'failed', bin, error: 'initdb exited 1' })).toContain('did not start (initdb exited 1); the PostgreSQL tests skip');
  expect(postgresVersion('/nowhere')).toBeNull();
});

it('Python and Chromium: found or not, and what their tests then do', () => {
  expect(pythonLine(null)).toBe('test: Python 3.9+ with venv not found; the Anthropic Python SDK contract test skips, saying why');
  expect(pythonLine({ python: 'python3', version: '3.12.1', anthropic: ['1.13.0'], cache: '/r/node_modules/.cache/inbox-kit-python' }))
    .toBe('test: Python 3.12.1 (python3) found; the Anthropic Python SDK contract test runs (anthropic 1.13.0 already installed in /r/node_modules/.cache/inbox-kit-python)');
  expect(pythonLine({ python: 'python3', version: '3.12.1', anthropic: [], cache: '/c' })).toContain('on its first run it installs anthropic into /c with pip');
  expect(probeChromium({ INBOX_KIT_CHROMIUM: '/nowhere/chromium' })).toEqual({ path: '/nowhere/chromium', found: false });
  expect(chromiumLine({ path: '/nowhere/chromium', found: false }, false))
    .toBe('test: Chromium not found at /nowhere/chromium (INBOX_KIT_CHROMIUM names another binary); the browser tests skip, saying why');
  expect(chromiumLine({ path: '/nowhere/chromium', found: false }, true)).toContain('the browser tests fail (CI)');
  expect(chromiumLine({ path: '/usr/bin/chromium', found: true })).toBe('test: Chromium found at /usr/bin/chromium; the browser tests run');
});
