/**
 * The README examples compile: runs `scripts/check-readme-examples.mjs`, which type-checks every
 * ```ts block of the package READMEs against the built packages (so a broken example fails the
 * suite) and checks each README has its install and API sections.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const script = fileURLToPath(new URL('../../../scripts/check-readme-examples.mjs', import.meta.url));

it('every README example type-checks against the built packages', { timeout: 180_000 }, () => {
  const r = spawnSync(process.execPath, [script], { encoding: 'utf8' });
  expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
  expect(r.stdout).toMatch(/examples in \d+ READMEs type-check/);
});
