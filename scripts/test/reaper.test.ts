/**
 * scripts/reaper.mjs: the throw-away servers' last-resort cleanup. A process killed by a signal
 * runs no `exit` handler (Ctrl-C during `npm test` left PostgreSQL running); the watcher runs the
 * cleanup once its starter is gone, and not at all once cancelled.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const reaper = resolve(__dirname, '../reaper.mjs');
const scratch = mkdtempSync(join(tmpdir(), 'inbox-kit-reaper-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Starts a process that arms the reaper (touch `marker`, remove `dir`), optionally cancels it, then waits. */
function starter(marker: string, dir: string, cancel: boolean) {
  const source = `import(${JSON.stringify(reaper)}).then(({ reapOnDeath }) => {
    const r = reapOnDeath([['touch', [${JSON.stringify(marker)}]]], [${JSON.stringify(dir)}]);
    ${cancel ? 'r.cancel();' : ''}
    console.log('armed'); setInterval(() => {}, 1000);
  });`;
  const child = spawn(process.execPath, ['-e', source], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise<typeof child>((ready) => child.stdout.once('data', () => ready(child)));
}

const until = async (check: () => boolean, ms = 5_000) => {
  for (const end = Date.now() + ms; Date.now() < end && !check();) await new Promise((r) => setTimeout(r, 50));
  return check();
};

describe('reapOnDeath', () => {
  for (const signal of ['SIGINT', 'SIGKILL'] as const) {
    it(`runs the commands and removes the directories once its starter dies of ${signal}`, async () => {
      const marker = join(scratch, `reaped-${signal}`);
      const dir = join(scratch, `dir-${signal}`);
      mkdirSync(dir);
      const child = await starter(marker, dir, false);
      expect(existsSync(marker)).toBe(false);
      child.kill(signal);
      expect(await until(() => existsSync(marker) && !existsSync(dir))).toBe(true);
    });
  }

  it('does nothing once cancelled (the server was stopped the normal way)', async () => {
    const marker = join(scratch, 'cancelled');
    const dir = join(scratch, 'dir-cancelled');
    mkdirSync(dir);
    const child = await starter(marker, dir, true);
    await new Promise((r) => setTimeout(r, 200)); // the watcher has its SIGTERM
    child.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 1_000));
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(dir)).toBe(true);
  });
});
