// The last-resort cleanup of a throw-away server (scripts/postgres.mjs, scripts/pgbouncer.mjs)
// when the process that started it dies without stopping it: Ctrl-C during `npm test` (a signal
// runs no `exit` handler), a SIGKILL, a crash. `reapOnDeath(commands, dirs)` starts a small
// watcher process of its own (its own process group, so the terminal's Ctrl-C does not reach it)
// that holds a pipe to this process; when the pipe closes without `cancel()`, i.e. this process is
// gone, the watcher runs each command and removes each directory.
import { spawn } from 'node:child_process';

const WATCHER = `
const { spawnSync } = require('node:child_process');
const { rmSync } = require('node:fs');
const { commands, dirs } = JSON.parse(process.argv[1]);
process.on('SIGTERM', () => process.exit(0));
const reap = () => {
  for (const [cmd, argv] of commands) spawnSync(cmd, argv, { stdio: 'ignore' });
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  process.exit(0);
};
process.stdin.on('end', reap);
process.stdin.on('close', reap);
process.stdin.on('error', reap);
process.stdin.resume();
`;

/**
 * Runs `commands` (`[file, args][]`) and removes `dirs` once this process is gone, unless
 * `cancel()` was called first (the server was stopped the normal way). Keeps no event-loop handle.
 * @returns `{ cancel() }`
 */
export function reapOnDeath(commands, dirs) {
  const watcher = spawn(process.execPath, ['-e', WATCHER, JSON.stringify({ commands, dirs })], {
    stdio: ['pipe', 'ignore', 'ignore'], detached: true,
  });
  watcher.on('error', () => {}); // no watcher: the `exit` handlers still clean up a normal exit
  watcher.stdin.on('error', () => {});
  watcher.unref();
  watcher.stdin.unref?.();
  let cancelled = false;
  return {
    cancel() {
      if (cancelled) return;
      cancelled = true;
      watcher.kill('SIGTERM');
    },
  };
}
