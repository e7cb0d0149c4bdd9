/**
 * Conformance checks of the optional list reads: `InboxStore.listInboxItemsWithAccess` (a list's access and page in one read, as the two-step
 * reads give them) and `InboxStore.listInboxItemsJson` (the page as JSON text).
 */
import type { InboxPageQuery } from '../../ports/store.js';
import type { Account, InboxItemStatus, ProjectInboxItem, Session, Workspace } from '../../records.js';
import { assert, assertSame, range, T0, seedWorld, newProject, newItem, ESCAPED_TEXT, type StoreConformanceSubject } from './support.js';

/** The world both list checks read: 23 items of mixed dates, statuses, senders, sessions and types, escapes and big numbers, beside items of another project; the queries to page it with. */
async function seedListWorld(store: StoreConformanceSubject['store'], prefix: string) {
  const w = await seedWorld(store, prefix);
  const p = w.project;
  const ws2: Workspace = { id: `ws_${w.u}_2`, name: 'other', created_at: T0 };
  await store.insertWorkspace(ws2);
  const observer: Account = { id: `acc_${w.u}_observer`, name: 'Observer', created_at: T0 };
  const outsider: Account = { id: `acc_${w.u}_outsider`, name: 'Outsider', created_at: T0 };
  await store.insertAccount(observer, [w.ws.id]);
  await store.insertAccount(outsider, [w.ws.id]);
  await store.upsertMembership({ project_id: p.id, account_id: observer.id, role: 'observer', created_at: T0 + 1 });
  const other = newProject(w.u, w.ws, w.owner, 'other', T0 + 5);
  await store.insertProject(other);
  const empty = newProject(w.u, w.ws, w.owner, 'empty', T0 + 6);
  await store.insertProject(empty);
  const s2: Session = { ...w.session, id: `${w.session.id}_2` };
  await store.insertSession(s2);

  const statuses: InboxItemStatus[] = ['pending', 'accepted', 'rejected', 'archived'];
  const items: ProjectInboxItem[] = range(0, 23).map((k) => newItem(w, p, `pinbox_${w.u}_${String.fromCharCode(97 + k)}`, {
    created_at: T0 + (k % 5) * 10,
    updated_at: T0 + (k % 5) * 10,
    status: statuses[k % 4] ?? 'pending',
    sender_account_id: [w.deriver.id, w.owner.id, observer.id][k % 3] ?? w.deriver.id,
    source_session_id: [w.session.id, s2.id, null][k % 3 === 0 ? 0 : k % 2 === 0 ? 1 : 2] ?? null,
    type: k % 4 === 1 ? 'other.type' : 'derived_output.review',
    payload: { k, nested: { list: [k, 'x'] } },
    // Text a store may have to escape (one read as JSON, e.g.), and numbers beyond 32 bits.
    ...(k === 4 ? { title: ESCAPED_TEXT.title ?? null, payload: ESCAPED_TEXT.payload ?? {} } : {}),
  }));
  for (const item of [...items].reverse()) await store.insertInboxItem(item);
  for (const k of range(1, 4)) await store.insertInboxItem(newItem(w, other, `pinbox_${w.u}_o${k}`, { created_at: T0 + 20 }));
  const sorted = [...items].sort((x, y) => y.created_at - x.created_at || (x.id < y.id ? 1 : -1));
  const middle = sorted[7];
  assert(middle !== undefined, 'items seeded');

  const filters: InboxPageQuery[] = [
    { limit: 100 }, { limit: 1 }, { limit: 5 }, { limit: 24 }, { status: 'pending', limit: 3 }, { type: 'other.type', limit: 100 },
    { sender_account_id: w.deriver.id, limit: 4 }, { sender_account_id: outsider.id, limit: 10 }, { source_session_id: s2.id, limit: 100 },
    { status: 'accepted', sender_account_id: w.owner.id, limit: 100 }, { status: 'pending', type: 'derived_output.review', sender_account_id: w.deriver.id, source_session_id: w.session.id, limit: 2 },
    { after: { created_at: middle.created_at, id: middle.id }, limit: 6 }, { after: { created_at: T0 + 25, id: 'zzz' }, limit: 100 },
    { after: { created_at: T0 + 20, id: '' }, sender_account_id: w.deriver.id, limit: 3 }, { after: { created_at: T0 - 1, id: 'z' }, limit: 10 },
    { after: { created_at: T0 + 999, id: 'a' }, status: 'rejected', limit: 100 },
  ];
  return { w, p, ws2, observer, outsider, empty, items, sorted, filters };
}

/**
 * `listInboxItemsWithAccess` (optional: a store without it passes) returns exactly what
 * `getProject`, `getMembership` and `listInboxItems({ project_id, ...query })` return: for the
 * owner (no membership row) the page of every sender's items, for a deriver, an observer and an
 * account with no role the page narrowed to the items each sent (the store checks no role); every filter and their
 * combinations, limits of 1 to past the end, cursor positions that do and do not name a row, an
 * empty page, a project asked through another workspace or missing (`undefined`); never an item of
 * another project; inside a transaction it sees the transaction's own writes.
 */
export async function checkInboxItemsWithAccess({ store }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  if (store.listInboxItemsWithAccess === undefined) return;
  const { w, p, ws2, observer, outsider, empty, sorted, filters } = await seedListWorld(store, 'listaccess');
  const callers = [w.owner, w.deriver, observer, outsider];
  for (const query of filters) {
    for (const caller of callers) {
      const what = `listInboxItemsWithAccess(${caller.name}, ${JSON.stringify(query)})`;
      const got = await store.listInboxItemsWithAccess(w.ws.id, p.id, caller.id, query);
      assert(got !== undefined, `${what}: the project exists, so the answer must not be undefined`);
      // Anyone but the owner: the page narrowed to its own items (none when the query names another sender).
      const owner = caller.id === p.account_id;
      const named = query.sender_account_id;
      assertSame(got, {
        project: await store.getProject(w.ws.id, p.id),
        membership: await store.getMembership(p.id, caller.id),
        items: !owner && named !== undefined && named !== caller.id
          ? [] : await store.listInboxItems({ project_id: p.id, ...query, ...(owner ? {} : { sender_account_id: caller.id }) }),
      }, what);
      if (!owner) assert(got.items.every((i) => i.sender_account_id === caller.id), `${what}: an item another account sent, to an account that does not own the project`);
    }
  }
  const all = await store.listInboxItemsWithAccess(w.ws.id, p.id, w.owner.id, { limit: 100 });
  assertSame(all?.items.map((i) => i.id), sorted.map((i) => i.id), 'listInboxItemsWithAccess: every item of the project, newest first, none of another project');
  assertSame(all?.items[0], sorted[0], 'listInboxItemsWithAccess: a listed item equals the stored item');
  assertSame(await store.listInboxItemsWithAccess(w.ws.id, empty.id, w.owner.id, { limit: 10 }),
    { project: empty, membership: undefined, items: [] }, 'listInboxItemsWithAccess of a project without items');
  assert((await store.listInboxItemsWithAccess(ws2.id, p.id, w.owner.id, { limit: 10 })) === undefined, 'listInboxItemsWithAccess through another workspace must be undefined');
  assert((await store.listInboxItemsWithAccess(w.ws.id, `proj_${w.u}_missing`, w.owner.id, { limit: 10 })) === undefined,
    'listInboxItemsWithAccess of a missing project must be undefined');

  const fresh = newItem(w, p, `pinbox_${w.u}_tx`, { created_at: T0 + 1000, updated_at: T0 + 1000 });
  await store.transaction(async (tx) => {
    await tx.insertInboxItem(fresh);
    await tx.upsertMembership({ project_id: p.id, account_id: outsider.id, role: 'deriver', created_at: T0 + 7 });
    const got = await tx.listInboxItemsWithAccess?.(w.ws.id, p.id, w.owner.id, { limit: 1 });
    assertSame(got?.items, [fresh], 'listInboxItemsWithAccess inside a transaction sees its own item');
    const member = await tx.listInboxItemsWithAccess?.(w.ws.id, p.id, outsider.id, { limit: 1 });
    assert(member?.membership?.role === 'deriver', 'listInboxItemsWithAccess inside a transaction sees its own membership');
  });
}

/**
 * `listInboxItemsJson` (optional: a store without it passes) reads exactly the page
 * `listInboxItems` reads, as JSON text: `JSON.parse(json)` deep-equals the first `limit` rows of
 * `listInboxItems({ ...query, limit: limit + 1 })` (escapes, numbers beyond 32 bits, every JSON
 * kind in a payload), `more` says whether a row follows, `last` is the position of the page's
 * last item when one does; every filter, limits of 1 to past the end, cursor positions, an empty
 * page, another project's items never; inside a transaction it sees the transaction's own writes.
 */
export async function checkInboxItemsJson({ store }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  if (store.listInboxItemsJson === undefined) return;
  const { w, p, empty, items, filters } = await seedListWorld(store, 'listjson');
  const kinds = newItem(w, p, `pinbox_${w.u}_kinds`, {
    created_at: T0 + 15, updated_at: T0 + 15, title: null, source_session_id: w.session.id,
    payload: { 'ключ ✓': [-1.5, 1e21, 1.5e-10, 123456789012345680000, true, false, null, { a: [[]] }], '': 'empty key', esc: '\u2028 \u0001 "' },
  });
  await store.insertInboxItem(kinds);
  const pages: InboxPageQuery[] = [...filters, { limit: items.length + 1 }, { limit: items.length + 2 }, { limit: items.length + 5 }];
  for (const query of pages) {
    const q = { project_id: p.id, ...query };
    const what = `listInboxItemsJson(${JSON.stringify(q)})`;
    const got = await store.listInboxItemsJson({ ...q });
    const rows = await store.listInboxItems({ ...q, limit: q.limit + 1 });
    const page = rows.slice(0, q.limit);
    assertSame(JSON.parse(got.json), JSON.parse(JSON.stringify(page)), `${what}: the page's JSON`);
    assertSame(got.more, rows.length > q.limit, `${what}: more`);
    const last = page[page.length - 1];
    assertSame(got.last, got.more && last ? { created_at: last.created_at, id: last.id } : undefined, `${what}: last`);
  }
  const one = await store.listInboxItemsJson({ project_id: p.id, limit: 100 });
  assertSame((JSON.parse(one.json) as ProjectInboxItem[]).find((i) => i.id === kinds.id), kinds, 'listInboxItemsJson: a listed item parses to the stored item');
  assertSame(await store.listInboxItemsJson({ project_id: empty.id, limit: 10 }), { json: '[]', more: false, last: undefined }, 'listInboxItemsJson of a project without items');
  const fresh = newItem(w, p, `pinbox_${w.u}_jtx`, { created_at: T0 + 1000, updated_at: T0 + 1000 });
  await store.transaction(async (tx) => {
    await tx.insertInboxItem(fresh);
    const got = await tx.listInboxItemsJson?.({ project_id: p.id, limit: 1 });
    assertSame(got && JSON.parse(got.json), [fresh], 'listInboxItemsJson inside a transaction sees its own item');
    assertSame(got?.more, true, 'listInboxItemsJson inside a transaction: more rows follow');
  });
}
