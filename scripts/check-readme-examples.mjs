#!/usr/bin/env node
// Type-checks the examples in the package READMEs, so an example that no longer compiles fails the
// build. Every fenced block tagged ```ts in the READMEs below is one example: it is written to its
// own module in a temp folder inside the repo (.tmp/, git-ignored), where `@inbox-kit/*` resolve
// to the workspace packages' *built* types (package.json `exports` → dist, as a consumer sees
// them), `fastify` to the workspace's copy and `@anthropic-ai/sdk` to the demo's, then `tsc --noEmit` runs over all of them with the
// repo's compiler options (strict, NodeNext, top-level await allowed). Use another tag (```sh,
// ```json, ```text) for what is not TypeScript to compile.
//
// Each README must also have an install section and an API section (headings containing
// "Install" and "API"). Build first (`npm run build`; `npm test` builds).
// Usage: node scripts/check-readme-examples.mjs [--keep]. Exits non-zero, listing the problems
// as README:line, when anything fails.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const READMES = [
  'packages/core/README.md',
  'packages/storage-kysely/README.md',
  'packages/http-fastify/README.md',
  'packages/sdk/README.md',
  'apps/demo/README.md',
];
const PACKAGES = ['core', 'storage-kysely', 'http-fastify', 'sdk'];
const keep = process.argv.includes('--keep');
const problems = [];

/** The ```ts blocks of a Markdown text, with the 1-based line of their first code line. */
function tsBlocks(markdown) {
  const lines = markdown.split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^```ts\s*$/.test(lines[i])) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !/^```\s*$/.test(lines[end])) end++;
    blocks.push({ line: start + 1, code: lines.slice(start, end).join('\n') });
    i = end;
  }
  return blocks;
}

for (const name of PACKAGES) {
  if (!existsSync(join(root, 'packages', name, 'dist', 'index.d.ts'))) problems.push(`packages/${name}: dist/index.d.ts is missing; build first (npm run build)`);
}

mkdirSync(join(root, '.tmp'), { recursive: true });
const work = mkdtempSync(join(root, '.tmp', 'readme-examples-'));
try {
  // Resolution as a consumer has it: the packages by name, through their package.json exports.
  const modules = join(work, 'node_modules');
  mkdirSync(join(modules, '@inbox-kit'), { recursive: true });
  for (const name of PACKAGES) symlinkSync(join(root, 'packages', name), join(modules, '@inbox-kit', name), 'dir');
  symlinkSync(realpathSync(join(root, 'packages', 'http-fastify', 'node_modules', 'fastify')), join(modules, 'fastify'), 'dir');
  // The demo README shows the official Anthropic SDK (a dev dependency of the demo) against the demo.
  mkdirSync(join(modules, '@anthropic-ai'), { recursive: true });
  symlinkSync(realpathSync(join(root, 'apps', 'demo', 'node_modules', '@anthropic-ai', 'sdk')), join(modules, '@anthropic-ai', 'sdk'), 'dir');
  writeFileSync(join(work, 'package.json'), JSON.stringify({ name: 'readme-examples', private: true, type: 'module' }, null, 2));
  writeFileSync(join(work, 'tsconfig.json'), JSON.stringify({
    extends: relative(work, join(root, 'tsconfig.base.json')),
    compilerOptions: { noEmit: true, types: ['node'], rootDir: '.' },
    include: ['*.ts'],
  }, null, 2));

  const sources = new Map(); // example file → { readme, line }
  for (const readme of READMES) {
    const path = join(root, readme);
    if (!existsSync(path)) {
      problems.push(`${readme}: missing`);
      continue;
    }
    const text = readFileSync(path, 'utf8');
    if (!/^#{2,3} .*Install/m.test(text)) problems.push(`${readme}: no install section (a heading containing "Install")`);
    if (!/^#{2,3} .*API/m.test(text)) problems.push(`${readme}: no public API section (a heading containing "API")`);
    const blocks = tsBlocks(text);
    if (blocks.length === 0) problems.push(`${readme}: no \`\`\`ts example`);
    blocks.forEach((block, i) => {
      const file = `${readme.split('/').slice(-2, -1)[0]}-${i + 1}.ts`;
      // One prefix line, so the example's line n is the file's line n + 1.
      writeFileSync(join(work, file), `// ${readme}:${block.line}\n${block.code}\nexport {};\n`);
      sources.set(file, { readme, line: block.line });
    });
  }

  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', join(work, 'tsconfig.json'), '--pretty', 'false'], { cwd: work, encoding: 'utf8' });
  const output = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim();
  if (r.status !== 0) {
    const mapped = output.split('\n').map((line) => {
      const m = /^([\w.-]+\.ts)\((\d+),(\d+)\): (.*)$/.exec(line);
      const src = m && sources.get(m[1]);
      return src ? `${src.readme}:${src.line + Number(m[2]) - 2}:${m[3]}: ${m[4]}` : line;
    });
    problems.push(`the README examples do not type-check:\n${mapped.join('\n') || `tsc exited ${r.status}`}`);
  } else {
    console.log(`check-readme-examples: ${sources.size} examples in ${READMES.length} READMEs type-check`);
  }
} finally {
  if (keep) console.log(`check-readme-examples: kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}

if (problems.length) {
  console.error(`check-readme-examples: ${problems.length} problem(s)\n\n${problems.join('\n\n')}`);
  process.exit(1);
}
