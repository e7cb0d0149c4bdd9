/**
 * Packaging of every published package (core, storage-kysely, http-fastify, http-hono, sdk, model-anthropic): runs
 * `scripts/check-packages.mjs` — publint, @arethetypeswrong/cli (ESM-only profile), `pnpm pack`,
 * and an install of the tarballs with npm in an empty folder outside the workspace, where every
 * package README's examples type-check and run (no workspace package, no vitest on the path), then
 * a smoke run (imports, and a server from the tarballs answering the SDK from the tarball). Needs
 * the npm registry. Under scripts/test.mjs PostgreSQL is there, so no README example may be skipped.
 */
import { expect, it } from 'vitest';
import { runScript } from './run-script.js';

it('publint, attw, pack, install and import pass for every published package', { timeout: 600_000 }, async () => {
  const { code, output } = await runScript('check-packages.mjs');
  expect(code, output).toBe(0);
  expect(output).toContain('every published package passed');
  const examples = /README examples of the installed packages: (\d+) ran, (\d+) skipped/.exec(output);
  expect(examples, output).not.toBeNull();
  expect(Number(examples![1])).toBeGreaterThanOrEqual(8);
  if (process.env.INBOX_KIT_TEST_PG_URL) expect(Number(examples![2]), output).toBe(0);
});
