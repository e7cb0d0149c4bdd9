/**
 * Conformance checks of the keyset pages behind every list route (platform.md "Lists and pages"):
 * the optional `pageProjectsForAccount`, `pageMemberships`, `pageFloors`, `pagePages` and the
 * optional `project_id` filter of `pageSessions`. Each page method, when the store has it, must
 * return exactly the rows of its list method from the position on, in the list's order, at most
 * `limit`, with ties on the first key never skipped or repeated.
 */
import type { FloorPosition } from '../../ports/store.js';
import type { Account, Floor, Page, Project, Session } from '../../records.js';
import { assert, assertSame, T0, seedWorld, newProject, type StoreConformanceSubject } from './support.js';

/** Walks a keyset page method with `limit` until a short page, returning every row in order. */
async function walk<T, P>(read: (after: P | undefined, limit: number) => Promise<T[]>, positionOf: (row: T) => P, limit: number, what: string): Promise<T[]> {
  const out: T[] = [];
  let after: P | undefined;
  for (let guard = 0; guard < 1_000; guard++) {
    const rows = await read(after, limit);
    assert(rows.length <= limit, `${what}: a page of limit ${limit} returned ${rows.length} rows`);
    out.push(...rows);
    const last = rows[rows.length - 1];
    if (rows.length < limit || last === undefined) return out;
    after = positionOf(last);
  }
  throw new Error(`${what}: more than 1,000 pages`);
}

/**
 * `pageProjectsForAccount` and `pageMemberships` (optional): for every page size 1–4, the pages
 * together are exactly `listProjectsForAccount` / `listMemberships`, in their order; projects
 * sharing a `created_at` and members sharing a `created_at` are neither skipped nor repeated;
 * another account's projects never appear.
 */
export async function checkProjectAndMemberPages({ store }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  if (store.pageProjectsForAccount === undefined && store.pageMemberships === undefined) return;
  const w = await seedWorld(store, 'pages');
  const stranger: Account = { id: `acc_${w.u}_stranger`, name: 'Stranger', created_at: T0 };
  await store.insertAccount(stranger, [w.ws.id]);
  // Six more projects of the owner, three sharing one created_at; the deriver is a member of two; one is the stranger's.
  const extra: Project[] = [1, 2, 2, 2, 3, 4].map((t, i) => newProject(w.u, w.ws, w.owner, `p${i}`, T0 + t));
  for (const p of extra) await store.insertProject(p);
  await store.insertProject({ ...newProject(w.u, w.ws, stranger, 'strangers', T0 + 2), account_id: stranger.id });
  await store.upsertMembership({ project_id: extra[1]!.id, account_id: w.deriver.id, role: 'observer', created_at: T0 + 9 });
  await store.upsertMembership({ project_id: extra[3]!.id, account_id: w.deriver.id, role: 'deriver', created_at: T0 + 9 });
  const ids = (rows: { id: string }[]) => rows.map((r) => r.id);

  if (store.pageProjectsForAccount !== undefined) {
    for (const account of [w.owner, w.deriver, stranger]) {
      const expected = ids(await store.listProjectsForAccount(w.ws.id, account.id));
      for (const limit of [1, 2, 3, 4]) {
        const got = await walk((after: { created_at: number; id: string } | undefined, n) => store.pageProjectsForAccount!(w.ws.id, account.id, { after, limit: n }),
          (p) => ({ created_at: p.created_at, id: p.id }), limit, 'pageProjectsForAccount');
        assertSame(ids(got), expected, `pageProjectsForAccount(${account.name}) in pages of ${limit}`);
      }
    }
    assertSame(await store.pageProjectsForAccount(`ws_${w.u}_missing`, w.owner.id, { limit: 10 }), [], 'pageProjectsForAccount of another workspace');
  }

  if (store.pageMemberships !== undefined) {
    // Five members of one project, three joining in the same ms.
    const members: Account[] = ['m_c', 'm_a', 'm_b', 'm_e', 'm_d'].map((n) => ({ id: `acc_${w.u}_${n}`, name: n, created_at: T0 }));
    for (const [i, m] of members.entries()) {
      await store.insertAccount(m, [w.ws.id]);
      await store.upsertMembership({ project_id: w.project.id, account_id: m.id, role: i % 2 === 0 ? 'deriver' : 'observer', created_at: T0 + (i < 3 ? 5 : 5 + i) });
    }
    const expected = (await store.listMemberships(w.project.id)).map((m) => m.account_id);
    assert(expected.length === 6, `listMemberships lists the deriver and five members, got ${expected.length}`);
    for (const limit of [1, 2, 3, 4]) {
      const got = await walk((after: { created_at: number; id: string } | undefined, n) => store.pageMemberships!(w.project.id, { after, limit: n }),
        (m) => ({ created_at: m.created_at, id: m.account_id }), limit, 'pageMemberships');
      assertSame(got.map((m) => m.account_id), expected, `pageMemberships in pages of ${limit}`);
    }
    assertSame(await store.pageMemberships(`proj_${w.u}_missing`, { limit: 10 }), [], 'pageMemberships of a missing project');
  }
}

/**
 * `pageFloors`, `pagePages` (optional) and `pageSessions` with `project_id`: Floors in
 * `(number, branch, id)` order (two branches sharing numbers), Pages by version, Sessions of one
 * project only — every page size, nothing skipped or repeated, exactly the list's rows.
 */
export async function checkTurnAndSessionPages({ store }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const w = await seedWorld(store, 'turnpages');
  const s = w.session;
  if (store.pageFloors !== undefined || store.pagePages !== undefined) {
    const floors: Floor[] = [];
    for (const [i, [number, branch]] of ([[1, 'main'], [1, 'alt'], [2, 'main'], [2, 'alt'], [3, 'main'], [2, 'b2']] as const).entries()) {
      const floor: Floor = { id: `floor_${w.u}_${i}`, workspace_id: w.ws.id, session_id: s.id, number, branch, state: 'committed', created_at: T0 + 1 };
      await store.insertFloor(floor);
      floors.push(floor);
    }
    if (store.pageFloors !== undefined) {
      const expected = (await store.listFloors(s.id)).map((f) => f.id);
      assert(expected.length === floors.length, `listFloors lists ${floors.length} floors, got ${expected.length}`);
      for (const limit of [1, 2, 4]) {
        const got = await walk((after: FloorPosition | undefined, n) => store.pageFloors!(s.id, { after, limit: n }), (f) => ({ number: f.number, branch: f.branch, id: f.id }), limit, 'pageFloors');
        assertSame(got.map((f) => f.id), expected, `pageFloors in pages of ${limit}`);
      }
    }
    if (store.pagePages !== undefined) {
      const floor = floors[0]!;
      const pages: Page[] = [];
      for (let v = 1; v <= 5; v++) {
        const page: Page = { id: `page_${w.u}_${v}`, workspace_id: w.ws.id, session_id: s.id, floor_id: floor.id, version: v, content: { v }, created_at: T0 + v };
        await store.insertPage(page);
        pages.push(page);
      }
      for (const limit of [1, 2, 5]) {
        const got = await walk((after: number | undefined, n) => store.pagePages!(floor.id, { after_version: after, limit: n }), (p) => p.version, limit, 'pagePages');
        assertSame(got, pages, `pagePages in pages of ${limit}`);
      }
      assertSame(await store.pagePages(floors[1]!.id, { limit: 5 }), [], 'pagePages of a floor without pages');
    }
  }

  // pageSessions with project_id: only that project's Sessions (a store that ignores the filter fails here).
  const other = newProject(w.u, w.ws, w.owner, 'other', T0 + 1);
  await store.insertProject(other);
  const mk = (n: number, project_id: string | null, at: number): Session => ({
    id: `sess_${w.u}_${n}`, workspace_id: w.ws.id, project_id, title: null, created_by_account_id: w.owner.id, created_at: at,
    agent: null, environment_id: null, metadata: {}, updated_at: at, archived_at: null,
  });
  const sessions = [mk(1, w.project.id, T0 + 3), mk(2, other.id, T0 + 3), mk(3, null, T0 + 3), mk(4, w.project.id, T0 + 3), mk(5, w.project.id, T0 + 4)];
  for (const x of sessions) await store.insertSession(x);
  const visible = [w.project.id, other.id];
  const expected = (await store.listSessions(w.ws.id, { project_id: w.project.id })).map((x) => x.id);
  assert(expected.length === 4, `listSessions of the project lists 4 Sessions, got ${expected.length}`);
  const pages = (project_id: string | undefined, limit: number) => walk((after: { created_at: number; id: string } | undefined, n) =>
    store.pageSessions(w.ws.id, { order: 'desc', visible_project_ids: visible, ...(project_id === undefined ? {} : { project_id }), after, limit: n }),
  (x) => ({ created_at: x.created_at, id: x.id }), limit, 'pageSessions');
  for (const limit of [1, 2, 3]) {
    const got = (await pages(w.project.id, limit)).map((x) => x.id);
    // The filter is optional (it came after the method): a store may ignore it, and then lists as without it.
    if (got.some((id) => !expected.includes(id))) assertSame(got, (await pages(undefined, limit)).map((x) => x.id), `pageSessions ignoring project_id, in pages of ${limit}`);
    else assertSame(got, expected, `pageSessions(project_id) in pages of ${limit}`);
  }
}
