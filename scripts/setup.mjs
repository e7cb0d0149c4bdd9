#!/usr/bin/env node
// Installs the workspace with the pinned pnpm (frozen lockfile when one exists) and builds every
// package with turbo. Used by `npm run demo`, `npm test` and `npm run bench`.
//
// Each step says what it does and roughly how long it takes, then runs with its output captured:
// the compiler noise of a first install (node-gyp building better-sqlite3 when no prebuilt binary
// can be downloaded, about two minutes on two cores) stays hidden, a line every 30 s says the step
// is still running, and the step ends with `done (N s)`. When a step fails, its whole captured
// output is printed, then the failing command and its exit code.
// INBOX_KIT_SETUP_VERBOSE=1 shows the output live instead.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { pnpmCommand, pnpmEnv, PNPM_VERSION } from './pnpm.mjs';

/** How often a running step says it is still running, in ms. */
export const STILL_RUNNING_EVERY_MS = 30_000;

/**
 * Runs `cmd args` as one set-up step: prints `setup: <label> (<estimate>)…`, captures the output
 * (or shows it live with `verbose`), prints `setup: still <label>… (N s)` every
 * {@link STILL_RUNNING_EVERY_MS} and `setup: done (N s)` at the end. On failure prints the
 * captured output and `setup: <command> failed with exit code N`.
 *
 * @returns the exit code (0 on success).
 */
export function runStep({ label, estimate, cmd, args, env = process.env, verbose = false, out = console }) {
  const started = Date.now();
  const seconds = () => `${Math.round((Date.now() - started) / 1000)} s`;
  out.log(`setup: ${label} (${estimate})…`);
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { env, stdio: verbose ? 'inherit' : ['ignore', 'pipe', 'pipe'] });
    const captured = [];
    child.stdout?.on('data', (chunk) => captured.push(chunk));
    child.stderr?.on('data', (chunk) => captured.push(chunk));
    const ticker = setInterval(() => out.log(`setup: still ${label}… (${seconds()})`), STILL_RUNNING_EVERY_MS);
    const finish = (code) => {
      clearInterval(ticker);
      if (code === 0) {
        out.log(`setup: done (${seconds()})`);
      } else {
        const log = Buffer.concat(captured).toString('utf8').trimEnd();
        if (log) out.error(`${log}\n`);
        out.error(`setup: ${[cmd, ...args].join(' ')} failed with exit code ${code}${log ? ' (its output is above)' : ''}`);
      }
      resolve(code);
    };
    child.on('error', (error) => {
      captured.push(Buffer.from(`${error.message}\n`));
      finish(1);
    });
    child.on('close', (code, signal) => finish(code ?? (signal ? 1 : 0)));
  });
}

/** The set-up steps of this workspace: install (with an estimate for a first install), build. */
export function setupSteps({ frozen, firstInstall }) {
  const [cmd, prefix] = pnpmCommand();
  return [
    {
      label: `installing dependencies with pnpm ${PNPM_VERSION}`,
      estimate: firstInstall
        ? 'first run: about 2–3 minutes, most of it compiling the SQLite driver better-sqlite3 from source when no prebuilt binary can be downloaded'
        : 'a few seconds when nothing changed',
      cmd, args: [...prefix, 'install', ...(frozen ? ['--frozen-lockfile'] : [])],
    },
    {
      label: 'building the packages',
      estimate: firstInstall ? 'about a minute the first time' : 'a few seconds when nothing changed, about a minute otherwise',
      cmd, args: [...prefix, 'exec', 'turbo', 'run', 'build', '--output-logs=errors-only'],
    },
  ];
}

/** Runs every set-up step; resolves with the first non-zero exit code, or 0. `out` receives its lines (default the console). */
export async function setup({ verbose = process.env.INBOX_KIT_SETUP_VERBOSE === '1', out = console } = {}) {
  const frozen = existsSync('pnpm-lock.yaml') && process.env.INBOX_KIT_NO_FROZEN !== '1';
  const firstInstall = !existsSync('node_modules/.modules.yaml');
  const env = pnpmEnv();
  for (const step of setupSteps({ frozen, firstInstall })) {
    const code = await runStep({ ...step, env, verbose, out });
    if (code !== 0) return code;
  }
  return 0;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.exit(await setup());
}
