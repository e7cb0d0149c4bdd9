// The conformance kit grouped by sub-port: a store may declare sub-ports it does not implement,
// and the checks that need them are reported as skipped with the reason while the rest run. Each
// check's `requires` is proved complete: the check passes on a store whose other sub-ports throw.
import { afterAll, describe, expect, it } from 'vitest';
import type { Store, StoreTx } from '../ports/store.js';
import {
  STORE_PORT_GROUPS, STORE_PORT_METHODS, planStoreConformance, runStoreConformance, storeConformanceChecks, type StorePortGroup,
} from './conformance.js';
import { memoryConformanceSubject } from './conformance-memory.js';
import type { StoreConformanceSubject } from './conformance-checks.js';

/** `store` with the methods of `groups` replaced by `replace(name)` (or removed when it returns undefined), in and out of transactions. */
function reshaped(store: Store, groups: readonly StorePortGroup[], replace: (method: string) => unknown): Store {
  const reshape = <T extends StoreTx>(ops: T): T => {
    const out = { ...ops } as Record<string, unknown>;
    for (const group of groups) {
      for (const method of STORE_PORT_METHODS[group]) {
        const replacement = replace(method);
        if (replacement === undefined) delete out[method];
        else out[method] = replacement;
      }
    }
    return out as T;
  };
  return { ...reshape(store), transaction: (fn) => store.transaction((tx) => fn(reshape(tx))), close: () => store.close() };
}

/** A memory store that lacks the Run sub-port entirely (as a third party's store without Runs would). */
async function storeWithoutRuns(): Promise<StoreConformanceSubject> {
  const subject = await memoryConformanceSubject();
  return { ...subject, store: reshaped(subject.store, ['runs'], () => undefined) };
}

describe('planStoreConformance', () => {
  const needsRuns = storeConformanceChecks.filter((c) => c.requires.includes('runs')).map((c) => c.name);

  it('skips exactly the checks that need an unsupported sub-port, with the reason', () => {
    expect(needsRuns.length).toBeGreaterThanOrEqual(3);
    const plan = planStoreConformance(storeConformanceChecks, { runs: 'this store keeps no Runs' });
    expect(plan.filter((p) => p.skip !== undefined).map((p) => p.check.name)).toEqual(needsRuns);
    for (const p of plan.filter((q) => q.skip !== undefined)) expect(p.skip).toBe('the store declares "runs" (this store keeps no Runs) unsupported');
    expect(plan.filter((p) => p.skip === undefined)).toHaveLength(storeConformanceChecks.length - needsRuns.length);
    expect(planStoreConformance(storeConformanceChecks, ['runs', 'idempotency']).find((p) => p.check.group === 'idempotency')?.skip)
      .toBe('the store declares "idempotency" unsupported');
    expect(planStoreConformance(storeConformanceChecks).every((p) => p.skip === undefined)).toBe(true);
  });

  it('refuses an unknown sub-port name instead of skipping nothing', () => {
    expect(() => planStoreConformance(storeConformanceChecks, ['run' as StorePortGroup])).toThrow(/unknown sub-port "run".*one of: identity, projects/);
  });

  it('groups every check under a sub-port (or transactions) and lists every sub-port', () => {
    expect(STORE_PORT_GROUPS).toEqual(['identity', 'projects', 'inbox', 'events', 'sessions', 'runs', 'idempotency']);
    for (const check of storeConformanceChecks) {
      expect(['transactions', ...STORE_PORT_GROUPS]).toContain(check.group);
      if (check.group !== 'transactions') expect(check.requires).toContain(check.group);
    }
  });
});

describe('each check needs only the sub-ports it requires', () => {
  for (const check of storeConformanceChecks) {
    it(check.name, async () => {
      const subject = await memoryConformanceSubject();
      const others = STORE_PORT_GROUPS.filter((group) => !check.requires.includes(group));
      const store = reshaped(subject.store, others, (method) => () => {
        throw new Error(`${method} was called, but the check does not require its sub-port`);
      });
      try {
        await check.run({ store, raw: subject.raw });
      } finally {
        await subject.close();
      }
    });
  }
});

describe('a store that declares "runs" unsupported', () => {
  runStoreConformance('memory store without runs', storeWithoutRuns, { unsupported: { runs: 'this store keeps no Runs' } });

  // vitest passes the suite as the second argument of a hook (the first is the fixture context).
  afterAll(({}, suite) => {
    // Read how the registered tests ended: the checks needing Runs skipped, every other one passed.
    const states = new Map<string, string | undefined>();
    const walk = (task: { type: string; name: string; tasks?: unknown[]; result?: { state?: string }; mode?: string }): void => {
      if (task.type === 'test') states.set(task.name, task.result?.state ?? task.mode);
      for (const child of task.tasks ?? []) walk(child as typeof task);
    };
    walk(suite as never);
    const expected = new Map(storeConformanceChecks.map((c) => [c.name, c.requires.includes('runs') ? 'skip' : 'pass']));
    expect(states).toEqual(expected);
  });
});
