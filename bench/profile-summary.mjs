#!/usr/bin/env node
/**
 * Summarises a V8 `.cpuprofile` (from `pnpm bench --cpu-prof`, or `node --cpu-prof`): the
 * functions with the most self time, and self time per package (node_modules package or
 * workspace package).
 *
 *   node bench/profile-summary.mjs bench-results/profiles/sqlite-….cpuprofile [top=30]
 */
import { readFileSync } from 'node:fs';

const [file, topArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: node bench/profile-summary.mjs <file.cpuprofile> [top]');
  process.exit(1);
}
const top = Number(topArg ?? 30);
const profile = JSON.parse(readFileSync(file, 'utf8'));

// Self time per node: each sample's node gets the interval that follows it.
const self = new Map();
const { samples, timeDeltas } = profile;
for (let i = 0; i < samples.length; i++) {
  const dt = timeDeltas[i + 1] ?? 0;
  self.set(samples[i], (self.get(samples[i]) ?? 0) + dt);
}
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
console.log(`${file}: ${(total / 1e6).toFixed(2)} s sampled\n\nself time by package:`);
for (const [k, t] of [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, 20)) console.log(`  ${pct(t)}  ${k}`);
console.log(`\ntop ${top} functions by self time:`);
for (const [k, t] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(t)}  ${k}`);
