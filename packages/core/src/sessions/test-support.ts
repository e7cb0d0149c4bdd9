/**
 * The world of the SessionRuntimeService unit tests (`service-*.test.ts`; not exported from the
 * package): a model whose steps each test releases one by one (no timers), the callers of the
 * seeded workspaces, and a fixture — memory store, manual clock, Live Inbox host, a Runtime on the
 * gated model — whose Runtimes {@link closeRuntimesAfterEach} closes after each test.
 */
import { afterEach } from 'vitest';
import { LiveInboxHost, type Model, type ModelStepResult, type TranscriptMessage } from '../live-inbox/index.js';
import { PlatformService } from '../platform/service.js';
import { createManualClock, createSequentialIdGenerator } from '../ports/clock.js';
import { createLocalEventBus, type BusMessage } from '../ports/event-bus.js';
import type { Store } from '../ports/store.js';
import type { SessionEvent } from '../records.js';
import { createMemoryStore, type MemoryStore } from '../testing/memory-store.js';
import { SessionRuntimeService } from './service.js';
import { ctxOf, text } from '../test-support.js';

export const textOf = (content: unknown): string =>
  Array.isArray(content) ? content.map((b: { type: string; text?: string }) => (b.type === 'text' ? b.text : '<image>')).join('') : '';

export interface PendingStep {
  transcript: readonly TranscriptMessage[];
  signal: AbortSignal;
  reply(t: string, more?: boolean): void;
  fail(error: unknown): void;
}

/** A model whose steps the test releases one by one: no timers, fully deterministic. */
export function gatedModel(): Model & { next(): Promise<PendingStep>; calls: PendingStep[] } {
  const calls: PendingStep[] = [];
  let taken = 0;
  let wake: (() => void) | undefined;
  return {
    calls,
    step(transcript, signal) {
      return new Promise<ModelStepResult>((resolve, reject) => {
        const onAbort = () => reject(signal.reason);
        if (signal.aborted) return onAbort();
        signal.addEventListener('abort', onAbort, { once: true });
        calls.push({
          transcript,
          signal,
          reply: (t, more = false) => {
            signal.removeEventListener('abort', onAbort);
            resolve({ content: text(t), continue: more });
          },
          fail: (error) => {
            signal.removeEventListener('abort', onAbort);
            reject(error);
          },
        });
        wake?.();
      });
    },
    async next() {
      while (calls.length <= taken) await new Promise<void>((r) => (wake = r));
      return calls[taken++] as PendingStep;
    },
  };
}


export const owner = ctxOf('ws_a', 'acc_owner');
export const deriver = ctxOf('ws_a', 'acc_deriver');
export const observer = ctxOf('ws_a', 'acc_observer');
export const outsider = ctxOf('ws_a', 'acc_outsider');
export const stranger = ctxOf('ws_b', 'acc_stranger');

export interface Fixture {
  store: MemoryStore;
  clock: ReturnType<typeof createManualClock>;
  host: LiveInboxHost;
  model: ReturnType<typeof gatedModel>;
  runtime: SessionRuntimeService;
  published: BusMessage[];
  runErrors: unknown[];
  events(session_id?: string): Promise<SessionEvent[]>;
}

/** The Runtimes built in the current test, closed after it (a test that builds its own pushes it here). */
export const open: SessionRuntimeService[] = [];

/** Registers the hook that closes every Runtime a {@link fixture} built, after each test of the calling file. */
export function closeRuntimesAfterEach(): void {
  afterEach(async () => {
    await Promise.all(open.splice(0).map((r) => r.close()));
  });
}

export async function fixture(options: { store?: (store: MemoryStore) => Store } = {}): Promise<Fixture> {
  const store = createMemoryStore();
  const bus = createLocalEventBus();
  const published: BusMessage[] = [];
  bus.subscribe('session:sess_p', (m) => published.push(m));
  const clock = createManualClock();
  const deps = { store, bus, clock, ids: createSequentialIdGenerator() };
  const platform = new PlatformService(deps);
  await platform.createWorkspace({ id: 'ws_a', name: 'A' });
  await platform.createWorkspace({ id: 'ws_b', name: 'B' });
  for (const id of ['acc_owner', 'acc_deriver', 'acc_observer', 'acc_outsider']) await platform.createAccount({ id, name: id, workspace_ids: ['ws_a'] });
  await platform.createAccount({ id: 'acc_stranger', name: 'stranger', workspace_ids: ['ws_b'] });
  await platform.createProject(owner, { id: 'proj_1', name: 'P' });
  await platform.addMember(owner, 'proj_1', { account_id: 'acc_deriver', role: 'deriver' });
  await platform.addMember(owner, 'proj_1', { account_id: 'acc_observer', role: 'observer' });
  await platform.createSession(owner, { id: 'sess_p', project_id: 'proj_1', title: 'in a project' });
  await platform.createSession(owner, { id: 'sess_free', title: 'outside any project' });
  await platform.createSession(stranger, { id: 'sess_b', title: 'other tenant' });
  const host = new LiveInboxHost({ hostId: 'test' });
  const model = gatedModel();
  const runErrors: unknown[] = [];
  const runtime = new SessionRuntimeService({
    ...deps, store: options.store ? options.store(store) : store, host, model, onRunError: (e) => runErrors.push(e),
  });
  open.push(runtime);
  return {
    store, clock, host, model, runtime, published, runErrors,
    events: async (session_id = 'sess_p') => store.listSessionEvents({ session_id, after: 0, limit: 1000 }),
  };
}

export const brief = (events: SessionEvent[]) => events.map((e) => `${e.type}${e.message_id ? `:${e.message_id}` : ''}`);
