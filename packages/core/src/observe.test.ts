/**
 * The observing wrappers (platform.md "Observing"): `observeStore` reports every call (inside a
 * unit of work too) and passes answers and errors unchanged; `observeEventBus` reports each
 * delivered message once with its lag; `observeRequest` ends once and survives a throwing observer.
 */
import { describe, expect, it } from 'vitest';
import { createLocalEventBus } from './ports/event-bus.js';
import { createMemoryStore } from './memory.js';
import { observeEventBus, observeStore } from './observe.js';
import { observeRequest } from './http/observe.js';
import type { ProjectEvent } from './records.js';

describe('observeStore', () => {
  it('reports each call by method name, inside a transaction too, with the same answers and errors', async () => {
    const calls: string[] = [];
    const failed: string[] = [];
    const store = observeStore(createMemoryStore(), {
      call: (operation, run) => {
        calls.push(operation);
        return run().catch((error: unknown) => {
          failed.push(operation);
          throw error;
        });
      },
    });
    await store.insertWorkspace({ id: 'ws_1', name: 'One', created_at: 1 });
    expect(await store.getWorkspace('ws_1')).toMatchObject({ id: 'ws_1' });
    await store.transaction(async (tx) => {
      expect(await tx.getWorkspace('ws_1')).toMatchObject({ id: 'ws_1' });
    });
    await expect(store.transaction(async () => {
      throw new Error('rolled back');
    })).rejects.toThrow('rolled back');
    expect(calls).toEqual(['insertWorkspace', 'getWorkspace', 'transaction', 'getWorkspace', 'transaction']);
    expect(failed).toEqual(['transaction']);
  });
});

describe('observeEventBus', () => {
  it('reports a delivered message once, however many listeners, with its lag from commit', () => {
    const lags: number[] = [];
    const bus = observeEventBus(createLocalEventBus(), { delivered: ({ lag_ms }) => lags.push(lag_ms) }, { now: () => 1_250 });
    const got: number[] = [];
    bus.subscribe('project:p1', () => got.push(1));
    bus.subscribe('project:p1', () => got.push(2));
    bus.publish({ kind: 'project_event', event: { project_id: 'p1', created_at: 1_000 } as ProjectEvent });
    expect(got).toEqual([1, 2]);
    expect(lags).toEqual([250]);
    expect(bus.subscriberCount()).toBe(2);
  });
});

describe('observeRequest', () => {
  it('ends once, tells whether it streamed, and survives an observer that throws', async () => {
    const ends: Array<{ status: number; stream: boolean }> = [];
    const observed = observeRequest({ request: () => ({ end: (o) => ends.push({ status: o.status, stream: o.stream }) }) }, { method: 'GET', route: '/me' });
    observed.streamOpened();
    observed.end({ status: 200, aborted: false });
    observed.end({ status: 500, aborted: false });
    expect(ends).toEqual([{ status: 200, stream: true }]);
    const throwing = observeRequest({ request: () => { throw new Error('observer bug'); } }, { method: 'GET', route: null });
    expect(await throwing.within(async () => 7)).toBe(7);
    throwing.end({ status: 200, aborted: false });
    const badEnd = observeRequest({ request: () => ({ end: () => { throw new Error('observer bug'); } }) }, { method: 'GET', route: null });
    expect(() => badEnd.end({ status: 200, aborted: false })).not.toThrow();
  });
});
