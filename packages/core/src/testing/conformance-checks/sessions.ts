/** Conformance checks of `SessionStore`: Sessions, Floors, Pages, managed Sessions, the Session ledger, `getSessionWithAccess`. */
import type { Account, Floor, Page, Project, Session, SessionEvent, Workspace } from '../../records.js';
import type { SessionWithAccess, StoreTx } from '../../ports/store.js';
import { sessionGateOf } from '../../sessions/access.js';
import { assert, assertSame, range, assertGapFree, concurrentlyAllowing, T0, seedWorld, newProject, newSessionEvent, type StoreConformanceSubject } from './support.js';

/**
 * Session ledger: `appendSessionEvents` hands out gap-free per-session `seq` values, consecutive
 * within one call, under 40 concurrent calls (half in transactions) plus 5 that roll back;
 * `listSessionEvents` pages ascending by `seq`.
 */
export async function checkGapFreeSessionSeq({ store, raw }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const w = await seedWorld(store, 'ledger');
  const other: Session = { ...w.session, id: `${w.session.id}_other` };
  await store.insertSession(other);
  assertSame(await store.appendSessionEvents([]), [], 'appendSessionEvents([])');
  const boom = new Error('rolled back on purpose');
  const batch = (tag: string, size: number, session: Session) => range(1, size).map((j) => newSessionEvent(session, `sevt_${w.u}_${tag}_${j}`, { processed_at: T0 + j }));
  const tasks = [
    ...range(1, 40).map((i) => () => {
      const events = batch(`c${i}`, 1 + (i % 3), w.session);
      return i % 2 === 0 ? store.transaction((tx) => tx.appendSessionEvents(events)) : store.appendSessionEvents(events);
    }),
    ...range(1, 5).map((i) => () => store.transaction(async (tx) => {
      await tx.appendSessionEvents(batch(`r${i}`, 2, w.session));
      throw boom;
    })),
    ...range(1, 10).map((i) => () => store.appendSessionEvents(batch(`o${i}`, 1, other))),
  ].sort(() => Math.random() - 0.5);
  const results = (await concurrentlyAllowing(tasks, boom, 'concurrent appendSessionEvents')).filter((r): r is SessionEvent[] => r !== undefined);
  const mine = results.filter((r) => r[0]?.session_id === w.session.id);
  const total = mine.reduce((n, r) => n + r.length, 0);
  assert(total === range(1, 40).reduce((n, i) => n + 1 + (i % 3), 0), `expected every committed ledger entry, got ${total}`);
  for (const r of mine) {
    const seqs = r.map((e) => e.seq);
    const start = seqs[0] ?? 0;
    assertSame(seqs, range(start, start + r.length - 1), 'seq values of one call must be consecutive and in order');
  }
  assertGapFree(mine.flat().map((e) => e.seq), total, 'seq values returned to the writers');
  assertSame(await raw.sessionEventSeqs(w.session.id), range(1, total), 'stored seq values');
  assertSame(await raw.sessionEventSeqs(other.id), range(1, 10), 'stored seq values of the other session');

  const listed = await store.listSessionEvents({ session_id: w.session.id, after: 0, limit: 1000 });
  const bySeq = new Map(mine.flat().map((e) => [e.seq, e]));
  assertSame(listed.map((e) => e.seq), range(1, total), 'listSessionEvents order');
  for (const e of listed) assertSame(e, bySeq.get(e.seq), `ledger entry ${e.seq} as listed vs as returned`);
  assertSame((await store.listSessionEvents({ session_id: w.session.id, after: 5, limit: 3 })).map((e) => e.seq), [6, 7, 8], 'listSessionEvents after 5, limit 3');
}

/**
 * Sessions, floors and pages: `listSessions` filters by project (`null` = outside any project),
 * newest first; floors ascending by number; `lastFloorNumber` per branch (0 when none); pages
 * ascending by version.
 */
export async function checkSessionsFloorsPages({ store }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const w = await seedWorld(store, 'floor');
  const loose: Session = {
    id: `sess_${w.u}_loose`, workspace_id: w.ws.id, project_id: null, title: null, created_by_account_id: w.owner.id, created_at: T0 + 10,
    agent: { id: 'assistant', type: 'agent', version: 1 }, environment_id: 'env_demo', metadata: { k: 'v' }, updated_at: T0 + 10, archived_at: null,
  };
  const later: Session = { ...w.session, id: `sess_${w.u}_later`, created_at: T0 + 20 };
  await store.insertSession(loose);
  await store.insertSession(later);
  assertSame(await store.listSessions(w.ws.id, {}), [later, loose, w.session], 'listSessions, newest first');
  assertSame(await store.listSessions(w.ws.id, { project_id: w.project.id }), [later, w.session], 'listSessions of a project');
  assertSame(await store.listSessions(w.ws.id, { project_id: null }), [loose], 'listSessions outside any project');

  const floors: Floor[] = [3, 1, 2].map((n) => ({ id: `floor_${w.u}_${n}`, workspace_id: w.ws.id, session_id: w.session.id, number: n, branch: 'main', state: 'committed', created_at: T0 + n }));
  for (const f of floors) await store.insertFloor(f);
  const alt: Floor = { id: `floor_${w.u}_alt`, workspace_id: w.ws.id, session_id: w.session.id, number: 7, branch: 'alt', state: 'committed', created_at: T0 };
  await store.insertFloor(alt);
  const listed = await store.listFloors(w.session.id);
  assertSame(listed.map((f) => f.number), [1, 2, 3, 7], 'listFloors ascending by number');
  assertSame(listed[0], floors[1], 'a listed floor equals the stored floor');
  assert((await store.lastFloorNumber(w.session.id, 'main')) === 3, 'lastFloorNumber on main');
  assert((await store.lastFloorNumber(w.session.id, 'alt')) === 7, 'lastFloorNumber on alt');
  assert((await store.lastFloorNumber(w.session.id, 'none')) === 0, 'lastFloorNumber of an empty branch is 0');
  assert((await store.lastFloorNumber(later.id, 'main')) === 0, 'lastFloorNumber of a session without floors is 0');

  const floor = floors[0];
  assert(floor !== undefined, 'floor seeded');
  const pages: Page[] = [2, 1, 3].map((v) => ({ id: `page_${w.u}_${v}`, workspace_id: w.ws.id, session_id: w.session.id, floor_id: floor.id, version: v, content: { v }, created_at: T0 + v }));
  for (const pg of pages) await store.insertPage(pg);
  assertSame(await store.listPages(floor.id), [pages[1], pages[0], pages[2]], 'listPages ascending by version');
  assertSame(await store.listPages(`floor_${w.u}_missing`), [], 'listPages of a floor without pages');
}

/**
 * Managed Agents Sessions (`/v1/sessions`): `pageSessions` keyset pages in both orders with every
 * filter; `updateSession` sets only the fields given and is conditional on a live Session;
 * `deleteSession` hides the Session from every read (once; `lockSession` too); `listSessionEvents` filters by type,
 * `processed_at` bounds and `before`, ascending or descending.
 */
export async function checkManagedSessions({ store }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const w = await seedWorld(store, 'msess');
  const hidden = newProject(w.u, w.ws, w.owner, 'hidden', T0);
  await store.insertProject(hidden);
  const mk = (n: number, over: Partial<Session> = {}): Session => ({
    id: `sess_${w.u}_m${n}`, workspace_id: w.ws.id, project_id: null, title: `t${n}`, created_by_account_id: w.owner.id,
    created_at: T0 + 100 + n, agent: { id: n % 2 === 0 ? 'assistant' : 'other', type: 'agent', version: 1 }, environment_id: `env_${n}`,
    metadata: { n: String(n) }, updated_at: T0 + 100 + n, archived_at: null, ...over,
  });
  const sessions = [mk(1), mk(2), mk(3, { archived_at: T0 + 200 }), mk(4, { project_id: hidden.id }), mk(5, { created_at: T0 + 102 })];
  for (const x of sessions) await store.insertSession(x);
  const [s1, s2, s3, s4, s5] = sessions as [Session, Session, Session, Session, Session];
  const ids = (rows: Session[]) => rows.map((r) => r.id);
  const ownOnly = (rows: Session[]) => rows.filter((r) => r.id.startsWith(`sess_${w.u}_m`));
  // s2 and s5 share created_at: the id breaks the tie (byte order).
  const asc = [s1, s2, s5, s3, s4].map((x) => x.id);
  assertSame(ids(ownOnly(await store.pageSessions(w.ws.id, { order: 'asc', limit: 100 }))), asc, 'pageSessions asc by (created_at, id)');
  assertSame(ids(ownOnly(await store.pageSessions(w.ws.id, { order: 'desc', limit: 100 }))), [...asc].reverse(), 'pageSessions desc');
  assertSame(await store.pageSessions(w.ws.id, { order: 'asc', limit: 1, created_at: { gte: T0 + 101, lte: T0 + 101 } }), [s1], 'a paged Session equals the stored one');
  assertSame(ids(await store.pageSessions(w.ws.id, { order: 'asc', limit: 2, after: { created_at: s2.created_at, id: s2.id }, created_at: { gt: T0 + 100 } })),
    [s5.id, s3.id], 'pageSessions after a keyset, limit 2');
  assertSame(ids(await store.pageSessions(w.ws.id, { order: 'desc', limit: 10, after: { created_at: s5.created_at, id: s5.id }, created_at: { gt: T0 + 100 } })),
    [s2.id, s1.id], 'pageSessions desc after a keyset');
  assertSame(ids(await store.pageSessions(w.ws.id, { order: 'asc', limit: 10, created_at: { gt: T0 + 101, lt: T0 + 104 } })), [s2.id, s5.id, s3.id], 'created_at gt/lt');
  assertSame(ids(ownOnly(await store.pageSessions(w.ws.id, { order: 'asc', limit: 10, include_archived: false }))), [s1.id, s2.id, s5.id, s4.id], 'include_archived false');
  assertSame(ids(ownOnly(await store.pageSessions(w.ws.id, { order: 'asc', limit: 10, visible_project_ids: [] }))), [s1.id, s2.id, s5.id, s3.id], 'visible_project_ids [] keeps Sessions outside projects');
  assert(ids(await store.pageSessions(w.ws.id, { order: 'asc', limit: 100, visible_project_ids: [hidden.id] })).includes(s4.id), 'visible_project_ids lists the project');
  assertSame(ids(ownOnly(await store.pageSessions(w.ws.id, { order: 'asc', limit: 10, agent_id: 'assistant' }))), [s2.id, s4.id], 'agent_id filter');

  const updated = await store.updateSession(w.ws.id, s1.id, { title: null, metadata: { a: 'b' }, updated_at: T0 + 300 });
  assertSame(updated, { ...s1, title: null, metadata: { a: 'b' }, updated_at: T0 + 300 }, 'updateSession sets the given fields');
  assertSame(await store.getSession(w.ws.id, s1.id), updated, 'updateSession persisted');
  assertSame(await store.updateSession(w.ws.id, s1.id, { archived_at: T0 + 301, updated_at: T0 + 301 }), { ...updated, archived_at: T0 + 301, updated_at: T0 + 301 }, 'updateSession archives, keeps the rest');
  assert((await store.updateSession('ws_nowhere', s1.id, { title: 'x', updated_at: T0 })) === undefined, 'updateSession in another workspace');
  assert(!(await store.deleteSession('ws_nowhere', s2.id, T0)), 'deleteSession in another workspace deletes nothing');
  assert(await store.deleteSession(w.ws.id, s2.id, T0 + 400), 'deleteSession of a live Session');
  assert(!(await store.deleteSession(w.ws.id, s2.id, T0 + 401)), 'a second deleteSession');
  assert((await store.getSession(w.ws.id, s2.id)) === undefined, 'a deleted Session is not read');
  assert(!ids(await store.listSessions(w.ws.id, {})).includes(s2.id), 'a deleted Session is not listed');
  assert(!ids(await store.pageSessions(w.ws.id, { order: 'asc', limit: 100 })).includes(s2.id), 'a deleted Session is not paged');
  assert((await store.updateSession(w.ws.id, s2.id, { title: 'x', updated_at: T0 })) === undefined, 'a deleted Session is not updated');
  assert((await store.transaction((tx) => tx.lockSession(w.ws.id, s2.id))) === undefined, 'a deleted Session is not locked');
  assertSame(await store.transaction((tx) => tx.lockSession(w.ws.id, s1.id)), await store.getSession(w.ws.id, s1.id), 'lockSession reads agent, metadata and archive as getSession does');

  const types = ['user.message', 'session.status_running', 'agent.message', 'session.status_idle'];
  await store.appendSessionEvents(range(1, 8).map((j) => newSessionEvent(s3, `sevt_${w.u}_m${j}`, { type: types[(j - 1) % 4] ?? 'user.message', processed_at: T0 + j })));
  const seqs = async (q: Partial<Parameters<typeof store.listSessionEvents>[0]>) =>
    (await store.listSessionEvents({ session_id: s3.id, after: 0, limit: 100, ...q })).map((e) => e.seq);
  assertSame(await seqs({ order: 'desc' }), [8, 7, 6, 5, 4, 3, 2, 1], 'listSessionEvents desc');
  assertSame(await seqs({ order: 'desc', before: 6, limit: 2 }), [5, 4], 'desc before 6, limit 2');
  assertSame(await seqs({ types: ['user.message', 'agent.message'] }), [1, 3, 5, 7], 'types filter');
  assertSame(await seqs({ types: [] }), [], 'an empty types list matches none');
  assertSame(await seqs({ processed_at: { gt: T0 + 2, lte: T0 + 5 } }), [3, 4, 5], 'processed_at gt/lte');
  assertSame(await seqs({ processed_at: { gte: T0 + 2, lt: T0 + 5 }, after: 2 }), [3, 4], 'processed_at gte/lt with after');
}

/** The Sessions both access reads are checked on ({@link checkSessionGate}, {@link checkSessionWithAccess}). */
async function accessWorld(store: StoreConformanceSubject['store'], tag: string) {
  const w = await seedWorld(store, tag);
  const ws2: Workspace = { id: `ws_${w.u}_2`, name: 'other', created_at: T0 };
  await store.insertWorkspace(ws2);
  const outsider: Account = { id: `acc_${w.u}_outsider`, name: 'Outsider', created_at: T0 };
  await store.insertAccount(outsider, [w.ws.id]);
  const loose: Session = {
    id: `sess_${w.u}_loose`, workspace_id: w.ws.id, project_id: null, title: null, created_by_account_id: w.owner.id, created_at: T0 + 1,
    agent: { id: 'assistant', type: 'agent', version: 1 }, environment_id: 'env_demo', metadata: { k: 'v', '表': '"q"' }, updated_at: T0 + 2, archived_at: T0 + 3,
  };
  await store.insertSession(loose);
  const gone: Session = { ...w.session, id: `sess_${w.u}_gone`, created_at: T0 + 4 };
  await store.insertSession(gone);
  assert(await store.deleteSession(w.ws.id, gone.id, T0 + 5), 'deleteSession of a live Session');
  const shut: Project = { ...w.project, id: `proj_${w.u}_shut`, name: 'archived', created_at: T0 + 6, updated_at: T0 + 6 };
  await store.insertProject(shut);
  assert((await store.setProjectStatus(shut.id, 'archived', T0 + 7)) !== undefined, 'setProjectStatus → archived');
  const inShut: Session = { ...w.session, id: `sess_${w.u}_shut`, project_id: shut.id, created_at: T0 + 8 };
  await store.insertSession(inShut);
  // A Session whose project_id names a project of another workspace: no project, no role.
  const foreign: Project = { ...w.project, id: `proj_${w.u}_foreign`, workspace_id: ws2.id, created_at: T0 + 9, updated_at: T0 + 9 };
  await store.insertProject(foreign);
  await store.upsertMembership({ project_id: foreign.id, account_id: w.deriver.id, role: 'deriver', created_at: T0 + 9 });
  const astray: Session = { ...w.session, id: `sess_${w.u}_astray`, project_id: foreign.id, created_at: T0 + 10 };
  await store.insertSession(astray);
  const cases = [
    ['the owner (no membership row)', w.session.id, w.owner.id],
    ['a deriver member', w.session.id, w.deriver.id],
    ['an account with no role', w.session.id, outsider.id],
    ['a session with no project (archived, with agent and metadata)', loose.id, w.deriver.id],
    ['a session of an archived project', inShut.id, w.owner.id],
    ['a session whose project is of another workspace', astray.id, w.deriver.id],
  ] as const;
  return { w, ws2, outsider, gone, cases };
}

/**
 * Checks one of the access reads on {@link accessWorld}: for every case, exactly `expectedOf` of
 * what `getSession`, `getProject` and `getMembership` return; `undefined` through another
 * workspace, for a missing or deleted Session; inside a transaction it sees the transaction's own
 * membership (`roleOf` the answer: `observer`).
 */
async function checkAccessRead<T>(
  store: StoreConformanceSubject['store'], tag: string, name: string,
  read: (s: StoreTx, ws: string, sid: string, acc: string) => Promise<T | undefined> | undefined,
  expectedOf: (access: SessionWithAccess) => T, roleOf: (got: T | undefined) => string | undefined,
): Promise<void> {
  const { w, ws2, outsider, gone, cases } = await accessWorld(store, tag);
  for (const [what, sid, acc] of cases) {
    const got = await read(store, w.ws.id, sid, acc);
    assert(got !== undefined, `${name}, ${what}: the session exists, so the answer must not be undefined`);
    const session = await store.getSession(w.ws.id, sid);
    assert(session !== undefined, `getSession, ${what}`);
    const project = session.project_id ? await store.getProject(w.ws.id, session.project_id) : undefined;
    assertSame(got, expectedOf({ session, project, membership: project ? await store.getMembership(project.id, acc) : undefined }), `${name}, ${what}`);
  }
  assert((await read(store, ws2.id, w.session.id, w.owner.id)) === undefined, `${name} through another workspace must be undefined`);
  assert((await read(store, w.ws.id, `sess_${w.u}_missing`, w.owner.id)) === undefined, `${name} of a missing session must be undefined`);
  assert((await read(store, w.ws.id, gone.id, w.owner.id)) === undefined, `${name} of a deleted session must be undefined`);
  await store.transaction(async (tx) => {
    await tx.upsertMembership({ project_id: w.project.id, account_id: outsider.id, role: 'observer', created_at: T0 + 11 });
    assert(roleOf(await read(tx, w.ws.id, w.session.id, outsider.id)) === 'observer', `${name} inside a transaction sees its own membership`);
  });
}

/**
 * `getSessionGate` (optional: a store without it passes) returns exactly those fields of what
 * `getSession`, `getProject` and `getMembership` return: the Session's id, project and archive,
 * the project's owner and status, the caller's role — for its owner, a member, an account with no
 * role, a Session with no project (archived), an archived project; `undefined` through another
 * workspace, for a missing or deleted Session; a project of another workspace is none; inside a
 * transaction it sees the transaction's own writes.
 */
export async function checkSessionGate({ store }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  if (store.getSessionGate === undefined) return;
  await checkAccessRead(store, 'sgate', 'getSessionGate', (s, ws, sid, acc) => s.getSessionGate?.(ws, sid, acc), sessionGateOf, (got) => got?.role);
}

/**
 * `getSessionWithAccess` (optional: a store without it passes) returns exactly what `getSession`,
 * `getProject` and `getMembership` return: a session of a project for its owner, a member and an
 * account with no role; a session with no project (with agent, metadata and archive); an archived
 * project; a project of another workspace is none; a session asked through another workspace,
 * missing or deleted (`undefined`); inside a transaction it sees the transaction's own writes.
 */
export async function checkSessionWithAccess({ store }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  if (store.getSessionWithAccess === undefined) return;
  await checkAccessRead(store, 'saccess', 'getSessionWithAccess', (s, ws, sid, acc) => s.getSessionWithAccess?.(ws, sid, acc), (a) => a, (got) => got?.membership?.role);
}
