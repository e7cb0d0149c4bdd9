#!/usr/bin/env node
// The whole test suite: starts a throw-away PostgreSQL server when its binaries exist (so every
// storage and HTTP test also runs on PostgreSQL), runs vitest over every package, and ends with a
// plain `N passed, N failed` line (also written to test-results/summary.txt).
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { pnpmEnv, runPnpm } from './pnpm.mjs';

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

let passed = 0;
let failed = 0;
let skipped = 0;
if (existsSync(report)) {
  const json = JSON.parse(readFileSync(report, 'utf8'));
  passed = json.numPassedTests ?? 0;
  failed = json.numFailedTests ?? 0;
  // A file that fails to load has no failing test of its own: count it once.
  for (const file of json.testResults ?? []) {
    if (file.status === 'failed' && !(file.assertionResults ?? []).some((t) => t.status === 'failed')) failed++;
  }
  skipped = (json.numPendingTests ?? 0) + (json.numTodoTests ?? 0);
} else {
  failed = 1;
}
if (status !== 0 && failed === 0) failed = 1;
const line = `${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`;
writeFileSync('test-results/summary.txt', line + '\n');
console.log(line);
process.exit(status === 0 && failed === 0 && process.exitCode !== 1 ? 0 : 1);
