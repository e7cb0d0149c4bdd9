#!/usr/bin/env node
// Installs the workspace with the pinned pnpm (frozen lockfile when one exists) and builds every
// package with turbo. Used by `npm run demo`, `npm test` and `npm run bench`.
import { existsSync } from 'node:fs';
import { runPnpm } from './pnpm.mjs';

const frozen = existsSync('pnpm-lock.yaml') && process.env.INBOX_KIT_NO_FROZEN !== '1';
const steps = [
  ['install', ...(frozen ? ['--frozen-lockfile'] : [])],
  ['exec', 'turbo', 'run', 'build', '--output-logs=errors-only'],
];
for (const step of steps) {
  const code = runPnpm(step);
  if (code !== 0) {
    console.error(`setup: pnpm ${step.join(' ')} failed with exit code ${code}`);
    process.exit(code);
  }
}
