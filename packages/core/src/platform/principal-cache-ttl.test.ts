/**
 * The principal cache's lifetime as a service option (`principalCacheTtlMs` of the services' deps;
 * platform.md "Per-caller bounds"): a key revoked by another process (here: another PlatformService on
 * the same store) is still answered from this process's cache within the lifetime and refused
 * past it — 1 s by default, the given lifetime otherwise, at once with 0 (no cache).
 */
import { describe, expect, it } from 'vitest';
import { createManualClock, createSequentialIdGenerator } from '../ports/clock.js';
import { createLocalEventBus } from '../ports/event-bus.js';
import { createMemoryStore } from '../testing/memory-store.js';
import { PRINCIPAL_CACHE_TTL_MS } from './principal-cache.js';
import { PlatformService } from './service.js';

async function twoProcesses(principalCacheTtlMs?: number) {
  const store = createMemoryStore();
  const clock = createManualClock(1_800_000_000_000);
  const deps = { store, clock, ids: createSequentialIdGenerator() };
  const here = new PlatformService({ ...deps, bus: createLocalEventBus(), ...(principalCacheTtlMs === undefined ? {} : { principalCacheTtlMs }) });
  const elsewhere = new PlatformService({ ...deps, bus: createLocalEventBus() });
  await elsewhere.createWorkspace({ id: 'ws_a', name: 'A' });
  await elsewhere.createAccount({ id: 'acc_admin', name: 'Admin', workspace_ids: ['ws_a'] });
  await elsewhere.createAccount({ id: 'acc_user', name: 'User', workspace_ids: ['ws_a'] });
  const adminSecret = (await elsewhere.issueApiKey({ workspace_id: 'ws_a', account_id: 'acc_admin', kind: 'admin' })).secret;
  const admin = { principal: await elsewhere.authenticate(adminSecret), request_id: 'req_admin' };
  const { key, secret } = await elsewhere.admin.createKey(admin, 'acc_user');
  await here.authenticate(secret); // cached here
  await elsewhere.admin.revokeKey(admin, key.id);
  const accepted = async () => here.authenticate(secret).then(() => true, () => false);
  return { clock, accepted };
}

describe('principalCacheTtlMs', () => {
  it('default: a revocation made elsewhere is seen here once the 1 s lifetime passed', async () => {
    const { clock, accepted } = await twoProcesses();
    clock.advance(PRINCIPAL_CACHE_TTL_MS - 1);
    expect(await accepted()).toBe(true);
    clock.advance(1);
    expect(await accepted()).toBe(false);
  });

  it('a given lifetime bounds it instead', async () => {
    const { clock, accepted } = await twoProcesses(100);
    clock.advance(99);
    expect(await accepted()).toBe(true);
    clock.advance(1);
    expect(await accepted()).toBe(false);
  });

  it('0: no cache, the revocation is seen at once', async () => {
    const { accepted } = await twoProcesses(0);
    expect(await accepted()).toBe(false);
  });
});
