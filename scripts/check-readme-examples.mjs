#!/usr/bin/env node
// Checks the README examples: every fenced block tagged ```ts in a README is one example. Each is
// written to its own module in a folder where `@inbox-kit/*` resolve as a consumer has them, then:
//
// 1. `tsc` type-checks all of them with the repo's compiler options (strict, NodeNext, top-level
//    await) and emits JavaScript (what `npx -y tsx example.ts` would run);
// 2. each example RUNS, as written, with a time limit (EXAMPLE_TIMEOUT_MS), and must end with exit
//    status 0. Examples run in that folder, so relative paths (`data/…`) stay in it. What an
//    example needs is said by an HTML comment on the line before its block (invisible on GitHub):
//    - `<!-- example: demo -->` — talks to the demo server: the check starts the built demo
//      (apps/demo/dist/main.js) on a free port with its data under `apps/demo/data/` of the
//      folder (where the examples read `credentials.json`), and passes `INBOX_KIT_URL` (its base
//      URL) and `INBOX_KIT_KEY` (the seeded `service` key) to the example;
//    - `<!-- example: server -->` — starts a server that runs until Ctrl-C: it gets `PORT` (a free
//      port); once `GET /health` answers 200 it is sent SIGINT and must then end by itself. It runs
//      twice in the same folder: a server is restarted on the data its first start left, so a
//      seed that only works on an empty database fails the check;
//    - `<!-- example: anthropic -->` — calls the Messages API: the check starts the local Messages
//      API stub of `@inbox-kit/model-anthropic/testing` (built) and passes `ANTHROPIC_API_KEY` (a
//      dummy) and `ANTHROPIC_BASE_URL` (the stub's URL), so no example reaches the internet;
//    - `<!-- example: postgres -->` — needs PostgreSQL: gets `DATABASE_URL` from
//      INBOX_KIT_TEST_PG_URL (set by scripts/test.mjs); without it the example is reported as
//      skipped (not run), and the script says so.
//
// Where the examples run (`runReadmeExamples`):
// - the package READMEs' examples run from the packed tarballs installed with npm in an empty
//   folder outside the workspace (`scripts/check-packages.mjs` calls `runReadmeExamples` there, with
//   `installed: true`): what an npm user who follows the README gets — an example needing a package
//   the README does not install (vitest, say) fails there;
// - run as a script, this file runs the examples of the root and demo READMEs (`WORKSPACE_READMES`)
//   in a temp folder inside the repo (.tmp/, git-ignored) where `@inbox-kit/*` resolve to the
//   workspace packages' *built* output (package.json `exports` → dist), `fastify`, `hono` and the
//   frameworks of the adapter examples (`ai`, `langchain`, `@openai/agents`, …) to the workspace's
//   copies, and checks that each package README has an install section and an API
//   section (headings containing "Install" and "API").
//
// Use another tag (```sh, ```json, ```text) for what is not TypeScript to run.
// Build first (`npm run build`; `npm test` builds).
// Usage: node scripts/check-readme-examples.mjs [--keep]. Prints `N examples ran, N skipped` and
// exits non-zero, listing the problems as README:line, when anything fails.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const PACKAGES = ['core', 'storage-kysely', 'http-fastify', 'http-hono', 'http-fetch', 'sdk', 'model-anthropic', 'ai-sdk', 'langgraph', 'openai-agents'];
/** The READMEs of the published packages: their examples run from the installed tarballs (check-packages.mjs). */
export const PACKAGE_READMES = PACKAGES.map((name) => `packages/${name}/README.md`);
/** The READMEs whose examples run against the workspace (this script): the repository's and the demo's. */
export const WORKSPACE_READMES = ['README.md', 'apps/demo/README.md'];
/**
 * The third-party packages the root and demo READMEs' examples import, each linked from the
 * node_modules of a workspace package that depends on it: [workspace package, package name].
 */
const THIRD_PARTY = [
  ['http-fastify', 'fastify'], ['http-hono', 'hono'], ['core', 'zod'], ['ai-sdk', 'ai'],
  ['langgraph', 'langchain'], ['langgraph', '@langchain/core'], ['openai-agents', '@openai/agents'],
];
/** READMEs that must have an install section and an API section. */
const SECTIONED_READMES = [...PACKAGE_READMES, 'apps/demo/README.md'];
/** How long one example may run, in ms. */
const EXAMPLE_TIMEOUT_MS = Number(process.env.EXAMPLE_TIMEOUT_MS ?? 60_000);
const keep = process.argv.includes('--keep');
const problems = [];
const log = (line) => console.log(`check-readme-examples: ${line}`);

/** The ```ts blocks of a Markdown text: 1-based line of the first code line, code, and needs. */
export function tsBlocks(markdown) {
  const lines = markdown.split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^```ts\s*$/.test(lines[i])) continue;
    const marker = /^<!--\s*example:\s*([\w\s,]+?)\s*-->\s*$/.exec(lines[i - 1] ?? '');
    const needs = marker ? marker[1].split(/[\s,]+/).filter(Boolean) : [];
    const start = i + 1;
    let end = start;
    while (end < lines.length && !/^```\s*$/.test(lines[end])) end++;
    blocks.push({ line: start + 1, code: lines.slice(start, end).join('\n'), needs });
    i = end;
  }
  return blocks;
}

/** A free TCP port on 127.0.0.1. */
function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolvePort(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs `node file` with `env` in `cwd`; resolves `{ code, signal, output, timedOut }` once it has
 * ended. With `serveOn`, sends SIGINT once `GET /health` on that port answers 200.
 */
function runExample(file, cwd, env, serveOn) {
  return new Promise((resolveRun) => {
    const child = spawn(process.execPath, [file], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let timedOut = false;
    let ended = false;
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, EXAMPLE_TIMEOUT_MS);
    child.on('close', (code, signal) => {
      ended = true;
      clearTimeout(timer);
      resolveRun({ code, signal, output, timedOut });
    });
    if (serveOn !== undefined) {
      void (async () => {
        while (!ended) {
          const ok = await fetch(`http://127.0.0.1:${serveOn}/health`).then((r) => r.status === 200, () => false);
          if (ok) {
            output += `\n[check-readme-examples: GET /health answered 200; sending SIGINT]\n`;
            child.kill('SIGINT');
            return;
          }
          await sleep(100);
        }
      })();
    }
  });
}

/** Starts the built demo with its data in `dataDir`; resolves `{ url, serviceKey, stop }`. */
async function startDemo(dataDir) {
  const main = join(root, 'apps', 'demo', 'dist', 'main.js');
  if (!existsSync(main)) throw new Error('apps/demo/dist/main.js is missing; build first (npm run build)');
  const port = await freePort();
  const child = spawn(process.execPath, [main], {
    cwd: join(root, 'apps', 'demo'),
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'silent', DATABASE_URL: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c) => (output += c));
  child.stderr.on('data', (c) => (output += c));
  const exited = new Promise((r) => child.on('exit', r));
  const started = await Promise.race([
    (async () => {
      while (!/listening on /.test(output)) await sleep(50);
      return true;
    })(),
    exited.then(() => false),
    sleep(60_000).then(() => false),
  ]);
  if (!started) {
    child.kill('SIGKILL');
    throw new Error(`the demo did not start:\n${output}`);
  }
  const credentials = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8'));
  return {
    url: `http://127.0.0.1:${port}`,
    serviceKey: credentials.service,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * Type-checks and runs the ```ts examples of `readmes` (paths relative to the repository) in
 * `folder`, where `@inbox-kit/*` must already resolve (`node_modules`: the installed tarballs, or
 * the workspace's symlinks). Examples and their compiled output are written into `folder`.
 *
 * @param opts.problems receives one entry per failure (README:line and the output).
 * @param opts.log receives progress lines.
 * @returns how many examples ran and which were skipped (and why).
 */
export async function runReadmeExamples({ readmes, folder, problems: out, log: say = log }) {
  let demo;
  let messagesStub;
  let ran = 0;
  const skipped = [];
  try {
    writeFileSync(join(folder, 'tsconfig.readme-examples.json'), JSON.stringify({
      extends: join(root, 'tsconfig.base.json'),
      // @types/node from the repository: a consumer has their own; the packages' types come from `folder`.
      compilerOptions: { noEmit: false, outDir: 'out', declaration: false, sourceMap: false, types: ['node'], typeRoots: [join(root, 'node_modules', '@types')], rootDir: '.' },
      include: ['readme-*.ts'],
    }, null, 2));

    const sources = new Map(); // example file → { readme, line, needs }
    for (const readme of readmes) {
      const path = join(root, readme);
      if (!existsSync(path)) {
        out.push(`${readme}: missing`);
        continue;
      }
      const blocks = tsBlocks(readFileSync(path, 'utf8'));
      if (blocks.length === 0) out.push(`${readme}: no \`\`\`ts example`);
      const stem = readme === 'README.md' ? 'root' : readme.split('/').slice(-2, -1)[0];
      blocks.forEach((block, i) => {
        const file = `readme-${stem}-${i + 1}.ts`;
        // One prefix line, so the example's line n is the file's line n + 1.
        writeFileSync(join(folder, file), `// ${readme}:${block.line}\n${block.code}\nexport {};\n`);
        sources.set(file, { readme, line: block.line, needs: block.needs });
      });
    }

    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const r = spawnSync(process.execPath, [tsc, '-p', join(folder, 'tsconfig.readme-examples.json'), '--pretty', 'false'], { cwd: folder, encoding: 'utf8' });
    const output = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim();
    if (r.status !== 0) {
      const mapped = output.split('\n').map((line) => {
        const m = /^([\w.-]+\.ts)\((\d+),(\d+)\): (.*)$/.exec(line);
        const src = m && sources.get(m[1]);
        return src ? `${src.readme}:${src.line + Number(m[2]) - 2}:${m[3]}: ${m[4]}` : line;
      });
      out.push(`the README examples do not type-check:\n${mapped.join('\n') || `tsc exited ${r.status}`}`);
      return { ran, skipped };
    }
    say(`${sources.size} examples in ${readmes.length} READMEs type-check`);

    // — run them —
    const pgUrl = process.env.INBOX_KIT_TEST_PG_URL;
    for (const [file, src] of sources) {
      const where = `${src.readme}:${src.line}`;
      const env = { ...process.env, DATABASE_URL: '', PORT: '', INBOX_KIT_URL: '', INBOX_KIT_KEY: '', ANTHROPIC_API_KEY: '', ANTHROPIC_BASE_URL: '' };
      if (src.needs.includes('anthropic')) {
        if (!messagesStub) {
          const { startMessagesStub } = await import(pathToFileURL(join(root, 'packages/model-anthropic/dist/testing/index.js')).href);
          messagesStub = await startMessagesStub({ answers: [] });
        }
        env.ANTHROPIC_API_KEY = 'sk-ant-readme-example';
        env.ANTHROPIC_BASE_URL = messagesStub.url;
      }
      if (src.needs.includes('postgres')) {
        if (!pgUrl) {
          skipped.push(`${where} (needs PostgreSQL: INBOX_KIT_TEST_PG_URL is not set)`);
          continue;
        }
        env.DATABASE_URL = pgUrl;
      }
      if (src.needs.includes('demo')) {
        demo ??= await startDemo(join(folder, 'apps', 'demo', 'data'));
        env.INBOX_KIT_URL = demo.url;
        env.INBOX_KIT_KEY = demo.serviceKey;
      }
      // A server example runs twice: the second start is a restart on the first one's data.
      const starts = src.needs.includes('server') ? ['first start', 'restart'] : [undefined];
      for (const start of starts) {
        const at = start === undefined ? where : `${where} (${start})`;
        let serveOn;
        if (src.needs.includes('server')) {
          serveOn = await freePort();
          env.PORT = String(serveOn);
        }
        const result = await runExample(join(folder, 'out', file.replace(/\.ts$/, '.js')), folder, env, serveOn);
        if (result.timedOut) out.push(`${at}: the example did not end within ${EXAMPLE_TIMEOUT_MS} ms\n${result.output.trim()}`);
        else if (result.code !== 0) out.push(`${at}: the example exited with ${result.code ?? result.signal}\n${result.output.trim()}`);
        else if (serveOn !== undefined && !result.output.includes('sending SIGINT')) out.push(`${at}: the server example ended before it served GET /health\n${result.output.trim()}`);
        else {
          say(`${at}: ran and ended (exit 0)`);
          continue;
        }
        break;
      }
      ran++;
    }
    for (const s of skipped) say(`skipped ${s}`);
    say(`${ran} examples ran, ${skipped.length} skipped`);
    return { ran, skipped };
  } finally {
    if (demo) await demo.stop();
    if (messagesStub) await messagesStub.close();
  }
}

/** The workspace run: the section checks of every package README, then the root and demo READMEs' examples. */
async function main() {
  for (const name of PACKAGES) {
    if (!existsSync(join(root, 'packages', name, 'dist', 'index.d.ts'))) problems.push(`packages/${name}: dist/index.d.ts is missing; build first (npm run build)`);
  }
  for (const readme of SECTIONED_READMES) {
    const path = join(root, readme);
    if (!existsSync(path)) continue;
    const text = readFileSync(path, 'utf8');
    if (!/^#{2,3} .*Install/m.test(text)) problems.push(`${readme}: no install section (a heading containing "Install")`);
    if (!/^#{2,3} .*API/m.test(text)) problems.push(`${readme}: no public API section (a heading containing "API")`);
  }

  mkdirSync(join(root, '.tmp'), { recursive: true });
  const work = mkdtempSync(join(root, '.tmp', 'readme-examples-'));
  try {
    // Resolution as a consumer has it: the packages by name, through their package.json exports.
    const modules = join(work, 'node_modules');
    mkdirSync(join(modules, '@inbox-kit'), { recursive: true });
    for (const name of PACKAGES) symlinkSync(join(root, 'packages', name), join(modules, '@inbox-kit', name), 'dir');
    // The third-party packages the examples use, as the workspace packages that depend on them have them.
    for (const [pkg, dep] of THIRD_PARTY) {
      mkdirSync(dirname(join(modules, dep)), { recursive: true });
      symlinkSync(realpathSync(join(root, 'packages', pkg, 'node_modules', dep)), join(modules, dep), 'dir');
    }
    writeFileSync(join(work, 'package.json'), JSON.stringify({ name: 'readme-examples', private: true, type: 'module' }, null, 2));
    await runReadmeExamples({ readmes: WORKSPACE_READMES, folder: work, problems });
  } finally {
    if (keep) log(`kept ${work}`);
    else rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await main();
  if (problems.length) {
    console.error(`check-readme-examples: ${problems.length} problem(s)\n\n${problems.join('\n\n')}`);
    process.exit(1);
  }
}
