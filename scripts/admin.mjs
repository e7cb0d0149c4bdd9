#!/usr/bin/env node
// `npm run admin -- <command>`: the demo's administration command line (apps/demo/src/admin.ts:
// accounts, API keys, migrations of the server's database, from the same DATABASE_URL / DATA_DIR),
// run in apps/demo as the server is (so a relative DATA_DIR names the same directory), with this
// script's arguments and exit status. In a fresh clone it first sets the workspace up
// (scripts/setup.mjs), printing its lines on stderr so the command's own output (`--json`) stays
// clean; once built it runs at once (after a `git pull`, run `npm run setup` to rebuild).
// INBOX_KIT_SKIP_SETUP=1 never sets up.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const demo = join(root, 'apps', 'demo');
const cli = join(demo, 'dist', 'admin.js');

process.chdir(root);
if (!existsSync(cli) && process.env.INBOX_KIT_SKIP_SETUP !== '1') {
  const { setup } = await import('./setup.mjs');
  const code = await setup({ out: { log: (line) => console.error(line), error: (line) => console.error(line) } });
  if (code !== 0) process.exit(code);
}
if (!existsSync(cli)) {
  console.error(`inbox-kit admin: ${cli} is missing: run npm run setup`);
  process.exit(1);
}
const child = spawn(process.execPath, [cli, ...process.argv.slice(2)], { cwd: demo, stdio: 'inherit' });
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
