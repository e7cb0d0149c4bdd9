/**
 * Packaging of every published package (core, storage-kysely, http-fastify, sdk): runs
 * `scripts/check-packages.mjs` — publint, @arethetypeswrong/cli (ESM-only profile), `pnpm pack`,
 * and an install of the four tarballs in a scratch folder with a smoke run (imports, and a
 * server from the tarballs answering the SDK from the tarball). Needs the npm registry.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const script = fileURLToPath(new URL('../../../scripts/check-packages.mjs', import.meta.url));

it('publint, attw, pack, install and import pass for every published package', { timeout: 600_000 }, async () => {
  // Asynchronous, so the other test files of this worker's project keep running meanwhile.
  const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('close', (exitCode) => resolve({ code: exitCode, output }));
  });
  expect(code, output).toBe(0);
  expect(output).toContain('every published package passed');
});
