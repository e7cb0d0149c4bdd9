#!/usr/bin/env node
// Packaging checks of every published package (core, storage-kysely, http-fastify, http-hono,
// sdk, model-anthropic), run on
// the built packages (`npm run build` first; `npm test` builds):
//
// 1. publint --strict (package.json fields, every `exports` entry, files) and
//    @arethetypeswrong/cli on the packed tarball with `--profile esm-only` (the packages are
//    ESM-only by choice: CommonJS consumers use `import()`), which checks every entry point of
//    `exports` (`@inbox-kit/core/memory`, `/testing`, `@inbox-kit/storage-kysely/sqlite`,
//    `/postgres`, `@inbox-kit/http-fastify/server`, …), so the types resolve for Node 16+ ESM and
//    bundlers;
// 2. `pnpm pack` of each package into a temp folder (workspace:^ ranges become real versions), and
//    a look at each tarball: dist, README.md and the root LICENSE, no sources or tests; `npm pack`
//    (which would keep the ranges) is refused by the packages' `prepack` (scripts/prepack-guard.mjs);
// 3. the tarballs installed together with npm into a scratch folder outside the repo (so
//    nothing resolves from the workspace), with the optional peers a full user adds (the drivers,
//    fastify, the createServer preset's plugins), then a smoke run there: every entry point
//    imports, and a real server from the tarballs (SQLite store, `createServer` preset) answers the
//    SDK from the tarball over loopback, serves /openapi.json and the offline /docs assets; the Messages API model from
//    its tarball takes one step against the stub server of its own `/testing` entry; http-hono from
//    its tarball answers the SDK too;
//    Before that smoke (and before the stub of vitest it needs), every ```ts example of every
//    package README runs there, type-checked against the installed packages' types
//    (`runReadmeExamples` of scripts/check-readme-examples.mjs, with the same needs: a demo server,
//    the Messages API stub, PostgreSQL): what an npm user who follows a README gets, with nothing
//    of the workspace on the resolution path. Each example may import only packages its README's
//    install lines name (and `node:` modules);
// 4. a minimal install in a second scratch folder: core, storage-kysely and http-fastify with only
//    `pg` and `fastify`. No optional peer may be installed (better-sqlite3, vitest, the preset's
//    plugins); the in-memory store (`@inbox-kit/core/memory`), the root and `/postgres` entries of
//    storage-kysely and the `inboxKit` plugin must load and work without them; `openStore` on
//    SQLite must fail naming better-sqlite3.
//
// 5. the public surface: every entry point of every package exports exactly the names (run-time
//    values from the built module, types from its .d.ts) of the committed snapshot
//    scripts/public-surface.json (`scripts/public-surface.mjs`); an accidental new or lost export
//    fails, with how to update the snapshot deliberately.
//
// Speed: the install runs with --ignore-scripts, so better-sqlite3 is not compiled from source
// (~80 s). Its native addon is copied from the workspace's own build of the same version instead
// (the same Node, the same machine); when that is not possible, or with
// INBOX_KIT_PACK_FULL_INSTALL=1, it is rebuilt in the scratch folder (`npm rebuild`). Either way
// the smoke run opens a real SQLite database through the installed package.
//
// Usage: node scripts/check-packages.mjs [--keep]   (--keep leaves the temp folder for a look)
// Exits non-zero, listing every problem, when any check fails.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkSurface } from './public-surface.mjs';
import { PACKAGE_READMES, runReadmeExamples, tsBlocks } from './check-readme-examples.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const PUBLISHED = ['core', 'storage-kysely', 'http-fastify', 'http-hono', 'http-fetch', 'sdk', 'model-anthropic', 'ai-sdk', 'langgraph', 'openai-agents'];
const keep = process.argv.includes('--keep');
const bin = (name) => join(root, 'node_modules', '.bin', name);
const env = { ...process.env, TURBO_TELEMETRY_DISABLED: '1', npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' };
if (!env.npm_config_nodedir && existsSync('/usr/include/node/node.h')) env.npm_config_nodedir = '/usr';

// The smoke run, executed in the scratch folder with only the installed tarballs on the path.
const SMOKE = `
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const core = await import('@inbox-kit/core');
const memory = await import('@inbox-kit/core/memory');
const testing = await import('@inbox-kit/core/testing');
const contract = await import('@inbox-kit/core/http');
assert.ok(Array.isArray(contract.HTTP_ROUTES) && contract.HTTP_ROUTES.length > 0, 'core/http.HTTP_ROUTES');
const storage = await import('@inbox-kit/storage-kysely');
const sqlite = await import('@inbox-kit/storage-kysely/sqlite');
const postgres = await import('@inbox-kit/storage-kysely/postgres');
const http = await import('@inbox-kit/http-fastify');
const preset = await import('@inbox-kit/http-fastify/server');
const hono = await import('@inbox-kit/http-hono');
const fetchAdapter = await import('@inbox-kit/http-fetch');
const sdk = await import('@inbox-kit/sdk');
const anthropic = await import('@inbox-kit/model-anthropic');
const anthropicTesting = await import('@inbox-kit/model-anthropic/testing');
for (const [name, fn] of [['core.PlatformService', core.PlatformService], ['memory.createMemoryStore', memory.createMemoryStore],
  ['testing.runStoreConformance', testing.runStoreConformance], ['testing.createMemoryStore', testing.createMemoryStore],
  ['storage.openStore', storage.openStore], ['sqlite.openSqlite', sqlite.openSqlite], ['postgres.openPostgres', postgres.openPostgres],
  ['postgres.createPostgresEventBus', postgres.createPostgresEventBus], ['preset.createServer', preset.createServer],
  ['http.inboxKit', http.inboxKit], ['hono.serveInboxKit', hono.serveInboxKit], ['fetchAdapter.createFetchHandler', fetchAdapter.createFetchHandler], ['testing.runHttpConformance', testing.runHttpConformance],
  ['contract.envelopeOf', contract.envelopeOf], ['sdk.createClient', sdk.createClient],
  ['anthropic.createAnthropicModel', anthropic.createAnthropicModel], ['anthropicTesting.startMessagesStub', anthropicTesting.startMessagesStub]]) assert.equal(typeof fn, 'function', name);

const stub = await anthropicTesting.startMessagesStub({ answers: [{ text: ['Hello ', 'from the stub.'] }] });
try {
  const model = anthropic.createAnthropicModel({ apiKey: 'sk-smoke', baseURL: stub.url, model: 'claude-smoke' });
  const step = await model.step([{ id: 'm1', role: 'user', content: [{ type: 'text', text: 'hi' }] }], new AbortController().signal);
  assert.deepEqual(step, { content: [{ type: 'text', text: 'Hello from the stub.' }], stop_reason: 'end_turn', continue: false });
} finally {
  await stub.close();
}

const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-smoke-'));
const opened = await storage.openStore({ sqliteFile: join(dir, 'smoke.sqlite') });
const deps = { store: opened.store, bus: core.createLocalEventBus(), clock: core.systemClock, ids: core.createIdGenerator() };
const platform = new core.PlatformService(deps);
await platform.createWorkspace({ id: 'ws_smoke', name: 'Smoke' });
await platform.createAccount({ id: 'acc_owner', name: 'Owner', workspace_ids: ['ws_smoke'] });
const { secret } = await platform.issueApiKey({ workspace_id: 'ws_smoke', account_id: 'acc_owner' });
// The load shedder stays on (its plugin loads from the tarball) with a bound a busy test machine does
// not reach: this check runs beside the vitest run (npm test), and a starved smoke must not answer 503.
const app = await preset.createServer({ services: { platform, projectInbox: new core.ProjectInboxService(deps) }, underPressure: { maxEventLoopDelay: 60_000 } });
try {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const base = 'http://127.0.0.1:' + app.server.address().port;
  const client = sdk.createClient({ baseUrl: base, apiKey: secret });
  const project = await client.projects.create({ name: 'Smoke' });
  const item = await client.projects.inbox.create(project.id, { type: 'smoke.check', payload: { ok: true } });
  const accepted = await client.projects.inbox.accept(project.id, item.id, { note: 'fine' });
  assert.equal(accepted.status, 'accepted');
  assert.deepEqual(accepted.payload, { ok: true });
  await assert.rejects(client.projects.get('proj_missing'), (e) => e instanceof sdk.InboxKitApiError && e.status === 404);
  const doc = await (await fetch(base + '/openapi.json')).json();
  assert.equal(doc.openapi, '3.1.0');
  assert.ok(doc.paths['/projects/{id}/inbox'].post);
  const ui = await fetch(base + '/docs/static/swagger-ui-bundle.js');
  assert.equal(ui.status, 200);
  assert.ok((await ui.text()).length > 100000);
  const honoServer = await hono.serveInboxKit({ services: { platform, projectInbox: new core.ProjectInboxService(deps) }, loadShedding: { maxEventLoopDelay: 60_000 } });
  try {
    const viaHono = await sdk.createClient({ baseUrl: honoServer.url, apiKey: secret }).projects.get(project.id);
    assert.equal(viaHono.project.id, project.id);
  } finally {
    await honoServer.close();
  }
  const handler = fetchAdapter.createFetchHandler({ services: { platform, projectInbox: new core.ProjectInboxService(deps) } });
  try {
    const viaFetch = await handler(new Request('http://localhost/projects/' + project.id, { headers: { authorization: 'Bearer ' + secret } }));
    assert.equal(viaFetch.status, 200);
    assert.equal((await viaFetch.json()).project.id, project.id);
  } finally {
    handler.close();
  }
  console.log('smoke: ok (' + Object.keys(doc.paths).length + ' documented paths; http-hono answers the SDK; http-fetch answers in-process)');
} finally {
  await app.close();
  await opened.close();
  rmSync(dir, { recursive: true, force: true });
}
`;

// The minimal install's smoke: no optional peer present, and what does not need one works.
const MINIMAL_SMOKE = `
import { strict as assert } from 'node:assert';
import { existsSync } from 'node:fs';
for (const absent of ['better-sqlite3', 'vitest', '@fastify/rate-limit', '@fastify/swagger-ui']) {
  assert.equal(existsSync('node_modules/' + absent), false, absent + ' was installed although it is an optional peer');
}
const core = await import('@inbox-kit/core');
const { createMemoryStore } = await import('@inbox-kit/core/memory');
const storage = await import('@inbox-kit/storage-kysely');
const { openPostgres } = await import('@inbox-kit/storage-kysely/postgres');
assert.equal(typeof openPostgres, 'function');
await assert.rejects(storage.openStore({ sqliteFile: 'never.sqlite' }), /better-sqlite3/);
assert.equal(existsSync('never.sqlite'), false);
const { default: Fastify } = await import('fastify');
const { inboxKit } = await import('@inbox-kit/http-fastify');
const deps = { store: createMemoryStore(), bus: core.createLocalEventBus(), clock: core.systemClock, ids: core.createIdGenerator() };
const app = Fastify();
await app.register(inboxKit, { services: { platform: new core.PlatformService(deps), projectInbox: new core.ProjectInboxService(deps) } });
assert.equal((await app.inject({ url: '/openapi.json' })).statusCode, 200);
assert.equal((await app.inject({ url: '/docs/' })).statusCode, 404); // no @fastify/swagger-ui: no reference page
await app.close();
await assert.rejects(import('@inbox-kit/http-fastify/server'), /@fastify\\/rate-limit/);
console.log('minimal smoke: ok');
`;

/** The optional peers a full install adds, at the versions the workspace tests with. */
const PEERS = [
  'better-sqlite3', 'pg', 'fastify', '@fastify/rate-limit', '@fastify/swagger-ui',
  // The frameworks the adapters' READMEs install, at the workspace's versions (unpinned, npm's
  // peer resolution may pick an older major of one to satisfy another package's peer range).
  'ai', 'zod', 'langchain', '@langchain/core', '@langchain/langgraph', '@openai/agents',
];

const problems = [];
const log = (line) => console.log(`check-packages: ${line}`);

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', env, maxBuffer: 64 * 1024 * 1024, ...opts });
  return { status: r.status ?? 1, out: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}` };
}

/** The pinned pnpm: the global one when it is that version, else through npx (as scripts/pnpm.mjs does). */
const PNPM = (() => {
  const PNPM_VERSION = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).packageManager.split('@')[1];
  const r = spawnSync('pnpm', ['--version'], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.trim() === PNPM_VERSION ? ['pnpm'] : ['npx', '--yes', `pnpm@${PNPM_VERSION}`];
})();

function check(label, r) {
  if (r.status !== 0) problems.push(`${label} failed (exit ${r.status}):\n${r.out.trim()}`);
  else log(`${label}: ok`);
  return r.status === 0;
}

const work = mkdtempSync(join(tmpdir(), 'inbox-kit-pack-'));
const tarballs = join(work, 'tarballs');
mkdirSync(tarballs);
try {
  // — 1 and 2: lint, pack, look inside —
  const rootLicense = readFileSync(join(root, 'LICENSE'), 'utf8');
  const packed = {};
  for (const name of PUBLISHED) {
    const dir = join(root, 'packages', name);
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    if (!existsSync(join(dir, 'dist', 'index.js'))) {
      problems.push(`${pkg.name}: dist/index.js is missing; build first (npm run build)`);
      continue;
    }
    if (!existsSync(join(dir, 'LICENSE')) || readFileSync(join(dir, 'LICENSE'), 'utf8') !== rootLicense) {
      problems.push(`${pkg.name}: LICENSE is missing or differs from the root LICENSE (copy it: cp LICENSE packages/${name}/)`);
    }
    check(`${pkg.name} publint`, run(bin('publint'), ['--strict'], { cwd: dir }));

    const before = new Set(readdirSync(tarballs));
    if (!check(`${pkg.name} pnpm pack`, run(PNPM[0], [...PNPM.slice(1), 'pack', '--pack-destination', tarballs], { cwd: dir }))) continue;
    const tgz = readdirSync(tarballs).find((f) => !before.has(f) && f.endsWith('.tgz'));
    if (!tgz) {
      problems.push(`${pkg.name}: pnpm pack wrote no tarball`);
      continue;
    }
    packed[pkg.name] = join(tarballs, tgz);
    check(`${pkg.name} attw (esm-only)`, run(bin('attw'), [packed[pkg.name], '--profile', 'esm-only', '--format', 'ascii']));

    const list = run('tar', ['-tzf', packed[pkg.name]]).out.split('\n').filter(Boolean).map((f) => f.replace(/^package\//, ''));
    for (const required of ['package.json', 'README.md', 'LICENSE', 'dist/index.js', 'dist/index.d.ts']) {
      if (!list.includes(required)) problems.push(`${pkg.name}: the tarball has no ${required}`);
    }
    const stray = list.filter((f) => /^(src|test)\//.test(f) || /\.test\.|tsconfig|tsup\.config/.test(f));
    if (stray.length) problems.push(`${pkg.name}: the tarball ships ${stray.join(', ')}`);
    const manifest = run('tar', ['-xzOf', packed[pkg.name], 'package/package.json']).out;
    if (manifest.includes('workspace:')) problems.push(`${pkg.name}: the packed package.json still has a workspace: range`);
    log(`${pkg.name}: ${list.length} files in ${tgz}`);
  }

  // `npm pack` would keep the workspace: ranges: the packages' `prepack` refuses it, saying what to run.
  const npmPack = run('npm', ['pack', '--dry-run'], { cwd: join(root, 'packages', 'storage-kysely') });
  if (npmPack.status === 0 || !npmPack.out.includes('pack it with pnpm, not npm')) problems.push(`npm pack of a package with workspace: ranges must be refused by its prepack, naming pnpm pack:\n${npmPack.out.trim()}`);
  else log('npm pack (which keeps workspace: ranges) is refused with what to run instead: ok');

  // — 5: the exported names, against the committed snapshot —
  if (Object.keys(packed).length === PUBLISHED.length) {
    try {
      const surface = await checkSurface('dist');
      if (surface.length) problems.push(`public surface:\n${surface.join('\n\n')}`);
      else log('public surface: every entry point exports exactly the names of scripts/public-surface.json');
    } catch (error) {
      problems.push(`public surface could not be read: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  // — 3: install the tarballs together in a scratch folder and run the smoke —
  if (Object.keys(packed).length === PUBLISHED.length) {
    const scratch = join(work, 'scratch');
    mkdirSync(scratch);
    writeFileSync(join(scratch, 'package.json'), JSON.stringify({ name: 'inbox-kit-scratch', private: true, type: 'module' }, null, 2));
    const full = process.env.INBOX_KIT_PACK_FULL_INSTALL === '1';
    const install = run('npm', ['install', ...Object.values(packed), ...PEERS.map(peerSpec), '--no-audit', '--no-fund', '--no-package-lock', ...(full ? [] : ['--ignore-scripts'])], { cwd: scratch });
    if (check(`npm install of the ${PUBLISHED.length} tarballs${full ? '' : ' (--ignore-scripts)'}`, install)) {
      if (!full) provideSqliteAddon(scratch);
      // The package READMEs' examples, from the tarballs (before the vitest stub below: a README
      // example must not need a package its README does not install).
      for (const readme of PACKAGE_READMES) problems.push(...uncoveredImports(readme));
      const readmeProblems = [];
      const { ran, skipped } = await runReadmeExamples({ readmes: PACKAGE_READMES, folder: scratch, problems: readmeProblems, log: (line) => log(`README examples: ${line}`) });
      if (readmeProblems.length) problems.push(`the package READMEs' examples, run from the installed tarballs:\n${readmeProblems.join('\n\n')}`);
      else log(`README examples of the installed packages: ${ran} ran, ${skipped.length} skipped`);
      // vitest is an optional peer of @inbox-kit/core, needed only by its `/testing` conformance
      // suite; a stub stands in for it so the subpath's whole module graph is loaded here.
      const stub = join(scratch, 'node_modules', 'vitest');
      if (!existsSync(stub)) {
        mkdirSync(stub, { recursive: true });
        writeFileSync(join(stub, 'package.json'), JSON.stringify({ name: 'vitest', version: '0.0.0-stub', type: 'module', exports: './index.js' }));
        writeFileSync(join(stub, 'index.js'), ['describe', 'it', 'expect', 'beforeAll', 'afterAll', 'beforeEach', 'afterEach'].map((name) => `export const ${name} = () => {};\n`).join(''));
      }
      writeFileSync(join(scratch, 'smoke.mjs'), SMOKE);
      check('smoke run of the installed tarballs', run(process.execPath, ['smoke.mjs'], { cwd: scratch, timeout: 120_000 }));
    }

    const minimal = join(work, 'minimal');
    mkdirSync(minimal);
    writeFileSync(join(minimal, 'package.json'), JSON.stringify({ name: 'inbox-kit-minimal', private: true, type: 'module' }, null, 2));
    const few = ['@inbox-kit/core', '@inbox-kit/storage-kysely', '@inbox-kit/http-fastify'].map((name) => packed[name]);
    const minimalInstall = run('npm', ['install', ...few, peerSpec('pg'), peerSpec('fastify'), '--no-audit', '--no-fund', '--no-package-lock', '--ignore-scripts'], { cwd: minimal });
    if (check('npm install of core, storage-kysely and http-fastify with pg and fastify only', minimalInstall)) {
      writeFileSync(join(minimal, 'smoke.mjs'), MINIMAL_SMOKE);
      check('minimal smoke (no optional peer installed)', run(process.execPath, ['smoke.mjs'], { cwd: minimal, timeout: 120_000 }));
    }
  }
} finally {
  if (keep) log(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}

/**
 * The packages an example of `readme` imports that its install lines (`npm install …`, `pnpm add
 * …` in the README, continuation lines included) do not name, as problems; `node:` modules and
 * relative imports need nothing.
 */
function uncoveredImports(readme) {
  const text = readFileSync(join(root, readme), 'utf8');
  const named = new Set();
  for (const [, args] of text.replace(/\\\n\s*/g, ' ').matchAll(/(?:npm install|pnpm add)\s+([^\n#]*)/g)) {
    for (const word of args.split(/\s+/)) if (word && !word.startsWith('-')) named.add(word.replace(/@[^@/]+$/, ''));
  }
  const out = [];
  for (const block of tsBlocks(text)) {
    for (const [, specifier] of block.code.matchAll(/(?:^|\n)\s*import[^'"]*['"]([^'"]+)['"]/g)) {
      if (specifier.startsWith('node:') || specifier.startsWith('.')) continue;
      const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0];
      if (!named.has(name)) out.push(`${readme}:${block.line}: the example imports ${specifier}, but the README's install lines do not name ${name}`);
    }
  }
  return out;
}

/** `name@version` of the copy the workspace's http-fastify or storage-kysely resolves. */
function peerSpec(name) {
  for (const pkg of ['http-fastify', 'storage-kysely', 'ai-sdk', 'langgraph', 'openai-agents', 'core']) {
    try {
      const manifest = createRequire(join(root, 'packages', pkg, 'package.json')).resolve(`${name}/package.json`);
      return `${name}@${JSON.parse(readFileSync(manifest, 'utf8')).version}`;
    } catch {
      // not resolvable from this package
    }
  }
  return name;
}

/** Puts a better-sqlite3 native addon into the scratch install: the workspace's build, else a rebuild. */
function provideSqliteAddon(scratch) {
  const target = join(scratch, 'node_modules', 'better-sqlite3');
  if (!existsSync(target)) return;
  const version = JSON.parse(readFileSync(join(target, 'package.json'), 'utf8')).version;
  try {
    const fromWorkspace = dirname(createRequire(join(root, 'packages', 'storage-kysely', 'package.json')).resolve('better-sqlite3/package.json'));
    const addon = join(fromWorkspace, 'build', 'Release', 'better_sqlite3.node');
    const workspaceVersion = JSON.parse(readFileSync(join(fromWorkspace, 'package.json'), 'utf8')).version;
    if (workspaceVersion === version && existsSync(addon)) {
      mkdirSync(join(target, 'build', 'Release'), { recursive: true });
      cpSync(addon, join(target, 'build', 'Release', 'better_sqlite3.node'));
      log(`better-sqlite3 ${version}: native addon copied from the workspace build`);
      return;
    }
  } catch {
    // no workspace build to reuse
  }
  check(`better-sqlite3 ${version} rebuild`, run('npm', ['rebuild', 'better-sqlite3', '--no-audit', '--no-fund'], { cwd: scratch }));
}

if (problems.length) {
  console.error(`check-packages: ${problems.length} problem(s)\n\n${problems.join('\n\n')}`);
  process.exit(1);
}
log('every published package passed');
