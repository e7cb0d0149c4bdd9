// What scripts/test.mjs found on this machine for the tests that need more than Node: PostgreSQL
// (the storage, HTTP and demo tests on PostgreSQL), Python 3 with `anthropic` (the demo's Python SDK
// contract test) and Chromium (the demo's browser tests). One line each, printed before the run
// and again before its closing `N passed, N failed, N skipped` line; a test whose tool is missing
// skips and says why (counted as skipped, never as passed).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The URL without its password. */
const shown = (url) => {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(not a URL)';
  }
};

/** `postgres (PostgreSQL) 15.18 …` → `15.18`, or null when `<bin>/postgres --version` does not answer. */
export function postgresVersion(bin) {
  const r = spawnSync(join(bin, 'postgres'), ['--version'], { encoding: 'utf8', timeout: 10_000 });
  return r.status === 0 ? (/PostgreSQL\)?\s+([\d.]+)/.exec(r.stdout)?.[1] ?? r.stdout.trim()) : null;
}

/**
 * The PostgreSQL line. `state`: `given` (INBOX_KIT_TEST_PG_URL was set: `url`), `started` (`url`,
 * `version`), `missing` (no `initdb` in `bin`) or `failed` (the binaries are there but the server
 * did not start: `error`).
 */
export function postgresLine({ state, bin, url, version, error }) {
  switch (state) {
    case 'given': return `test: PostgreSQL: INBOX_KIT_TEST_PG_URL is set (${shown(url)}); the PostgreSQL tests run on it`;
    case 'started': return `test: PostgreSQL ${version ?? '(version unknown)'} found in ${bin} and started (${shown(url)}); the PostgreSQL tests run on it`;
    case 'missing': return `test: PostgreSQL not found (no initdb in ${bin}; INBOX_KIT_PG_BIN names another directory); the PostgreSQL tests skip, each saying why`;
    default: return `test: PostgreSQL found in ${bin} but did not start (${error}); the PostgreSQL tests skip, each saying why`;
  }
}

/** Python 3.9+ with venv (`python3` or `python`), and the `anthropic` virtualenvs the contract test made, if any. */
export function probePython() {
  for (const python of ['python3', 'python']) {
    const r = spawnSync(python, ['-c', 'import sys, venv; print("%d.%d.%d" % sys.version_info[:3]); sys.exit(0 if sys.version_info >= (3, 9) else 1)'], { encoding: 'utf8', timeout: 10_000 });
    if (r.status === 0) {
      const cache = join(root, 'node_modules', '.cache', 'inbox-kit-python');
      const venvs = existsSync(cache) ? readdirSync(cache).filter((d) => d.startsWith('anthropic-') && existsSync(join(cache, d, 'bin', 'python'))) : [];
      return { python, version: r.stdout.trim(), anthropic: venvs.map((d) => d.slice('anthropic-'.length)), cache };
    }
  }
  return null;
}

/** The Python line, from {@link probePython}'s answer. */
export function pythonLine(found) {
  if (found === null) return 'test: Python 3.9+ with venv not found; the Anthropic Python SDK contract test skips, saying why';
  const sdk = found.anthropic.length > 0
    ? `anthropic ${found.anthropic.join(', ')} already installed in ${found.cache}`
    : `on its first run it installs anthropic into ${found.cache} with pip, which needs the network; if that fails it skips, saying why`;
  return `test: Python ${found.version} (${found.python}) found; the Anthropic Python SDK contract test runs (${sdk})`;
}

/** The Chromium the browser tests drive (apps/demo/test/browser/harness.ts: INBOX_KIT_CHROMIUM, else Debian's). */
export function probeChromium(env = process.env) {
  const path = env.INBOX_KIT_CHROMIUM || '/usr/bin/chromium';
  return { path, found: existsSync(path) };
}

/** The Chromium line, from {@link probeChromium}'s answer; `ci`: under CI a missing Chromium fails the browser tests. */
export function chromiumLine({ path, found }, ci = Boolean(process.env.CI)) {
  if (found) return `test: Chromium found at ${path}; the browser tests run`;
  return `test: Chromium not found at ${path} (INBOX_KIT_CHROMIUM names another binary); the browser tests ${ci ? 'fail (CI)' : 'skip, saying why'}`;
}
