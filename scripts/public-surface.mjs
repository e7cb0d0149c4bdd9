#!/usr/bin/env node
// The public surface of every published package, by name, against a committed snapshot
// (scripts/public-surface.json): for each entry point of each package's `exports` (`.`, `/http`,
// `/memory`, `/testing`, `/sqlite`, `/postgres`, `/server`, …) the names it exports at run time
// (`values`) and the names that exist only as types (`types`). A name added or removed by accident
// fails the check; a deliberate change updates the snapshot in the same commit, with a changeset.
//
// Two ways to read the surface, which must agree:
// - `dist` (default; what the packaging check runs on the built packages): `values` are the keys of
//   the imported `dist/*.js` module, `types` the other exports of its `.d.ts` (TypeScript checker);
// - `src` (no build needed; the test suite runs it on every run): the TypeScript checker on the
//   entry's source file (the file tsup builds the entry from), a type-only export counted as a type.
//
// Usage: node scripts/public-surface.mjs [--from=dist|src] [--update] [--snapshot=<file>]
//   --update writes the snapshot from what it read (review the diff, add a changeset, commit both);
//   --snapshot compares with (or writes) another file than scripts/public-surface.json.
// Exits 1 listing each entry point whose names differ from the snapshot.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const SNAPSHOT = join(root, 'scripts', 'public-surface.json');
export const PUBLISHED = ['core', 'storage-kysely', 'http-fastify', 'http-hono', 'http-fetch', 'sdk', 'model-anthropic', 'ai-sdk', 'langgraph', 'openai-agents'];
const ts = createRequire(join(root, 'package.json'))('typescript');

const byName = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

/** Every entry point of the published packages: `{ id: '@inbox-kit/core/http', dir, js, dts, src }`. */
function entryPoints() {
  const out = [];
  for (const name of PUBLISHED) {
    const dir = join(root, 'packages', name);
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    const tsup = readFileSync(join(dir, 'tsup.config.ts'), 'utf8');
    for (const [subpath, target] of Object.entries(pkg.exports)) {
      if (typeof target === 'string') continue; // ./package.json
      const key = target.import.replace(/^\.\/dist\//, '').replace(/\.js$/, '');
      // tsup's entry map: `'http/index': 'src/http/index.ts'` or `index: 'src/index.ts'`; an array entry is `src/<key>.ts`.
      const mapped = new RegExp(`['"]?${key.replace(/[/]/g, '\\/')}['"]?\\s*:\\s*['"]([^'"]+)['"]`).exec(tsup);
      out.push({
        id: subpath === '.' ? pkg.name : `${pkg.name}${subpath.slice(1)}`,
        js: join(dir, target.import),
        dts: join(dir, target.types),
        src: join(dir, mapped ? mapped[1] : `src/${key}.ts`),
      });
    }
  }
  return out;
}

function checkerOn(files) {
  const program = ts.createProgram(files, {
    module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022,
    skipLibCheck: true, noEmit: true, types: ['node'],
  });
  return { program, checker: program.getTypeChecker() };
}

function moduleExports({ program, checker }, file) {
  const source = program.getSourceFile(file);
  const symbol = source && checker.getSymbolAtLocation(source);
  if (!symbol) throw new Error(`${file}: not a module TypeScript can read`);
  return checker.getExportsOfModule(symbol);
}

/** Reads the surface of every entry point, from the built packages or from the sources. */
export async function readSurface(from = 'dist') {
  const entries = entryPoints();
  const surface = {};
  if (from === 'src') {
    const tsc = checkerOn(entries.map((e) => e.src));
    for (const e of entries) {
      const values = [];
      const types = [];
      for (const s of moduleExports(tsc, e.src)) {
        const target = s.flags & ts.SymbolFlags.Alias ? tsc.checker.getAliasedSymbol(s) : s;
        const typeOnly = (s.flags & ts.SymbolFlags.Alias && tsc.checker.getTypeOnlyAliasDeclaration(s)) || !(target.flags & ts.SymbolFlags.Value);
        (typeOnly ? types : values).push(s.name);
      }
      surface[e.id] = { values: values.sort(byName), types: types.sort(byName) };
    }
    return surface;
  }
  const missing = entries.filter((e) => !existsSync(e.js) || !existsSync(e.dts));
  if (missing.length) throw new Error(`not built: ${missing.map((e) => e.id).join(', ')} (run the build first)`);
  const tsc = checkerOn(entries.map((e) => e.dts));
  for (const e of entries) {
    const values = Object.keys(await import(pathToFileURL(e.js).href)).sort(byName);
    const runtime = new Set(values);
    const types = moduleExports(tsc, e.dts).map((s) => s.name).filter((n) => !runtime.has(n)).sort(byName);
    surface[e.id] = { values, types };
  }
  return surface;
}

/** The differences between `surface` and the snapshot, one message per entry point (empty: equal). */
export function compareSurface(surface, snapshot) {
  const problems = [];
  for (const id of [...new Set([...Object.keys(snapshot), ...Object.keys(surface)])].sort(byName)) {
    const now = surface[id];
    const was = snapshot[id];
    if (!now) { problems.push(`${id}: the entry point is in the snapshot but no longer in package.json "exports"`); continue; }
    if (!was) { problems.push(`${id}: a new entry point, not in the snapshot`); continue; }
    const lines = [];
    for (const kind of ['values', 'types']) {
      const before = new Set(was[kind]);
      const after = new Set(now[kind]);
      const added = now[kind].filter((n) => !before.has(n));
      const removed = was[kind].filter((n) => !after.has(n));
      if (added.length) lines.push(`  added ${kind}: ${added.join(', ')}`);
      if (removed.length) lines.push(`  removed ${kind}: ${removed.join(', ')}`);
    }
    if (lines.length) problems.push(`${id}: the exported names differ from the snapshot\n${lines.join('\n')}`);
  }
  if (problems.length) {
    problems.push(
      'A public name is a promise to users. If the change is deliberate, run `node scripts/public-surface.mjs --update` ' +
      '(after the build), add a changeset for each package whose surface changed, and commit scripts/public-surface.json ' +
      'with them; otherwise stop exporting the name (keep internal helpers out of the entry points).',
    );
  }
  return problems;
}

/** Reads the surface and compares it with the snapshot; returns the problems (empty: equal). */
export async function checkSurface(from = 'dist', snapshot = SNAPSHOT) {
  if (!existsSync(snapshot)) return [`${snapshot} is missing: run \`node scripts/public-surface.mjs --update\` and commit it`];
  return compareSurface(await readSurface(from), JSON.parse(readFileSync(snapshot, 'utf8')));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const option = (name) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const from = option('from') ?? 'dist';
  const snapshot = option('snapshot') ? resolve(option('snapshot')) : SNAPSHOT;
  if (from !== 'dist' && from !== 'src') throw new Error(`--from must be dist or src, not ${from}`);
  if (process.argv.includes('--update')) {
    const surface = await readSurface(from);
    writeFileSync(snapshot, JSON.stringify(surface, null, 2) + '\n');
    const count = Object.values(surface).reduce((n, e) => n + e.values.length + e.types.length, 0);
    console.log(`public-surface: wrote ${snapshot} (${Object.keys(surface).length} entry points, ${count} names)`);
  } else {
    const problems = await checkSurface(from, snapshot);
    if (problems.length) {
      console.error(`public-surface (${from}): ${problems.join('\n\n')}`);
      process.exit(1);
    }
    console.log(`public-surface (${from}): every entry point exports exactly the names of the snapshot`);
  }
}
