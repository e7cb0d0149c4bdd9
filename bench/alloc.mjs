#!/usr/bin/env node
/**
 * `node bench/alloc.mjs [create|get|list] …`: the bytes the demo server allocates a request, by
 * package and by function — a figure that moves far less than CPU time on a shared machine (the
 * garbage collector's share of a route grows with it). Needs `pnpm build`.
 *
 * The demo is built in this process (`buildDemo`, NODE_ENV=production, SQLite in a temporary
 * folder, no logging) and listens on 127.0.0.1; 50 items are created in `proj_main`; then the
 * bench's own autocannon scenario of each route (bench/lib/drive.mjs, 10 connections) runs 2 s to
 * warm up and 4 s under V8's sampling heap profiler (one sample every 4 KiB on average, objects the
 * collector has already freed included), and the allocation of those 4 s is printed per 2xx answer.
 * `--demo <checkout>` measures another checkout's built demo, for a before/after.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runChild } from './lib/util.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const demoAt = argv.indexOf('--demo');
const checkout = demoAt >= 0 ? resolve(argv[demoAt + 1] ?? '') : resolve(here, '..');
const ROUTES = ['create', 'get', 'list'];
const routes = argv.filter((a, i) => !a.startsWith('--') && (demoAt < 0 || i !== demoAt + 1));
const unknown = routes.filter((r) => !ROUTES.includes(r));
if (unknown.length > 0) {
  console.error(`alloc: routes are ${ROUTES.join(', ')} (unknown: ${unknown.join(', ')})`);
  process.exit(2);
}
// Production's answers (no response re-validation), as the bench runs the demo.
process.env.NODE_ENV = 'production';

/** A module of the demo's bundle that exports `name` (tsup names its chunks by content hash). */
async function demoExport(name) {
  const dist = join(checkout, 'apps/demo/dist');
  const exporting = new RegExp(`export \\{[^}]*\\b${name}\\b`);
  const file = readdirSync(dist).find((f) => f.endsWith('.js') && exporting.test(readFileSync(join(dist, f), 'utf8')));
  if (file === undefined) throw new Error(`alloc: no module of ${dist} exports ${name}: run pnpm build`);
  return (await import(join(dist, file)))[name];
}

/** Bytes by key of `profile`'s nodes (`key(callFrame)`), summed over the tree. */
function bytesBy(profile, key) {
  const sums = new Map();
  const walk = (node) => {
    const k = key(node.callFrame);
    sums.set(k, (sums.get(k) ?? 0) + node.selfSize);
    for (const child of node.children) walk(child);
  };
  walk(profile.head);
  return [...sums].sort((a, b) => b[1] - a[1]);
}

const packageOf = ({ url }) => {
  if (!url) return '(V8 and native)';
  if (url.startsWith('node:')) return 'node';
  const dependency = url.match(/node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)\//);
  if (dependency) return dependency[1];
  const workspace = url.match(/\/(packages|apps)\/([^/]+)\//);
  return workspace ? `@inbox-kit/${workspace[2]}` : url.split('/').slice(-2).join('/');
};
const functionOf = ({ functionName, url, lineNumber }) => `${functionName || '(anonymous)'}  ${url.split('/').slice(-2).join('/')}:${lineNumber + 1}`;

const buildDemo = await demoExport('buildDemo');
const loadConfig = await demoExport('loadConfig');
const dataDir = mkdtempSync(join(tmpdir(), 'inbox-kit-alloc-'));
const demo = await buildDemo(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', PORT: '0', HOST: '127.0.0.1' }, false));
const session = new Session();
try {
  await demo.app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${demo.app.server.address().port}`;
  const key = demo.credentials.acc_owner;
  const ids = [];
  for (let i = 0; i < 50; i++) {
    const made = await fetch(`${url}/projects/proj_main/inbox`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'derived_output.review', title: `item ${i}`, payload: { derived_output_id: `dout_${i}` } }),
    });
    if (made.status !== 201) throw new Error(`alloc: seeding answered ${made.status}: ${await made.text()}`);
    ids.push((await made.json()).item.id);
  }
  const params = { project: 'proj_main', key, ids, limit: 50 };
  const drive = (scenario, duration) => runChild(join(here, 'lib/drive.mjs'), { scenario, url, connections: 10, duration, warmup: 0, params });
  session.connect();
  await session.post('HeapProfiler.enable');
  console.log(`allocation a 2xx answer (${checkout}, node ${process.version}; sampling heap profiler, 4 s after a 2 s warm-up, 10 connections)`);
  for (const route of routes.length > 0 ? routes : ROUTES) {
    await drive(route, 2);
    await session.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
    const run = await drive(route, 4);
    const { profile } = await session.post('HeapProfiler.stopSampling');
    const answers = run.ok;
    const total = bytesBy(profile, () => 'all')[0]?.[1] ?? 0;
    console.log(`\n${route}: ${answers} answers (${run.non_2xx} non-2xx), ${(total / answers / 1024).toFixed(1)} KiB a request`);
    for (const [name, bytes] of bytesBy(profile, packageOf).slice(0, 8)) console.log(`  ${String(Math.round(bytes / answers)).padStart(7)} B  ${name}`);
    console.log('  top functions:');
    for (const [name, bytes] of bytesBy(profile, functionOf).slice(0, 12)) console.log(`  ${String(Math.round(bytes / answers)).padStart(7)} B  ${name}`);
  }
} finally {
  session.disconnect();
  await demo.close();
  rmSync(dataDir, { recursive: true, force: true });
}
