/**
 * loadSessionAccess: one read through the store's optional `getSessionWithAccess`, or the three
 * reads (`getSession`, `getProject`, `getMembership`) for a store without it — the same answer
 * either way. Over the in-memory reference store.
 */
import { describe, expect, it } from 'vitest';
import { createManualClock, createSequentialIdGenerator } from '../ports/clock.js';
import { createLocalEventBus } from '../ports/event-bus.js';
import type { Store } from '../ports/store.js';
import { createMemoryStore } from '../testing/memory-store.js';
import { ctxOf } from '../test-support.js';
import { PlatformService } from '../platform/service.js';
import { loadSessionAccess } from './access.js';

/** The store, counting calls, with or without the optional method. */
function counted(store: Store, withMethod: boolean) {
  const calls: string[] = [];
  const proxy = new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'getSessionWithAccess' && !withMethod) return undefined;
      const real = Reflect.get(target, prop, receiver) as unknown;
      if (typeof real !== 'function') return real;
      return (...args: unknown[]) => {
        calls.push(String(prop));
        return (real as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { calls, store: proxy };
}

describe('loadSessionAccess', () => {
  it('answers the same with one read or three, for every role, a loose session and misses', async () => {
    const store = createMemoryStore();
    const platform = new PlatformService({ store, bus: createLocalEventBus(), clock: createManualClock(1_700_000_000_000), ids: createSequentialIdGenerator() });
    await platform.createWorkspace({ id: 'ws_a', name: 'A' });
    await platform.createWorkspace({ id: 'ws_b', name: 'B' });
    for (const id of ['acc_owner', 'acc_deriver', 'acc_observer', 'acc_outsider']) await platform.createAccount({ id, name: id, workspace_ids: ['ws_a'] });
    await platform.createAccount({ id: 'acc_stranger', name: 'stranger', workspace_ids: ['ws_b'] });
    const owner = ctxOf('ws_a', 'acc_owner');
    await platform.createProject(owner, { id: 'proj_a', name: 'A' });
    await platform.addMember(owner, 'proj_a', { account_id: 'acc_deriver', role: 'deriver' });
    await platform.addMember(owner, 'proj_a', { account_id: 'acc_observer', role: 'observer' });
    await platform.createSession(owner, { id: 'sess_p', project_id: 'proj_a', title: null });
    await platform.createSession(owner, { id: 'sess_loose', project_id: null, title: null });

    const outcome = (p: Promise<unknown>) => p.then((v) => ({ v }), (e: { code?: string }) => ({ error: e.code }));
    const one = counted(store, true);
    const three = counted(store, false);
    const answers: unknown[] = [];
    for (const [ws, account, session] of [
      ['ws_a', 'acc_owner', 'sess_p'], ['ws_a', 'acc_deriver', 'sess_p'], ['ws_a', 'acc_observer', 'sess_p'], ['ws_a', 'acc_outsider', 'sess_p'],
      ['ws_a', 'acc_deriver', 'sess_loose'], ['ws_b', 'acc_stranger', 'sess_p'], ['ws_a', 'acc_owner', 'sess_missing'],
    ] as const) {
      const principal = ctxOf(ws, account).principal;
      const a = await outcome(loadSessionAccess(one.store, principal, session));
      const b = await outcome(loadSessionAccess(three.store, principal, session));
      expect(a, `${account} ${session}`).toEqual(b);
      answers.push('v' in a ? (a.v as { role: string; canWrite: boolean }).role : a.error);
    }
    expect(answers).toEqual(['owner', 'deriver', 'observer', 'session_not_found', 'workspace', 'session_not_found', 'session_not_found']);
    expect(new Set(one.calls)).toEqual(new Set(['getSessionWithAccess']));
    expect(three.calls).not.toContain('getSessionWithAccess');
  });
});
