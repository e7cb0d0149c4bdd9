/**
 * Issue 29's "Done when": each HTTP adapter's root entry (http-hono, http-fastify without its
 * `/server` preset and `/docs` reference, http-fetch) is at most 250 lines — every line of every file
 * `src/index.ts` imports, followed through relative imports and re-exports, type-only ones included
 * (scripts/source-limits.mjs). The follower's rules are checked on a small package first.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error a plain .mjs script without types
import { adapterSizes, ADAPTERS, entryFiles, formatAdapterSize, MAX_ADAPTER_LINES } from '../source-limits.mjs';

type Size = { adapter: string; lines: number; files: { path: string; lines: number }[] };

const scratch = mkdtempSync(join(tmpdir(), 'inbox-kit-adapter-size-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A package `packages/<name>` in the scratch repository with these `src` files. */
function writePackage(name: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    const full = join(scratch, 'packages', name, 'src', path);
    mkdirSync(join(full, '..'), { recursive: true });
    writeFileSync(full, text);
  }
}

describe('the root-entry follower', () => {
  writePackage('demo', {
    'index.ts': "export { a } from './a.js';\nexport type { B } from './types/index.js';\nimport type { C } from './c.js';\n",
    'a.ts': "import pkg from '../package.json' with { type: 'json' };\nimport { z } from 'zod';\nexport const a = () => import('./lazy.js');\n",
    'types/index.ts': "export type B = import('../d.js').D;\n",
    'c.ts': "import './a.js';\nexport type C = 1;\n",
    'd.ts': 'export type D = 1;\n\n',
    'lazy.ts': 'export const lazy = 1;\n',
    'unused.ts': 'export const never = 1;\n'.repeat(500),
  });

  it('follows relative imports, re-exports, type-only imports, import types and dynamic imports, once each; not packages, JSON or unused files', () => {
    const files = (entryFiles(join(scratch, 'packages', 'demo', 'src', 'index.ts')) as string[]).map((f) => f.slice(join(scratch, 'packages', 'demo', 'src').length + 1));
    expect(files).toEqual(['index.ts', 'a.ts', 'lazy.ts', 'types/index.ts', 'd.ts', 'c.ts']);
  });

  it('counts every line of those files, comments and blank lines included, and says when the sum is over the limit', () => {
    const [size] = adapterSizes(scratch, ['demo']) as Size[];
    expect(size!.files.map((f) => f.lines)).toEqual([3, 3, 1, 1, 2, 2]);
    expect(size!.lines).toBe(12);
    expect(formatAdapterSize(size)).toBe(`demo root entry: 12 lines (limit ${MAX_ADAPTER_LINES}) — src/index.ts 3, src/a.ts 3, src/lazy.ts 1, src/types/index.ts 1, src/d.ts 2, src/c.ts 2`);
    expect(formatAdapterSize({ ...size, lines: MAX_ADAPTER_LINES + 1 })).toContain(`${MAX_ADAPTER_LINES + 1} lines (limit ${MAX_ADAPTER_LINES}) OVER`);
  });
});

describe('the HTTP adapters', () => {
  it(`each root entry is at most ${MAX_ADAPTER_LINES} lines`, () => {
    const sizes = adapterSizes() as Size[];
    expect(sizes.map((s) => s.adapter)).toEqual(ADAPTERS);
    const over = sizes.filter((s) => s.lines > MAX_ADAPTER_LINES).map(formatAdapterSize);
    expect(over, over.join('\n')).toEqual([]);
  });

  it("http-fastify's root entry pulls in none of the preset's or the reference page's files", () => {
    const fastify = (adapterSizes() as Size[]).find((s) => s.adapter === 'http-fastify')!;
    const paths = fastify.files.map((f) => f.path.replace('packages/http-fastify/', ''));
    for (const preset of ['src/server.ts', 'src/protection.ts', 'src/server-errors.ts', 'src/entry-server.ts', 'src/docs.ts']) expect(paths).not.toContain(preset);
    expect(paths).toEqual(expect.arrayContaining(['src/index.ts', 'src/plugin.ts']));
  });
});
