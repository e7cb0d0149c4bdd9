/**
 * The demo's first and later starts (platform.md "Running the demo"), on SQLite and PostgreSQL,
 * as real processes: `DEMO_SEED=false` starts an empty database with one workspace
 * (`INBOX_KIT_WORKSPACE_NAME`) and one admin key, printed once and kept as `"admin"` in
 * `credentials.json`; later starts never depend on that file — deleted, holding a revoked seeded
 * key, or absent on a replica (a second process with its own DATA_DIR) — they all start, say where
 * the keys are (or are not) and offer on the web page only the keys that still authenticate. A
 * restored database: test/backup.test.ts. Every case has its own DATA_DIR and database: they run
 * concurrently. Needs the build (and INBOX_KIT_TEST_PG_URL for PostgreSQL).
 */
import { copyFileSync, existsSync, mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  adminJson, credentialsOf, freshPostgresDatabase, PG_ADMIN_URL, startDemoProcess, stopDemoProcess, waitUntil, type DemoProcess,
} from './demo-process.js';

const engines = [
  { name: 'SQLite', pg: false },
  { name: 'PostgreSQL', pg: true },
] as const;

/** Stops the process and resolves with everything it printed. */
async function stopAndRead(p: DemoProcess): Promise<string> {
  const closed = new Promise<void>((done) => (p.child.stdout!.closed ? done() : p.child.stdout!.on('close', () => done())));
  await stopDemoProcess(p);
  await closed;
  return p.output();
}

const get = async (url: string, key?: string) => {
  const res = await fetch(url, key === undefined ? {} : { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: (await res.json()) as any };
};

describe.concurrent.each(engines)('starts on $name', ({ pg }) => {
  const skip = pg && !PG_ADMIN_URL;
  const cleanup: Array<() => Promise<void> | void> = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  /** A fresh DATA_DIR (and, on PostgreSQL, a fresh database). */
  async function place(label: string): Promise<Record<string, string>> {
    const dir = mkdtempSync(join(tmpdir(), `inbox-kit-${label}-`));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const env: Record<string, string> = { DATA_DIR: join(dir, 'data'), LOG_LEVEL: 'info' };
    if (pg) {
      const db = await freshPostgresDatabase(`inbox_kit_${label.replace(/-/g, '_')}`);
      cleanup.push(() => db.drop());
      env.DATABASE_URL = db.url;
    }
    return env;
  }

  it('DEMO_SEED=false: one workspace and one admin key, printed once; nothing else; a restart prints no key', async (ctx) => {
    if (skip) return ctx.skip('INBOX_KIT_TEST_PG_URL is not set');
    const env: Record<string, string> = { ...(await place('no-seed')), DEMO_SEED: 'false', INBOX_KIT_WORKSPACE_NAME: 'Platform team' };
    const first = await startDemoProcess(env);
    const credentials = credentialsOf(env.DATA_DIR!);
    expect(Object.keys(credentials)).toEqual(['admin']);
    await waitUntil(() => first.output().includes(credentials.admin!), 'the admin key line');
    const accounts = await get(`${first.url}/admin/accounts`, credentials.admin);
    expect(accounts.status).toBe(200);
    expect(accounts.body.items).toEqual([expect.objectContaining({ name: 'Administrator', disabled_at: null })]);
    const workspace = accounts.body.items[0].workspace_id as string;
    expect(workspace).not.toBe('ws_demo');
    expect((await get(`${first.url}/projects`, credentials.admin)).body.items).toEqual([]);
    expect((await get(`${first.url}/demo/accounts`)).body.accounts).toEqual([]);
    const printed = await stopAndRead(first);
    expect(printed).toContain(`Workspace "Platform team" (${workspace}) created with one admin key, shown once`);
    expect(printed).toContain('first start without demo data');
    expect(printed.split(credentials.admin!).length - 1).toBe(1);

    const again = await startDemoProcess(env);
    const later = await stopAndRead(again);
    expect(later).not.toContain(credentials.admin);
    expect(later).toContain('(printed only on the start that created them)');
    expect(later).not.toMatch(/freshly seeded|first start without/);
  });

  it('without credentials.json, with a revoked seeded key, and as a replica with its own DATA_DIR: every start serves', async (ctx) => {
    if (skip) return ctx.skip('INBOX_KIT_TEST_PG_URL is not set');
    const env = await place('later-starts');
    const seeded = await startDemoProcess(env);
    const file = join(env.DATA_DIR!, 'credentials.json');
    const credentials = credentialsOf(env.DATA_DIR!);
    await stopAndRead(seeded);
    copyFileSync(file, `${file}.saved`);

    // The file deleted: the server starts; the seeded data and keys still work; the page offers none.
    unlinkSync(file);
    const bare = await startDemoProcess(env);
    try {
      await waitUntil(() => bare.output().includes('API keys: no '), 'the line about the missing file');
      expect(bare.output()).toContain(`no ${file} here`);
      expect((await get(`${bare.url}/projects/proj_main`, credentials.acc_owner)).status).toBe(200);
      expect((await get(`${bare.url}/demo/accounts`)).body.accounts).toEqual([]);
      expect(existsSync(file)).toBe(false);
    } finally {
      await stopAndRead(bare);
    }

    // The owner's seeded key revoked (the command line), the file put back: starts; the owner is not offered.
    const { items } = await adminJson(['keys', 'list', '--account', 'acc_owner', '--workspace', 'ws_demo'], env);
    const standard = items.find((k: { kind: string }) => k.kind === 'standard');
    await adminJson(['keys', 'revoke', standard.id], env);
    copyFileSync(`${file}.saved`, file);
    const revoked = await startDemoProcess(env);
    try {
      await waitUntil(() => revoked.output().includes('API keys: in'), 'the credentials line');
      expect(revoked.output()).toContain('1 of 7 do not authenticate against this database');
      const offered = (await get(`${revoked.url}/demo/accounts`)).body.accounts.map((a: { account_id: string }) => a.account_id);
      expect(offered).toEqual(['acc_deriver', 'acc_observer', 'acc_outsider', 'acc_stranger']);
      expect((await get(`${revoked.url}/me`, credentials.acc_owner)).status).toBe(401);

      if (pg) {
        // A replica: the same database, another DATA_DIR without credentials.json.
        const replicaDir = mkdtempSync(join(tmpdir(), 'inbox-kit-replica-'));
        cleanup.push(() => rmSync(replicaDir, { recursive: true, force: true }));
        const replica = await startDemoProcess({ ...env, DATA_DIR: replicaDir, PORT: '0' });
        try {
          expect(replica.output()).not.toContain('freshly seeded');
          expect((await get(`${replica.url}/me`, credentials.acc_deriver)).body.account.id).toBe('acc_deriver');
          expect(existsSync(join(replicaDir, 'credentials.json'))).toBe(false);
        } finally {
          await stopAndRead(replica);
        }
      }
    } finally {
      await stopAndRead(revoked);
    }
  });
});
