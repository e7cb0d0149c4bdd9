#!/usr/bin/env node
// `npm run demo`: sets the workspace up (scripts/setup.mjs), then runs the demo server in the
// foreground with the command of apps/demo's `start` script (`node <flags> dist/main.js`, run in
// apps/demo), directly rather than through pnpm, so that Ctrl-C ends with the server's own
// `inbox-kit demo stopped` line and exit status 0 (pnpm reports an interrupted child as a failed
// recursive run). SIGINT and SIGTERM are passed to the server, which shuts down gracefully; this
// script exits with the server's exit status. INBOX_KIT_SKIP_SETUP=1 skips the set-up (tests).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const DEMO_DIR = join(root, 'apps', 'demo');

/** The demo's start command as `[node flags…, script]`, read from apps/demo's `start` script. */
export function demoStartArgs() {
  const start = JSON.parse(readFileSync(join(DEMO_DIR, 'package.json'), 'utf8')).scripts.start;
  const words = start.trim().split(/\s+/);
  if (words[0] !== 'node') throw new Error(`apps/demo's start script must be "node …", got "${start}"`);
  return words.slice(1);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.chdir(root);
  if (process.env.INBOX_KIT_SKIP_SETUP !== '1') {
    const { setup } = await import('./setup.mjs');
    const code = await setup();
    if (code !== 0) process.exit(code);
  }
  const child = spawn(process.execPath, demoStartArgs(), { cwd: DEMO_DIR, stdio: 'inherit' });
  // Ctrl-C reaches the server directly (same process group); a signal sent to this script alone
  // is passed on. Either way this script waits for the server to finish its shutdown.
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal === 'SIGINT' ? 130 : 143)));
}
