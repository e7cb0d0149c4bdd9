/**
 * The closing line of scripts/test.mjs (`N passed, N failed, N skipped`), from a real vitest JSON
 * report over a fixture with one test of each outcome: a test that skipped itself through its
 * context (what the browser tests do without Chromium) counts as skipped, not passed.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
// @ts-expect-error a plain .mjs script without types
import { addChecks, summarize, summaryLine } from '../test-summary.mjs';
// @ts-expect-error a plain .mjs script without types
import { verdict } from '../check-task.mjs';

const fixture = fileURLToPath(new URL('./fixtures/counting', import.meta.url));
const vitest = fileURLToPath(new URL('../../node_modules/vitest/vitest.mjs', import.meta.url));

it('counts passed, failed and skipped tests, a context skip as skipped', { timeout: 60_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-summary-'));
  try {
    const report = join(dir, 'vitest.json');
    const r = spawnSync(process.execPath, [vitest, 'run', '--root', fixture, '--config', join(fixture, 'vitest.config.mjs'), '--reporter=json', `--outputFile=${report}`], { cwd: fixture, encoding: 'utf8' });
    expect(r.status, `${r.stdout}${r.stderr}`).toBe(1); // one test fails
    const counts = summarize(JSON.parse(readFileSync(report, 'utf8')), r.status);
    expect(counts).toEqual({ passed: 1, failed: 1, skipped: 3 });
    expect(summaryLine(counts)).toBe('1 passed, 1 failed, 3 skipped');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it('always prints the skipped count, and a run without a report or with a failing status fails', () => {
  expect(summaryLine({ passed: 3, failed: 0, skipped: 0 })).toBe('3 passed, 0 failed, 0 skipped');
  expect(summarize(null, 1)).toEqual({ passed: 0, failed: 1, skipped: 0 });
  expect(summarize({ numPassedTests: 2, numFailedTests: 0, testResults: [] }, 1)).toEqual({ passed: 2, failed: 1, skipped: 0 });
  // A file that failed to load (no test of its own failed) counts once.
  expect(summarize({ numPassedTests: 2, numFailedTests: 0, testResults: [{ status: 'failed', assertionResults: [] }] }, 1))
    .toEqual({ passed: 2, failed: 1, skipped: 0 });
});

it('counts each turbo check as one test: passed, failed, asked for without a verdict (failed), left out by a filter (skipped)', () => {
  const base = { passed: 5, failed: 0, skipped: 1 };
  const passed = { status: 'passed' };
  const failed = { status: 'failed' };
  expect(addChecks(base, { packages: passed, readme: passed }, ['packages', 'readme'])).toEqual({ passed: 7, failed: 0, skipped: 1 });
  expect(addChecks(base, { packages: failed, readme: passed }, ['packages', 'readme'])).toEqual({ passed: 6, failed: 1, skipped: 1 });
  expect(addChecks(base, { packages: null, readme: passed }, ['packages', 'readme'])).toEqual({ passed: 6, failed: 1, skipped: 1 });
  expect(addChecks(base, { packages: null, readme: null }, [])).toEqual({ passed: 5, failed: 0, skipped: 3 });
  expect(addChecks(base, { packages: null, readme: passed }, ['readme'])).toEqual({ passed: 6, failed: 0, skipped: 2 });
});

it('a check fails when its script fails, when its output lacks its closing lines, or when an example was skipped with PostgreSQL there', () => {
  const readmeOk = '3 examples in 2 READMEs type-check\n3 examples ran, 0 skipped\n';
  expect(verdict('readme', 0, readmeOk, {})).toMatchObject({ status: 'passed', ran: 3, skipped: 0 });
  expect(verdict('readme', 1, readmeOk, {})).toMatchObject({ status: 'failed' });
  expect(verdict('readme', 0, '3 examples ran, 0 skipped\n', {})).toMatchObject({ status: 'failed' });
  const readmeSkipped = '3 examples in 2 READMEs type-check\n2 examples ran, 1 skipped\n';
  expect(verdict('readme', 0, readmeSkipped, {})).toMatchObject({ status: 'passed', skipped: 1 });
  expect(verdict('readme', 0, readmeSkipped, { INBOX_KIT_TEST_PG_URL: 'postgres://x' })).toMatchObject({ status: 'failed' });
  const packagesOk = 'README examples of the installed packages: 9 ran, 0 skipped\nevery published package passed\n';
  expect(verdict('packages', 0, packagesOk, {})).toMatchObject({ status: 'passed', ran: 9 });
  expect(verdict('packages', 0, packagesOk.replace('every published package passed', ''), {})).toMatchObject({ status: 'failed' });
  expect(verdict('packages', 0, packagesOk.replace('9 ran', '3 ran'), {})).toMatchObject({ status: 'failed' });
});
