#!/usr/bin/env node
/**
 * Summarises a V8 `.cpuprofile` (from `pnpm bench --cpu-prof`, or `node --cpu-prof`): the
 * functions with the most self time, and self time per package (node_modules package or
 * workspace package), as shares of the busy time (idle excluded, so the shares say where the work
 * went whatever the load was); `--from <function>` counts only the samples from the first one with
 * that function on its stack (e.g. `--from handleRequest`: the server's start-up left out).
 *
 *   node bench/profile-summary.mjs bench-results/profiles/sqlite-….cpuprofile [top=30]
 */
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const fromAt = args.indexOf('--from');
const from = fromAt >= 0 ? args.splice(fromAt, 2)[1] : undefined;
const [file, topArg] = args;
if (!file) {
  console.error('usage: node bench/profile-summary.mjs <file.cpuprofile> [top]');
  process.exit(1);
}
const top = Number(topArg ?? 30);
const profile = JSON.parse(readFileSync(file, 'utf8'));

// Self time per node: each sample's node gets the interval that follows it.
const self = new Map();
const { samples, timeDeltas } = profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parentOf = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);
/** Whether node `id` has a frame of function `name` on its stack. */
const under = (id, name) => {
  for (let at = id; at !== undefined; at = parentOf.get(at)) if (byId.get(at).callFrame.functionName === name) return true;
  return false;
};
let counting = from === undefined;
for (let i = 0; i < samples.length; i++) {
  if (!counting && under(samples[i], from)) counting = true;
  if (!counting) continue;
  const dt = timeDeltas[i + 1] ?? 0;
  self.set(samples[i], (self.get(samples[i]) ?? 0) + dt);
}
const idle = profile.nodes.filter((n) => n.callFrame.functionName === '(idle)').reduce((a, n) => a + (self.get(n.id) ?? 0), 0);
for (const n of profile.nodes) if (n.callFrame.functionName === '(idle)') self.delete(n.id);
const total = [...self.values()].reduce((a, b) => a + b, 0);

const packageOf = (url) => {
  if (!url) return '(native/V8)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  const ws = /\/(packages|apps)\/([^/]+)\//.exec(url);
  if (ws) return `workspace:${ws[2]}`;
  if (url.startsWith('node:')) return 'node (core)';
  return url;
};

const byFunction = new Map();
const byPackage = new Map();
for (const node of profile.nodes) {
  const t = self.get(node.id) ?? 0;
  if (t === 0) continue;
  const { functionName, url, lineNumber } = node.callFrame;
  const key = `${functionName || '(anonymous)'}  ${url ? `${url.replace(/^file:\/\//, '').replace(/.*node_modules\//, '')}:${lineNumber + 1}` : ''}`;
  byFunction.set(key, (byFunction.get(key) ?? 0) + t);
  const pkg = packageOf(url);
  byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + t);
}
const pct = (t) => `${((100 * t) / total).toFixed(1).padStart(5)}%`;
console.log(`${file}: ${(total / 1e6).toFixed(2)} s busy (+ ${(idle / 1e6).toFixed(2)} s idle, not counted)${from ? `, from the first sample under ${from}` : ''}\n\nself time by package (share of busy):`);
for (const [k, t] of [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, 20)) console.log(`  ${pct(t)}  ${k}`);
console.log(`\ntop ${top} functions by self time:`);
for (const [k, t] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(t)}  ${k}`);
