/**
 * Workspace administration (platform.md "Administration") on the in-memory store with a frozen
 * clock: only admin keys administer, and only their own workspace; keys issued, listed without
 * secrets, rotated with and without a grace period, revoked (at once in this process); accounts
 * disabled with their keys; `last_used_at` recorded at most once a minute; every write one
 * Operation Log row without a project; a store without the optional methods answers
 * `unsupported_capability`. Over HTTP and the command line: apps/demo test/admin.test.ts.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { RequestContext } from '../context.js';
import { InboxKitError } from '../errors.js';
import { createManualClock, createSequentialIdGenerator } from '../ports/clock.js';
import { createLocalEventBus } from '../ports/event-bus.js';
import type { Store } from '../ports/store.js';
import { createMemoryStore, type MemoryStore } from '../testing/memory-store.js';
import { systemAdminContext } from './admin.js';
import { API_KEY_USE_RESOLUTION_MS, PlatformService } from './service.js';

async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(InboxKitError);
    return (error as InboxKitError).code;
  }
}

/** Lets the not-awaited `last_used_at` write land. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

let store: MemoryStore;
let clock: ReturnType<typeof createManualClock>;
let platform: PlatformService;
let admin: RequestContext;
let adminSecret: string;

beforeEach(async () => {
  store = createMemoryStore();
  clock = createManualClock(1_800_000_000_000);
  platform = new PlatformService({ store, bus: createLocalEventBus(), clock, ids: createSequentialIdGenerator() });
  await platform.createWorkspace({ id: 'ws_a', name: 'A' });
  await platform.createWorkspace({ id: 'ws_b', name: 'B' });
  await platform.createAccount({ id: 'acc_admin', name: 'Admin', workspace_ids: ['ws_a'] });
  await platform.createAccount({ id: 'acc_b', name: 'B', workspace_ids: ['ws_b'] });
  adminSecret = (await platform.issueApiKey({ workspace_id: 'ws_a', account_id: 'acc_admin', kind: 'admin' })).secret;
  admin = { principal: await platform.authenticate(adminSecret), request_id: 'req_admin' };
});

describe('workspace administration: accounts and keys', () => {
  it('creates an account and a key that authenticates it; lists keys without secrets or hashes', async () => {
    const account = await platform.admin.createAccount(admin, { name: '  Ada  ' });
    expect(account).toMatchObject({ name: 'Ada', workspace_id: 'ws_a', disabled_at: null });
    expect(await store.getWorkspaceAccount('ws_a', account.id)).toMatchObject({ id: account.id });
    const { key, secret } = await platform.admin.createKey(admin, account.id);
    expect(key).toMatchObject({ account_id: account.id, kind: 'standard', revoked_at: null, last_used_at: null });
    expect(key).not.toHaveProperty('key_hash');
    expect(secret).toMatch(/^ik_/);
    expect(await platform.authenticate(secret)).toMatchObject({ workspace_id: 'ws_a', account_id: account.id, key_kind: 'standard' });

    const listed = await platform.admin.listKeys(admin, { account_id: account.id });
    expect(listed.items.map((k) => k.id)).toEqual([key.id]);
    expect(listed.next_cursor).toBeNull();
    expect(JSON.stringify(await platform.admin.listKeys(admin))).not.toMatch(/ik_|key_hash/);
    const accounts = await platform.admin.listAccounts(admin);
    expect(accounts.items.map((a) => a.id)).toContain(account.id);
  });

  it('pages accounts and keys newest first; a cursor is bound to its list and filters', async () => {
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      const account = await platform.admin.createAccount(admin, { name: `Paged ${i}` });
      made.push(account.id);
      await platform.admin.createKey(admin, account.id);
      if (i % 2 === 0) clock.advance(1); // ties on created_at are ordered by id
    }
    const walk = async <T extends { id: string }>(page: (cursor?: string) => Promise<{ items: T[]; next_cursor: string | null }>) => {
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const p = await page(cursor);
        expect(p.items.length).toBeLessThanOrEqual(2);
        seen.push(...p.items.map((x) => x.id));
        cursor = p.next_cursor ?? undefined;
      } while (cursor !== undefined);
      return seen;
    };
    const accounts = await walk((cursor) => platform.admin.listAccounts(admin, { limit: 2, ...(cursor ? { cursor } : {}) }));
    const all = (await platform.admin.listAccounts(admin, { limit: 200 })).items;
    expect(accounts).toEqual(all.map((a) => a.id));
    expect(new Set(accounts).size).toBe(accounts.length);
    expect(made.every((id) => accounts.includes(id))).toBe(true);
    for (let i = 1; i < all.length; i++) expect(all[i - 1]!.created_at).toBeGreaterThanOrEqual(all[i]!.created_at);
    const keys = await walk((cursor) => platform.admin.listKeys(admin, { limit: 2, ...(cursor ? { cursor } : {}) }));
    expect(keys).toEqual((await platform.admin.listKeys(admin, { limit: 200 })).items.map((k) => k.id));
    const first = await platform.admin.listKeys(admin, { limit: 1 });
    expect(await codeOf(platform.admin.listKeys(admin, { limit: 1, include_revoked: true, cursor: first.next_cursor! }))).toBe('invalid_cursor');
    expect(await codeOf(platform.admin.listAccounts(admin, { limit: 1, cursor: first.next_cursor! }))).toBe('invalid_cursor');
    expect(await codeOf(platform.admin.listAccounts(admin, { limit: 201 }))).toBe('validation_error');
  });

  it('is for admin keys only, and sees only its own workspace', async () => {
    const { secret } = await platform.admin.createKey(admin, 'acc_admin', { kind: 'standard' });
    const standard: RequestContext = { principal: await platform.authenticate(secret), request_id: 'req_std' };
    expect(await codeOf(platform.admin.listKeys(standard))).toBe('permission_denied');
    expect(await codeOf(platform.admin.createAccount(standard, { name: 'x' }))).toBe('permission_denied');
    // Another workspace's account and key are missing, as a missing one.
    expect(await codeOf(platform.admin.createKey(admin, 'acc_b'))).toBe('account_not_found');
    expect(await codeOf(platform.admin.disableAccount(admin, 'acc_b'))).toBe('account_not_found');
    const foreign = await platform.issueApiKey({ workspace_id: 'ws_b', account_id: 'acc_b' });
    expect(await codeOf(platform.admin.revokeKey(admin, foreign.key.id))).toBe('api_key_not_found');
    expect(await codeOf(platform.admin.rotateKey(admin, foreign.key.id))).toBe('api_key_not_found');
    expect((await platform.admin.listKeys(admin, { include_revoked: true })).items.every((k) => k.workspace_id === 'ws_a')).toBe(true);
    // An admin key may not act as another account.
    expect(await codeOf(platform.authenticate(adminSecret, 'acc_b'))).toBe('permission_denied');
  });

  it('revokes a key at once in this process; revoking again writes nothing; its own key is refused', async () => {
    const account = await platform.admin.createAccount(admin, { name: 'Bo' });
    const { key, secret } = await platform.admin.createKey(admin, account.id);
    await platform.authenticate(secret); // cached now
    await platform.admin.revokeKey(admin, key.id);
    expect(await codeOf(platform.authenticate(secret))).toBe('invalid_credentials');
    const logs = store.raw().logs.length;
    await platform.admin.revokeKey(admin, key.id);
    expect(store.raw().logs.length).toBe(logs);
    expect(await codeOf(platform.admin.revokeKey(admin, admin.principal.key_id))).toBe('conflict');
    expect((await platform.admin.listKeys(admin, { account_id: account.id })).items).toEqual([]);
    expect((await platform.admin.listKeys(admin, { account_id: account.id, include_revoked: true })).items[0]).toMatchObject({ id: key.id, revoked_at: clock.now() });
  });

  it('rotates a key: by default the old secret is refused at once; with a grace period until it ends', async () => {
    const account = await platform.admin.createAccount(admin, { name: 'Cy' });
    const first = await platform.admin.createKey(admin, account.id, { kind: 'service' });
    await platform.authenticate(first.secret);
    const rotated = await platform.admin.rotateKey(admin, first.key.id);
    expect(rotated.key).toMatchObject({ account_id: account.id, kind: 'service' });
    expect(rotated.previous).toMatchObject({ id: first.key.id, revoked_at: clock.now() });
    expect(await codeOf(platform.authenticate(first.secret))).toBe('invalid_credentials');
    expect(await platform.authenticate(rotated.secret)).toMatchObject({ account_id: account.id, key_kind: 'service' });
    expect(await codeOf(platform.admin.rotateKey(admin, first.key.id))).toBe('conflict');

    const graced = await platform.admin.rotateKey(admin, rotated.key.id, { grace_ms: 30_000 });
    expect(graced.previous.revoked_at).toBe(clock.now() + 30_000);
    expect(await platform.authenticate(rotated.secret)).toMatchObject({ account_id: account.id }); // cached until the grace ends at most
    expect((await platform.admin.listKeys(admin, { account_id: account.id })).items.map((k) => k.id).sort()).toEqual([graced.key.id, rotated.key.id].sort());
    clock.advance(29_999);
    expect(await platform.authenticate(rotated.secret)).toMatchObject({ account_id: account.id });
    clock.advance(1);
    expect(await codeOf(platform.authenticate(rotated.secret))).toBe('invalid_credentials');
    expect(await platform.authenticate(graced.secret)).toMatchObject({ account_id: account.id });
    expect(await codeOf(platform.admin.rotateKey(admin, graced.key.id, { grace_ms: -1 }))).toBe('validation_error');
    expect(await codeOf(platform.admin.rotateKey(admin, graced.key.id, { grace_ms: 8 * 24 * 3600_000 }))).toBe('validation_error');
  });

});

describe('workspace administration: disabling, the audit trail, key use and readiness', () => {
  it('disables an account: its keys are refused, a service key cannot act as it, no key is issued to it', async () => {
    const account = await platform.admin.createAccount(admin, { name: 'Di' });
    const { secret } = await platform.admin.createKey(admin, account.id);
    const service = await platform.admin.createKey(admin, 'acc_admin', { kind: 'service' });
    await platform.authenticate(secret);
    await platform.authenticate(service.secret, account.id);
    const disabled = await platform.admin.disableAccount(admin, account.id);
    expect(disabled).toMatchObject({ id: account.id, disabled_at: clock.now() });
    expect(await codeOf(platform.authenticate(secret))).toBe('invalid_credentials');
    expect(await codeOf(platform.authenticate(service.secret, account.id))).toBe('account_not_found');
    expect(await codeOf(platform.admin.createKey(admin, account.id))).toBe('conflict');
    const logs = store.raw().logs.length;
    expect(await platform.admin.disableAccount(admin, account.id)).toEqual(disabled);
    expect(store.raw().logs.length).toBe(logs);
    expect(await codeOf(platform.admin.disableAccount(admin, 'acc_admin'))).toBe('conflict');
    expect((await platform.admin.listAccounts(admin)).items.find((a) => a.id === account.id)?.disabled_at).toBe(clock.now());
  });

  it('enables a disabled account again: a member once more, its old keys still revoked, a new key works; audited once', async () => {
    const account = await platform.admin.createAccount(admin, { name: 'En' });
    const old = await platform.admin.createKey(admin, account.id);
    const service = await platform.admin.createKey(admin, 'acc_admin', { kind: 'service' });
    await platform.admin.disableAccount(admin, account.id);
    clock.advance(1);
    const logs = store.raw().logs.length;
    const enabled = await platform.admin.enableAccount(admin, account.id);
    expect(enabled).toMatchObject({ id: account.id, workspace_id: 'ws_a', disabled_at: null });
    expect(store.raw().logs.slice(logs).map((r) => [r.action, r.target_id, r.project_id, r.actor_account_id, r.metadata]))
      .toEqual([['account.enable', account.id, null, 'acc_admin', {}]]);
    // Its keys stay revoked; a service key may act as it again; a new key works.
    expect(await codeOf(platform.authenticate(old.secret))).toBe('invalid_credentials');
    expect((await platform.authenticate(service.secret, account.id)).account_id).toBe(account.id);
    const fresh = await platform.admin.createKey(admin, account.id);
    expect((await platform.authenticate(fresh.secret)).account_id).toBe(account.id);
    expect((await platform.admin.listAccounts(admin)).items.find((a) => a.id === account.id)?.disabled_at).toBeNull();
    // Enabling an enabled account: unchanged, nothing written.
    const written = store.raw().logs.length;
    expect(await platform.admin.enableAccount(admin, account.id)).toEqual(enabled);
    expect(store.raw().logs.length).toBe(written);
    // Only for admin keys, and only in the caller's workspace.
    const standard: RequestContext = { principal: await platform.authenticate(fresh.secret), request_id: 'req_std' };
    expect(await codeOf(platform.admin.enableAccount(standard, account.id))).toBe('permission_denied');
    expect(await codeOf(platform.admin.enableAccount(admin, 'acc_b'))).toBe('account_not_found');
  });

  it('audits every write as one Operation Log row without a project, and pages them', async () => {
    const account = await platform.admin.createAccount(admin, { name: 'Ed' });
    const { key } = await platform.admin.createKey(admin, account.id);
    clock.advance(1);
    const rotated = await platform.admin.rotateKey(admin, key.id, { grace_ms: 5 });
    clock.advance(1);
    await platform.admin.revokeKey(admin, rotated.key.id);
    clock.advance(1);
    await platform.admin.disableAccount(admin, account.id);
    const cli = systemAdminContext('ws_a', 'cli_test');
    await platform.admin.createAccount(cli, { name: 'From the command line' });
    const rows = store.raw().logs;
    expect(rows.map((r) => [r.action, r.project_id, r.actor_account_id, r.request_id])).toEqual([
      ['account.create', null, 'acc_admin', 'req_admin'], ['api_key.create', null, 'acc_admin', 'req_admin'],
      ['api_key.rotate', null, 'acc_admin', 'req_admin'], ['api_key.revoke', null, 'acc_admin', 'req_admin'],
      ['account.disable', null, 'acc_admin', 'req_admin'], ['account.create', null, 'system', 'cli_test'],
    ]);
    expect(rows[2]!.metadata).toEqual({ new_key_id: rotated.key.id, grace_ms: 5 });
    // The rotated-away key was still in its 5 ms grace period: disabling revoked it.
    expect(rows[4]!.metadata).toEqual({ revoked_key_count: 1 });
    expect((await store.getApiKey!('ws_a', key.id))!.revoked_at).toBe(clock.now());
    expect(JSON.stringify(rows)).not.toMatch(/ik_|Ed|command line/);
    const first = await platform.admin.listOperationLogs(admin, { limit: 4 });
    expect(first.items.map((r) => r.action)).toEqual(['account.create', 'account.disable', 'api_key.revoke', 'api_key.rotate']);
    const second = await platform.admin.listOperationLogs(admin, { limit: 4, cursor: first.next_cursor! });
    expect(second.items.map((r) => r.action)).toEqual(['api_key.create', 'account.create']);
    expect(second.next_cursor).toBeNull();
    expect(await codeOf(platform.admin.listOperationLogs({ ...admin, principal: { ...admin.principal, workspace_id: 'ws_b' } }, { cursor: first.next_cursor! }))).toBe('invalid_cursor');
  });

  it('records last_used_at at most once a minute per key, without waiting for the write', async () => {
    const account = await platform.admin.createAccount(admin, { name: 'Fa' });
    const { key, secret } = await platform.admin.createKey(admin, account.id);
    const used = async () => (await store.getApiKey!('ws_a', key.id))!.last_used_at;
    const start = clock.now();
    await platform.authenticate(secret);
    await settle();
    expect(await used()).toBe(start);
    clock.advance(2_000); // past the principal cache, within the minute
    await platform.authenticate(secret);
    await settle();
    expect(await used()).toBe(start);
    clock.advance(API_KEY_USE_RESOLUTION_MS);
    await platform.authenticate(secret);
    await settle();
    expect(await used()).toBe(start + 2_000 + API_KEY_USE_RESOLUTION_MS);
  });

  it('a store without the optional methods answers unsupported_capability, and still authenticates', async () => {
    const { listApiKeys: _list, lockWorkspaceAccount: _lock, recordApiKeyUse: _record, ...rest } = store;
    const bare = { ...rest, transaction: store.transaction, close: store.close } as Store;
    const older = new PlatformService({ store: bare, bus: createLocalEventBus(), clock, ids: createSequentialIdGenerator() });
    const ctx: RequestContext = { principal: await older.authenticate(adminSecret), request_id: 'req_old' };
    expect(await codeOf(older.admin.listKeys(ctx))).toBe('unsupported_capability');
    expect(await codeOf(older.admin.createKey(ctx, 'acc_admin'))).toBe('unsupported_capability');
  });

  it('readiness: ready on a store that answers; unreachable when it fails or does not answer in time', async () => {
    expect(await platform.readiness()).toEqual({ ready: true });
    const failing = { ...store, readiness: undefined, getWorkspace: () => Promise.reject(new Error('down')) } as unknown as Store;
    const down = new PlatformService({ store: failing, bus: createLocalEventBus(), clock, ids: createSequentialIdGenerator() });
    expect(await down.readiness()).toMatchObject({ ready: false, reason: 'unreachable' });
    const hanging = { ...store, readiness: () => new Promise(() => {}) } as unknown as Store;
    const slow = new PlatformService({ store: hanging, bus: createLocalEventBus(), clock, ids: createSequentialIdGenerator() });
    expect(await slow.readiness(20)).toEqual({ ready: false, reason: 'unreachable', message: 'The database did not answer within 20 ms' });
  });
});
