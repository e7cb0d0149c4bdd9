/**
 * The principal cache of `PlatformService.authenticate` (principal-cache.ts): storage is read
 * once per key and account within the lifetime, revocations through the service apply at once,
 * revocations elsewhere within the lifetime, failures are never cached.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { InboxKitError } from '../errors.js';
import { createManualClock, createSequentialIdGenerator } from '../ports/clock.js';
import { createLocalEventBus } from '../ports/event-bus.js';
import type { Store } from '../ports/store.js';
import { createMemoryStore } from '../testing/memory-store.js';
import { PRINCIPAL_CACHE_TTL_MS, PrincipalCache } from './principal-cache.js';
import { PlatformService } from './service.js';

const principal = (key_id: string, account_id = 'acc_a') => ({ workspace_id: 'ws', account_id, key_id, key_kind: 'standard' as const });

describe('PrincipalCache', () => {
  it('expires entries after the lifetime and evicts the least recently used', () => {
    let now = 0;
    const cache = new PrincipalCache(() => now, 2, 100);
    cache.set('h1', undefined, principal('k1'), cache.generation);
    cache.set('h2', undefined, principal('k2'), cache.generation);
    expect(cache.get('h1', undefined)).toEqual(principal('k1')); // h1 is now the most recent
    cache.set('h3', undefined, principal('k3'), cache.generation); // evicts h2
    expect(cache.get('h2', undefined)).toBeUndefined();
    expect(cache.get('h1', undefined)).toEqual(principal('k1'));
    now = 100;
    expect(cache.get('h1', undefined)).toBeUndefined();
    expect(cache.size).toBe(1);
  });

  it('a hit on the most recent entry keeps the order; a hit on another moves it last, after forgets and re-sets too', () => {
    const cache = new PrincipalCache(() => 0, 3, 100);
    for (const h of ['h1', 'h2', 'h3']) cache.set(h, undefined, principal(h), cache.generation);
    cache.get('h3', undefined); // already the most recent
    cache.get('h1', undefined); // order h2, h3, h1
    cache.get('h1', undefined);
    cache.set('h4', undefined, principal('h4'), cache.generation); // evicts h2
    expect(cache.get('h2', undefined)).toBeUndefined();
    cache.forget('h4', undefined); // the most recent gone: order h3, h1
    cache.get('h3', undefined); // order h1, h3
    cache.set('h5', undefined, principal('h5'), cache.generation); // order h1, h3, h5
    cache.set('h6', undefined, principal('h6'), cache.generation); // evicts h1
    expect(cache.get('h1', undefined)).toBeUndefined();
    expect(['h3', 'h5', 'h6'].map((h) => cache.get(h, undefined)?.key_id)).toEqual(['h3', 'h5', 'h6']);
  });

  it('keeps one entry per account a key acts as, and forgets them all with the key', () => {
    const cache = new PrincipalCache(() => 0);
    cache.set('h', undefined, principal('k', 'acc_a'), cache.generation);
    cache.set('h', 'acc_b', principal('k', 'acc_b'), cache.generation);
    expect(cache.get('h', 'acc_b')?.account_id).toBe('acc_b');
    expect(cache.get('h', undefined)?.account_id).toBe('acc_a');
    cache.forgetKey('k');
    expect(cache.get('h', undefined)).toBeUndefined();
    expect(cache.get('h', 'acc_b')).toBeUndefined();
  });

  it('does not cache a lookup that raced a revocation', () => {
    const cache = new PrincipalCache(() => 0);
    const before = cache.generation;
    cache.forgetKey('k');
    cache.set('h', undefined, principal('k'), before);
    expect(cache.get('h', undefined)).toBeUndefined();
  });

  it('peek answers the live entry itself, without a copy or a move in the eviction order', () => {
    let now = 0;
    const cache = new PrincipalCache(() => now, 2, 100);
    cache.set('h1', undefined, principal('k1'), cache.generation);
    cache.set('h2', undefined, principal('k2'), cache.generation);
    expect(cache.peek('h1', undefined)).toEqual({ principal: principal('k1'), expires: 100, stored: 0 });
    expect(cache.peek('h1', undefined)).toBe(cache.peek('h1', undefined));
    expect(cache.peek('h1', 'acc_b')).toBeUndefined();
    cache.set('h3', undefined, principal('k3'), cache.generation); // h1 is still the least recent: evicted
    expect(cache.peek('h1', undefined)).toBeUndefined();
    cache.forget('h3', undefined);
    expect(cache.peek('h3', undefined)).toBeUndefined();
    now = 100;
    expect(cache.peek('h2', undefined)).toBeUndefined();
  });

  it('hands out copies', () => {
    const cache = new PrincipalCache(() => 0);
    cache.set('h', undefined, principal('k'), cache.generation);
    const first = cache.get('h', undefined)!;
    first.account_id = 'tampered';
    expect(cache.get('h', undefined)?.account_id).toBe('acc_a');
  });
});

/** A platform on a memory store whose key and account reads are counted in `lookups`. */
async function world() {
  const mem = createMemoryStore();
  const lookups: string[] = [];
  const store: Store = new Proxy(mem, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (prop === 'findApiKeyByHash' || prop === 'getWorkspaceAccount') {
        return (...args: unknown[]) => {
          lookups.push(String(prop));
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return value;
    },
  });
  const clock = createManualClock();
  const platform = new PlatformService({ store, bus: createLocalEventBus(), clock, ids: createSequentialIdGenerator() });
  await platform.createWorkspace({ id: 'ws', name: 'W' });
  await platform.createAccount({ id: 'acc_a', name: 'A', workspace_ids: ['ws'] });
  await platform.createAccount({ id: 'acc_b', name: 'B', workspace_ids: ['ws'] });
  const standard = await platform.issueApiKey({ workspace_id: 'ws', account_id: 'acc_a' });
  const service = await platform.issueApiKey({ workspace_id: 'ws', account_id: 'acc_a', kind: 'service' });
  return { mem, platform, clock, lookups, standard, service };
}
const code = async (p: Promise<unknown>) => p.then(() => 'ok', (e: unknown) => (e instanceof InboxKitError ? e.code : String(e)));

describe('PlatformService.authenticate with the cache', () => {
  it('reads storage once per key and account within the lifetime', async () => {
    const { platform, clock, lookups, standard, service } = await world();
    const expected = { workspace_id: 'ws', account_id: 'acc_a', key_id: standard.key.id, key_kind: 'standard' };
    expect(await platform.authenticate(standard.secret)).toEqual(expected);
    expect(await platform.authenticate(standard.secret)).toEqual(expected);
    expect((await platform.authenticate(service.secret, 'acc_b')).account_id).toBe('acc_b');
    expect((await platform.authenticate(service.secret, 'acc_b')).account_id).toBe('acc_b');
    expect(lookups).toEqual(['findApiKeyByHash', 'findApiKeyByHash', 'getWorkspaceAccount']);
    clock.advance(PRINCIPAL_CACHE_TTL_MS);
    await platform.authenticate(standard.secret);
    expect(lookups).toHaveLength(4);
  });

  it('a named workspace (anthropic-workspace-id) must be the key\'s own, cached or not', async () => {
    const { platform, standard } = await world();
    expect((await platform.authenticate(standard.secret, undefined, { workspace_id: 'ws' })).workspace_id).toBe('ws');
    expect(await code(platform.authenticate(standard.secret, undefined, { workspace_id: 'ws_other' }))).toBe('permission_denied');
    expect(await code(platform.authenticate(standard.secret, undefined, { workspace_id: 'ws_other' }))).toBe('permission_denied');
    expect(await code(platform.authenticate('sk-unknown', undefined, { workspace_id: 'ws' }))).toBe('invalid_credentials');
  });

  it('a revocation through the service applies to the next request', async () => {
    const { platform, standard } = await world();
    await platform.authenticate(standard.secret);
    await platform.revokeApiKey(standard.key.id);
    expect(await code(platform.authenticate(standard.secret))).toBe('invalid_credentials');
  });

  it('a revocation made directly in storage applies within the lifetime', async () => {
    const { mem, platform, clock, standard } = await world();
    await platform.authenticate(standard.secret);
    await mem.revokeApiKey(standard.key.id, clock.now());
    clock.advance(PRINCIPAL_CACHE_TTL_MS);
    expect(await code(platform.authenticate(standard.secret))).toBe('invalid_credentials');
  });

  /** A platform whose key lookups read storage at once and answer when `release()` is called (counted in `lookups`). */
  async function gatedWorld() {
    const mem = createMemoryStore();
    const lookups: string[] = [];
    let gate: Promise<void> | undefined;
    let open!: () => void;
    const store: Store = new Proxy(mem, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (prop !== 'findApiKeyByHash') return value;
        return async (...args: unknown[]) => {
          lookups.push(String(prop));
          const read = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          if (gate) await gate;
          return read;
        };
      },
    });
    const clock = createManualClock();
    // The key's hash without the thread pool (Web Crypto's digest): every step up to the gate then
    // runs in microtasks, so `settle` needs no timer and no load can outrun it.
    const hashApiKey = (secret: string) => createHash('sha256').update(secret).digest('hex');
    const platform = new PlatformService({ store, bus: createLocalEventBus(), clock, ids: createSequentialIdGenerator(), hashApiKey });
    await platform.createWorkspace({ id: 'ws', name: 'W' });
    await platform.createAccount({ id: 'acc_a', name: 'A', workspace_ids: ['ws'] });
    const standard = await platform.issueApiKey({ workspace_id: 'ws', account_id: 'acc_a' });
    const hold = () => { gate = new Promise<void>((resolve) => (open = resolve)); };
    const release = () => { open(); gate = undefined; };
    /** Lets every pending hash and lookup start (all of it is microtasks, which run before the next macrotask). */
    const settle = () => new Promise((resolve) => setImmediate(resolve));
    return { platform, clock, lookups, standard, hold, release, settle };
  }

  it('concurrent requests with one key share one storage lookup, also once the entry expired (a thousand streams re-checking)', async () => {
    const { platform, clock, lookups, standard, hold, release, settle } = await gatedWorld();
    const expected = { workspace_id: 'ws', account_id: 'acc_a', key_id: standard.key.id, key_kind: 'standard' };
    const wave = async () => {
      hold();
      const pending = Array.from({ length: 50 }, () => platform.authenticate(standard.secret));
      await settle();
      release();
      return Promise.all(pending);
    };
    const all = await wave();
    expect(all).toEqual(Array(50).fill(expected));
    all[0]!.account_id = 'tampered'; // each caller has its own copy
    expect(all[1]!.account_id).toBe('acc_a');
    expect(lookups).toEqual(['findApiKeyByHash']);
    clock.advance(PRINCIPAL_CACHE_TTL_MS);
    await wave();
    expect(lookups).toEqual(['findApiKeyByHash', 'findApiKeyByHash']);
    // A refusal is shared while in flight, never cached.
    hold();
    const refused = [platform.authenticate('ik_unknown'), platform.authenticate('ik_unknown')].map(code);
    await settle();
    release();
    expect(await Promise.all(refused)).toEqual(['invalid_credentials', 'invalid_credentials']);
    expect(await code(platform.authenticate('ik_unknown'))).toBe('invalid_credentials');
    expect(lookups).toHaveLength(4);
  });

  it('a request after a revocation never joins a lookup started before it', async () => {
    const { platform, standard, hold, release, settle } = await gatedWorld();
    hold();
    const before = platform.authenticate(standard.secret);
    await settle(); // its lookup has read the key; the answer waits
    await platform.revokeApiKey(standard.key.id);
    const after = platform.authenticate(standard.secret);
    await settle();
    release();
    expect((await before).key_id).toBe(standard.key.id); // it started before the revocation
    expect(await code(after)).toBe('invalid_credentials');
    expect(await code(platform.authenticate(standard.secret))).toBe('invalid_credentials');
  });

  it('never caches a refusal', async () => {
    const { platform, lookups, standard } = await world();
    expect(await code(platform.authenticate('ik_unknown'))).toBe('invalid_credentials');
    expect(await code(platform.authenticate('ik_unknown'))).toBe('invalid_credentials');
    expect(await code(platform.authenticate(standard.secret, 'acc_b'))).toBe('permission_denied');
    expect(await code(platform.authenticate(standard.secret, 'acc_b'))).toBe('permission_denied');
    expect(lookups).toEqual(['findApiKeyByHash', 'findApiKeyByHash', 'findApiKeyByHash', 'findApiKeyByHash']);
  });
});

describe('PlatformService.cachedAuthentication (an open stream\'s check without I/O)', () => {
  it('cachedAuthentication answers without I/O what authenticate answers from the cache, and nothing where authenticate would read storage', async () => {
    const { mem, platform, clock, lookups, standard, service } = await world();
    const check = platform.cachedAuthentication({ api_key: standard.secret })!;
    const acting = platform.cachedAuthentication({ api_key: service.secret, as_account_id: 'acc_b' })!;
    const elsewhere = platform.cachedAuthentication({ api_key: standard.secret }, { workspace_id: 'ws_other' })!;
    expect(check()).toBeUndefined(); // never authenticated: nothing cached
    const principal = await platform.authenticate(standard.secret);
    await platform.authenticate(service.secret, 'acc_b');
    expect(check()).toEqual(principal);
    expect(acting()).toMatchObject({ account_id: 'acc_b', key_id: service.key.id });
    expect(platform.cachedAuthentication({ api_key: service.secret })!()).toBeUndefined(); // acting as itself: another entry
    expect(elsewhere()).toBeUndefined(); // authenticate refuses it (403): the check says "read again"
    expect(lookups).toEqual(['findApiKeyByHash', 'findApiKeyByHash', 'getWorkspaceAccount']);
    // Revoked through the service: gone at once; directly in storage: gone with the entry's lifetime.
    await platform.revokeApiKey(service.key.id);
    expect(acting()).toBeUndefined();
    await mem.revokeApiKey(standard.key.id, clock.now());
    expect(check()).toEqual(principal);
    clock.advance(PRINCIPAL_CACHE_TTL_MS);
    expect(check()).toBeUndefined();
    expect(await code(platform.authenticate(standard.secret))).toBe('invalid_credentials');
    expect(check()).toBeUndefined(); // a refusal is never cached
    // A stream token's entry, once it was authenticated (its expiry is not checked here).
    const other = await platform.issueApiKey({ workspace_id: 'ws', account_id: 'acc_b' });
    const ctx = { principal: await platform.authenticate(other.secret), request_id: 'req_t' };
    const { token } = await platform.issueStreamToken(ctx, { ttl_seconds: 60 });
    const streamCheck = platform.cachedAuthentication({ stream_token: token })!;
    expect(streamCheck()).toBeUndefined();
    await platform.authenticateStreamToken(token);
    expect(streamCheck()).toMatchObject({ account_id: 'acc_b', key_id: other.key.id });
    // With an asynchronous key hash there is no check without I/O.
    const async = new PlatformService({ store: mem, bus: createLocalEventBus(), clock, ids: createSequentialIdGenerator(), hashApiKey: async (s) => s });
    expect(async.cachedAuthentication({ api_key: standard.secret })).toBeUndefined();
  });

  it('an entry found past half its lifetime is read again in the background, once at a time; a refusal there drops it', async () => {
    const { mem, platform, clock, lookups, standard } = await world();
    const check = platform.cachedAuthentication({ api_key: standard.secret })!;
    const principal = await platform.authenticate(standard.secret);
    const settle = () => new Promise((resolve) => setImmediate(resolve));
    clock.advance(PRINCIPAL_CACHE_TTL_MS / 2 - 1);
    expect(check()).toEqual(principal);
    await settle();
    expect(lookups).toEqual(['findApiKeyByHash']); // not yet half its lifetime
    clock.advance(1);
    for (let i = 0; i < 100; i++) expect(check()).toEqual(principal);
    await settle();
    expect(lookups).toEqual(['findApiKeyByHash', 'findApiKeyByHash']); // one read for the hundred checks
    clock.advance(PRINCIPAL_CACHE_TTL_MS / 2);
    expect(check()).toEqual(principal); // the first entry's lifetime is over; the read again renewed it
    // Revoked directly in storage: the next read again refuses, and drops the entry.
    await mem.revokeApiKey(standard.key.id, clock.now());
    clock.advance(PRINCIPAL_CACHE_TTL_MS / 2);
    expect(check()).toEqual(principal); // still within the lifetime of a read that found it valid
    await settle();
    expect(check()).toBeUndefined();
    expect(await code(platform.authenticate(standard.secret))).toBe('invalid_credentials');
  });
});
