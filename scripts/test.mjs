#!/usr/bin/env node
// The whole test suite: starts a throw-away PostgreSQL server when its binaries exist (so every
// storage and HTTP test also runs on PostgreSQL), runs vitest over every package, and ends with a
// plain `N passed, N failed, N skipped` line (also written to test-results/summary.txt). A test that
// did not run (skipped through its context, e.g. a browser test without Chromium or a PostgreSQL
// suite without a server, `it.skip`, `it.todo`) counts as skipped, never as passed.
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { pnpmEnv, runPnpm } from './pnpm.mjs';
import { summarize, summaryLine } from './test-summary.mjs';

mkdirSync('test-results', { recursive: true });
let pg = null;
const env = pnpmEnv();
if (!env.INBOX_KIT_TEST_PG_URL) {
  try {
    const { startPostgres } = await import('./postgres.mjs');
    pg = await startPostgres();
    if (pg) env.INBOX_KIT_TEST_PG_URL = pg.url;
    else console.warn('test: PostgreSQL binaries not found; PostgreSQL suites will report that they did not run');
  } catch (error) {
    console.error('test: could not start PostgreSQL:', error);
    if (process.env.CI) process.exitCode = 1;
  }
}

const report = 'test-results/vitest.json';
const args = ['exec', 'vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...process.argv.slice(2)];
const status = runPnpm(args, {}, env);

if (pg) await pg.stop().catch((e) => console.error('test: stopping PostgreSQL failed:', e));

const { passed, failed, skipped } = summarize(existsSync(report) ? JSON.parse(readFileSync(report, 'utf8')) : null, status);
const line = summaryLine({ passed, failed, skipped });
writeFileSync('test-results/summary.txt', line + '\n');
console.log(line);
process.exit(status === 0 && failed === 0 && process.exitCode !== 1 ? 0 : 1);
