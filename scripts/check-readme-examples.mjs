#!/usr/bin/env node
// Checks the README examples: every fenced block tagged ```ts in the READMEs below is one example.
// Each is written to its own module in a temp folder inside the repo (.tmp/, git-ignored), where
// `@inbox-kit/*` resolve to the workspace packages' *built* output (package.json `exports` → dist,
// as a consumer sees them) and `fastify` and `hono` to the workspace's copies. Then:
//
// 1. `tsc` type-checks all of them with the repo's compiler options (strict, NodeNext, top-level
//    await) and emits JavaScript (what `npx -y tsx example.ts` would run);
// 2. each example RUNS, as written, with a time limit (EXAMPLE_TIMEOUT_MS), and must end with exit
//    status 0. Examples run in the temp folder, so relative paths (`data/…`) stay in it. What an
//    example needs is said by an HTML comment on the line before its block (invisible on GitHub):
//    - `<!-- example: demo -->` — talks to the demo server: the check starts the built demo
//      (apps/demo/dist/main.js) on a free port with its data under `apps/demo/data/` of the temp
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
// Use another tag (```sh, ```json, ```text) for what is not TypeScript to run.
// Each package README must also have an install section and an API section (headings containing
// "Install" and "API"). Build first (`npm run build`; `npm test` builds).
// Usage: node scripts/check-readme-examples.mjs [--keep]. Prints `N examples ran, N skipped` and
// exits non-zero, listing the problems as README:line, when anything fails.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const READMES = [
  'README.md',
  'packages/core/README.md',
  'packages/storage-kysely/README.md',
  'packages/http-fastify/README.md',
  'packages/http-hono/README.md',
  'packages/sdk/README.md',
  'packages/model-anthropic/README.md',
  'packages/ai-sdk/README.md',
  'packages/langgraph/README.md',
  'packages/openai-agents/README.md',
  'apps/demo/README.md',
];
/** READMEs that document a package (install and API sections required). */
const PACKAGE_READMES = READMES.filter((r) => r !== 'README.md');
const PACKAGES = ['core', 'storage-kysely', 'http-fastify', 'http-hono', 'sdk', 'model-anthropic', 'ai-sdk', 'langgraph', 'openai-agents'];
/** The frameworks the adapter examples run on, resolved from the adapter packages' own dev copies. */
const FRAMEWORKS = [['ai-sdk', 'ai'], ['ai-sdk', 'zod'], ['langgraph', '@langchain/core'], ['langgraph', 'langchain'], ['openai-agents', '@openai/agents']];
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

async function main() {
  for (const name of PACKAGES) {
    if (!existsSync(join(root, 'packages', name, 'dist', 'index.d.ts'))) problems.push(`packages/${name}: dist/index.d.ts is missing; build first (npm run build)`);
  }

  mkdirSync(join(root, '.tmp'), { recursive: true });
  const work = mkdtempSync(join(root, '.tmp', 'readme-examples-'));
  let demo;
  let messagesStub;
  try {
    // Resolution as a consumer has it: the packages by name, through their package.json exports.
    const modules = join(work, 'node_modules');
    mkdirSync(join(modules, '@inbox-kit'), { recursive: true });
    for (const name of PACKAGES) symlinkSync(join(root, 'packages', name), join(modules, '@inbox-kit', name), 'dir');
    symlinkSync(realpathSync(join(root, 'packages', 'http-fastify', 'node_modules', 'fastify')), join(modules, 'fastify'), 'dir');
    symlinkSync(realpathSync(join(root, 'packages', 'http-hono', 'node_modules', 'hono')), join(modules, 'hono'), 'dir');
    for (const [pkg, dep] of FRAMEWORKS) {
      mkdirSync(dirname(join(modules, dep)), { recursive: true });
      symlinkSync(realpathSync(join(root, 'packages', pkg, 'node_modules', dep)), join(modules, dep), 'dir');
    }
    writeFileSync(join(work, 'package.json'), JSON.stringify({ name: 'readme-examples', private: true, type: 'module' }, null, 2));
    writeFileSync(join(work, 'tsconfig.json'), JSON.stringify({
      extends: relative(work, join(root, 'tsconfig.base.json')),
      compilerOptions: { noEmit: false, outDir: 'out', declaration: false, sourceMap: false, types: ['node'], rootDir: '.' },
      include: ['*.ts'],
    }, null, 2));

    const sources = new Map(); // example file → { readme, line, needs }
    for (const readme of READMES) {
      const path = join(root, readme);
      if (!existsSync(path)) {
        problems.push(`${readme}: missing`);
        continue;
      }
      const text = readFileSync(path, 'utf8');
      if (PACKAGE_READMES.includes(readme)) {
        if (!/^#{2,3} .*Install/m.test(text)) problems.push(`${readme}: no install section (a heading containing "Install")`);
        if (!/^#{2,3} .*API/m.test(text)) problems.push(`${readme}: no public API section (a heading containing "API")`);
      }
      const blocks = tsBlocks(text);
      if (blocks.length === 0) problems.push(`${readme}: no \`\`\`ts example`);
      const stem = readme === 'README.md' ? 'root' : readme.split('/').slice(-2, -1)[0];
      blocks.forEach((block, i) => {
        const file = `${stem}-${i + 1}.ts`;
        // One prefix line, so the example's line n is the file's line n + 1.
        writeFileSync(join(work, file), `// ${readme}:${block.line}\n${block.code}\nexport {};\n`);
        sources.set(file, { readme, line: block.line, needs: block.needs });
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
      return;
    }
    log(`${sources.size} examples in ${READMES.length} READMEs type-check`);

    // — run them —
    const pgUrl = process.env.INBOX_KIT_TEST_PG_URL;
    let ran = 0;
    const skipped = [];
    for (const [file, src] of sources) {
      const where = `${src.readme}:${src.line}`;
      const env = { ...process.env, DATABASE_URL: '', PORT: '', INBOX_KIT_URL: '', INBOX_KIT_KEY: '', ANTHROPIC_API_KEY: '', ANTHROPIC_BASE_URL: '' };
      if (src.needs.includes('anthropic')) {
        if (!messagesStub) {
          const { startMessagesStub } = await import(resolve('packages/model-anthropic/dist/testing/index.js'));
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
        demo ??= await startDemo(join(work, 'apps', 'demo', 'data'));
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
        const result = await runExample(join(work, 'out', file.replace(/\.ts$/, '.js')), work, env, serveOn);
        if (result.timedOut) problems.push(`${at}: the example did not end within ${EXAMPLE_TIMEOUT_MS} ms\n${result.output.trim()}`);
        else if (result.code !== 0) problems.push(`${at}: the example exited with ${result.code ?? result.signal}\n${result.output.trim()}`);
        else if (serveOn !== undefined && !result.output.includes('sending SIGINT')) problems.push(`${at}: the server example ended before it served GET /health\n${result.output.trim()}`);
        else {
          log(`${at}: ran and ended (exit 0)`);
          continue;
        }
        break;
      }
      ran++;
    }
    for (const s of skipped) log(`skipped ${s}`);
    log(`${ran} examples ran, ${skipped.length} skipped`);
  } finally {
    if (demo) await demo.stop();
    if (messagesStub) await messagesStub.close();
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
