/** Conformance checks of `ProjectEventStore`: gap-free sequences, visibility and source, the latest sequence. */
import type { Project, ProjectEvent } from '../../records.js';
import { assert, assertSame, range, assertGapFree, concurrently, concurrentlyAllowing, T0, seedWorld, newProject, newItem, newLog, newEvent, newSessionEvent, type StoreConformanceSubject } from './support.js';

/**
 * `appendProjectEvent` allocates gap-free per-project sequences under concurrent writers: 200
 * concurrent create-like transactions in project A, 50 in project B and 20 that roll back after
 * appending, then 10 concurrent autocommit appends → A holds exactly 1..210, B 1..50; each
 * writer got the number stored for its event; `listProjectEvents` pages and filters ascending.
 */
export async function checkGapFreeProjectSequences({ store, raw }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const w = await seedWorld(store, 'seq');
  const a = w.project;
  const b = newProject(w.u, w.ws, w.owner, 'b', T0 + 1);
  await store.insertProject(b);
  const boom = new Error('rolled back on purpose');

  const create = (project: Project, tag: string, rollback: boolean) => () => store.transaction(async (tx) => {
    const at = T0 + 10;
    await tx.insertInboxItem(newItem(w, project, `pinbox_${w.u}_${tag}`, { created_at: at, updated_at: at }));
    await tx.appendOperationLog(newLog(w, project, `oplog_${w.u}_${tag}`, { created_at: at }));
    const event = await tx.appendProjectEvent(newEvent(w, project, `evt_${w.u}_${tag}`, {
      created_at: at, session_id: tag.endsWith('0') ? w.session.id : null, type: tag.endsWith('5') ? 'test.five' : 'project_inbox.item.created',
    }));
    if (rollback) throw boom;
    return event;
  });
  const tasks = [
    ...range(1, 200).map((i) => create(a, `a${i}`, false)),
    ...range(1, 50).map((i) => create(b, `b${i}`, false)),
    ...range(1, 10).map((i) => create(a, `ra${i}`, true)),
    ...range(1, 10).map((i) => create(b, `rb${i}`, true)),
  ];
  // Interleave the projects and the rollbacks.
  tasks.sort(() => Math.random() - 0.5);
  const results = (await concurrentlyAllowing(tasks, boom, 'concurrent appends')).filter((e): e is ProjectEvent => e !== undefined);

  const ofA = results.filter((e) => e.project_id === a.id);
  const ofB = results.filter((e) => e.project_id === b.id);
  assert(ofA.length === 200 && ofB.length === 50, `expected 200 + 50 committed appends, got ${ofA.length} + ${ofB.length}`);
  assertGapFree(ofA.map((e) => e.sequence), 200, 'sequences returned to the writers of project A');
  assertGapFree(ofB.map((e) => e.sequence), 50, 'sequences returned to the writers of project B');
  assertSame(await raw.eventSequences(a.id), range(1, 200), 'stored sequences of project A');
  assertSame(await raw.eventSequences(b.id), range(1, 50), 'stored sequences of project B');
  const items = await raw.countRows('project_inbox_items', a.id);
  assert(items === 200, `project A must hold the 200 committed items (rolled-back ones removed), raw count is ${items}`);

  const autocommit = await concurrently(range(1, 10).map((i) => () => store.appendProjectEvent(newEvent(w, a, `evt_${w.u}_auto${i}`))), 'concurrent autocommit appends');
  assertGapFree(autocommit.map((e) => e.sequence - 200), 10, 'sequences of autocommit appends after 200');
  assertSame(await raw.eventSequences(a.id), range(1, 210), 'stored sequences of project A after autocommit appends');

  // The stored events are what the writers were given, ascending, paged by `after`.
  const listed = await store.listProjectEvents({ project_id: a.id, after: 0, limit: 1000 });
  assertSame(listed.map((e) => e.sequence), range(1, 210), 'listProjectEvents order');
  const bySequence = new Map([...ofA, ...autocommit].map((e) => [e.sequence, e]));
  for (const e of listed) assertSame(e, bySequence.get(e.sequence), `event ${e.sequence} as listed vs as returned by appendProjectEvent`);
  assertSame(
    (await store.listProjectEvents({ project_id: a.id, after: 100, limit: 10 })).map((e) => e.sequence), range(101, 110),
    'listProjectEvents after 100, limit 10',
  );
  const fives = await store.listProjectEvents({ project_id: a.id, after: 0, types: ['test.five'], limit: 1000 });
  assert(fives.length === 20 && fives.every((e) => e.type === 'test.five'), `types filter: expected the 20 test.five events, got ${fives.length}`);
  assert((await store.listProjectEvents({ project_id: a.id, after: 0, types: [], limit: 1000 })).length === 0, 'types: [] matches no event');
  const ofSession = await store.listProjectEvents({ project_id: a.id, after: 0, session_id: w.session.id, limit: 1000 });
  assert(ofSession.length === 20 && ofSession.every((e) => e.session_id === w.session.id), `session_id filter: expected 20 events, got ${ofSession.length}`);
  const first = listed[0];
  assert(first !== undefined, 'events listed');
  assertSame(await store.getProjectEvent(a.id, first.id), first, 'getProjectEvent');
}

/**
 * Project Events keep the `visibility` and `source` they were written with (every value of both,
 * in and outside a transaction, as returned, listed and fetched), and `lastProjectEventSequence` /
 * `lastSessionEventSeq` name the newest committed position (0 when none; a rolled-back append
 * does not count), per project and per session.
 */
export async function checkEventVisibilitySourceAndLatest({ store, raw }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const w = await seedWorld(store, 'vissrc');
  const p = w.project;
  const other = newProject(w.u, w.ws, w.owner, 'other', T0 + 1);
  await store.insertProject(other);
  assert((await store.lastProjectEventSequence(p.id)) === 0, 'lastProjectEventSequence of a project without events must be 0');
  assert((await store.lastProjectEventSequence(`proj_${w.u}_missing`)) === 0, 'lastProjectEventSequence of a missing project must be 0');
  const combos = [
    { visibility: 'project', source: 'api' }, { visibility: 'owner', source: 'api' }, { visibility: 'project', source: 'runtime_job' },
    { visibility: 'owner', source: 'runtime_job' }, { visibility: 'project', source: 'system' }, { visibility: 'owner', source: 'system' },
  ] as const;
  const written: ProjectEvent[] = [];
  for (const [i, c] of combos.entries()) {
    const e = newEvent(w, p, `evt_${w.u}_vs${i}`, { ...c, type: c.visibility === 'owner' ? 'project_inbox.item.created' : 'project.member.added' });
    const stored = i % 2 === 0 ? await store.appendProjectEvent(e) : await store.transaction((tx) => tx.appendProjectEvent(e));
    assert(stored.visibility === c.visibility && stored.source === c.source, `appendProjectEvent returns visibility ${c.visibility} and source ${c.source}`);
    written.push(stored);
  }
  const boom = new Error('rolled back on purpose');
  await store.transaction(async (tx) => {
    await tx.appendProjectEvent(newEvent(w, p, `evt_${w.u}_vsrb`));
    throw boom;
  }).catch((error: unknown) => { if (error !== boom) throw error; });
  await store.appendProjectEvent(newEvent(w, other, `evt_${w.u}_vsother`, { visibility: 'project', source: 'system' }));
  const listed = await store.listProjectEvents({ project_id: p.id, after: 0, limit: 100 });
  assertSame(listed, written, 'listProjectEvents keeps visibility and source');
  for (const e of written) assertSame(await store.getProjectEvent(p.id, e.id), e, `getProjectEvent ${e.id} keeps visibility and source`);
  assert((await store.lastProjectEventSequence(p.id)) === combos.length, `lastProjectEventSequence must be ${combos.length} (a rolled-back append does not count)`);
  assertSame(await raw.eventSequences(p.id), range(1, combos.length), 'stored sequences');
  assert((await store.lastProjectEventSequence(other.id)) === 1, 'lastProjectEventSequence is per project');

  assert((await store.lastSessionEventSeq(w.session.id)) === 0, 'lastSessionEventSeq of a session without events must be 0');
  assert((await store.lastSessionEventSeq(`sess_${w.u}_missing`)) === 0, 'lastSessionEventSeq of a missing session must be 0');
  await store.appendSessionEvents(range(1, 3).map((j) => newSessionEvent(w.session, `sevt_${w.u}_last${j}`)));
  await store.transaction(async (tx) => {
    await tx.appendSessionEvents([newSessionEvent(w.session, `sevt_${w.u}_lastrb`)]);
    throw boom;
  }).catch((error: unknown) => { if (error !== boom) throw error; });
  assert((await store.lastSessionEventSeq(w.session.id)) === 3, 'lastSessionEventSeq must be 3 (a rolled-back append does not count)');
}

/**
 * `appendAudited` (optional: a store without it passes) writes the Operation Log row and the event
 * as `appendOperationLog` then `appendProjectEvent` would: 30 concurrent transactions that commit
 * and 10 that roll back after it → sequences 1..30 gap-free, exactly the 30 committed log rows,
 * each event as returned; an autocommit call takes the next sequence; for a missing project it
 * throws and writes neither.
 */
export async function checkAppendAudited({ store, raw }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  if (store.appendAudited === undefined) return;
  const w = await seedWorld(store, 'aud');
  const p = w.project;
  const boom = new Error('rolled back on purpose');
  const audit = (tag: string, over: { operation_log_id?: string } = {}) => [
    newLog(w, p, `oplog_${w.u}_${tag}`, { metadata: { tag } }),
    newEvent(w, p, `evt_${w.u}_${tag}`, { operation_log_id: `oplog_${w.u}_${tag}`, payload: { tag, nested: [1, { a: null }] }, ...over }),
  ] as const;
  const write = (tag: string, rollback: boolean) => () => store.transaction(async (tx) => {
    const event = await tx.appendAudited!(...audit(tag));
    if (rollback) throw boom;
    return event;
  });
  const tasks = [...range(1, 30).map((i) => write(`c${i}`, false)), ...range(1, 10).map((i) => write(`r${i}`, true))];
  tasks.sort(() => Math.random() - 0.5);
  const results = (await concurrentlyAllowing(tasks, boom, 'concurrent appendAudited')).filter((e): e is ProjectEvent => e !== undefined);
  assertGapFree(results.map((e) => e.sequence), 30, 'sequences returned by appendAudited');
  assertSame(await raw.eventSequences(p.id), range(1, 30), 'stored sequences after appendAudited');
  const logs = await store.listOperationLogs({ project_id: p.id, limit: 1000 });
  assertSame(logs.map((l) => l.id).sort(), range(1, 30).map((i) => `oplog_${w.u}_c${i}`).sort(), 'Operation Log rows: exactly the committed ones');
  const log = logs.find((l) => l.id === `oplog_${w.u}_c1`);
  assertSame(log, audit('c1')[0], 'an Operation Log row as appendAudited was given it');
  const byId = new Map(results.map((e) => [e.id, e]));
  for (const e of await store.listProjectEvents({ project_id: p.id, after: 0, limit: 1000 })) {
    assertSame(e, byId.get(e.id), `event ${e.sequence} as listed vs as returned by appendAudited`);
  }
  const auto = await store.appendAudited(...audit('auto'));
  assert(auto.sequence === 31, `an autocommit appendAudited takes the next sequence (31), got ${auto.sequence}`);

  const ghost = newProject(w.u, w.ws, w.owner, 'ghost', T0);
  let threw = false;
  try {
    await store.appendAudited(newLog(w, ghost, `oplog_${w.u}_ghost`), newEvent(w, ghost, `evt_${w.u}_ghost`));
  } catch {
    threw = true;
  }
  assert(threw, 'appendAudited for a project that does not exist must throw');
  assert((await store.listOperationLogs({ project_id: ghost.id, limit: 10 })).length === 0, 'appendAudited for a missing project must write no Operation Log row');
  assert((await store.listProjectEvents({ project_id: ghost.id, after: 0, limit: 10 })).length === 0, 'appendAudited for a missing project must write no event');
}
