/**
 * scripts/steering-walkthrough.mjs, the README's Live Inbox walkthrough driving itself, against
 * the built demo as a process: every step answers as the README says and the replaced message is
 * in the committed history with a Run-scoped id. The model is slowed (3 s per step) so the Run is
 * still active while the script steers it on a loaded machine.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { startDemoProcess, stopDemoProcess, type DemoProcess } from './demo-process.js';

const script = fileURLToPath(new URL('../../../scripts/steering-walkthrough.mjs', import.meta.url));
const dirs: string[] = [];
let demo: DemoProcess | undefined;
afterAll(async () => {
  await stopDemoProcess(demo);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Runs the walkthrough with `env` over the test's environment; its exit code and stdout + stderr. */
function walkthrough(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.on('close', (exitCode) => resolve({ code: exitCode, output }));
  });
}

it('without a demo, or without its keys, ends with one line saying what to do (no stack trace)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-walkthrough-'));
  dirs.push(dir);
  // A port nothing listens on: one the system just handed out and took back.
  const port = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port: free } = probe.address() as AddressInfo;
      probe.close(() => resolve(free));
    });
  });
  const url = `http://127.0.0.1:${port}`;
  const noKeys = await walkthrough({ INBOX_KIT_URL: url, DATA_DIR: dir });
  expect(noKeys.code).toBe(1);
  expect(noKeys.output).toContain(`cannot read the demo's keys from ${join(dir, 'credentials.json')}`);
  writeFileSync(join(dir, 'credentials.json'), JSON.stringify({ acc_owner: 'ik_x' }));
  const noDemo = await walkthrough({ INBOX_KIT_URL: url, DATA_DIR: dir });
  expect(noDemo.code).toBe(1);
  expect(noDemo.output).toContain(`no demo answers at ${url}: start it first (npm run demo), or point INBOX_KIT_URL at it`);
  for (const { output } of [noKeys, noDemo]) expect(output).not.toMatch(/\n\s+at /);
});

it('runs the steering walkthrough and prints each answer', { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-walkthrough-'));
  dirs.push(dir);
  demo = await startDemoProcess({ DATA_DIR: dir, DEMO_MODEL_STEP_MS: '3000' });
  const { code, output } = await walkthrough({ INBOX_KIT_URL: demo.url, DATA_DIR: dir });
  expect(code, output).toBe(0);
  expect(output).toContain('200 {"active":true,"version":0,"messages":[]}');
  expect(output).toContain('200 {"id":1}');
  expect(output).toContain('200 {"id":2}');
  expect(output).toMatch(/-d '\{"order":\[2,1\]\}'\n204/);
  expect(output).toMatch(/live-inbox\/2 -H "\$AUTH"\n204/);
  expect(output).toMatch(/run_[\w-]+-inbox-\d+: Keep it very short/);
  expect(output.trimEnd().split('\n').at(-1)).toBe('steering walkthrough: done');
});
