#!/usr/bin/env node
// The size limits of the packages' sources (issue 29): no `.ts` file under `packages/*/src` over
// 450 lines, no function there over 150 lines — declarations, expressions, arrows, methods,
// accessors and constructors, callbacks included (a `describe('…', () => { … })` body is a
// function). Files are parsed with the TypeScript compiler API; a function's lines run from the
// line of its first token (its doc comment not counted) to the line of its last, both included.
//
// And each HTTP adapter's root entry (ADAPTERS: `@inbox-kit/http-hono`, `@inbox-kit/http-fastify`
// without its `/server` preset and `/docs` reference, `@inbox-kit/http-fetch`) at most 250 lines:
// every line, comments and blank lines included, of every file `src/index.ts` imports, followed
// through relative imports and re-exports (type-only ones too), as a newcomer counts with `wc -l`.
//
// Usage: node scripts/source-limits.mjs — prints each file and function over its limit (those in a
// temporarily exempt area flagged as such) and each adapter's root-entry size, and exits 1 when any
// outside the exempt areas is found or an adapter is over its limit.
// scripts/test/source-limits.test.ts and scripts/test/adapter-size.test.ts run the same checks inside
// the `scripts` vitest project.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const ts = createRequire(join(root, 'package.json'))('typescript');

/** Most lines a source file may have. */
export const MAX_FILE_LINES = 450;
/** Most lines a function (of any kind) may span. */
export const MAX_FUNCTION_LINES = 150;

/**
 * Areas temporarily exempt from the limits, each with its owner: violations inside them are
 * reported but do not fail the check. Empty since issue 29 made the HTTP kit's suites data; an
 * entry is `{ owner, area, test(path) }`, `test` getting a path relative to the repository root,
 * `/`-separated.
 */
export const TEMPORARY_EXEMPTIONS = [];

const FUNCTION_KINDS = new Set([
  ts.SyntaxKind.FunctionDeclaration,
  ts.SyntaxKind.FunctionExpression,
  ts.SyntaxKind.ArrowFunction,
  ts.SyntaxKind.MethodDeclaration,
  ts.SyntaxKind.GetAccessor,
  ts.SyntaxKind.SetAccessor,
  ts.SyntaxKind.Constructor,
]);

/** Number of lines of a text, as an editor shows them (a final newline does not open a line). */
export function lineCount(text) {
  if (text === '') return 0;
  const lines = text.split('\n').length;
  return text.endsWith('\n') ? lines - 1 : lines;
}

/** A readable name for a function node: its own name, the variable or property it is assigned to, or the call it is passed to. */
function describeFunction(node, sf) {
  const text = (n) => n.getText(sf);
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const kind = ts.isGetAccessor(node) ? 'get ' : ts.isSetAccessor(node) ? 'set ' : '';
  if (node.name) return `${kind}${text(node.name)}`;
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) return text(parent.name);
  if (ts.isCallExpression(parent)) {
    const first = parent.arguments[0];
    const title = first && ts.isStringLiteralLike(first) ? ` '${first.text}'` : '';
    return `callback of ${text(parent.expression)}${title}`;
  }
  return `anonymous ${ts.SyntaxKind[node.kind]}`;
}

/**
 * The limits' violations in one source text: `{ kind: 'file', lines }` when the file is over
 * {@link MAX_FILE_LINES}, and `{ kind: 'function', name, line, lines }` (1-based start line) for
 * each function with a body over {@link MAX_FUNCTION_LINES}, nested ones included.
 */
export function scanSource(text, fileName = 'source.ts', limits = { file: MAX_FILE_LINES, fn: MAX_FUNCTION_LINES }) {
  const out = [];
  const fileLines = lineCount(text);
  if (fileLines > limits.file) out.push({ kind: 'file', lines: fileLines });
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, fileName.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const visit = (node) => {
    if (FUNCTION_KINDS.has(node.kind) && node.body) {
      const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const end = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = end - start + 1;
      if (lines > limits.fn) out.push({ kind: 'function', name: describeFunction(node, sf), line: start + 1, lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** Every `.ts`/`.tsx` file under `packages/<name>/src`, as paths relative to the repository root, `/`-separated. */
export function sourceFiles(base = root) {
  const out = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules') walk(full);
      } else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) {
        out.push(relative(base, full).split(sep).join('/'));
      }
    }
  };
  const packages = join(base, 'packages');
  for (const pkg of readdirSync(packages, { withFileTypes: true })) {
    if (!pkg.isDirectory()) continue;
    try {
      walk(join(packages, pkg.name, 'src'));
    } catch (err) {
      if (err.code !== 'ENOENT') throw err;
    }
  }
  return out.sort();
}

/** The exemption a repository-relative path falls in, if any. */
export function exemptionFor(path) {
  return TEMPORARY_EXEMPTIONS.find((e) => e.test(path));
}

/** Every violation under `packages/*\/src`: `{ path, exempt?: owner, ...violation }`. */
export function findViolations(base = root) {
  const out = [];
  for (const path of sourceFiles(base)) {
    const exempt = exemptionFor(path);
    for (const v of scanSource(readFileSync(join(base, path), 'utf8'), path)) out.push({ path, ...(exempt ? { exempt: exempt.owner } : {}), ...v });
  }
  return out;
}

/** One line per violation: `path:line function name — N lines (limit 150)`. */
export function formatViolation(v) {
  const what = v.kind === 'file' ? `${v.path} — ${v.lines} lines (limit ${MAX_FILE_LINES})` : `${v.path}:${v.line} ${v.name} — ${v.lines} lines (limit ${MAX_FUNCTION_LINES})`;
  return v.exempt ? `${what} [temporarily exempt: ${v.exempt}]` : what;
}

/** Most lines of an HTTP adapter's root entry: every file `src/index.ts` pulls in (issue 29, "Done when"). */
export const MAX_ADAPTER_LINES = 250;

/** The HTTP adapters held to {@link MAX_ADAPTER_LINES}: `packages/<name>`, whose root entry is `src/index.ts`. */
export const ADAPTERS = ['http-hono', 'http-fastify', 'http-fetch'];

/** The source file a relative specifier names (`./plugin.js` → `plugin.ts`, `./dir` → `dir/index.ts`), or undefined (JSON, assets). */
function resolveSource(fromFile, specifier) {
  const target = resolve(dirname(fromFile), specifier);
  const stem = target.replace(/\.(m|c)?js$/, '');
  for (const candidate of [`${stem}.ts`, `${stem}.tsx`, join(target, 'index.ts')]) if (existsSync(candidate)) return candidate;
  return undefined;
}

/**
 * The source files `entry` imports, itself first, then in the order they are reached: every relative
 * `import`, `export … from`, `import type`, dynamic `import()` and `import('…')` type, transitively.
 * Package imports (`@inbox-kit/core/http`, `fastify`) and JSON are not followed.
 */
export function entryFiles(entry) {
  const seen = [];
  const visit = (file) => {
    if (seen.includes(file)) return;
    seen.push(file);
    for (const { fileName } of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const next = resolveSource(file, fileName);
      if (next !== undefined) visit(next);
    }
  };
  visit(entry);
  return seen;
}

/** Each adapter's root entry: `{ adapter, lines, files: [{ path, lines }] }` (paths relative to the repository, `/`-separated). */
export function adapterSizes(base = root, adapters = ADAPTERS) {
  return adapters.map((adapter) => {
    const files = entryFiles(join(base, 'packages', adapter, 'src', 'index.ts')).map((file) => ({
      path: relative(base, file).split(sep).join('/'),
      lines: lineCount(readFileSync(file, 'utf8')),
    }));
    return { adapter, lines: files.reduce((sum, f) => sum + f.lines, 0), files };
  });
}

/** One line per adapter: `http-fastify root entry: 249 lines (limit 250) — src/index.ts 12, src/plugin.ts 165, …`. */
export function formatAdapterSize({ adapter, lines, files }) {
  const parts = files.map((f) => `${f.path.replace(`packages/${adapter}/`, '')} ${f.lines}`).join(', ');
  return `${adapter} root entry: ${lines} lines (limit ${MAX_ADAPTER_LINES})${lines > MAX_ADAPTER_LINES ? ' OVER' : ''} — ${parts}`;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const all = findViolations();
  for (const v of all) console.log(formatViolation(v));
  const failing = all.filter((v) => !v.exempt);
  console.log(`source-limits: ${failing.length} violation(s), ${all.length - failing.length} in temporarily exempt areas`);
  const sizes = adapterSizes();
  for (const size of sizes) console.log(formatAdapterSize(size));
  const over = sizes.filter((s) => s.lines > MAX_ADAPTER_LINES);
  console.log(`source-limits: ${over.length} adapter root entr${over.length === 1 ? 'y' : 'ies'} over ${MAX_ADAPTER_LINES} lines`);
  process.exit(failing.length || over.length ? 1 : 0);
}
