/** Conformance checks of `IdentityStore` and the scoping rule: workspaces, accounts, API keys; lookups never cross workspaces. */
import type { Account, ApiKey, Floor, Page, Project, Workspace } from '../../records.js';
import { assert, assertSame, range, concurrently, T0, seedWorld, newProject, newItem, newEvent, type StoreConformanceSubject } from './support.js';

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

  const key: ApiKey = { id: `key_${w.u}`, workspace_id: w.ws.id, account_id: both.id, kind: 'service', key_hash: `hash_${w.u}`, created_at: T0, revoked_at: null };
  await store.insertApiKey(key);
  assertSame(await store.findApiKeyByHash(key.key_hash), key, 'findApiKeyByHash');
  assert((await store.findApiKeyByHash(`hash_${w.u}_missing`)) === undefined, 'findApiKeyByHash of an unknown hash');
  await store.revokeApiKey(key.id, T0 + 10);
  await store.revokeApiKey(key.id, T0 + 20);
  assertSame(await store.findApiKeyByHash(key.key_hash), { ...key, revoked_at: T0 + 10 }, 'a revoked key keeps its first revocation time');

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
