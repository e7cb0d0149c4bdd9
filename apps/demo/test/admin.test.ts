/**
 * Accounts and keys without code (platform.md "Administration"), on SQLite and PostgreSQL, against
 * the built demo as a real process: over HTTP with the `admin` key the first start wrote to
 * `credentials.json` (create an account and a key, use it, list it without its secret, rotate it
 * with and without a grace period, revoke it: 401 at once), and with the command line
 * (`npm run admin -- …`, another process on the same database while the server runs: the server
 * refuses a revoked, rotated or disabled account's key within its principal cache's lifetime,
 * PRINCIPAL_CACHE_TTL_MS: 1 s by default, 200 ms here). With no DATA_DIR or DATABASE_URL the
 * command line opens the server's default database (DATA_DIR=data) and, when there is none yet,
 * says so and creates no file. The engines (each its own server and database) and the
 * database-less command-line checks run concurrently; within an engine, in order. Needs the build
 * (and INBOX_KIT_TEST_PG_URL for PostgreSQL).
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type InboxKitClient } from '@inbox-kit/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminJson, credentialsOf, freshPostgresDatabase, PG_ADMIN_URL, runAdminCommand, startDemoProcess, stopDemoProcess, type DemoProcess,
} from './demo-process.js';

/** The servers' principal cache lifetime here (PRINCIPAL_CACHE_TTL_MS, ms; the demo's default is 1,000). */
const PRINCIPAL_CACHE_TTL_MS = 200;

const engines = [
  { name: 'SQLite', pg: false },
  { name: 'PostgreSQL', pg: true },
] as const;

describe.concurrent.each(engines)('administration on $name', ({ pg }) => {
  const skip = pg && !PG_ADMIN_URL;
  let demo: DemoProcess | undefined;
  let dir = '';
  let env: Record<string, string> = {};
  let drop: (() => Promise<void>) | undefined;
  let admin: InboxKitClient;

  beforeAll(async () => {
    if (skip) return;
    dir = mkdtempSync(join(tmpdir(), 'inbox-kit-admin-'));
    env = { DATA_DIR: join(dir, 'data'), PRINCIPAL_CACHE_TTL_MS: String(PRINCIPAL_CACHE_TTL_MS) };
    if (pg) {
      const db = await freshPostgresDatabase('inbox_kit_admin');
      drop = db.drop;
      env.DATABASE_URL = db.url;
    }
    demo = await startDemoProcess(env);
    admin = createClient({ baseUrl: demo.url, apiKey: credentialsOf(env.DATA_DIR!).admin!, retry: { retries: 0 } });
  });
  afterAll(async () => {
    await stopDemoProcess(demo);
    await drop?.();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** GET /me with `secret`: the status and body. */
  const me = async (secret: string) => {
    const res = await fetch(`${demo!.url}/me`, { headers: { authorization: `Bearer ${secret}` } });
    return { status: res.status, body: (await res.json()) as any };
  };
  /**
   * Polls GET /me with `secret` until it answers 401; resolves with the ms it took. Meanwhile the
   * cached principal answers 200 (or, for a disabled account, 404 `account_not_found`: the account
   * is no member any more).
   */
  /**
   * The documented delay (the principal cache's lifetime) after a revocation another process
   * committed: once it has passed, the next request with `secret` is refused — no timing measured.
   */
  const refusedOnceCacheExpired = async (secret: string) => {
    await new Promise((r) => setTimeout(r, PRINCIPAL_CACHE_TTL_MS + 50));
    const { status, body } = await me(secret);
    expect(status, JSON.stringify(body)).toBe(401);
    expect(body.error.code).toBe('invalid_credentials');
  };

  it.sequential('over HTTP: create an account and a key, use it, list it (no secret), rotate it, revoke it → 401', async (ctx) => {
    if (skip) return ctx.skip('INBOX_KIT_TEST_PG_URL is not set');
    const account = await admin.admin.accounts.create({ name: 'Nia Newcomer' });
    expect(account).toMatchObject({ name: 'Nia Newcomer', workspaceId: 'ws_demo', disabledAt: null });
    const { key, secret } = await admin.admin.keys.create(account.id);
    expect(await me(secret)).toMatchObject({ status: 200, body: { account: { id: account.id }, workspace_id: 'ws_demo', key_kind: 'standard' } });

    // Listed with its last use, never with its secret or hash.
    const raw = await (await fetch(`${demo!.url}/admin/keys?account_id=${account.id}`, { headers: { authorization: `Bearer ${credentialsOf(env.DATA_DIR!).admin}` } })).text();
    expect(raw).toContain(key.id);
    expect(raw).not.toContain(secret);
    expect(raw).not.toContain('key_hash');
    for (let i = 0; ; i++) {
      const [listed] = (await admin.admin.keys.list({ accountId: account.id })).items;
      if (listed?.lastUsedAt !== null) break;
      if (i > 200) throw new Error('last_used_at was never recorded');
      await new Promise((r) => setTimeout(r, 10));
    }

    // Rotation without grace: the old secret is refused at once.
    const rotated = await admin.admin.keys.rotate(key.id);
    expect((await me(secret)).status).toBe(401);
    expect((await me(rotated.secret)).status).toBe(200);
    // With a grace period both work until it ends.
    const graced = await admin.admin.keys.rotate(rotated.key.id, { graceMs: 60_000 });
    expect(graced.previous.revokedAt).toBeGreaterThan(Date.now());
    expect((await me(rotated.secret)).status).toBe(200);
    expect((await me(graced.secret)).status).toBe(200);
    expect((await admin.admin.keys.list({ accountId: account.id })).items.map((k) => k.id).sort()).toEqual([graced.key.id, rotated.key.id].sort());

    // Revocation: 401 from the next request on (this process revoked it).
    await admin.admin.keys.revoke(rotated.key.id);
    expect((await me(rotated.secret)).status).toBe(401);
    await admin.admin.keys.revoke(graced.key.id);
    expect((await me(graced.secret)).status).toBe(401);
    expect((await admin.admin.keys.list({ accountId: account.id })).items).toEqual([]);
    expect((await admin.admin.keys.list({ accountId: account.id, includeRevoked: true })).items).toHaveLength(3);

    // A standard key may not administer; every write is in the administration log.
    await expect(createClient({ baseUrl: demo!.url, apiKey: credentialsOf(env.DATA_DIR!).acc_owner!, retry: { retries: 0 } }).admin.keys.list())
      .rejects.toMatchObject({ status: 403, code: 'permission_denied' });
    const logs = (await admin.admin.operationLogs.list({ limit: 10 })).items;
    expect(logs.slice(0, 6).map((l) => l.action)).toEqual(['api_key.revoke', 'api_key.revoke', 'api_key.rotate', 'api_key.rotate', 'api_key.create', 'account.create']);
    expect(logs.every((l) => l.projectId === null && l.actorAccountId === 'acc_admin')).toBe(true);
  });

  it.sequential('with the command line, while the server runs: the server refuses a revoked key once the principal cache delay has passed', { timeout: 150_000 }, async (ctx) => {
    if (skip) return ctx.skip('INBOX_KIT_TEST_PG_URL is not set');
    const ws = ['--workspace', 'ws_demo'];
    // Two workspaces and no --workspace (checked at the end): independent of the rest, run meanwhile.
    const ambiguousRun = runAdminCommand(['accounts', 'list'], env);
    const { account } = await adminJson(['accounts', 'create', '--name', 'Cleo Command-line', ...ws], env);
    const issued = await adminJson(['keys', 'create', '--account', account.id, ...ws], env);
    expect(issued.secret).toMatch(/^ik_/);
    expect((await me(issued.secret)).status).toBe(200);
    const listed = await runAdminCommand(['keys', 'list', '--account', account.id, ...ws], env);
    expect(listed.code).toBe(0);
    expect(listed.stdout.trim().split('\n')).toEqual([expect.stringMatching(new RegExp(`^${issued.key.id}  standard  ${account.id}  created .* last used `))]);
    expect(listed.stdout).not.toContain(issued.secret);

    // Rotate: the old secret (cached by the server a moment ago) is refused once the delay has passed.
    expect((await me(issued.secret)).status).toBe(200);
    const rotated = await adminJson(['keys', 'rotate', issued.key.id], env);
    await refusedOnceCacheExpired(issued.secret);
    expect((await me(rotated.secret)).status).toBe(200);

    // Revoke.
    expect((await me(rotated.secret)).status).toBe(200);
    const revoked = await runAdminCommand(['keys', 'revoke', rotated.key.id], env);
    expect(revoked.code, revoked.stderr).toBe(0);
    await refusedOnceCacheExpired(rotated.secret);

    // Disable the account: its last key goes too.
    const last = await adminJson(['keys', 'create', '--account', account.id, '--kind', 'service', ...ws], env);
    expect((await me(last.secret)).status).toBe(200);
    const disabled = await adminJson(['accounts', 'disable', account.id, ...ws], env);
    expect(disabled.account.disabled_at).toEqual(expect.any(Number));
    await refusedOnceCacheExpired(last.secret);

    // Enable it again: a member once more; its revoked keys stay revoked, a new one works.
    const enabled = await adminJson(['accounts', 'enable', account.id, ...ws], env);
    expect(enabled.account.disabled_at).toBeNull();
    expect((await me(last.secret)).status).toBe(401);
    const after = await adminJson(['keys', 'create', '--account', account.id, ...ws], env);
    expect((await me(after.secret)).status).toBe(200);
    const accounts = await adminJson(['accounts', 'list', ...ws], env);
    expect(accounts.items.find((a: { id: string }) => a.id === account.id)?.disabled_at).toBeNull();

    // The command line's writes are in the administration log, as `system`.
    const logs = (await admin.admin.operationLogs.list({ limit: 5 })).items;
    expect(logs.slice(0, 3).map((l) => [l.action, l.actorAccountId, l.targetId])).toEqual([
      ['api_key.create', 'system', after.key.id], ['account.enable', 'system', account.id], ['account.disable', 'system', account.id],
    ]);
    // Two workspaces and no --workspace: refused, naming them.
    const ambiguous = await ambiguousRun;
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr).toMatch(/2 workspaces; name one with --workspace \(ws_demo, ws_other\)|--workspace \(ws_other, ws_demo\)/);
  });
});

describe.concurrent('the administration command line', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('with neither DATA_DIR nor DATABASE_URL: the server\'s default database, DATA_DIR=data from the same directory; none there yet: says so, creates nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-admin-default-'));
    dirs.push(dir);
    const file = join(dir, 'data', 'inbox-kit.sqlite');
    // No database at the default yet: refused, naming the file and how to get one; nothing created.
    const missing = await runAdminCommand(['accounts', 'list'], {}, { cwd: dir });
    expect(missing.code, missing.stderr).toBe(1);
    expect(missing.stderr).toContain(`no database at ${file} (no DATA_DIR or DATABASE_URL set: the server's default, DATA_DIR=data)`);
    expect(missing.stderr).toContain('Start the demo once to create and seed it (npm run demo), or set DATA_DIR (or DATABASE_URL)');
    expect(readdirSync(dir)).toEqual([]);
    // The server started in the same directory with neither variable creates and seeds that file;
    // the command line, started the same way, reads it.
    const demo = await startDemoProcess({ DATA_DIR: '', DATABASE_URL: '' }, { cwd: dir });
    try {
      expect(existsSync(file)).toBe(true);
      const accounts = await adminJson(['accounts', 'list', '--workspace', 'ws_demo'], {}, { cwd: dir });
      expect(accounts.items.map((a: { id: string }) => a.id)).toEqual(expect.arrayContaining(['acc_owner', 'acc_deriver']));
      // The seed's two workspaces and no --workspace: refused, naming both.
      const ambiguous = await runAdminCommand(['keys', 'list'], {}, { cwd: dir });
      expect(ambiguous.code).toBe(1);
      expect(ambiguous.stderr).toMatch(/this database has 2 workspaces; name one with --workspace \((ws_demo, ws_other|ws_other, ws_demo)\)/);
    } finally {
      await stopDemoProcess(demo);
    }
    // An explicit DATA_DIR still wins over the default.
    const elsewhere = await runAdminCommand(['accounts', 'list'], { DATA_DIR: 'elsewhere' }, { cwd: dir });
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toContain(`no database at ${join(dir, 'elsewhere', 'inbox-kit.sqlite')}: check DATA_DIR`);
    expect(existsSync(join(dir, 'elsewhere'))).toBe(false);
    // --help says which database it opens.
    const help = await runAdminCommand(['--help'], {}, { cwd: dir });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('DATA_DIR defaults to');
  });

  it('refuses a DATA_DIR holding no database (only migrate creates one) and usage mistakes (exit 2)', async () => {
    // A DATA_DIR with no database: refused (only `migrate` creates one), nothing created.
    const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-admin-empty-'));
    dirs.push(dir);
    const missing = await runAdminCommand(['accounts', 'create', '--name', 'x'], { DATA_DIR: join(dir, 'nowhere') });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`no database at ${join(dir, 'nowhere', 'inbox-kit.sqlite')}`);
    expect(existsSync(join(dir, 'nowhere'))).toBe(false);
    // Usage mistakes: exit 2 with the usage text.
    const unknown = await runAdminCommand(['keys', 'forge'], { DATA_DIR: dir });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Usage: npm run admin -- <command>');
  });

  it('migrate creates and migrates a database, then a workspace with its admin key serves a fresh server', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-admin-migrate-'));
    dirs.push(dir);
    const env = { DATA_DIR: join(dir, 'data') };
    const migrated = await adminJson(['migrate'], env);
    expect(migrated.newly_applied).toContain('0010_administration');
    expect(migrated.pending).toEqual([]);
    expect((await adminJson(['migrate'], env)).newly_applied).toEqual([]);
    const made = await adminJson(['workspaces', 'create', '--name', 'Ops team'], env);
    expect(made.workspace.name).toBe('Ops team');
    // The server starts on it as a later start (no demo data: the database has a workspace).
    const demo = await startDemoProcess({ ...env, LOG_LEVEL: 'info' });
    try {
      const res = await fetch(`${demo.url}/admin/accounts`, { headers: { authorization: `Bearer ${made.secret}` } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as any).items.map((a: { name: string }) => a.name)).toEqual(['Administrator']);
      expect(demo.output()).not.toContain('freshly seeded');
    } finally {
      await stopDemoProcess(demo);
    }
  });
});
