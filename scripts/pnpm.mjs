#!/usr/bin/env node
// Runs the pinned pnpm (12.4.2) with the given arguments, on a machine that has only Node and npm:
// a global pnpm of that version is used when present, else `npx --yes pnpm@12.4.2`.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export const PNPM_VERSION = '12.4.2';

function hasPinnedPnpm() {
  const r = spawnSync('pnpm', ['--version'], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.trim() === PNPM_VERSION;
}

/** Environment for pnpm: native addons (better-sqlite3) compile against Node's own headers. */
export function pnpmEnv(extra = {}) {
  const env = { ...process.env, TURBO_TELEMETRY_DISABLED: '1', ...extra };
  if (!env.npm_config_nodedir && existsSync('/usr/include/node/node.h')) env.npm_config_nodedir = '/usr';
  return env;
}

/** The command and leading arguments that run the pinned pnpm. */
export function pnpmCommand() {
  return hasPinnedPnpm() ? ['pnpm', []] : ['npx', ['--yes', `pnpm@${PNPM_VERSION}`]];
}

/** Runs pnpm synchronously with inherited stdio and `env` (default: {@link pnpmEnv}); returns the exit code. */
export function runPnpm(args, extraEnv = {}, env = pnpmEnv(extraEnv)) {
  const [cmd, prefix] = pnpmCommand();
  const r = spawnSync(cmd, [...prefix, ...args], { stdio: 'inherit', env });
  return r.status ?? 1;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.exit(runPnpm(process.argv.slice(2)));
}
