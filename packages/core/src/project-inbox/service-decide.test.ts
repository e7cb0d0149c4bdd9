/**
 * ProjectInboxService over the in-memory reference store, with a frozen clock and sequential ids
 * (the world of `test-support.ts`): decide: the transition table through the service, notes,
 * shorthands, races on the conditional update; units of work (events and Operation Log in one
 * transaction, publish after commit). Spec: project-inbox.md.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { InboxKitError } from '../errors.js';
import type { InboxItemStatus, ProjectInboxItem } from '../records.js';
import { INBOX_DECISIONS, INBOX_STATUSES } from './transition.js';
import { makeWorld, T0, rejects, inboxRows, writesNothing, SEED_BODY, itemInOf, type World } from './test-support.js';

let w: World;
beforeEach(async () => {
  w = await makeWorld();
});
const itemIn = (status: InboxItemStatus, sender?: string) => itemInOf(w, status, sender);

describe('decide: the transition table', () => {
  const CELLS = INBOX_STATUSES.flatMap((from) => INBOX_DECISIONS.map((d) => [from, d] as const));
  const OUTCOME: Record<string, InboxItemStatus | 'invalid' | 'noop'> = {
    'pending/accept': 'accepted', 'pending/reject': 'rejected', 'pending/archive': 'archived',
    'accepted/accept': 'invalid', 'accepted/reject': 'invalid', 'accepted/archive': 'archived',
    'rejected/accept': 'invalid', 'rejected/reject': 'invalid', 'rejected/archive': 'archived',
    'archived/accept': 'invalid', 'archived/reject': 'invalid', 'archived/archive': 'noop',
  };

  it.each(CELLS)('%s + %s follows the transition table through the service', async (from, decision) => {
    const item = await itemIn(from);
    const outcome = OUTCOME[`${from}/${decision}`]!;
    w.clock.advance(1000);
    const owner = w.ctx('acc_owner');
    if (outcome === 'invalid') {
      await writesNothing(w, () => rejects(w.inbox.decide(owner, 'proj_main', item.id, { decision }), 'project_inbox_invalid_transition'));
      return;
    }
    if (outcome === 'noop') {
      await writesNothing(w, async () => {
        expect(await w.inbox.decide(owner, 'proj_main', item.id, { decision, note: 'again' })).toEqual(item);
      });
      return;
    }
    const before = inboxRows(w);
    const decided = await w.inbox.decide(owner, 'proj_main', item.id, { decision, note: '  why  ' });
    expect(decided).toEqual({
      ...item, status: outcome, decided_by_account_id: 'acc_owner', decided_at: T0 + 1000, updated_at: T0 + 1000,
    });
    expect(w.mem.raw().items.get(item.id)).toEqual(decided);
    expect(inboxRows(w)).toEqual({ items: before.items, logs: before.logs + 1, events: before.events + 1 });
    const log = w.mem.raw().logs.at(-1)!;
    expect(log).toMatchObject({
      action: 'project_inbox_item.decide', target_type: 'project_inbox_item', target_id: item.id, actor_account_id: 'acc_owner',
      request_id: owner.request_id, metadata: { decision, note: 'why' }, created_at: T0 + 1000,
    });
    expect(Object.keys(log.metadata).sort()).toEqual(['decision', 'note']);
    const event = w.mem.raw().events.at(-1)!;
    expect(event).toMatchObject({
      type: `project_inbox.item.${outcome}`, operation_log_id: log.id, correlation_id: owner.request_id, actor_account_id: 'acc_owner',
    });
    expect(event.payload).toEqual({
      inbox_item_id: item.id, type: item.type, status: outcome, decision, sender_account_id: item.sender_account_id,
      decided_by_account_id: 'acc_owner', source_event_id: null, source_session_id: null, source_floor_id: null, source_page_id: null,
    });
    expect(w.published.map((p) => p.event)).toContainEqual(event);
  });

  it('the note is stored only in the Operation Log metadata, trimmed; null when absent or blank', async () => {
    const note = 'NOTE-MARKER 已记录。';
    const item = await itemIn('pending');
    const accepted = await w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision: 'accept', note: `  ${note}  ` });
    expect(w.mem.raw().logs.at(-1)!.metadata).toEqual({ decision: 'accept', note });
    expect(JSON.stringify(accepted)).not.toContain('NOTE-MARKER');
    expect(JSON.stringify(w.mem.raw().items.get(item.id))).not.toContain('NOTE-MARKER');
    expect(JSON.stringify(w.mem.raw().events)).not.toContain('NOTE-MARKER');
    expect(JSON.stringify(w.published)).not.toContain('NOTE-MARKER');
    await w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision: 'archive', note: '   ' });
    expect(w.mem.raw().logs.at(-1)!.metadata).toEqual({ decision: 'archive', note: null });
    const other = await itemIn('pending');
    await w.inbox.decide(w.ctx('acc_owner'), 'proj_main', other.id, { decision: 'reject' });
    expect(w.mem.raw().logs.at(-1)!.metadata).toEqual({ decision: 'reject', note: null });
    const third = await itemIn('pending');
    await w.inbox.decide(w.ctx('acc_owner'), 'proj_main', third.id, { decision: 'reject', note: '😀'.repeat(500) });
    expect(w.mem.raw().logs.at(-1)!.metadata.note).toBe('😀'.repeat(500));
  });

  it('archiving a decided item records the last decision (decided_by, decided_at)', async () => {
    const item = await itemIn('pending');
    w.clock.set(T0 + 10);
    await w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision: 'reject' });
    w.clock.set(T0 + 20);
    const archived = await w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision: 'archive' });
    expect(archived).toMatchObject({ status: 'archived', decided_at: T0 + 20, updated_at: T0 + 20, created_at: T0 });
  });

  it('accept / reject / archive shorthands', async () => {
    const a = await itemIn('pending');
    expect((await w.inbox.accept(w.ctx('acc_owner'), 'proj_main', a.id, 'ok')).status).toBe('accepted');
    expect(w.mem.raw().logs.at(-1)!.metadata).toEqual({ decision: 'accept', note: 'ok' });
    const b = await itemIn('pending');
    expect((await w.inbox.reject(w.ctx('acc_owner'), 'proj_main', b.id)).status).toBe('rejected');
    expect((await w.inbox.archive(w.ctx('acc_owner'), 'proj_main', b.id)).status).toBe('archived');
  });
});

describe('decide: races and isolation', () => {
  it('accepting leaves every Session, Floor and Page byte-identical and writes nothing else', async () => {
    const item = await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', {
      type: 'derived_output.review', payload: { merge: 'into the session please', content: { text: 'replace me' } }, source_page_id: w.pages.A2.id,
    });
    const raw = () => w.mem.raw();
    const frozen = () => JSON.stringify({
      sessions: [...raw().sessions.entries()], floors: [...raw().floors.entries()], pages: [...raw().pages.entries()],
      runs: [...raw().runs.entries()], sessionEvents: raw().sessionEvents, projects: [...raw().projects.entries()],
      memberships: [...raw().memberships.entries()],
    });
    const before = frozen();
    const apiBefore = JSON.stringify([
      await w.platform.getSession(w.ctx('acc_owner'), 'sess_001'),
      await w.platform.listFloors(w.ctx('acc_owner'), 'sess_001'),
      await w.platform.listPages(w.ctx('acc_owner'), 'sess_001', w.floors.A.id),
    ]);
    w.clock.advance(5);
    await w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision: 'accept', note: '已记录。稍后由应用层决定是否写入主会话。' });
    expect(frozen()).toBe(before);
    expect(JSON.stringify([
      await w.platform.getSession(w.ctx('acc_owner'), 'sess_001'),
      await w.platform.listFloors(w.ctx('acc_owner'), 'sess_001'),
      await w.platform.listPages(w.ctx('acc_owner'), 'sess_001', w.floors.A.id),
    ])).toBe(apiBefore);
  });

  it('concurrent accept and reject: exactly one wins, the other sees the new status (409)', async () => {
    for (let round = 0; round < 5; round++) {
      const item = await itemIn('pending');
      const results = await Promise.allSettled([
        w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision: 'accept' }),
        w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision: 'reject' }),
      ]);
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect((lost[0]!.reason as InboxKitError).code).toBe('project_inbox_invalid_transition');
      const stored = w.mem.raw().items.get(item.id)!;
      expect(stored).toEqual((won[0] as PromiseFulfilledResult<ProjectInboxItem>).value);
      expect(w.mem.raw().events.filter((e) => e.payload.inbox_item_id === item.id && e.type !== 'project_inbox.item.created')).toHaveLength(1);
      expect(w.mem.raw().logs.filter((l) => l.target_id === item.id && l.action === 'project_inbox_item.decide')).toHaveLength(1);
    }
  });

  it('concurrent archives: one writes, the other is the no-op answer', async () => {
    const item = await itemIn('accepted');
    const results = await Promise.all([1, 2, 3].map(() => w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision: 'archive' })));
    for (const r of results) expect(r.status).toBe('archived');
    expect(w.mem.raw().events.filter((e) => e.type === 'project_inbox.item.archived')).toHaveLength(1);
  });

  it('a decision that loses the conditional update re-reads and answers from the new status', async () => {
    const item = await itemIn('pending');
    // Another writer rejects the item between our read and our conditional update.
    let interfered = false;
    const realTx = w.mem.transaction;
    w.mem.transaction = (fn) => realTx((tx) => fn(new Proxy(tx, {
      get(t, p, r) {
        if (p !== 'getInboxItem') return Reflect.get(t, p, r);
        return async (pid: string, id: string) => {
          const row = await t.getInboxItem(pid, id);
          if (!interfered && row && row.status === 'pending') {
            interfered = true;
            const live = w.mem.raw().items.get(id)!;
            Object.assign(live, { status: 'rejected', decided_by_account_id: 'acc_owner', decided_at: T0 + 1, updated_at: T0 + 1 });
          }
          return row;
        };
      },
    })));
    try {
      await rejects(w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision: 'accept' }), 'project_inbox_invalid_transition');
      expect(interfered).toBe(true);
      // (the in-memory store rolls the simulated writer back with our failed unit, so only the answer is checked here)
      expect(w.mem.raw().events.filter((e) => e.type === 'project_inbox.item.accepted')).toHaveLength(0);
      expect(w.mem.raw().logs.filter((l) => l.target_id === item.id && l.action === 'project_inbox_item.decide')).toHaveLength(0);
      // archive after losing the same race still succeeds (rejected → archived)
      interfered = false;
      const other = await itemIn('pending');
      const archived = await w.inbox.decide(w.ctx('acc_owner'), 'proj_main', other.id, { decision: 'archive' });
      expect(archived.status).toBe('archived');
      expect(w.mem.raw().events.filter((e) => e.payload.inbox_item_id === other.id && e.type === 'project_inbox.item.archived')).toHaveLength(1);
    } finally {
      w.mem.transaction = realTx;
    }
  });
});

describe('units of work', () => {
  const createFailures = ['appendProjectEvent', 'appendOperationLog', 'insertInboxItem'] as const;

  it.each(createFailures)('create: when %s fails, no item, log row or event remains and the error is rethrown', async (method) => {
    await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { type: 'before' });
    const before = structuredClone(w.mem.raw());
    const rows = inboxRows(w);
    for (const when of ['before', 'after'] as const) {
      Object.assign(w.failure, { method, when });
      let caught: unknown;
      try {
        await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { ...SEED_BODY, source_page_id: w.pages.A1.id, source_session_id: undefined });
      } catch (error) {
        caught = error;
      }
      expect(caught).toBe(w.failure.error);
      expect(inboxRows(w)).toEqual(rows);
      expect(w.mem.raw()).toEqual(before);
    }
    expect(w.published.map((p) => p.event.type)).toEqual(['project_inbox.item.created']);
    // the sequence a rolled-back write took is released: the next event follows without a gap
    w.failure.method = null;
    await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { type: 'after' });
    const seqs = w.mem.raw().events.filter((e) => e.project_id === 'proj_main').map((e) => e.sequence);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
  });

  it.each(['appendProjectEvent', 'appendOperationLog', 'decideInboxItem'] as const)(
    'decide: when %s fails, the item keeps its status and no log row or event remains', async (method) => {
      const item = await itemIn('pending');
      const before = structuredClone(w.mem.raw());
      const published = w.published.length;
      for (const when of ['before', 'after'] as const) {
        Object.assign(w.failure, { method, when });
        await expect(w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision: 'accept', note: 'n' })).rejects.toBe(w.failure.error);
        expect(w.mem.raw()).toEqual(before);
        expect(w.mem.raw().items.get(item.id)!.status).toBe('pending');
      }
      expect(w.published.length).toBe(published);
      w.failure.method = null;
      expect((await w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision: 'accept' })).status).toBe('accepted');
    });

  it('publishes only after commit, exactly the stored events', async () => {
    const item = await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', SEED_BODY);
    await w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision: 'accept' });
    await w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision: 'archive' });
    await w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision: 'archive' }); // no-op: nothing published
    expect(w.published.map((p) => p.event.type)).toEqual([
      'project_inbox.item.created', 'project_inbox.item.accepted', 'project_inbox.item.archived',
    ]);
    for (const p of w.published) {
      expect(p.duringTransaction).toBe(false);
      expect(p.committed).toBe(true);
      expect(w.mem.raw().events.find((e) => e.id === p.event.id)).toEqual(p.event);
    }
  });

  it('a bus that throws does not undo or hide the committed write', async () => {
    w.busState.throwOnPublish = true;
    const item = await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', SEED_BODY);
    expect(w.mem.raw().items.get(item.id)).toEqual(item);
    const accepted = await w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision: 'accept' });
    expect(accepted.status).toBe('accepted');
    expect(await w.inbox.get(w.ctx('acc_owner'), 'proj_main', item.id)).toEqual(accepted);
    expect(inboxRows(w)).toEqual({ items: 1, logs: 2, events: 2 });
    expect(w.publishErrors).toHaveLength(2);
    expect((w.publishErrors[0] as Error).message).toBe('bus is down');
  });

  it('subscribers of project:<id> receive the events after commit', async () => {
    const received: string[] = [];
    const unsubscribe = w.bus.subscribe('project:proj_main', (m) => {
      if (m.kind === 'project_event') received.push(m.event.type);
    });
    const item = await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { type: 't' });
    await w.inbox.decide(w.ctx('acc_owner'), 'proj_main', item.id, { decision: 'reject' });
    await w.inbox.create(w.ctx('acc_owner'), 'proj_side', { type: 't' });
    unsubscribe();
    expect(received).toEqual(['project_inbox.item.created', 'project_inbox.item.rejected']);
  });
});
