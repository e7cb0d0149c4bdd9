/** Conformance checks of units of work of `Store`: atomic `transaction(fn)` and the row locks (`lockProject`, `lockSession`). */
import type { ProjectEvent, Run } from '../../records.js';
import { assert, assertSame, range, concurrentlyAllowing, T0, seedWorld, newItem, newLog, newEvent, type StoreConformanceSubject } from './support.js';

/**
 * `transaction(fn)` is atomic: an error thrown after the first, second or third of the three writes
 * of a create (item, Operation Log row, Project Event) leaves no row behind and is rethrown
 * unchanged; the sequence number a rolled-back append took is given back; a commit keeps all
 * three; writes are visible to reads inside the same transaction.
 */
export async function checkTransactionAtomicity({ store, raw }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const w = await seedWorld(store, 'tx');
  const p = w.project;
  for (const failAfter of [1, 2, 3]) {
    const boom = new Error(`rollback after write ${failAfter}`);
    let caught: unknown;
    try {
      await store.transaction(async (tx) => {
        const item = newItem(w, p, `pinbox_${w.u}_rb${failAfter}`);
        await tx.insertInboxItem(item);
        assertSame(await tx.getInboxItem(p.id, item.id), item, 'read-your-writes inside a transaction');
        if (failAfter === 1) throw boom;
        await tx.appendOperationLog(newLog(w, p, `oplog_${w.u}_rb${failAfter}`));
        if (failAfter === 2) throw boom;
        await tx.appendProjectEvent(newEvent(w, p, `evt_${w.u}_rb${failAfter}`));
        throw boom;
      });
    } catch (error) {
      caught = error;
    }
    assert(caught === boom, `transaction must rethrow the error thrown by fn unchanged (failing after write ${failAfter}); got ${String(caught)}`);
    for (const table of ['project_inbox_items', 'operation_logs', 'project_events'] as const) {
      const n = await raw.countRows(table, p.id);
      assert(n === 0, `rollback after write ${failAfter}: ${table} must hold 0 rows, raw count is ${n}`);
    }
    assert((await store.getInboxItem(p.id, `pinbox_${w.u}_rb${failAfter}`)) === undefined, 'a rolled-back item must not be readable');
  }

  const item = newItem(w, p, `pinbox_${w.u}_ok`);
  const result = await store.transaction(async (tx) => {
    await tx.insertInboxItem(item);
    await tx.appendOperationLog(newLog(w, p, `oplog_${w.u}_ok`));
    const event = await tx.appendProjectEvent(newEvent(w, p, `evt_${w.u}_ok`));
    return { event };
  });
  assert(result.event.sequence === 1, `the first committed event must get sequence 1 (rolled-back appends give their number back), got ${result.event.sequence}`);
  for (const table of ['project_inbox_items', 'operation_logs', 'project_events'] as const) {
    const n = await raw.countRows(table, p.id);
    assert(n === 1, `commit: ${table} must hold 1 row, raw count is ${n}`);
  }
  assertSame(await raw.eventSequences(p.id), [1], 'stored sequences after the commit');
  assertSame(await store.getInboxItem(p.id, item.id), item, 'committed item read back');
}

/**
 * Row locks (`lockProject`, `lockSession`): a check made under the lock still holds when the
 * transaction commits. 20 transactions each lock the project, read `status` and, only while it is
 * `active`, insert an item and append its event, racing one that locks it, archives it and appends
 * `project.archived`: no item event may have a larger sequence than the archive's, and exactly the
 * items whose events exist are stored. Then 10 transactions each lock the Session and start a Run
 * only when none is running: exactly one Run is running. Both locks answer `undefined` for a row
 * of another workspace, and inside a transaction see the row as committed.
 */
export async function checkRowLocks({ store, raw }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const w = await seedWorld(store, 'lock');
  const archived = new Error('project archived');
  const create = (i: number) => () => store.transaction(async (tx) => {
    const project = await tx.lockProject(w.ws.id, w.project.id);
    if (project?.status !== 'active') throw archived;
    await tx.insertInboxItem(newItem(w, w.project, `pinbox_${w.u}_${i}`));
    return tx.appendProjectEvent(newEvent(w, w.project, `evt_${w.u}_${i}`, { payload: { inbox_item_id: `pinbox_${w.u}_${i}` } }));
  });
  const archive = () => store.transaction(async (tx) => {
    const project = await tx.lockProject(w.ws.id, w.project.id);
    assert(project?.status === 'active', 'the project is active before the archive');
    assert((await tx.setProjectStatus(w.project.id, 'archived', T0 + 1)) !== undefined, 'the archive changes the status');
    return tx.appendProjectEvent(newEvent(w, w.project, `evt_${w.u}_archived`, { type: 'project.archived', payload: {} }));
  });
  const tasks: Array<() => Promise<ProjectEvent>> = range(1, 20).map(create);
  tasks.splice(10, 0, archive);
  const results = (await concurrentlyAllowing(tasks, archived, 'creates racing an archive')).filter((e): e is ProjectEvent => e !== undefined);
  const archivedAt = results.find((e) => e.type === 'project.archived')?.sequence;
  assert(archivedAt !== undefined, 'the archive committed');
  const late = results.filter((e) => e.type !== 'project.archived' && e.sequence > archivedAt);
  assert(late.length === 0, `${late.length} item(s) committed after the archive (sequence ${archivedAt}) although their transaction saw the project active under lockProject`);
  const items = await raw.countRows('project_inbox_items', w.project.id);
  assert(items === results.length - 1, `stored items (${items}) must be those whose events committed (${results.length - 1})`);

  const runs = await concurrentlyAllowing(range(1, 10).map((i) => () => store.transaction(async (tx) => {
    const session = await tx.lockSession(w.ws.id, w.session.id);
    assert(session !== undefined, 'lockSession finds the session');
    if ((await tx.getRunningRun(w.session.id)) !== undefined) return undefined;
    const run: Run = { id: `run_${w.u}_${i}`, session_id: w.session.id, status: 'running', started_at: T0 + i, ended_at: null, outcome: null };
    await tx.insertRun(run);
    return run;
  })), undefined, 'Run starts under lockSession');
  const started = runs.filter((r) => r !== undefined);
  assert(started.length === 1, `exactly one of 10 Run starts under lockSession may start a Run, ${started.length} did`);
  assert((await store.listRunningRuns(100)).filter((r) => r.session_id === w.session.id).length === 1, 'one running Run stored');

  const other = await seedWorld(store, 'lockother');
  assert((await store.transaction((tx) => tx.lockProject(other.ws.id, w.project.id))) === undefined, 'lockProject of another workspace → undefined');
  assert((await store.transaction((tx) => tx.lockSession(other.ws.id, w.session.id))) === undefined, 'lockSession of another workspace → undefined');
  assertSame(await store.transaction((tx) => tx.lockProject(w.ws.id, w.project.id)), { ...w.project, status: 'archived', updated_at: T0 + 1 }, 'lockProject reads the committed row');
  assertSame(await store.transaction((tx) => tx.lockSession(w.ws.id, w.session.id)), w.session, 'lockSession reads the committed row');
}

/**
 * `readiness` (optional: a store without it passes): a migrated store that answers is
 * `{ ready: true }`, and asking changes nothing (a second call answers the same).
 */
export async function checkReadiness({ store }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  if (store.readiness === undefined) return;
  for (const attempt of [1, 2]) assertSame(await store.readiness(), { ready: true }, `readiness of a migrated store (call ${attempt})`);
}
