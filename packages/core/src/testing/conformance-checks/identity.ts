/** Conformance checks of `IdentityStore` and the scoping rule: workspaces, accounts, API keys; lookups never cross workspaces. */
import type { Account, ApiKey, Floor, OperationLog, Page, Project, Workspace } from '../../records.js';
import { assert, assertSame, range, concurrently, T0, seedWorld, newProject, newItem, newEvent, newLog, type StoreConformanceSubject } from './support.js';

/**
 * Scoping: every lookup that takes a `workspace_id` returns `undefined` for a row of another
 * workspace (as for a missing row); items and events are found only through their own project;
 * project and session lists stay inside the workspace; `listProjectsForAccount` lists what the
 * account owns or is a member of, newest first.
 */
export async function checkWorkspaceScoping({ store }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const w = await seedWorld(store, 'scope');
  const p = w.project;
  const ws2: Workspace = { id: `ws_${w.u}_2`, name: 'other', created_at: T0 };
  await store.insertWorkspace(ws2);
  const stranger: Account = { id: `acc_${w.u}_stranger`, name: 'Stranger', created_at: T0 };
  await store.insertAccount(stranger, [ws2.id]);
  const floor: Floor = { id: `floor_${w.u}`, workspace_id: w.ws.id, session_id: w.session.id, number: 1, branch: 'main', state: 'committed', created_at: T0 };
  await store.insertFloor(floor);
  const page: Page = { id: `page_${w.u}`, workspace_id: w.ws.id, session_id: w.session.id, floor_id: floor.id, version: 1, content: { text: 'hi' }, created_at: T0 };
  await store.insertPage(page);
  const item = newItem(w, p, `pinbox_${w.u}`);
  await store.insertInboxItem(item);
  const event = await store.appendProjectEvent(newEvent(w, p, `evt_${w.u}`));
  const other = newProject(w.u, w.ws, w.owner, 'other', T0 + 5);
  await store.insertProject(other);
  const foreign = newProject(w.u, ws2, stranger, 'foreign', T0 + 9);
  await store.insertProject(foreign);

  assertSame(await store.getWorkspace(w.ws.id), w.ws, 'getWorkspace');
  assert((await store.getWorkspace(`ws_${w.u}_missing`)) === undefined, 'getWorkspace of a missing id');
  assertSame(await store.getProject(w.ws.id, p.id), p, 'getProject in its workspace');
  assert((await store.getProject(ws2.id, p.id)) === undefined, 'getProject with another workspace_id must be undefined');
  assertSame(await store.getSession(w.ws.id, w.session.id), w.session, 'getSession in its workspace');
  assert((await store.getSession(ws2.id, w.session.id)) === undefined, 'getSession with another workspace_id must be undefined');
  assertSame(await store.getFloor(w.ws.id, floor.id), floor, 'getFloor in its workspace');
  assert((await store.getFloor(ws2.id, floor.id)) === undefined, 'getFloor with another workspace_id must be undefined');
  assertSame(await store.getPage(w.ws.id, page.id), page, 'getPage in its workspace');
  assert((await store.getPage(ws2.id, page.id)) === undefined, 'getPage with another workspace_id must be undefined');
  assertSame(await store.getWorkspaceAccount(w.ws.id, w.owner.id), w.owner, 'getWorkspaceAccount of a member');
  assert((await store.getWorkspaceAccount(ws2.id, w.owner.id)) === undefined, 'getWorkspaceAccount of a non-member must be undefined');
  assert((await store.getWorkspaceAccount(w.ws.id, stranger.id)) === undefined, 'getWorkspaceAccount of another workspace\'s account must be undefined');

  assertSame(await store.getInboxItem(p.id, item.id), item, 'getInboxItem in its project');
  assert((await store.getInboxItem(other.id, item.id)) === undefined, 'getInboxItem through another project must be undefined');
  assertSame(await store.getProjectEvent(p.id, event.id), event, 'getProjectEvent in its project');
  assert((await store.getProjectEvent(other.id, event.id)) === undefined, 'getProjectEvent through another project must be undefined');
  assert((await store.listInboxItems({ project_id: other.id, limit: 10 })).length === 0, 'listInboxItems of another project must not list the item');

  assertSame((await store.listProjectsForAccount(w.ws.id, w.owner.id)).map((x) => x.id), [other.id, p.id], 'projects of the owner, newest first');
  assertSame((await store.listProjectsForAccount(w.ws.id, w.deriver.id)).map((x) => x.id), [p.id], 'projects of a member');
  assertSame((await store.listProjectsForAccount(ws2.id, w.owner.id)).map((x) => x.id), [], 'projects listed in another workspace');
  assertSame((await store.listProjectsForAccount(ws2.id, stranger.id)).map((x) => x.id), [foreign.id], 'projects of the other workspace');
  assertSame(await store.listProjectsForAccount(w.ws.id, w.owner.id), [other, p], 'listed project records');
  assert(!(await store.listSessions(ws2.id, {})).some((s) => s.id === w.session.id), 'listSessions of another workspace must not list the session');
}

/**
 * Identity and projects: workspaces, accounts in several workspaces, API keys by hash, revocation
 * conditional on not being revoked, `setProjectStatus` conditional (of 10 concurrent archive calls
 * exactly one returns the row); records come back with exactly their fields.
 */
export async function checkIdentityAndProjects({ store }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const w = await seedWorld(store, 'ident');
  const ws2: Workspace = { id: `ws_${w.u}_2`, name: 'second', created_at: T0 + 1 };
  await store.insertWorkspace(ws2);
  const both: Account = { id: `acc_${w.u}_both`, name: 'In both', created_at: T0 };
  await store.insertAccount(both, [w.ws.id, ws2.id]);
  assertSame(await store.getWorkspaceAccount(w.ws.id, both.id), both, 'account in its first workspace');
  assertSame(await store.getWorkspaceAccount(ws2.id, both.id), both, 'account in its second workspace');

  const key: ApiKey = { id: `key_${w.u}`, workspace_id: w.ws.id, account_id: both.id, kind: 'service', key_hash: `hash_${w.u}`, created_at: T0, revoked_at: null, last_used_at: null };
  await store.insertApiKey(key);
  assertSame(await store.findApiKeyByHash(key.key_hash), key, 'findApiKeyByHash');
  assert((await store.findApiKeyByHash(`hash_${w.u}_missing`)) === undefined, 'findApiKeyByHash of an unknown hash');
  await store.revokeApiKey(key.id, T0 + 10);
  await store.revokeApiKey(key.id, T0 + 20);
  assertSame(await store.findApiKeyByHash(key.key_hash), { ...key, revoked_at: T0 + 10 }, 'a revoked key keeps its earliest revocation time');
  // A scheduled revocation (a rotation's grace period) can be brought forward, never postponed.
  const graced: ApiKey = { ...key, id: `key_${w.u}_grace`, key_hash: `hash_${w.u}_grace`, kind: 'admin' };
  await store.insertApiKey(graced);
  await store.revokeApiKey(graced.id, T0 + 1_000);
  await store.revokeApiKey(graced.id, T0 + 5_000);
  assertSame(await store.findApiKeyByHash(graced.key_hash), { ...graced, revoked_at: T0 + 1_000 }, 'a later revocation does not postpone a scheduled one');
  await store.revokeApiKey(graced.id, T0 + 500);
  assertSame(await store.findApiKeyByHash(graced.key_hash), { ...graced, revoked_at: T0 + 500 }, 'an earlier revocation brings a scheduled one forward');

  const p = w.project;
  const results = await concurrently(range(0, 9).map((i) => () => (i % 2 === 0
    ? store.transaction((tx) => tx.setProjectStatus(p.id, 'archived', T0 + 100 + i))
    : store.setProjectStatus(p.id, 'archived', T0 + 100 + i))), 'concurrent setProjectStatus');
  const winners = results.filter((r): r is Project => r !== undefined);
  assert(winners.length === 1, `exactly one of 10 concurrent setProjectStatus(archived) calls must return the project, ${winners.length} did`);
  const archived = winners[0];
  assert(archived !== undefined && archived.status === 'archived', 'the returned project is archived');
  assertSame(archived, { ...p, status: 'archived', updated_at: archived.updated_at }, 'the archived project record');
  assert(archived.updated_at >= T0 + 100 && archived.updated_at <= T0 + 109, 'updated_at is the winner\'s time');
  assertSame(await store.getProject(w.ws.id, p.id), archived, 'getProject after archiving');
  assert((await store.setProjectStatus(p.id, 'archived', T0 + 200)) === undefined, 'setProjectStatus to the current status returns undefined');
  assertSame(await store.setProjectStatus(p.id, 'active', T0 + 300), { ...p, status: 'active', updated_at: T0 + 300 }, 'reactivating');
  assert((await store.setProjectStatus(`proj_${w.u}_missing`, 'archived', T0)) === undefined, 'setProjectStatus of a missing project');
}

/**
 * Accounts and keys of the administration (the OPTIONAL identity methods; each part runs where its
 * methods exist): `listWorkspaces` oldest first; `listWorkspaceAccounts` newest first with
 * `disabled_at`; `lockWorkspaceAccount` scoped and disabled accounts included; `getApiKey`
 * scoped; `listApiKeys` newest first with its account and `active_at` filters (a key in a grace
 * period is active until it ends); `recordApiKeyUse` never moves backwards;
 * `disableWorkspaceAccount` conditional, hiding the account from `getWorkspaceAccount` in that
 * workspace only and revoking its keys there only, and atomic with key issuing under
 * `lockWorkspaceAccount` (of 12 concurrent issuers and one disabler, no key of the disabled
 * account stays active); `enableWorkspaceAccount` conditional, making a disabled account a
 * member again with its revoked keys left revoked; `listWorkspaceOperationLogs` lists only the workspace's rows without a
 * project, newest first, with a keyset.
 */
export async function checkAccountsAndKeys({ store }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const w = await seedWorld(store, 'admin');
  const ws2: Workspace = { id: `ws_${w.u}_2`, name: 'second', created_at: T0 + 1 };
  await store.insertWorkspace(ws2);
  const both: Account = { id: `acc_${w.u}_both`, name: 'In both', created_at: T0 + 5 };
  await store.insertAccount(both, [w.ws.id, ws2.id]);
  const stranger: Account = { id: `acc_${w.u}_stranger`, name: 'Stranger', created_at: T0 + 6 };
  await store.insertAccount(stranger, [ws2.id]);
  const member = (a: Account, workspace_id: string, disabled_at: number | null = null) => ({ ...a, workspace_id, disabled_at });

  if (store.listWorkspaces) {
    const ids = (await store.listWorkspaces()).map((x) => x.id);
    assert(ids.indexOf(w.ws.id) >= 0 && ids.indexOf(ws2.id) > ids.indexOf(w.ws.id), `listWorkspaces lists both workspaces oldest first, got ${JSON.stringify(ids)}`);
  }
  if (store.listWorkspaceAccounts) {
    // owner and deriver share T0: id descending breaks the tie.
    const tie = [w.owner, w.deriver].sort((a, b) => (a.id < b.id ? 1 : -1));
    assertSame(await store.listWorkspaceAccounts(w.ws.id), [member(both, w.ws.id), ...tie.map((a) => member(a, w.ws.id))], 'listWorkspaceAccounts, newest first');
    assertSame((await store.listWorkspaceAccounts(ws2.id)).map((a) => a.id), [stranger.id, both.id], 'listWorkspaceAccounts of the second workspace');
  }
  if (store.lockWorkspaceAccount) {
    assertSame(await store.lockWorkspaceAccount(w.ws.id, both.id), member(both, w.ws.id), 'lockWorkspaceAccount outside a transaction');
    assert((await store.lockWorkspaceAccount(w.ws.id, stranger.id)) === undefined, 'lockWorkspaceAccount of another workspace\'s account must be undefined');
    assertSame(await store.transaction((tx) => tx.lockWorkspaceAccount!(ws2.id, both.id)), member(both, ws2.id), 'lockWorkspaceAccount in a transaction');
  }

  const keyOf = (suffix: string, account: Account, workspace_id: string, created_at: number, over: Partial<ApiKey> = {}): ApiKey => ({
    id: `key_${w.u}_${suffix}`, workspace_id, account_id: account.id, kind: 'standard', key_hash: `hash_${w.u}_${suffix}`,
    created_at, revoked_at: null, last_used_at: null, ...over,
  });
  const k1 = keyOf('1', both, w.ws.id, T0 + 10);
  const k2 = keyOf('2', both, w.ws.id, T0 + 20, { kind: 'admin', revoked_at: T0 + 1_000 });
  const k3 = keyOf('3', w.owner, w.ws.id, T0 + 20, { kind: 'service', revoked_at: T0 + 15 });
  const k4 = keyOf('4', both, ws2.id, T0 + 30);
  for (const k of [k1, k2, k3, k4]) await store.insertApiKey(k);
  if (store.getApiKey) {
    assertSame(await store.getApiKey(w.ws.id, k1.id), k1, 'getApiKey in its workspace');
    assert((await store.getApiKey(ws2.id, k1.id)) === undefined, 'getApiKey with another workspace_id must be undefined');
    assert((await store.getApiKey(w.ws.id, `key_${w.u}_missing`)) === undefined, 'getApiKey of a missing key');
  }
  if (store.listApiKeys) {
    const ids = async (q: Parameters<NonNullable<typeof store.listApiKeys>>[1], workspace_id = w.ws.id) => (await store.listApiKeys!(workspace_id, q)).map((k) => k.id);
    // k2 and k3 share T0 + 20: id descending.
    assertSame(await store.listApiKeys(w.ws.id, {}), [k3, k2, k1], 'listApiKeys: every key of the workspace, newest first');
    assertSame(await ids({ account_id: both.id }), [k2.id, k1.id], 'listApiKeys of one account');
    assertSame(await ids({ active_at: T0 + 100 }), [k2.id, k1.id], 'listApiKeys active at a time: a key revoked before it is left out, one revoked later stays');
    assertSame(await ids({ active_at: T0 + 1_000 }), [k1.id], 'listApiKeys active at the revocation time leaves the key out');
    assertSame(await ids({}, ws2.id), [k4.id], 'listApiKeys of another workspace');
  }
  if (store.recordApiKeyUse) {
    await store.recordApiKeyUse(k1.id, T0 + 50);
    await store.recordApiKeyUse(k1.id, T0 + 40);
    assertSame(await store.findApiKeyByHash(k1.key_hash), { ...k1, last_used_at: T0 + 50 }, 'recordApiKeyUse sets last_used_at and never moves it backwards');
  }
  if (store.disableWorkspaceAccount) {
    const disabled = await store.disableWorkspaceAccount(w.ws.id, both.id, T0 + 500);
    assertSame(disabled, member(both, w.ws.id, T0 + 500), 'disableWorkspaceAccount returns the disabled account');
    assert((await store.disableWorkspaceAccount(w.ws.id, both.id, T0 + 600)) === undefined, 'disabling a disabled account returns undefined');
    assert((await store.disableWorkspaceAccount(w.ws.id, stranger.id, T0 + 600)) === undefined, 'disabling a non-member returns undefined');
    assert((await store.getWorkspaceAccount(w.ws.id, both.id)) === undefined, 'getWorkspaceAccount of a disabled account must be undefined');
    assertSame(await store.getWorkspaceAccount(ws2.id, both.id), both, 'the account stays a member of its other workspace');
    assert((await store.findApiKeyByHash(k1.key_hash))?.revoked_at === T0 + 500, 'disabling revokes the account\'s keys in the workspace');
    assert((await store.findApiKeyByHash(k2.key_hash))?.revoked_at === T0 + 500, 'disabling brings a scheduled revocation forward');
    assert((await store.findApiKeyByHash(k3.key_hash))?.revoked_at === T0 + 15, 'another account\'s key is untouched');
    assert((await store.findApiKeyByHash(k4.key_hash))?.revoked_at === null, 'the account\'s key in another workspace is untouched');
    if (store.lockWorkspaceAccount) assertSame(await store.lockWorkspaceAccount(w.ws.id, both.id), member(both, w.ws.id, T0 + 500), 'lockWorkspaceAccount shows a disabled account');
    if (store.listWorkspaceAccounts) {
      assert((await store.listWorkspaceAccounts(w.ws.id)).find((a) => a.id === both.id)?.disabled_at === T0 + 500, 'listWorkspaceAccounts shows disabled_at');
    }

    if (store.lockWorkspaceAccount) {
      // Issuing under the lock and disabling race: no key of the disabled account stays active.
      const racer: Account = { id: `acc_${w.u}_racer`, name: 'Racer', created_at: T0 };
      await store.insertAccount(racer, [w.ws.id]);
      const issue = (i: number) => () => store.transaction(async (tx) => {
        const account = await tx.lockWorkspaceAccount!(w.ws.id, racer.id);
        if (!account || account.disabled_at !== null) return false;
        await tx.insertApiKey(keyOf(`race${i}`, racer, w.ws.id, T0 + i));
        return true;
      });
      const disable = () => store.transaction(async (tx) => {
        await tx.lockWorkspaceAccount!(w.ws.id, racer.id);
        return (await tx.disableWorkspaceAccount!(w.ws.id, racer.id, T0 + 900)) !== undefined;
      });
      await concurrently([...range(0, 5).map(issue), disable, ...range(6, 11).map(issue)], 'concurrent key issuing and disabling');
      for (const i of range(0, 11)) {
        const k = await store.findApiKeyByHash(`hash_${w.u}_race${i}`);
        assert(k === undefined || (k.revoked_at !== null && k.revoked_at <= T0 + 900), `key race${i} of the disabled account is still active (revoked_at ${k?.revoked_at})`);
      }
    }
    if (store.enableWorkspaceAccount) {
      assert((await store.enableWorkspaceAccount(w.ws.id, stranger.id)) === undefined, 'enabling a non-member returns undefined');
      assert((await store.enableWorkspaceAccount(ws2.id, both.id)) === undefined, 'enabling an account that is not disabled returns undefined');
      assertSame(await store.enableWorkspaceAccount(w.ws.id, both.id), member(both, w.ws.id), 'enableWorkspaceAccount returns the account, disabled_at null');
      assertSame(await store.getWorkspaceAccount(w.ws.id, both.id), both, 'an enabled account is a member again (getWorkspaceAccount)');
      assert((await store.enableWorkspaceAccount(w.ws.id, both.id)) === undefined, 'enabling an enabled account returns undefined');
      assert((await store.findApiKeyByHash(k1.key_hash))?.revoked_at === T0 + 500, 'enabling leaves the keys its disabling revoked revoked');
      if (store.listWorkspaceAccounts) {
        assert((await store.listWorkspaceAccounts(w.ws.id)).find((a) => a.id === both.id)?.disabled_at === null, 'listWorkspaceAccounts shows an enabled account with disabled_at null');
      }
    }
  }
  if (store.listWorkspaceOperationLogs) {
    const adminLog = (id: string, created_at: number, over: Partial<OperationLog> = {}): OperationLog =>
      newLog(w, w.project, id, { project_id: null, action: 'api_key.create', target_type: 'api_key', target_id: `key_${id}`, created_at, ...over });
    const rows = [
      adminLog(`oplog_${w.u}_a`, T0 + 1), adminLog(`oplog_${w.u}_b`, T0 + 2), adminLog(`oplog_${w.u}_c`, T0 + 2),
      adminLog(`oplog_${w.u}_d`, T0 + 3, { workspace_id: ws2.id }), newLog(w, w.project, `oplog_${w.u}_p`, { created_at: T0 + 9 }),
    ];
    for (const row of rows) await store.appendOperationLog(row);
    const [a, b, c] = rows;
    assertSame(await store.listWorkspaceOperationLogs({ workspace_id: w.ws.id, limit: 10 }), [c, b, a], 'listWorkspaceOperationLogs: the rows without a project, newest first');
    assertSame(await store.listWorkspaceOperationLogs({ workspace_id: w.ws.id, limit: 1 }), [c], 'listWorkspaceOperationLogs: at most limit');
    assertSame(await store.listWorkspaceOperationLogs({ workspace_id: w.ws.id, after: { created_at: c!.created_at, id: c!.id }, limit: 10 }), [b, a], 'listWorkspaceOperationLogs after a keyset position');
    assertSame((await store.listWorkspaceOperationLogs({ workspace_id: ws2.id, limit: 10 })).map((r) => r.id), [rows[3]!.id], 'listWorkspaceOperationLogs of another workspace');
  }
}
