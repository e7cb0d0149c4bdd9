/**
 * Property tests of the Project Inbox transition table (project-inbox.md "PATCH"): random decision
 * sequences through the pure `transition`, through `ProjectInboxService.decide` over the
 * in-memory store (answers, item columns, Operation Log rows and Project Events), and concurrent
 * decisions on one item (the outcomes are those of some serial order: exactly one winner per step).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RequestContext } from '../context.js';
import { InboxKitError } from '../errors.js';
import { PlatformService } from '../platform/service.js';
import { createManualClock, createSequentialIdGenerator } from '../ports/clock.js';
import { createLocalEventBus } from '../ports/event-bus.js';
import type { InboxDecision, InboxItemStatus } from '../records.js';
import { createMemoryStore } from '../testing/memory-store.js';
import { ProjectInboxService } from './service.js';
import { INBOX_DECISIONS, INBOX_STATUSES, decisionEventType, transition } from './transition.js';

const decisionArb = fc.constantFrom(...INBOX_DECISIONS);
const TARGET: Record<InboxDecision, InboxItemStatus> = { accept: 'accepted', reject: 'rejected', archive: 'archived' };
const RANK: Record<InboxItemStatus, number> = { pending: 0, accepted: 1, rejected: 1, archived: 2 };

/** Folds decisions through the table: the statuses visited and the outcome of each decision. */
function fold(decisions: readonly InboxDecision[], from: InboxItemStatus = 'pending') {
  let status = from;
  const outcomes: ('change' | 'noop' | 'invalid')[] = [];
  const path: InboxItemStatus[] = [status];
  for (const d of decisions) {
    const t = transition(status, d);
    outcomes.push(t.kind);
    if (t.kind === 'change') {
      status = t.to;
      path.push(status);
    }
  }
  return { status, outcomes, path };
}

describe('transition table (property)', () => {
  it('is total and deterministic on every status and decision; a change always lands on the target of the decision', () => {
    fc.assert(
      fc.property(fc.constantFrom(...INBOX_STATUSES), decisionArb, (from, d) => {
        const t = transition(from, d);
        expect(['change', 'noop', 'invalid']).toContain(t.kind);
        expect(transition(from, d)).toEqual(t);
        if (t.kind === 'change') expect(t.to).toBe(TARGET[d]);
      }),
      { numRuns: 100 },
    );
  });

  it('random decision sequences only move forward, change at most twice and end where the spec says', () => {
    fc.assert(
      fc.property(fc.array(decisionArb, { maxLength: 30 }), (decisions) => {
        const { status, outcomes, path } = fold(decisions);
        // Each change moves strictly forward: pending → accepted|rejected → archived.
        for (let i = 1; i < path.length; i++) expect(RANK[path[i]!]).toBeGreaterThan(RANK[path[i - 1]!]);
        expect(path.length).toBeLessThanOrEqual(3);
        expect(path.filter((s) => s === 'accepted' || s === 'rejected').length).toBeLessThanOrEqual(1);

        // The closed form: any archive ends archived; otherwise the first decision decides.
        const expected: InboxItemStatus = decisions.includes('archive') ? 'archived' : decisions.length > 0 ? TARGET[decisions[0]!] : 'pending';
        expect(status).toBe(expected);

        // Outcome of each decision from the state it met.
        let s: InboxItemStatus = 'pending';
        decisions.forEach((d, i) => {
          const want = s === 'pending' ? 'change' : d !== 'archive' ? 'invalid' : s === 'archived' ? 'noop' : 'change';
          expect(outcomes[i]).toBe(want);
          if (want === 'change') s = TARGET[d];
        });
        // Once archived, nothing changes any more.
        const firstArchived = path.indexOf('archived');
        if (firstArchived >= 0) expect(path.slice(firstArchived)).toEqual(['archived']);
      }),
      { numRuns: 500 },
    );
  });

  it('from any status, a sequence ends in the same status as folding its parts one after the other', () => {
    fc.assert(
      fc.property(fc.constantFrom(...INBOX_STATUSES), fc.array(decisionArb, { maxLength: 10 }), fc.array(decisionArb, { maxLength: 10 }), (from, a, b) => {
        const whole = fold([...a, ...b], from);
        const first = fold(a, from);
        expect(fold(b, first.status).status).toBe(whole.status);
      }),
      { numRuns: 300 },
    );
  });
});

async function world() {
  const store = createMemoryStore();
  const clock = createManualClock(1_735_689_600_000);
  const deps = { store, bus: createLocalEventBus(), clock, ids: createSequentialIdGenerator() };
  const platform = new PlatformService(deps);
  const inbox = new ProjectInboxService(deps);
  await platform.createWorkspace({ id: 'ws', name: 'ws' });
  await platform.createAccount({ id: 'acc_owner', name: 'owner', workspace_ids: ['ws'] });
  await platform.createAccount({ id: 'acc_deriver', name: 'deriver', workspace_ids: ['ws'] });
  const owner: RequestContext = { principal: { workspace_id: 'ws', account_id: 'acc_owner', key_id: 'key_o', key_kind: 'standard' }, request_id: 'req_owner' };
  const deriver: RequestContext = { principal: { workspace_id: 'ws', account_id: 'acc_deriver', key_id: 'key_d', key_kind: 'standard' }, request_id: 'req_deriver' };
  await platform.createProject(owner, { id: 'proj', name: 'p' });
  await platform.addMember(owner, 'proj', { account_id: 'acc_deriver', role: 'deriver' });
  const counts = async () => ({
    events: (await store.listProjectEvents({ project_id: 'proj', after: 0, limit: 1000 })).filter((e) => e.type.startsWith('project_inbox.') && e.type !== 'project_inbox.item.created'),
    logs: (await store.listOperationLogs({ project_id: 'proj', limit: 1000 })).filter((l) => l.action === 'project_inbox_item.decide'),
  });
  return { store, clock, inbox, owner, deriver, counts };
}

/** `decide` as an outcome: the item, or the error code. */
async function decideOutcome(w: Awaited<ReturnType<typeof world>>, ctx: RequestContext, item_id: string, decision: InboxDecision, note?: string) {
  try {
    return { ok: true as const, item: await w.inbox.decide(ctx, 'proj', item_id, { decision, note }) };
  } catch (error) {
    if (!(error instanceof InboxKitError)) throw error;
    return { ok: false as const, code: error.code };
  }
}

describe('ProjectInboxService.decide against the table (property)', () => {
  it('random decision sequences answer, write and announce exactly what the table says', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(decisionArb, fc.option(fc.string({ maxLength: 20 }))), { minLength: 1, maxLength: 12 }), async (steps) => {
        const w = await world();
        const item = await w.inbox.create(w.deriver, 'proj', { type: 'probe' });
        let status: InboxItemStatus = 'pending';
        let last = item;
        let changes = 0;
        for (const [decision, note] of steps) {
          w.clock.advance(1);
          const t = transition(status, decision);
          const before = await w.counts();
          const r = await decideOutcome(w, w.owner, item.id, decision, note ?? undefined);
          const after = await w.counts();
          if (t.kind === 'invalid') {
            expect(r).toEqual({ ok: false, code: 'project_inbox_invalid_transition' });
            expect(after).toEqual(before);
          } else if (t.kind === 'noop') {
            expect(r).toEqual({ ok: true, item: last });
            expect(after).toEqual(before);
          } else {
            changes++;
            expect(r.ok).toBe(true);
            const decided = (r as { item: typeof item }).item;
            expect(decided).toMatchObject({ id: item.id, status: t.to, decided_by_account_id: 'acc_owner', decided_at: w.clock.now(), updated_at: w.clock.now() });
            // The rest of the item never changes.
            expect({ ...decided, status: item.status, decided_by_account_id: null, decided_at: null, updated_at: item.updated_at }).toEqual(item);
            expect(after.events.length).toBe(before.events.length + 1);
            expect(after.logs.length).toBe(before.logs.length + 1);
            expect(after.events.at(-1)!.type).toBe(decisionEventType(decision));
            expect(after.events.at(-1)!.payload).toMatchObject({ inbox_item_id: item.id, status: t.to, decision });
            expect(after.logs[0]!.metadata).toEqual({ decision, note: note?.trim() ? note.trim() : null });
            status = t.to;
            last = decided;
          }
          // Whatever happened, the stored item is what the last successful answer said.
          expect(await w.store.getInboxItem('proj', item.id)).toEqual(last);
          // A deriver may never decide, whatever the status; and nothing is written.
          expect(await decideOutcome(w, w.deriver, item.id, decision)).toEqual({ ok: false, code: 'project_inbox_decide_denied' });
          expect(await w.counts()).toEqual(after);
        }
        expect(changes).toBe(fold(steps.map(([d]) => d)).outcomes.filter((o) => o === 'change').length);
        expect((await w.counts()).events.length).toBe(changes);
      }),
      { numRuns: 150 },
    );
  });

  it('concurrent decisions on one item: the answers are those of one serial order', async () => {
    const permutations = <T>(xs: T[]): T[][] => (xs.length <= 1 ? [xs] : xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((p) => [x, ...p])));
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.array(decisionArb, { minLength: 2, maxLength: 4 }), async (s, decisions) => {
        const w = await world();
        const item = await w.inbox.create(w.deriver, 'proj', { type: 'probe' });
        const answers = await (async () => {
          const running = decisions.map((d) => s.schedule(Promise.resolve(d)).then((dd) => decideOutcome(w, w.owner, item.id, dd)));
          await s.waitAll();
          return Promise.all(running);
        })();
        const observed = answers.map((a) => (a.ok ? `ok:${a.item.status}` : a.code));
        // Some serial order of the same decisions gives exactly these answers.
        const explained = permutations(decisions.map((d, i) => [d, i] as const)).some((order) => {
          let st: InboxItemStatus = 'pending';
          const out: string[] = new Array(decisions.length);
          for (const [d, i] of order) {
            const t = transition(st, d);
            if (t.kind === 'change') st = t.to;
            out[i] = t.kind === 'invalid' ? 'project_inbox_invalid_transition' : `ok:${st}`;
          }
          return out.every((o, i) => o === observed[i]);
        });
        expect(explained, `${decisions.join(',')} → ${observed.join(',')}`).toBe(true);
        // One event per change: every accepted accept/reject, and the first effective archive (later ones are no-ops).
        const { events } = await w.counts();
        const okArchives = answers.filter((a, i) => a.ok && decisions[i] === 'archive').length;
        const okOthers = answers.filter((a, i) => a.ok && decisions[i] !== 'archive').length;
        expect(okOthers).toBeLessThanOrEqual(1);
        expect(events.length).toBe(okOthers + Math.min(1, okArchives));
        const stored = await w.store.getInboxItem('proj', item.id);
        expect(stored!.status).toBe(decisions.includes('archive') ? 'archived' : TARGET[decisions[answers.findIndex((a) => a.ok)]!]);
      }),
      { numRuns: 150 },
    );
  });
});
