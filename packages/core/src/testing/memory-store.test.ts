// The in-memory reference store passes the storage conformance kit (with a raw reader over its
// rows), and the kit's winner check catches a check-then-write decideInboxItem on it.
import { describe, expect, it } from 'vitest';
import type { Store, StoreTx } from '../ports/store.js';
import { ConformanceError, checkDecideHasOneWinner, runStoreConformance } from './conformance.js';
import { memoryConformanceSubject } from './conformance-memory.js';

runStoreConformance('memory store', memoryConformanceSubject);

describe('memory store with a broken decideInboxItem', () => {
  it('fails the winner check', async () => {
    const { store, raw } = await memoryConformanceSubject();
    const broken = (ops: StoreTx): Partial<StoreTx> => ({
      async decideInboxItem(project_id, item_id, _seen, patch) {
        const current = await ops.getInboxItem(project_id, item_id);
        if (!current) return undefined;
        await new Promise((resolve) => setTimeout(resolve, 1));
        return ops.decideInboxItem(project_id, item_id, current.status, patch);
      },
    });
    const wrapped: Store = { ...store, ...broken(store), transaction: (fn) => store.transaction((tx) => fn({ ...tx, ...broken(tx) })) };
    const failure = await checkDecideHasOneWinner({ store: wrapped, raw }).then(() => undefined, (error: unknown) => error);
    expect(failure).toBeInstanceOf(ConformanceError);
    expect(String((failure as Error).message)).toMatch(/exactly one of 20 concurrent decisions must win, 20 did/);
  });
});
