/**
 * Contract test of the Managed Agents surface driven by the official Anthropic Python SDK
 * (`anthropic` 1.13.0 from the package registry, in a virtualenv this file creates once under
 * `node_modules/.cache/inbox-kit-python/`), as `anthropic-sdk.contract.test.ts` does with the
 * TypeScript one (live-inbox.md "Managed Agents compatibility"): every sessions and events method,
 * sync and async, `?beta=true` on every path, strict model validation of every answer (the seeded
 * Sessions included), a steered Run streamed, errors with `request_id`, naive `created_at`
 * filters, a 409 not retried (`x-should-retry: false`). The script is `python/anthropic_contract.py`;
 * it asks this file to release each model step (the model is gated). On SQLite and, with
 * INBOX_KIT_TEST_PG_URL, PostgreSQL.
 *
 * Without Python 3 (or when the virtualenv cannot be installed), the test is skipped and says why
 * — skipped, never passed.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { fakeModel } from '@inbox-kit/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDemo, loadConfig, type Demo } from '../src/index.js';
import { PG_ADMIN_URL, freshPostgresDatabase } from './demo-process.js';
import { closeDemo, listen } from './listen.js';

const ANTHROPIC_PY_VERSION = '1.13.0';
const here = dirname(fileURLToPath(import.meta.url));
const SCRIPT = join(here, 'python', 'anthropic_contract.py');
const VENV = join(here, '..', '..', '..', 'node_modules', '.cache', 'inbox-kit-python', `anthropic-${ANTHROPIC_PY_VERSION}`);

/** The virtualenv's python with `anthropic` installed, or why there is none. */
function preparePython(): { python: string } | { reason: string } {
  const python = join(VENV, 'bin', 'python');
  const installed = () => spawnSync(python, ['-c', `import anthropic, sys; sys.exit(0 if anthropic.__version__ == "${ANTHROPIC_PY_VERSION}" else 1)`]).status === 0;
  if (existsSync(python) && installed()) return { python };
  const system = ['python3', 'python'].find((p) => spawnSync(p, ['-c', 'import sys, venv; sys.exit(0 if sys.version_info >= (3, 9) else 1)']).status === 0);
  if (system === undefined) return { reason: 'Python 3.9+ with venv is not installed' };
  mkdirSync(dirname(VENV), { recursive: true });
  rmSync(VENV, { recursive: true, force: true });
  const venv = spawnSync(system, ['-m', 'venv', VENV], { encoding: 'utf8' });
  if (venv.status !== 0) return { reason: `python -m venv failed: ${(venv.stderr || venv.stdout).trim().slice(-300)}` };
  const pip = spawnSync(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', `anthropic==${ANTHROPIC_PY_VERSION}`], { encoding: 'utf8', timeout: 240_000 });
  if (pip.status !== 0 || !installed()) return { reason: `pip install anthropic==${ANTHROPIC_PY_VERSION} failed: ${(pip.stderr || pip.stdout || '').trim().slice(-300)}` };
  return { python };
}

const prepared = preparePython();
const skipReason = 'reason' in prepared ? prepared.reason : undefined;
if (skipReason !== undefined) console.warn(`[demo] the Python SDK contract test is SKIPPED: ${skipReason}`);

/** A model whose steps the Python script releases one at a time. */
const gatedModel = () => fakeModel({ then: 'hold' });

/** Runs the script against `base`; resolves with its exit code and output. */
function runScript(python: string, base: string, keys: Record<string, string>, model: ReturnType<typeof gatedModel>): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(python, [SCRIPT], {
      env: { ...process.env, INBOX_KIT_BASE_URL: base, INBOX_KIT_OWNER_KEY: keys.acc_owner!, INBOX_KIT_STRANGER_KEY: keys.acc_stranger!, PYTHONUNBUFFERED: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const lines = createInterface({ input: child.stdout });
    // Releases are answered in order (one at a time), as the script waits for each `ok`.
    let queue = Promise.resolve();
    lines.on('line', (line) => {
      out += `${line}\n`;
      if (!line.startsWith('@@release ')) return;
      const { text, more } = JSON.parse(line.slice('@@release '.length)) as { text: string; more: boolean };
      queue = queue.then(async () => {
        (await model.next()).reply(text, more);
        child.stdin.write('ok\n');
      });
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

const backends: { name: string; env: () => Promise<{ env: Record<string, string>; drop(): Promise<void> }> }[] = [
  { name: 'SQLite', env: async () => ({ env: {}, drop: async () => {} }) },
];
if (PG_ADMIN_URL) {
  backends.push({
    name: 'PostgreSQL',
    env: async () => {
      const db = await freshPostgresDatabase('inbox_kit_pysdk');
      return { env: { DATABASE_URL: db.url }, drop: db.drop };
    },
  });
} else {
  describe('Anthropic Python SDK contract on PostgreSQL', () => {
    it.skip('SKIPPED: INBOX_KIT_TEST_PG_URL is not set (start `node scripts/postgres.mjs` and export the URL it prints)', () => {});
  });
}

if (skipReason !== undefined) {
  describe('Anthropic Python SDK contract', () => {
    it.skip(`SKIPPED: ${skipReason}`, () => {});
  });
} else {
  const { python } = prepared as { python: string };
  describe.each(backends)('Anthropic Python SDK contract on $name', (backend) => {
    let demo: Demo;
    let base: string;
    let dataDir: string;
    let drop: () => Promise<void>;
    let model: ReturnType<typeof gatedModel>;

    beforeAll(async () => {
      dataDir = mkdtempSync(join(tmpdir(), 'inbox-kit-pysdk-'));
      const db = await backend.env();
      drop = db.drop;
      model = gatedModel();
      demo = await buildDemo(loadConfig({ DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent', ...db.env }), { model });
      base = await listen(demo);
    });

    afterAll(async () => {
      await closeDemo(demo);
      await drop?.();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });

    it('every sessions and events method, sync and async, strict models, a steered Run streamed, errors with request_id', async () => {
      const result = await runScript(python, base, demo.credentials as Record<string, string>, model);
      expect(result.code, `${result.out}\n${result.err}`).toBe(0);
      expect(result.out).toContain('sync ok');
      expect(result.out).toContain('async ok');
    }, 120_000);
  });
}
