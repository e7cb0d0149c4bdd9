/**
 * The in-memory reference adapter of the storage port: simple, obviously correct, used by the
 * core's unit tests and as the first subject of the conformance kit. Transactions are serialised
 * by a mutex and rolled back by restoring a snapshot. One module per sub-port of the storage port
 * (`memory-store/identity.ts`, `projects.ts`, `inbox.ts`, `events.ts`, `sessions.ts`, `runs.ts`,
 * `idempotency.ts`, `agents.ts`) over the rows of `memory-store/state.ts`.
 */
import { systemClock, type Clock } from '../ports/clock.js';
import type { Store, StoreTx } from '../ports/store.js';
import { agentOps } from './memory-store/agents.js';
import { projectEventOps } from './memory-store/events.js';
import { idempotencyOps } from './memory-store/idempotency.js';
import { identityOps } from './memory-store/identity.js';
import { inboxOps } from './memory-store/inbox.js';
import { projectOps } from './memory-store/projects.js';
import { runOps } from './memory-store/runs.js';
import { sessionOps } from './memory-store/sessions.js';
import { copy, emptyState, type GetState, type State } from './memory-store/state.js';

/** Every sub-port on the rows `get` returns. */
function operations(get: GetState, clock: Clock): StoreTx {
  // `Object.assign`, not an object spread: spreading objects of methods costs ~40× more in V8
  // (tens of µs per transaction; see storage-kysely's `opsOn`).
  return Object.assign({}, identityOps(get), projectOps(get), inboxOps(get), projectEventOps(get), sessionOps(get), runOps(get, clock), idempotencyOps(get), agentOps(get));
}

/** The in-memory store with a raw view of its rows (for conformance assertions). */
export interface MemoryStore extends Store {
  /** Direct read access to the rows, bypassing the port (tests only). */
  readonly raw: () => State;
}

/** Options of {@link createMemoryStore}. */
export interface MemoryStoreOptions {
  /**
   * The store's clock, what `now()` answers (the "database clock" every user of this store shares;
   * platform.md "Many processes"). Default: the wall clock. Tests that move time by hand pass the
   * same manual clock they give the services, or another one to play a skewed process.
   */
  clock?: Clock;
}

/** Creates an empty in-memory store. */
export function createMemoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  let state = emptyState();
  let queue: Promise<unknown> = Promise.resolve();
  const ops = operations(() => state, options.clock ?? systemClock);
  const serialise = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = queue.then(fn, fn);
    queue = run.catch(() => undefined);
    return run;
  };
  const autocommit = Object.fromEntries(
    Object.entries(ops).map(([name, f]) => [name, (...args: unknown[]) => serialise(() => (f as (...a: unknown[]) => Promise<unknown>)(...args))]),
  ) as unknown as StoreTx;
  return {
    ...autocommit,
    raw: () => state,
    transaction: <T>(fn: (tx: StoreTx) => Promise<T>) =>
      serialise(async () => {
        const snapshot = copy(state);
        try {
          return await fn(ops);
        } catch (error) {
          state = snapshot;
          throw error;
        }
      }),
    close: async () => {},
  };
}
