/** Conformance checks of `InboxStore`: the conditional decision, keyset pages, `getInboxItemWithAccess`, JSON round trip. */
import type { InboxItemQuery } from '../../ports/store.js';
import type { Account, Floor, InboxItemStatus, JsonValue, OperationLog, Page, ProjectInboxItem, Session, Workspace } from '../../records.js';
import { assert, assertSame, assertSameJson, range, concurrently, T0, seedWorld, newProject, newItem, newLog, newEvent, newSessionEvent, ESCAPED_TEXT, type StoreConformanceSubject } from './support.js';

/**
 * `decideInboxItem` is a conditional update: of 20 concurrent decisions on one pending item, each
 * in its own transaction that also writes an Operation Log row and a Project Event when it wins,
 * exactly one wins; the stored row is the winner's; exactly one log row and one event exist.
 * The same holds for 20 concurrent autocommit calls on a second item.
 */
export async function checkDecideHasOneWinner({ store, raw }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const w = await seedWorld(store, 'decide');
  const p = w.project;
  const item = newItem(w, p, `pinbox_${w.u}_race`);
  await store.insertInboxItem(item);
  const statuses: InboxItemStatus[] = ['accepted', 'rejected', 'archived'];
  const contenders = 20;

  const outcomes = await concurrently(range(0, contenders - 1).map((i) => () => store.transaction(async (tx) => {
    // Every contender saw `pending` before the race (as a service does when it reads first).
    await tx.getInboxItem(p.id, item.id);
    const patch = { status: statuses[i % 3] ?? 'accepted', decided_by_account_id: w.owner.id, decided_at: T0 + 1000 + i, updated_at: T0 + 1000 + i };
    const updated = await tx.decideInboxItem(p.id, item.id, 'pending', patch);
    if (!updated) return undefined;
    await tx.appendOperationLog(newLog(w, p, `oplog_${w.u}_d${i}`, { action: 'project_inbox_item.decide', target_id: item.id, created_at: patch.updated_at }));
    await tx.appendProjectEvent(newEvent(w, p, `evt_${w.u}_d${i}`, { type: `project_inbox.item.${patch.status}`, created_at: patch.updated_at }));
    return { i, updated, patch };
  })), 'concurrent decisions');

  const winners = outcomes.filter((o): o is NonNullable<typeof o> => o !== undefined);
  assert(winners.length === 1, `exactly one of ${contenders} concurrent decisions must win, ${winners.length} did`);
  const winner = winners[0];
  assert(winner !== undefined, 'a winner exists');
  const expected = { ...item, ...winner.patch };
  assertSame(winner.updated, expected, 'the item returned to the winner');
  assert((await raw.itemStatus(item.id)) === winner.patch.status, `stored status must be the winner's (${winner.patch.status}), raw status is ${await raw.itemStatus(item.id)}`);
  assertSame(await store.getInboxItem(p.id, item.id), expected, 'the item read back after the race');
  const logs = await raw.countRows('operation_logs', p.id);
  const events = await raw.countRows('project_events', p.id);
  assert(logs === 1 && events === 1, `one decision → one Operation Log row and one Project Event; raw counts are ${logs} and ${events}`);
  assertSame(await raw.eventSequences(p.id), [1], 'stored sequences after the race');

  // A late decision with the stale status loses too.
  const late = await store.decideInboxItem(p.id, item.id, 'pending', { status: 'rejected', decided_by_account_id: w.owner.id, decided_at: T0 + 9, updated_at: T0 + 9 });
  assert(late === undefined, 'a decision with a stale seen_status must return undefined');
  // The wrong project never matches.
  const other = newProject(w.u, w.ws, w.owner, 'other', T0);
  await store.insertProject(other);
  assert(
    (await store.decideInboxItem(other.id, item.id, winner.patch.status, { status: 'archived', decided_by_account_id: w.owner.id, decided_at: T0, updated_at: T0 })) === undefined,
    'decideInboxItem must not update an item of another project',
  );

  const second = newItem(w, p, `pinbox_${w.u}_race2`);
  await store.insertInboxItem(second);
  const autocommit = await concurrently(range(0, contenders - 1).map((i) => () => store.decideInboxItem(p.id, second.id, 'pending', {
    status: statuses[i % 3] ?? 'accepted', decided_by_account_id: w.owner.id, decided_at: T0 + i, updated_at: T0 + i,
  })), 'concurrent autocommit decisions');
  const autoWinners = autocommit.filter((x) => x !== undefined);
  assert(autoWinners.length === 1, `exactly one of ${contenders} concurrent autocommit decisions must win, ${autoWinners.length} did`);
  assert((await raw.itemStatus(second.id)) === autoWinners[0]?.status, 'stored status must be the autocommit winner\'s');
}

/**
 * Keyset pages of `listInboxItems` (and `listOperationLogs`) in `created_at DESC, id DESC` order
 * neither skip nor repeat rows when many rows share a `created_at`, with and without filters, for
 * every page size, and from cursor positions that name no row. Ids mix upper and lower case, digits,
 * `-` and `_`: `id DESC` is code-unit (byte) order.
 */
export async function checkKeysetPaging({ store }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const w = await seedWorld(store, 'page');
  const p = w.project;
  const q = newProject(w.u, w.ws, w.owner, 'q', T0);
  await store.insertProject(q);
  const s2: Session = { ...w.session, id: `${w.session.id}_2` };
  await store.insertSession(s2);

  const alphabet = '-0123456789ABCZ_abcz';
  const suffixes = new Set<string>();
  while (suffixes.size < 64) {
    suffixes.add(range(1, 3).map(() => alphabet[Math.floor(Math.random() * alphabet.length)]).join(''));
  }
  const statuses: InboxItemStatus[] = ['pending', 'accepted', 'rejected', 'archived'];
  const items = [...suffixes].map((s, k) => newItem(w, p, `pinbox_${w.u}_${s}`, {
    created_at: T0 + (k % 4) * 1000,
    updated_at: T0 + (k % 4) * 1000,
    status: statuses[k % 4] ?? 'pending',
    sender_account_id: k % 2 === 0 ? w.deriver.id : w.owner.id,
    source_session_id: [w.session.id, s2.id, null][k % 3] ?? null,
    type: k % 5 === 0 ? 'other.type' : 'derived_output.review',
    payload: { k },
  }));
  for (const item of [...items].sort(() => Math.random() - 0.5)) await store.insertInboxItem(item);
  for (const k of range(1, 5)) await store.insertInboxItem(newItem(w, q, `pinbox_${w.u}_q${k}`, { created_at: T0 + 1000 }));

  type Key = { created_at: number; id: string };
  const desc = (x: Key, y: Key) => y.created_at - x.created_at || (x.id < y.id ? 1 : x.id > y.id ? -1 : 0);
  const isAfter = (row: Key, after?: Key) => !after || row.created_at < after.created_at || (row.created_at === after.created_at && row.id < after.id);

  const filters: Array<Omit<InboxItemQuery, 'project_id' | 'limit' | 'after'>> = [
    {}, { status: 'pending' }, { sender_account_id: w.deriver.id }, { source_session_id: w.session.id },
    { type: 'other.type' }, { status: 'accepted', sender_account_id: w.owner.id }, { status: 'archived', source_session_id: s2.id },
  ];
  for (const filter of filters) {
    const expected = items.filter((i) => (filter.status === undefined || i.status === filter.status)
      && (filter.type === undefined || i.type === filter.type)
      && (filter.sender_account_id === undefined || i.sender_account_id === filter.sender_account_id)
      && (filter.source_session_id === undefined || i.source_session_id === filter.source_session_id)).sort(desc);
    for (const limit of [1, 3, 7, 64, 100]) {
      const seen: ProjectInboxItem[] = [];
      let after: Key | undefined;
      for (let guard = 0; guard <= expected.length + 1; guard += 1) {
        const page = await store.listInboxItems({ project_id: p.id, ...filter, limit, ...(after ? { after } : {}) });
        assert(page.length <= limit, `a page must hold at most limit=${limit} rows, got ${page.length}`);
        seen.push(...page);
        const last = page[page.length - 1];
        if (page.length < limit || !last) break;
        after = { created_at: last.created_at, id: last.id };
      }
      assertSame(
        seen.map((i) => i.id), expected.map((i) => i.id),
        `paging ${JSON.stringify(filter)} with limit ${limit} (rows sharing created_at must be neither skipped nor repeated)`,
      );
    }
  }
  const anyItem = items[0];
  assert(anyItem !== undefined, 'items seeded');
  const listedOne = (await store.listInboxItems({ project_id: p.id, limit: 64 })).find((i) => i.id === anyItem.id);
  assertSame(listedOne, anyItem, 'a listed item equals the stored item');

  // Cursor positions that name no stored row.
  for (const after of [
    { created_at: T0 + 2000, id: `pinbox_${w.u}_M` }, { created_at: T0 + 1500, id: 'zzz' }, { created_at: T0 + 3000, id: '' },
    { created_at: T0 + 9999, id: 'a' }, { created_at: T0 - 1, id: 'z' },
  ]) {
    const expected = items.filter((i) => isAfter(i, after)).sort(desc).slice(0, 10);
    const page = await store.listInboxItems({ project_id: p.id, after, limit: 10 });
    assertSame(page.map((i) => i.id), expected.map((i) => i.id), `page after ${JSON.stringify(after)}`);
  }

  // Operation Log keyset pages.
  const logs = [...suffixes].slice(0, 30).map((s, k) => newLog(w, p, `oplog_${w.u}_${s}`, { created_at: T0 + (k % 3) }));
  for (const log of [...logs].sort(() => Math.random() - 0.5)) await store.appendOperationLog(log);
  await store.appendOperationLog(newLog(w, q, `oplog_${w.u}_q`, { created_at: T0 + 1 }));
  const expectedLogs = [...logs].sort(desc);
  const seenLogs: OperationLog[] = [];
  let afterLog: Key | undefined;
  for (let guard = 0; guard < 40; guard += 1) {
    const page = await store.listOperationLogs({ project_id: p.id, limit: 4, ...(afterLog ? { after: afterLog } : {}) });
    seenLogs.push(...page);
    const last = page[page.length - 1];
    if (page.length < 4 || !last) break;
    afterLog = { created_at: last.created_at, id: last.id };
  }
  assertSame(seenLogs.map((l) => l.id), expectedLogs.map((l) => l.id), 'Operation Log pages');
  assertSame(seenLogs[0], expectedLogs[0], 'a listed Operation Log row equals the stored row');
}

/** `value` wrapped in `depth` arrays. */
const nest = (depth: number, value: JsonValue): JsonValue => (depth === 0 ? value : [nest(depth - 1, value)]);

/** Payloads that must come back exactly as written (deep equality and key order). */
export const JSON_SAMPLES: readonly JsonValue[] = [
  { a: 1, b: [1, 2] },
  { z: 1, a: 2, m: { y: [], b: {}, a: null } },
  [], {}, 0, 1, -1, 0.1, 'x', '', true, false, null,
  'emoji 😀 👩‍👩‍👧 — ünïcødé 中文 🇫🇷',
  { text: 'nul \u0000 byte', seps: '\u2028\u2029', quotes: '"q" \\ \'s\'', ctrl: '\t\n\r\b\f' },
  { numbers: [-0.5, 1e21, 1.7976931348623157e308, 5e-324, 123456789012345, -9007199254740991] },
  { '': 'empty key', 'key with spaces': 1, 'ключ': 'значение', '😀': '😀' },
  nest(40, { deep: nest(40, 'bottom') }),
  [1, 'two', { three: 3 }, [4], null, true],
  { big: 'x'.repeat(200_000), list: range(1, 2000) },
];

/**
 * JSON round trip: item payloads, event payloads, Operation Log metadata, page content and session
 * ledger content are returned exactly as written — same value, same key order — by every read
 * (get, list, the row `decideInboxItem` returns), and the stored text parses to the same value.
 */
export async function checkJsonRoundTrip({ store, raw }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const w = await seedWorld(store, 'json');
  const p = w.project;
  const floor: Floor = { id: `floor_${w.u}`, workspace_id: w.ws.id, session_id: w.session.id, number: 1, branch: 'main', state: 'committed', created_at: T0 };
  await store.insertFloor(floor);
  for (const [k, sample] of JSON_SAMPLES.entries()) {
    const what = `sample #${k}`;
    const item = newItem(w, p, `pinbox_${w.u}_${k}`, { payload: sample, created_at: T0 + k });
    await store.insertInboxItem(item);
    assertSameJson((await store.getInboxItem(p.id, item.id))?.payload, sample, `${what}: getInboxItem`);
    const listed = await store.listInboxItems({ project_id: p.id, limit: 1 });
    assertSameJson(listed[0]?.payload, sample, `${what}: listInboxItems`);
    const text = await raw.itemPayloadText(item.id);
    assert(text !== undefined, `${what}: raw payload of ${item.id} missing`);
    assertSameJson(JSON.parse(text), sample, `${what}: stored payload text`);
    const decided = await store.decideInboxItem(p.id, item.id, 'pending', { status: 'accepted', decided_by_account_id: w.owner.id, decided_at: T0, updated_at: T0 });
    assertSameJson(decided?.payload, sample, `${what}: row returned by decideInboxItem`);

    const sampleObject = sample !== null && typeof sample === 'object' && !Array.isArray(sample) ? sample : { value: sample };
    const appended = await store.appendProjectEvent(newEvent(w, p, `evt_${w.u}_${k}`, { payload: sampleObject }));
    assertSameJson(appended.payload, sampleObject, `${what}: appendProjectEvent result`);
    assertSameJson((await store.getProjectEvent(p.id, appended.id))?.payload, sampleObject, `${what}: getProjectEvent`);
    await store.appendOperationLog(newLog(w, p, `oplog_${w.u}_${k}`, { metadata: sampleObject, created_at: T0 + 100 + k }));
    assertSameJson((await store.listOperationLogs({ project_id: p.id, limit: 1 }))[0]?.metadata, sampleObject, `${what}: Operation Log metadata`);

    const page: Page = { id: `page_${w.u}_${k}`, workspace_id: w.ws.id, session_id: w.session.id, floor_id: floor.id, version: k + 1, content: sample, created_at: T0 };
    await store.insertPage(page);
    assertSameJson((await store.getPage(w.ws.id, page.id))?.content, sample, `${what}: getPage`);
    const [ledger] = await store.appendSessionEvents([newSessionEvent(w.session, `sevt_${w.u}_${k}`, { content: sample })]);
    assertSameJson(ledger?.content, sample, `${what}: appendSessionEvents result`);
    const listedLedger = await store.listSessionEvents({ session_id: w.session.id, after: k, limit: 1 });
    assertSameJson(listedLedger[0]?.content, sample, `${what}: listSessionEvents`);
  }
  const pages = await store.listPages(floor.id);
  assert(pages.length === JSON_SAMPLES.length, 'listPages lists every page');
  for (const [k, sample] of JSON_SAMPLES.entries()) assertSameJson(pages[k]?.content, sample, `sample #${k}: listPages`);
}

/**
 * `getInboxItemWithAccess` (optional: a store without it passes) returns exactly what
 * `getProject`, `getMembership` and `getInboxItem` return: for the owner (no membership row), a
 * member, an account with no role, a missing item, an item of another project, a project asked
 * through another workspace or missing (`undefined`); payload JSON as stored; inside a transaction
 * it sees the transaction's own writes.
 */
export async function checkInboxItemWithAccess({ store }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  if (store.getInboxItemWithAccess === undefined) return;
  const w = await seedWorld(store, 'access');
  const p = w.project;
  const ws2: Workspace = { id: `ws_${w.u}_2`, name: 'other', created_at: T0 };
  await store.insertWorkspace(ws2);
  const outsider: Account = { id: `acc_${w.u}_outsider`, name: 'Outsider', created_at: T0 };
  await store.insertAccount(outsider, [w.ws.id]);
  const other = newProject(w.u, w.ws, w.owner, 'other', T0 + 5);
  await store.insertProject(other);
  await store.upsertMembership({ project_id: other.id, account_id: outsider.id, role: 'observer', created_at: T0 + 6 });
  const payload: JsonValue = { text: '表 "quoted" \\ \u2028', nested: { list: [1, 2.5, null, true], empty: {} }, zebra: 1, apple: 2 };
  const item = newItem(w, p, `pinbox_${w.u}`, { payload, title: null });
  await store.insertInboxItem(item);
  const tricky = newItem(w, p, `pinbox_${w.u}_text`, ESCAPED_TEXT);
  await store.insertInboxItem(tricky);
  const elsewhere = newItem(w, other, `pinbox_${w.u}_other`);
  await store.insertInboxItem(elsewhere);

  const read = (ws: string, pid: string, acc: string, id: string) => store.getInboxItemWithAccess!(ws, pid, acc, id);
  const expected = async (pid: string, acc: string, id: string) => ({
    project: await store.getProject(w.ws.id, pid),
    membership: await store.getMembership(pid, acc),
    item: await store.getInboxItem(pid, id),
  });
  const cases: Array<[string, string, string, string]> = [
    ['the owner (no membership row)', p.id, w.owner.id, item.id],
    ['a deriver member', p.id, w.deriver.id, item.id],
    ['an account with no role in the project', p.id, outsider.id, item.id],
    ['an item whose text needs escaping', p.id, w.deriver.id, tricky.id],
    ['a missing item', p.id, w.owner.id, `pinbox_${w.u}_missing`],
    ['an item of another project', p.id, w.owner.id, elsewhere.id],
    ['another project, its member', other.id, outsider.id, elsewhere.id],
  ];
  for (const [what, pid, acc, id] of cases) {
    const got = await read(w.ws.id, pid, acc, id);
    assert(got !== undefined, `getInboxItemWithAccess, ${what}: the project exists, so the answer must not be undefined`);
    assertSame(got, await expected(pid, acc, id), `getInboxItemWithAccess, ${what}`);
  }
  const own = await read(w.ws.id, p.id, w.deriver.id, item.id);
  assert(own?.membership?.role === 'deriver', 'getInboxItemWithAccess: the member\'s role');
  assertSameJson(own?.item?.payload, payload, 'getInboxItemWithAccess: payload');
  assert((await read(ws2.id, p.id, w.owner.id, item.id)) === undefined, 'getInboxItemWithAccess through another workspace must be undefined');
  assert((await read(w.ws.id, `proj_${w.u}_missing`, w.owner.id, item.id)) === undefined, 'getInboxItemWithAccess of a missing project must be undefined');

  const fresh = newItem(w, p, `pinbox_${w.u}_tx`);
  await store.transaction(async (tx) => {
    await tx.insertInboxItem(fresh);
    await tx.upsertMembership({ project_id: p.id, account_id: outsider.id, role: 'observer', created_at: T0 + 7 });
    const got = await tx.getInboxItemWithAccess?.(w.ws.id, p.id, outsider.id, fresh.id);
    assertSame(got?.item, fresh, 'getInboxItemWithAccess inside a transaction sees its own item');
    assert(got?.membership?.role === 'observer', 'getInboxItemWithAccess inside a transaction sees its own membership');
  });
}

/**
 * `lockInboxItemWithAccess` (optional: a store without it passes) returns, inside a transaction,
 * exactly what `lockProject`, `getMembership` and `getInboxItem` return there: for the owner, a
 * member, an account with no role, a missing item, an item of another project (never returned),
 * a project asked through another workspace or missing (`undefined`); it sees the transaction's
 * own writes. (That it holds the project's lock is each adapter's to test on its engine.)
 */
export async function checkLockInboxItemWithAccess({ store }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const probe = await store.transaction(async (tx) => tx.lockInboxItemWithAccess !== undefined);
  if (!probe) return;
  const w = await seedWorld(store, 'lockaccess');
  const p = w.project;
  const ws2: Workspace = { id: `ws_${w.u}_2`, name: 'other', created_at: T0 };
  await store.insertWorkspace(ws2);
  const outsider: Account = { id: `acc_${w.u}_outsider`, name: 'Outsider', created_at: T0 };
  await store.insertAccount(outsider, [w.ws.id]);
  const other = newProject(w.u, w.ws, w.owner, 'other', T0 + 5);
  await store.insertProject(other);
  const item = newItem(w, p, `pinbox_${w.u}`);
  await store.insertInboxItem(item);
  const tricky = newItem(w, p, `pinbox_${w.u}_text`, ESCAPED_TEXT);
  await store.insertInboxItem(tricky);
  const elsewhere = newItem(w, other, `pinbox_${w.u}_other`);
  await store.insertInboxItem(elsewhere);
  const cases: Array<[string, string, string, string]> = [
    ['the owner (no membership row)', p.id, w.owner.id, item.id],
    ['a deriver member', p.id, w.deriver.id, item.id],
    ['an account with no role in the project', p.id, outsider.id, item.id],
    ['an item whose text needs escaping', p.id, w.deriver.id, tricky.id],
    ['a missing item', p.id, w.owner.id, `pinbox_${w.u}_missing`],
    ['an item of another project', p.id, w.owner.id, elsewhere.id],
  ];
  await store.transaction(async (tx) => {
    for (const [what, pid, acc, id] of cases) {
      const got = await tx.lockInboxItemWithAccess!(w.ws.id, pid, acc, id);
      assert(got !== undefined, `lockInboxItemWithAccess, ${what}: the project exists, so the answer must not be undefined`);
      assertSame(got, { project: await tx.lockProject(w.ws.id, pid), membership: await tx.getMembership(pid, acc), item: await tx.getInboxItem(pid, id) },
        `lockInboxItemWithAccess, ${what}`);
    }
    assert((await tx.lockInboxItemWithAccess!(ws2.id, p.id, w.owner.id, item.id)) === undefined, 'lockInboxItemWithAccess through another workspace must be undefined');
    assert((await tx.lockInboxItemWithAccess!(w.ws.id, `proj_${w.u}_missing`, w.owner.id, item.id)) === undefined, 'lockInboxItemWithAccess of a missing project must be undefined');
    const fresh = newItem(w, p, `pinbox_${w.u}_tx`);
    await tx.insertInboxItem(fresh);
    assertSame((await tx.lockInboxItemWithAccess!(w.ws.id, p.id, w.owner.id, fresh.id))?.item, fresh, 'lockInboxItemWithAccess inside a transaction sees its own item');
  });
}
