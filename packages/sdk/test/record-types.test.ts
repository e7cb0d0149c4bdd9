/**
 * Runs the type-level contract of `record-types.ts` (the SDK's record types against the core
 * schemas' output types) through `tsc`, so `npm test` fails when they drift; and shows the check
 * bites: an SDK record missing one optional field of the contract does not compile.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));
const sdk = join(here, '..');
const tsc = join(sdk, '..', '..', 'node_modules', 'typescript', 'bin', 'tsc');
const work = mkdtempSync(join(tmpdir(), 'inbox-kit-sdk-types-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Type-checks `files` with the SDK's compiler options; returns tsc's exit status and output. */
function typecheck(name: string, files: string[]): { status: number | null; output: string } {
  const config = join(work, `${name}.tsconfig.json`);
  writeFileSync(config, JSON.stringify({ extends: join(sdk, 'tsconfig.json'), compilerOptions: { noEmit: true, rootDir: '/', types: [] }, files, include: [] }));
  const run = spawnSync(process.execPath, [tsc, '-p', config], { encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('SDK record types', () => {
  it('match the core schemas for every record and page the SDK returns (tsc)', () => {
    const { status, output } = typecheck('contract', [join(here, 'record-types.ts')]);
    expect(output).toBe('');
    expect(status).toBe(0);
  }, 120_000);

  it('a record missing one optional field of the contract fails the check', () => {
    const control = join(work, 'control.ts');
    writeFileSync(control, [
      `import type { SessionEvent } from ${JSON.stringify(join(sdk, 'src', 'index.js'))};`,
      `import { sdkMatches, type ContractSessionEvent, type Same } from ${JSON.stringify(join(here, 'record-types.js'))};`,
      `sdkMatches<Same<SessionEvent, ContractSessionEvent>>();`,
      `sdkMatches<Same<Omit<SessionEvent, 'error'>, ContractSessionEvent>>();`,
      '',
    ].join('\n'));
    const { status, output } = typecheck('control', [control]);
    expect(status).not.toBe(0);
    expect(output).toMatch(/control\.ts\(4,\d+\): error TS2344/);
  }, 120_000);
});
