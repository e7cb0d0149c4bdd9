#!/usr/bin/env node
// One slow check of `npm test` as a turbo task (turbo.json `//#check:packages`, `//#check:readme`),
// so turbo caches it on its inputs and scripts/test.mjs runs it beside vitest:
//
// - `packages` runs scripts/check-packages.mjs (publint, attw, pack, install of the tarballs outside
//   the workspace, the package READMEs' examples there, smoke run, public surface);
// - `readme` runs scripts/check-readme-examples.mjs (the root and demo READMEs' examples type-check
//   and run against the built packages).
//
// It asserts what the check must print (the same assertions the vitest files packaging.test.ts and
// readme-examples.test.ts made before) and writes the verdict to test-results/checks/<name>.json:
// `{ name, status: 'passed' | 'failed', problems: string[], ran, skipped, ms }`, which turbo keeps as
// the task's output and test-summary.mjs counts (one check = one test). When PostgreSQL is there
// (INBOX_KIT_TEST_PG_URL), no example may be skipped. Exits 1 when the check failed.
//
// Usage: node scripts/check-task.mjs packages|readme
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Each check: its script, and what its output must show (problems found, examples ran/skipped). */
export const CHECKS = {
  packages: {
    script: 'check-packages.mjs',
    verify(output) {
      const problems = [];
      if (!output.includes('every published package passed')) problems.push('check-packages.mjs did not print "every published package passed"');
      const m = /README examples of the installed packages: (\d+) ran, (\d+) skipped/.exec(output);
      if (!m) return { problems: [...problems, 'no "README examples of the installed packages: N ran, N skipped" line'], ran: 0, skipped: 0 };
      const [ran, skipped] = [Number(m[1]), Number(m[2])];
      if (ran < 8) problems.push(`only ${ran} package README examples ran (at least 8 expected)`);
      return { problems, ran, skipped };
    },
  },
  readme: {
    script: 'check-readme-examples.mjs',
    verify(output) {
      const problems = [];
      if (!/examples in \d+ READMEs type-check/.test(output)) problems.push('no "N examples in N READMEs type-check" line');
      const m = /(\d+) examples ran, (\d+) skipped/.exec(output);
      if (!m) return { problems: [...problems, 'no "N examples ran, N skipped" line'], ran: 0, skipped: 0 };
      const [ran, skipped] = [Number(m[1]), Number(m[2])];
      if (ran + skipped < 2) problems.push(`only ${ran + skipped} README examples found (at least 2 expected)`);
      return { problems, ran, skipped };
    },
  },
};

/**
 * The verdict of a check from its exit code and output: failed when it exited non-zero, when its
 * output lacks what it must print, or when an example was skipped although PostgreSQL was there.
 */
export function verdict(name, code, output, env = process.env) {
  const { problems, ran, skipped } = CHECKS[name].verify(output);
  if (code !== 0) problems.unshift(`${CHECKS[name].script} exited with ${code}`);
  if (env.INBOX_KIT_TEST_PG_URL && skipped > 0) problems.push(`${skipped} examples skipped although PostgreSQL is there (INBOX_KIT_TEST_PG_URL)`);
  return { name, status: problems.length === 0 ? 'passed' : 'failed', problems, ran, skipped };
}

/** Where {@link verdict}s are written, one JSON file per check. */
export const CHECKS_DIR = join(root, 'test-results', 'checks');

async function main(name) {
  if (!CHECKS[name]) {
    console.error(`usage: node scripts/check-task.mjs ${Object.keys(CHECKS).join('|')}`);
    process.exit(2);
  }
  const started = Date.now();
  const child = spawn(process.execPath, [join(root, 'scripts', CHECKS[name].script)], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  for (const stream of [child.stdout, child.stderr]) {
    stream.on('data', (chunk) => {
      output += chunk.toString();
      process.stdout.write(chunk);
    });
  }
  const code = await new Promise((ok) => child.on('close', (c) => ok(c ?? 1)));
  const result = { ...verdict(name, code, output), ms: Date.now() - started };
  mkdirSync(CHECKS_DIR, { recursive: true });
  writeFileSync(join(CHECKS_DIR, `${name}.json`), JSON.stringify(result, null, 2) + '\n');
  console.log(`check:${name} ${result.status}${result.problems.length ? `:\n  - ${result.problems.join('\n  - ')}` : ''}`);
  process.exit(result.status === 'passed' ? 0 : 1);
}

if (import.meta.url === `file://${process.argv[1]}`) await main(process.argv[2]);
