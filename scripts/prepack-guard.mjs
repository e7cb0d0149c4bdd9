#!/usr/bin/env node
// `prepack` of every published package: a tarball made with `npm pack` (or `npm publish`) from the
// workspace keeps the `workspace:^` ranges between the packages and cannot install anywhere, so
// packing under npm stops here with what to run instead; `pnpm pack` / `pnpm publish` replace
// the ranges and pass (README "Using the packages from a checkout").
import { readFileSync } from 'node:fs';

const manifest = JSON.parse(readFileSync('package.json', 'utf8'));
const ranges = ['dependencies', 'peerDependencies', 'optionalDependencies']
  .flatMap((field) => Object.entries(manifest[field] ?? {}))
  .filter(([, range]) => String(range).startsWith('workspace:'));
// Who runs this lifecycle script: npm sets `npm_execpath` to its npm-cli.js, pnpm to its own
// executable (`npm_config_user_agent` would not do: npm keeps one inherited from a pnpm parent).
const execpath = process.env.npm_execpath ?? '';
const underPnpm = /pnpm/i.test(execpath) && !/npm-cli\.js$/.test(execpath);
if (ranges.length > 0 && !underPnpm) {
  console.error(`${manifest.name}: pack it with pnpm, not npm: its ${ranges.map(([name, range]) => `${name} ${range}`).join(', ')} `
    + 'must become version ranges, which only pnpm does (in this folder: node ../../scripts/pnpm.mjs pack; README "Using the packages from a checkout")');
  process.exit(1);
}
