/**
 * `npm run demo` as a user runs it (README "Set up"), minus the set-up step
 * (INBOX_KIT_SKIP_SETUP=1; the suite has built already): Ctrl-C — SIGINT to the whole foreground
 * process group, as a terminal sends it — ends with one `inbox-kit demo stopped` line and exit
 * status 0 (no pnpm or npm failure block); a port that is taken ends with exit status 1 and a line
 * that names `PORT`. Needs the built demo and npm on the PATH.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { stopWhenFileEnds, waitUntil } from './demo-process.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/** Runs `npm run demo` in its own process group; `output()` is everything it printed. */
function npmRunDemo(env: Record<string, string>) {
  const child = spawn('npm', ['run', 'demo'], {
    cwd: root,
    detached: true, // its own process group, like a terminal's foreground job
    env: { ...process.env, INBOX_KIT_SKIP_SETUP: '1', HOST: '127.0.0.1', LOG_LEVEL: 'silent', npm_config_update_notifier: 'false', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  stopWhenFileEnds(child, { group: true });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => child.on('close', (code, signal) => done({ code, signal })));
  return { child, exited, output: () => out };
}

const lastLine = (text: string) => text.trimEnd().split('\n').at(-1);

describe('npm run demo', () => {
  const dirs: string[] = [];
  let blocker: Server | undefined;
  afterAll(async () => {
    await new Promise<void>((r) => (blocker ? blocker.close(() => r()) : r()));
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('Ctrl-C stops the server with one "stopped" line and exit status 0', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-ctrl-c-'));
    dirs.push(dir);
    const run = npmRunDemo({ DATA_DIR: dir, PORT: '0' });
    await waitUntil(() => /listening on http:\/\/127\.0\.0\.1:\d+/.test(run.output()), 'the demo to listen', 30_000);
    process.kill(-run.child.pid!, 'SIGINT');
    const { code, signal } = await run.exited;
    expect({ code, signal }, run.output()).toEqual({ code: 0, signal: null });
    expect(lastLine(run.output())).toBe('inbox-kit demo stopped');
    expect(run.output().match(/inbox-kit demo stopped/g)).toHaveLength(1);
    expect(run.output()).not.toMatch(/ERR_PNPM|npm error|ELIFECYCLE/);
  });

  it('a taken port ends with exit status 1 and says that PORT picks another', { timeout: 60_000 }, async () => {
    blocker = createServer();
    const port = await new Promise<number>((r) => blocker!.listen(0, '127.0.0.1', () => r((blocker!.address() as { port: number }).port)));
    const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-port-taken-'));
    dirs.push(dir);
    const run = npmRunDemo({ DATA_DIR: dir, PORT: String(port) });
    const { code } = await run.exited;
    expect(code, run.output()).toBe(1);
    expect(run.output()).toContain(`EADDRINUSE`);
    expect(lastLine(run.output())).toBe(
      `inbox-kit demo: port ${port} is taken (another demo running?): stop that process, or pick another port with PORT, e.g. PORT=${port + 1} npm run demo`,
    );
    expect(run.output()).not.toMatch(/ERR_PNPM|at .*\.js:\d+/);
  });
});
