/**
 * Packaging of every published package (core, storage-kysely, http-fastify, http-hono, sdk, model-anthropic): runs
 * `scripts/check-packages.mjs` — publint, @arethetypeswrong/cli (ESM-only profile), `pnpm pack`,
 * and an install of the tarballs in a scratch folder with a smoke run (imports, and a
 * server from the tarballs answering the SDK from the tarball). Needs the npm registry.
 */
import { expect, it } from 'vitest';
import { runScript } from './run-script.js';

it('publint, attw, pack, install and import pass for every published package', { timeout: 600_000 }, async () => {
  const { code, output } = await runScript('check-packages.mjs');
  expect(code, output).toBe(0);
  expect(output).toContain('every published package passed');
});
