/**
 * Secrets of the demo process (`node apps/demo/dist/main.js`; needs the built demo): the API keys
 * are printed once, on the start that created them, never the service key (only in
 * `credentials.json`), and not at all when LOG_LEVEL is above info; the SQLite database, its
 * `-wal` and `-shm` files and `credentials.json` are 0600 and DATA_DIR 0700.
 */
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { keyLines } from '../src/startup-output.js';
import { credentialsOf, startDemoProcess, stopDemoProcess, waitUntil, type DemoProcess } from './demo-process.js';

const dirs: string[] = [];
const fresh = () => {
  const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-secrets-'));
  dirs.push(join(dir, 'data'));
  return join(dir, 'data');
};
afterAll(() => {
  for (const dir of dirs) rmSync(join(dir, '..'), { recursive: true, force: true });
});

/** Stops the process and resolves once everything it printed has been read. */
async function stopAndRead(p: DemoProcess): Promise<string> {
  const closed = new Promise<void>((done) => {
    if (p.child.stdout!.closed) done();
    else p.child.stdout!.on('close', () => done());
  });
  await stopDemoProcess(p);
  await closed;
  return p.output();
}

describe('keyLines', () => {
  const credentials = { acc_owner: 'ik_owner_secret', acc_deriver: 'ik_deriver_secret', service: 'ik_service_secret', admin: 'ik_admin_secret' };
  const file = { path: '/d/credentials.json', present: true, keys: 4, valid: 4 };
  const seeded = { credentials, created: true, kind: 'seeded' as const, file };
  const later = { credentials, created: false, kind: 'existing' as const, file };

  it('on the creating start: every account key but the service key; later starts: only where the file is', () => {
    const created = keyLines(seeded, 'info').join('\n');
    expect(created).toContain('ik_owner_secret');
    expect(created).toContain('ik_deriver_secret');
    expect(created).not.toContain('ik_service_secret');
    expect(created).toContain('ik_admin_secret');
    expect(created).toContain('/d/credentials.json');
    // Plain words: which keys were printed, where all of them are, and that the service key is only there.
    expect(created.split('\n')[0]).toBe('API keys, created now (shown once). All keys are kept in /d/credentials.json; the service key is only there.');
    const again = keyLines(later, 'debug').join('\n');
    expect(again).toContain('/d/credentials.json');
    for (const key of Object.values(credentials)) expect(again).not.toContain(key);
  });

  it('a later start without the file, or with keys that do not authenticate, says so and how to make a key', () => {
    const missing = keyLines({ ...later, credentials: {}, file: { ...file, present: false, keys: 0, valid: 0 } }, 'info').join('\n');
    expect(missing).toMatch(/no \/d\/credentials\.json here .*npm run admin -- keys create --account/);
    const stale = keyLines({ ...later, file: { ...file, valid: 1 } }, 'info').join('\n');
    expect(stale).toContain('3 of 4 do not authenticate against this database');
  });

  it('a later start after a creating start that never served: the file\'s working keys, once, never the service key', () => {
    const lines = keyLines({ ...later, unshown: true }, 'info');
    expect(lines[0]).toBe('API keys, created by an earlier start that ended before serving (shown once). All keys are kept in /d/credentials.json; the service key is only there.');
    expect(lines.join('\n')).toContain('ik_owner_secret');
    expect(lines.join('\n')).toContain('ik_admin_secret');
    expect(lines.join('\n')).not.toContain('ik_service_secret');
    expect(keyLines({ ...later, unshown: true }, 'warn')).toEqual([]);
    // No working key left in the file: the usual later-start lines.
    expect(keyLines({ ...later, unshown: true, credentials: {}, file: { ...file, valid: 0 } }, 'info').join('\n')).toContain('4 of 4 do not authenticate');
  });

  it('DEMO_SEED=false: the workspace and its admin key, once', () => {
    const lines = keyLines({ credentials: { admin: 'ik_admin_only' }, created: true, kind: 'bootstrapped', workspace: { id: 'ws_x', name: 'Team', created_at: 0 }, file }, 'info');
    expect(lines[0]).toBe('Workspace "Team" (ws_x) created with one admin key, shown once (also kept in /d/credentials.json):');
    expect(lines.join('\n')).toContain('ik_admin_only');
  });

  it('prints nothing when LOG_LEVEL is above info', () => {
    for (const level of ['warn', 'error', 'fatal', 'silent']) {
      expect(keyLines(seeded, level), level).toEqual([]);
    }
    for (const level of ['info', 'debug', 'trace']) expect(keyLines(seeded, level).length, level).toBeGreaterThan(1);
  });
});

describe('the demo process', () => {
  it('prints the keys once, when created, never the service key; restarts print none; files are owner-only', async () => {
    const dataDir = fresh();
    const first = await startDemoProcess({ DATA_DIR: dataDir, LOG_LEVEL: 'info' });
    const credentials = credentialsOf(dataDir);
    await waitUntil(() => first.output().includes(credentials.acc_observer!), 'the key lines');
    const printed = await stopAndRead(first);
    // Fastify's own listening line (written asynchronously) is out before the key lines, never among them.
    expect(printed.indexOf('Server listening')).toBeGreaterThanOrEqual(0);
    expect(printed.indexOf('Server listening')).toBeLessThan(printed.indexOf('API keys, created now'));
    for (const [account, key] of Object.entries(credentials)) {
      if (account === 'service') expect(printed).not.toContain(key);
      else expect(printed, account).toContain(key);
    }

    const second = await startDemoProcess({ DATA_DIR: dataDir, LOG_LEVEL: 'info' });
    await waitUntil(() => second.output().includes('API keys: in'), 'the credentials file line');
    // While it runs (a clean stop checkpoints and removes -wal and -shm).
    const mode = (file: string) => statSync(join(dataDir, file)).mode & 0o777;
    expect(mode('.')).toBe(0o700);
    for (const file of ['inbox-kit.sqlite', 'inbox-kit.sqlite-wal', 'inbox-kit.sqlite-shm', 'credentials.json']) expect(mode(file), file).toBe(0o600);
    const again = await stopAndRead(second);
    for (const key of Object.values(credentials)) expect(again).not.toContain(key);
  });

  it('a creating start that ends on a taken port prints no key; the next start that serves prints them, once', async () => {
    const dataDir = fresh();
    const blocker = createServer();
    const port = await new Promise<number>((r) => blocker.listen(0, '127.0.0.1', () => r((blocker.address() as { port: number }).port)));
    let failed = '';
    try {
      await startDemoProcess({ DATA_DIR: dataDir, LOG_LEVEL: 'info', PORT: String(port) });
    } catch (error) {
      failed = (error as Error).message;
    } finally {
      await new Promise<void>((r) => blocker.close(() => r()));
    }
    expect(failed).toContain(`port ${port} is taken`);
    const credentials = credentialsOf(dataDir);
    for (const key of Object.values(credentials)) expect(failed).not.toContain(key);
    expect(existsSync(join(dataDir, 'credentials.unshown'))).toBe(true);

    const next = await startDemoProcess({ DATA_DIR: dataDir, LOG_LEVEL: 'info' });
    await waitUntil(() => next.output().includes(credentials.acc_observer!), 'the key lines');
    const printed = await stopAndRead(next);
    expect(printed).toContain('API keys, created by an earlier start that ended before serving (shown once)');
    for (const [account, key] of Object.entries(credentials)) {
      if (account === 'service') expect(printed).not.toContain(key);
      else expect(printed, account).toContain(key);
    }
    expect(existsSync(join(dataDir, 'credentials.unshown'))).toBe(false);

    const third = await startDemoProcess({ DATA_DIR: dataDir, LOG_LEVEL: 'info' });
    await waitUntil(() => third.output().includes('API keys: in'), 'the credentials file line');
    const again = await stopAndRead(third);
    for (const key of Object.values(credentials)) expect(again).not.toContain(key);
  });

  it('prints no key at all with LOG_LEVEL=warn, even on the creating start', async () => {
    const dataDir = fresh();
    const p = await startDemoProcess({ DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
    const printed = await stopAndRead(p);
    expect(printed).toContain('listening on');
    for (const key of Object.values(credentialsOf(dataDir))) expect(printed).not.toContain(key);
  });
});
