/**
 * Conformance checks of the optional one-call writes of the Project Inbox (issue 33):
 * `lockProjectWithAccess`, `insertInboxItemAudited`, `decideInboxItemAudited`. A store without
 * them passes (the services then make the separate calls).
 */
import type { Account, InboxItemStatus, ProjectEvent, Workspace } from '../../records.js';
import {
  assert, assertGapFree, assertSame, concurrentlyAllowing, concurrently, range, T0, seedWorld, newProject, newItem, newLog, newEvent,
  type StoreConformanceSubject,
} from './support.js';

/**
 * `lockProjectWithAccess` returns, inside a transaction, exactly what `lockProject` and
 * `getMembership` return there: for the owner, a member, an account with no role; `undefined`
 * through another workspace or for a missing project; it sees the transaction's own membership;
 * after waiting for the lock of a transaction that removed the member, it reads no membership.
 */
export async function checkLockProjectWithAccess({ store }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const probe = await store.transaction(async (tx) => tx.lockProjectWithAccess !== undefined);
  if (!probe) return;
  const w = await seedWorld(store, 'lockproj');
  const p = w.project;
  const ws2: Workspace = { id: `ws_${w.u}_2`, name: 'other', created_at: T0 };
  await store.insertWorkspace(ws2);
  const outsider: Account = { id: `acc_${w.u}_outsider`, name: 'Outsider', created_at: T0 };
  await store.insertAccount(outsider, [w.ws.id]);
  await store.transaction(async (tx) => {
    for (const [what, account] of [['the owner', w.owner.id], ['a deriver member', w.deriver.id], ['an account with no role', outsider.id]] as const) {
      const got = await tx.lockProjectWithAccess!(w.ws.id, p.id, account);
      assertSame(got, { project: await tx.lockProject(w.ws.id, p.id), membership: await tx.getMembership(p.id, account) }, `lockProjectWithAccess, ${what}`);
    }
    assert((await tx.lockProjectWithAccess!(ws2.id, p.id, w.owner.id)) === undefined, 'lockProjectWithAccess through another workspace must be undefined');
    assert((await tx.lockProjectWithAccess!(w.ws.id, `proj_${w.u}_missing`, w.owner.id)) === undefined, 'lockProjectWithAccess of a missing project must be undefined');
    await tx.upsertMembership({ project_id: p.id, account_id: outsider.id, role: 'observer', created_at: T0 + 7 });
    assert((await tx.lockProjectWithAccess!(w.ws.id, p.id, outsider.id))?.membership?.role === 'observer', 'lockProjectWithAccess inside a transaction sees its own membership');
  });
  // A member removed by the transaction the lock waited for is no longer a member (on PostgreSQL a
  // SELECT … FOR UPDATE joining the membership would still read it: the waiter re-checks only the locked row).
  let removing: () => void = () => {};
  const removalHoldsLock = new Promise<void>((resolve) => { removing = resolve; });
  const removal = store.transaction(async (tx) => {
    assert((await tx.lockProject(w.ws.id, p.id)) !== undefined, 'the removal locks the project');
    assert(await tx.deleteMembership(p.id, w.deriver.id), 'the removal deletes the membership');
    removing();
    await new Promise((r) => setTimeout(r, 100)); // the waiter below queues behind the lock meanwhile
  });
  await removalHoldsLock;
  const waited = await store.transaction(async (tx) => tx.lockProjectWithAccess!(w.ws.id, p.id, w.deriver.id));
  await removal;
  assert(waited !== undefined && waited.membership === undefined, `lockProjectWithAccess that waited for a member's removal must read no membership, got ${JSON.stringify(waited?.membership)}`);
}

/**
 * `insertInboxItemAudited`: 30 committed and 10 rolled-back concurrent creates leave exactly the
 * 30 items, log rows and events, sequences 1…30 gap-free; each returned event is the stored one;
 * a create for a missing project throws and writes nothing.
 */
export async function checkInsertInboxItemAudited({ store, raw }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const probe = await store.transaction(async (tx) => tx.insertInboxItemAudited !== undefined);
  if (!probe) return;
  const w = await seedWorld(store, 'create');
  const p = w.project;
  const boom = new Error('rolled back on purpose');
  const rows = (tag: string) => [
    newItem(w, p, `pinbox_${w.u}_${tag}`, { payload: { tag, nested: [1, { a: null }] } }),
    newLog(w, p, `oplog_${w.u}_${tag}`, { action: 'project_inbox_item.create', target_id: `pinbox_${w.u}_${tag}`, metadata: { tag } }),
    newEvent(w, p, `evt_${w.u}_${tag}`, { operation_log_id: `oplog_${w.u}_${tag}`, payload: { inbox_item_id: `pinbox_${w.u}_${tag}`, tag } }),
  ] as const;
  const write = (tag: string, rollback: boolean) => () => store.transaction(async (tx) => {
    const event = await tx.insertInboxItemAudited!(...rows(tag));
    if (rollback) throw boom;
    return event;
  });
  const tasks = [...range(1, 30).map((i) => write(`c${i}`, false)), ...range(1, 10).map((i) => write(`r${i}`, true))];
  tasks.sort(() => Math.random() - 0.5);
  const results = (await concurrentlyAllowing(tasks, boom, 'concurrent insertInboxItemAudited')).filter((e): e is ProjectEvent => e !== undefined);
  assertGapFree(results.map((e) => e.sequence), 30, 'sequences returned by insertInboxItemAudited');
  assertSame(await raw.eventSequences(p.id), range(1, 30), 'stored sequences after insertInboxItemAudited');
  assert((await raw.countRows('project_inbox_items', p.id)) === 30, 'exactly the 30 committed items are stored');
  assert((await raw.countRows('operation_logs', p.id)) === 30, 'exactly the 30 committed Operation Log rows are stored');
  const [item, log] = rows('c1');
  assertSame(await store.getInboxItem(p.id, item.id), item, 'an item as insertInboxItemAudited was given it');
  assertSame((await store.listOperationLogs({ project_id: p.id, limit: 1000 })).find((l) => l.id === log.id), log, 'an Operation Log row as given');
  const byId = new Map(results.map((e) => [e.id, e]));
  for (const e of await store.listProjectEvents({ project_id: p.id, after: 0, limit: 1000 })) {
    assertSame(e, byId.get(e.id), `event ${e.sequence} as listed vs as returned by insertInboxItemAudited`);
  }
  const ghost = newProject(w.u, w.ws, w.owner, 'ghost', T0);
  let threw = false;
  try {
    await store.transaction((tx) => tx.insertInboxItemAudited!(newItem(w, ghost, `pinbox_${w.u}_ghost`), newLog(w, ghost, `oplog_${w.u}_ghost`), newEvent(w, ghost, `evt_${w.u}_ghost`)));
  } catch {
    threw = true;
  }
  assert(threw, 'insertInboxItemAudited for a project that does not exist must throw');
  for (const table of ['project_inbox_items', 'operation_logs', 'project_events'] as const) {
    assert((await raw.countRows(table, ghost.id)) === 0, `insertInboxItemAudited for a missing project must write nothing to ${table}`);
  }
}

/**
 * `decideInboxItemAudited`: of 20 concurrent decisions on one pending item exactly one wins, and
 * exactly one log row and one event exist (the losers wrote nothing and used no sequence); the
 * winner's item and event are the stored ones; a decision whose seen status is stale writes nothing.
 */
export async function checkDecideInboxItemAudited({ store, raw }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const probe = await store.transaction(async (tx) => tx.decideInboxItemAudited !== undefined);
  if (!probe) return;
  const w = await seedWorld(store, 'decaud');
  const p = w.project;
  const item = newItem(w, p, `pinbox_${w.u}_race`);
  await store.insertInboxItem(item);
  const statuses: InboxItemStatus[] = ['accepted', 'rejected', 'archived'];
  const outcomes = await concurrently(range(0, 19).map((i) => () => store.transaction(async (tx) => {
    const patch = { status: statuses[i % 3] ?? 'accepted', decided_by_account_id: w.owner.id, decided_at: T0 + 1000 + i, updated_at: T0 + 1000 + i };
    const written = await tx.decideInboxItemAudited!(p.id, item.id, 'pending', patch,
      newLog(w, p, `oplog_${w.u}_d${i}`, { action: 'project_inbox_item.decide', target_id: item.id, created_at: patch.updated_at }),
      newEvent(w, p, `evt_${w.u}_d${i}`, { type: `project_inbox.item.${patch.status}`, created_at: patch.updated_at }));
    return written && { ...written, patch };
  })), 'concurrent decideInboxItemAudited');
  const winners = outcomes.filter((o): o is NonNullable<typeof o> => o !== undefined);
  assert(winners.length === 1, `exactly one of 20 concurrent decisions must win, ${winners.length} did`);
  const winner = winners[0]!;
  assertSame(winner.item, { ...item, ...winner.patch }, 'the item returned to the winner');
  assertSame(await store.getInboxItem(p.id, item.id), winner.item, 'the item read back after the race');
  assertSame(await raw.eventSequences(p.id), [1], 'one event, sequence 1: the losers used no sequence');
  assert((await raw.countRows('operation_logs', p.id)) === 1, 'exactly one Operation Log row (the winner\'s)');
  assertSame((await store.listProjectEvents({ project_id: p.id, after: 0, limit: 10 }))[0], winner.event, 'the event as returned to the winner');
  const stale = await store.transaction((tx) => tx.decideInboxItemAudited!(p.id, item.id, 'pending',
    { status: 'accepted', decided_by_account_id: w.owner.id, decided_at: T0 + 5000, updated_at: T0 + 5000 },
    newLog(w, p, `oplog_${w.u}_stale`), newEvent(w, p, `evt_${w.u}_stale`)));
  assert(stale === undefined, 'a decision on a stale status must return undefined');
  assertSame(await raw.eventSequences(p.id), [1], 'a stale decision writes no event');
  assert((await raw.countRows('operation_logs', p.id)) === 1, 'a stale decision writes no Operation Log row');
}

/**
 * `decideInboxItemIfUnchanged` (called on the store, outside a transaction): it decides only while
 * the project is as seen (workspace, owner, status) and the item in the seen status — a changed
 * status, owner or workspace, an archived project, a stale item status: `undefined` and nothing
 * written, no sequence used; of 20 concurrent calls exactly one wins, with one log row and one event.
 */
export async function checkDecideInboxItemIfUnchanged({ store, raw }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  if (store.decideInboxItemIfUnchanged === undefined) return;
  const w = await seedWorld(store, 'decunch');
  const p = w.project;
  const seen = { workspace_id: w.ws.id, project_id: p.id, owner_account_id: w.owner.id, project_status: p.status };
  const patch = (i: number) => ({ status: 'accepted' as const, decided_by_account_id: w.owner.id, decided_at: T0 + 1000 + i, updated_at: T0 + 1000 + i });
  const audit = (tag: string) => [newLog(w, p, `oplog_${w.u}_${tag}`), newEvent(w, p, `evt_${w.u}_${tag}`)] as const;
  const item = newItem(w, p, `pinbox_${w.u}_a`);
  await store.insertInboxItem(item);
  const refused: Array<[string, typeof seen, InboxItemStatus]> = [
    ['another owner', { ...seen, owner_account_id: w.deriver.id }, 'pending'],
    ['another workspace', { ...seen, workspace_id: `ws_${w.u}_other` }, 'pending'],
    ['another project status', { ...seen, project_status: 'archived' }, 'pending'],
    ['a stale item status', seen, 'accepted'],
  ];
  for (const [what, state, status] of refused) {
    const got = await store.decideInboxItemIfUnchanged(state, item.id, status, patch(0), ...audit(`x${what.length}`));
    assert(got === undefined, `decideInboxItemIfUnchanged with ${what} must write nothing and return undefined`);
  }
  assert((await raw.itemStatus(item.id)) === 'pending', 'the refused decisions left the item pending');
  assertSame(await raw.eventSequences(p.id), [], 'the refused decisions wrote no event');
  assert((await raw.countRows('operation_logs', p.id)) === 0, 'the refused decisions wrote no Operation Log row');
  const outcomes = await concurrently(range(0, 19).map((i) => () => store.decideInboxItemIfUnchanged!(seen, item.id, 'pending', patch(i), ...audit(`d${i}`))), 'concurrent decideInboxItemIfUnchanged');
  const winners = outcomes.filter((o) => o !== undefined);
  assert(winners.length === 1, `exactly one of 20 concurrent decisions must win, ${winners.length} did`);
  assertSame(await store.getInboxItem(p.id, item.id), winners[0]!.item, 'the item read back is the winner\'s');
  assertSame(await raw.eventSequences(p.id), [1], 'one event, sequence 1');
  assert((await raw.countRows('operation_logs', p.id)) === 1, 'exactly one Operation Log row');
  assertSame((await store.listProjectEvents({ project_id: p.id, after: 0, limit: 10 }))[0], winners[0]!.event, 'the event as returned to the winner');
  const other = newItem(w, p, `pinbox_${w.u}_b`);
  await store.insertInboxItem(other);
  await store.setProjectStatus(p.id, 'archived', T0 + 9);
  assert((await store.decideInboxItemIfUnchanged(seen, other.id, 'pending', patch(30), ...audit('late'))) === undefined, 'no decision once the project is archived');
  assert((await raw.itemStatus(other.id)) === 'pending', 'the item of the archived project stays pending');
}

/**
 * `getProjectWithAccess` returns exactly what `getProject` and `getMembership` return: for the
 * owner, a member, an account with no role; `undefined` through another workspace or for a
 * missing project.
 */
export async function checkGetProjectWithAccess({ store }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  if (store.getProjectWithAccess === undefined) return;
  const w = await seedWorld(store, 'getproj');
  const p = w.project;
  const outsider: Account = { id: `acc_${w.u}_outsider`, name: 'Outsider', created_at: T0 };
  await store.insertAccount(outsider, [w.ws.id]);
  for (const [what, account] of [['the owner', w.owner.id], ['a deriver member', w.deriver.id], ['an account with no role', outsider.id]] as const) {
    assertSame(await store.getProjectWithAccess(w.ws.id, p.id, account), { project: await store.getProject(w.ws.id, p.id), membership: await store.getMembership(p.id, account) },
      `getProjectWithAccess, ${what}`);
  }
  assert((await store.getProjectWithAccess(`ws_${w.u}_other`, p.id, w.owner.id)) === undefined, 'getProjectWithAccess through another workspace must be undefined');
  assert((await store.getProjectWithAccess(w.ws.id, `proj_${w.u}_missing`, w.owner.id)) === undefined, 'getProjectWithAccess of a missing project must be undefined');
}

/**
 * `insertInboxItemIfUnchanged` (called on the store, outside a transaction): it creates only while
 * the project (workspace, owner, status) and the caller's membership (account, role) are as
 * seen — otherwise it returns `undefined` and writes nothing; 20 concurrent creates all commit
 * with gap-free sequences; a create that waited for a transaction which removed or demoted the
 * member (holding the project's lock, as a membership write does) writes nothing.
 */
export async function checkInsertInboxItemIfUnchanged({ store, raw }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  if (store.insertInboxItemIfUnchanged === undefined) return;
  const w = await seedWorld(store, 'crunch');
  const p = w.project;
  const seen = { workspace_id: w.ws.id, project_id: p.id, owner_account_id: w.owner.id, project_status: p.status };
  const member: { account_id: string; role: 'deriver' | 'observer' } = { account_id: w.deriver.id, role: 'deriver' };
  const rows = (tag: string) => [
    newItem(w, p, `pinbox_${w.u}_${tag}`, { payload: { tag } }),
    newLog(w, p, `oplog_${w.u}_${tag}`, { action: 'project_inbox_item.create', target_id: `pinbox_${w.u}_${tag}` }),
    newEvent(w, p, `evt_${w.u}_${tag}`, { operation_log_id: `oplog_${w.u}_${tag}`, payload: { inbox_item_id: `pinbox_${w.u}_${tag}` } }),
  ] as const;
  const refused: Array<[string, typeof seen, typeof member | undefined]> = [
    ['another owner', { ...seen, owner_account_id: w.deriver.id }, undefined],
    ['another workspace', { ...seen, workspace_id: `ws_${w.u}_other` }, member],
    ['another project status', { ...seen, project_status: 'archived' }, member],
    ['another role', seen, { ...member, role: 'observer' }],
    ['no membership', seen, { account_id: `acc_${w.u}_nobody`, role: 'deriver' }],
  ];
  for (const [i, [what, state, as]] of refused.entries()) {
    const got = await store.insertInboxItemIfUnchanged(state, as, ...rows(`x${i}`));
    assert(got === undefined, `insertInboxItemIfUnchanged with ${what} must write nothing and return undefined`);
  }
  assertSame(await raw.eventSequences(p.id), [], 'the refused creates wrote no event');
  assert((await raw.countRows('project_inbox_items', p.id)) === 0, 'the refused creates wrote no item');
  assert((await raw.countRows('operation_logs', p.id)) === 0, 'the refused creates wrote no Operation Log row');
  const mine = rows('owner');
  const first = await store.insertInboxItemIfUnchanged(seen, undefined, ...mine);
  assert(first !== undefined && first.sequence === 1, `the owner's create must write sequence 1, got ${JSON.stringify(first)}`);
  assertSame(await store.getInboxItem(p.id, mine[0].id), mine[0], 'the owner\'s item read back');
  assertSame((await store.listProjectEvents({ project_id: p.id, after: 0, limit: 10 }))[0], first, 'the event as returned');
  const made = await concurrently(range(1, 20).map((i) => () => store.insertInboxItemIfUnchanged!(seen, member, ...rows(`m${i}`))), 'concurrent insertInboxItemIfUnchanged');
  assert(made.every((e) => e !== undefined), 'every concurrent create of an unchanged project and membership must write');
  assertGapFree(made.map((e) => e!.sequence).concat(1), 21, 'sequences of the concurrent creates');
  assert((await raw.countRows('project_inbox_items', p.id)) === 21 && (await raw.countRows('operation_logs', p.id)) === 21, '21 items and log rows');
  // A create that waits for a membership write holding the project's lock (as the services take
  // it) reads the membership as that write left it.
  for (const [what, change] of [
    ['demoted', (tx: Parameters<Parameters<typeof store.transaction>[0]>[0]) => tx.upsertMembership({ project_id: p.id, account_id: w.deriver.id, role: 'observer', created_at: T0 })],
    ['removed', (tx: Parameters<Parameters<typeof store.transaction>[0]>[0]) => tx.deleteMembership(p.id, w.deriver.id)],
  ] as const) {
    await store.upsertMembership({ project_id: p.id, account_id: w.deriver.id, role: 'deriver', created_at: T0 });
    let held: () => void = () => {};
    const holds = new Promise<void>((resolve) => { held = resolve; });
    const write = store.transaction(async (tx) => {
      assert((await tx.lockProject(w.ws.id, p.id)) !== undefined, 'the membership write locks the project');
      await change(tx);
      held();
      await new Promise((r) => setTimeout(r, 100)); // the create below queues behind the lock meanwhile
    });
    await holds;
    const before = await raw.countRows('project_inbox_items', p.id);
    const waited = await store.insertInboxItemIfUnchanged(seen, member, ...rows(`late_${what}`));
    await write;
    assert(waited === undefined, `a create that waited for the member being ${what} must write nothing, got ${JSON.stringify(waited)}`);
    assert((await raw.countRows('project_inbox_items', p.id)) === before, `no item of a member ${what} meanwhile`);
  }
}
