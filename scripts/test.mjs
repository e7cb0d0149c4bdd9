#!/usr/bin/env node
// The whole test suite: starts a throw-away PostgreSQL server when its binaries exist (so every
// storage and HTTP test also runs on PostgreSQL), then runs, at the same time:
//
// - vitest over every package (vitest.config.ts: group 0 is every project on cores + 1 workers,
//   group 1 the demo's heavy files — floods, many processes, lock and crash timing — one at a time
//   after it; INBOX_KIT_TEST_WORKERS sets the worker count);
// - the two slow checks as turbo tasks (turbo.json; turbo caches them on their inputs):
//   `check:packages` (publint, attw, pack, the tarballs installed outside the workspace, the package
//   READMEs' examples there) and `check:readme` (the root and demo READMEs' examples) — see
//   scripts/check-task.mjs. They run on the packages `npm test` has just built.
//
// First it prints what it found for the tests that need more than Node — PostgreSQL (found and
// started, with its version and directory, or not found), Python 3 for the `anthropic` contract test,
// Chromium for the browser tests (scripts/test-environment.mjs) — one line each, repeated before the
// closing lines; the tests whose tool is missing skip and say why.
//
// It ends with a plain `N passed, N failed, N skipped` line (also written to
// test-results/summary.txt): each check counts as one test. A test that did not run (skipped through
// its context, e.g. a browser test without Chromium or a PostgreSQL suite without a server,
// `it.skip`, `it.todo`) counts as skipped, never as passed; so does a check a filtered run leaves out.
//
// Usage: node scripts/test.mjs [vitest args…] [check:packages] [check:readme]
//   no arguments: everything; with arguments: vitest with those arguments (when any are not
//   checks) and only the checks named.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { CHECKS, CHECKS_DIR } from './check-task.mjs';
import { pnpmCommand, pnpmEnv } from './pnpm.mjs';
import { chromiumLine, postgresLine, postgresVersion, probeChromium, probePython, pythonLine } from './test-environment.mjs';
import { addChecks, summarize, summaryLine } from './test-summary.mjs';

mkdirSync('test-results', { recursive: true });
let pg = null;
const env = pnpmEnv();
const { BIN: pgBin, startPostgres } = await import('./postgres.mjs');
let pgFound;
if (env.INBOX_KIT_TEST_PG_URL) {
  pgFound = { state: 'given', url: env.INBOX_KIT_TEST_PG_URL };
} else {
  try {
    pg = await startPostgres();
    if (pg) env.INBOX_KIT_TEST_PG_URL = pg.url;
    pgFound = pg ? { state: 'started', bin: pgBin, url: pg.url, version: postgresVersion(pgBin) } : { state: 'missing', bin: pgBin };
  } catch (error) {
    console.error('test: could not start PostgreSQL:', error);
    pgFound = { state: 'failed', bin: pgBin, error: String(error?.message ?? error).split('\n')[0] };
    if (process.env.CI) process.exitCode = 1;
  }
}
// Hashed by turbo (the URL itself changes every run): a check's cached verdict is one made with
// PostgreSQL there, or one made without.
env.INBOX_KIT_TEST_PG = env.INBOX_KIT_TEST_PG_URL ? '1' : '';

const args = process.argv.slice(2);
const checkNames = Object.keys(CHECKS);
const selected = args.length === 0 ? checkNames : checkNames.filter((name) => args.includes(`check:${name}`));
const vitestArgs = args.filter((a) => !/^check:/.test(a));
const runVitest = args.length === 0 || vitestArgs.length > 0;
/** What this machine has for the tests that need more than Node (the Python and Chromium lines only when vitest runs). */
const environment = [postgresLine(pgFound), ...(runVitest ? [pythonLine(probePython()), chromiumLine(probeChromium(env))] : [])];
for (const line of environment) console.log(line);

/** Runs pnpm with inherited stdio; resolves with its exit code. */
function pnpm(argv) {
  const [cmd, prefix] = pnpmCommand();
  return new Promise((resolve) => {
    const child = spawn(cmd, [...prefix, ...argv], { stdio: 'inherit', env });
    child.on('error', () => resolve(1));
    child.on('close', (code) => resolve(code ?? 1));
  });
}

rmSync(CHECKS_DIR, { recursive: true, force: true });
const report = 'test-results/vitest.json';
rmSync(report, { force: true });
const started = Date.now();
const [vitestStatus, checksStatus] = await Promise.all([
  runVitest ? pnpm(['exec', 'vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...vitestArgs]) : 0,
  // `--only`: the packages were built just before (npm test = setup, which builds, then this), and
  // turbo must not restore build outputs under the feet of the running tests.
  selected.length > 0 ? pnpm(['exec', 'turbo', 'run', ...selected.map((n) => `check:${n}`), '--only', '--concurrency=1']) : 0,
]);

if (pg) await pg.stop().catch((e) => console.error('test: stopping PostgreSQL failed:', e));

const verdicts = Object.fromEntries(checkNames.map((name) => {
  const file = `${CHECKS_DIR}/${name}.json`;
  return [name, existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : null];
}));
for (const [name, v] of Object.entries(verdicts)) {
  if (!selected.includes(name)) console.log(`test: check:${name} not run (skipped)`);
  else if (!v) console.log(`test: check:${name} left no verdict (turbo exited with ${checksStatus}): counted as failed`);
  else console.log(`test: check:${name} ${v.status}${v.problems.length ? ` — ${v.problems.join('; ')}` : ''}`);
}
const vitestCounts = runVitest
  ? summarize(existsSync(report) ? JSON.parse(readFileSync(report, 'utf8')) : null, vitestStatus)
  : { passed: 0, failed: 0, skipped: 0 };
const counts = addChecks(vitestCounts, verdicts, selected);
const line = summaryLine(counts);
writeFileSync('test-results/summary.txt', line + '\n');
for (const found of environment) console.log(found);
console.log(`test: ${Math.round((Date.now() - started) / 1000)} s`);
console.log(line);
process.exit(vitestStatus === 0 && checksStatus === 0 && counts.failed === 0 && process.exitCode !== 1 ? 0 : 1);
