/**
 * The README examples compile and run: runs `scripts/check-readme-examples.mjs`, which type-checks
 * every ```ts block of the root and demo READMEs against the built packages, then runs each one as
 * written with a time limit (an SDK example against the built demo), and checks each package
 * README has its install and API sections. The package READMEs' examples run from the packed
 * tarballs installed outside the workspace: test/packaging.test.ts. Under scripts/test.mjs
 * PostgreSQL is there, so no example may be skipped.
 */
import { expect, it } from 'vitest';
import { runScript } from './run-script.js';

it('every README example type-checks, runs and ends', { timeout: 600_000 }, async () => {
  const { code, output } = await runScript('check-readme-examples.mjs');
  expect(code, output).toBe(0);
  expect(output).toMatch(/examples in \d+ READMEs type-check/);
  const counts = /(\d+) examples ran, (\d+) skipped/.exec(output);
  expect(counts, output).not.toBeNull();
  expect(Number(counts![1]) + Number(counts![2])).toBeGreaterThanOrEqual(2);
  if (process.env.INBOX_KIT_TEST_PG_URL) expect(Number(counts![2]), output).toBe(0);
});
