/** Conformance checks of `AgentStore` (all optional): versioned agents, conditional update, archive, keyset pages. */
import type { Agent, Workspace } from '../../records.js';
import { assert, assertSame, assertSameJson, concurrently, range, seedWorld, T0, type StoreConformanceSubject } from './support.js';

const agentOf = (id: string, workspace_id: string, created_at: number, over: Partial<Agent> = {}): Agent => ({
  id, workspace_id, version: 1, name: `Agent ${id}`, description: null, model: { id: 'claude-haiku-4-5' }, system: null,
  tools: [{ type: 'custom', name: 'lookup', description: 'Looks up', input_schema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } }],
  metadata: {}, created_at, updated_at: created_at, archived_at: null, ...over,
});

/**
 * Agents (the `AgentStore` methods are optional: a store without them passes): insert and read at
 * the current or a given version, JSON as written; another workspace's agent is undefined;
 * `updateAgent` is conditional — of 10 concurrent updates from version 1 exactly one stores
 * version 2, and an update from a stale version stores nothing; older versions stay readable and
 * `listAgentVersions` orders them; `archiveAgent` marks every version once; `pageAgents` pages
 * current versions by `(created_at, id)` both ways, never skipping or repeating rows that share a
 * `created_at`, archived ones only with `include_archived`, `created_at` bounds.
 */
export async function checkAgents({ store }: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void> {
  const s = store;
  if (!s.insertAgent || !s.getAgent || !s.pageAgents || !s.listAgentVersions || !s.updateAgent || !s.archiveAgent) return;
  const w = await seedWorld(store, 'agents');
  const other: Workspace = { id: `ws_${w.u}_other`, name: 'other', created_at: T0 };
  await store.insertWorkspace(other);
  const a = agentOf(`agent_${w.u}_a`, w.ws.id, T0 + 10, { metadata: { team: 'qa' }, description: 'first', system: 'Be brief.' });
  await s.insertAgent(a);
  assertSame(await s.getAgent(w.ws.id, a.id), a, 'getAgent (current version)');
  assertSame(await s.getAgent(w.ws.id, a.id, 1), a, 'getAgent (version 1)');
  assertSameJson((await s.getAgent(w.ws.id, a.id))?.tools as never, a.tools as never, 'getAgent: tools as written, key order included');
  assert((await s.getAgent(w.ws.id, a.id, 2)) === undefined, 'getAgent of a version that does not exist');
  assert((await s.getAgent(other.id, a.id)) === undefined, "getAgent of another workspace's agent must be undefined");

  const results = await concurrently(range(0, 9).map((i) => () => {
    const next: Agent = { ...a, version: 2, name: `renamed ${i}`, updated_at: T0 + 20 + i };
    return i % 2 === 0 ? store.transaction((tx) => tx.updateAgent!(w.ws.id, a.id, 1, next)) : s.updateAgent!(w.ws.id, a.id, 1, next);
  }), 'concurrent updateAgent');
  const winners = results.filter((r) => r !== undefined);
  assert(winners.length === 1, `exactly one of 10 concurrent updates from version 1 must succeed, ${winners.length} did`);
  const v2 = winners[0] as Agent;
  assertSame(await s.getAgent(w.ws.id, a.id), v2, 'getAgent after the update: version 2');
  assertSame(await s.getAgent(w.ws.id, a.id, 1), a, 'version 1 stays readable');
  assert((await s.updateAgent(w.ws.id, a.id, 1, { ...a, version: 2 })) === undefined, 'an update from a stale version stores nothing');
  assert((await s.updateAgent(other.id, a.id, 2, { ...v2, version: 3 })) === undefined, "updateAgent of another workspace's agent stores nothing");
  const v3 = (await s.updateAgent(w.ws.id, a.id, 2, { ...v2, version: 3, tools: [], updated_at: T0 + 40 })) as Agent;
  assert(v3?.version === 3, 'update from the current version');
  assertSame((await s.listAgentVersions(w.ws.id, a.id, { order: 'desc', limit: 10 })).map((v) => v.version), [3, 2, 1], 'listAgentVersions desc');
  assertSame((await s.listAgentVersions(w.ws.id, a.id, { order: 'asc', after_version: 1, limit: 1 })).map((v) => v.version), [2], 'listAgentVersions asc after 1, limit 1');
  assertSame(await s.listAgentVersions(other.id, a.id, { order: 'desc', limit: 10 }), [], "listAgentVersions of another workspace's agent");

  // Pages: b and c share a created_at; d is archived; e is another workspace's.
  const b = agentOf(`agent_${w.u}_b`, w.ws.id, T0 + 30);
  const c = agentOf(`agent_${w.u}_c`, w.ws.id, T0 + 30);
  const d = agentOf(`agent_${w.u}_d`, w.ws.id, T0 + 50);
  const e = agentOf(`agent_${w.u}_e`, other.id, T0 + 30);
  for (const x of [c, b, d, e]) await s.insertAgent(x);
  const archived = await s.archiveAgent(w.ws.id, d.id, T0 + 60);
  assertSame(archived, { ...d, archived_at: T0 + 60 }, 'archiveAgent returns the archived agent');
  assertSame(await s.archiveAgent(w.ws.id, d.id, T0 + 70), { ...d, archived_at: T0 + 60 }, 'archiving again keeps the first archived_at');
  assert((await s.archiveAgent(other.id, d.id, T0 + 70)) === undefined, "archiveAgent of another workspace's agent");
  assert((await s.updateAgent(w.ws.id, d.id, 1, { ...d, version: 2 })) === undefined, 'an archived agent takes no update');
  const ids = (rows: Agent[]) => rows.map((r) => `${r.id}@${r.version}`);
  const [first, second] = [b.id, c.id].sort();
  const all = async (order: 'asc' | 'desc', include_archived: boolean, limit: number) => {
    const out: Agent[] = [];
    let after: { created_at: number; id: string } | undefined;
    for (let guard = 0; guard < 20; guard++) {
      const page = await s.pageAgents!(w.ws.id, { order, limit, include_archived, ...(after ? { after } : {}) });
      out.push(...page);
      const last = page[page.length - 1];
      if (page.length < limit || last === undefined) return out;
      after = { created_at: last.created_at, id: last.id };
    }
    return out;
  };
  assertSame(ids(await all('asc', false, 1)), [`${a.id}@3`, `${first}@1`, `${second}@1`], 'pageAgents asc, one per page, archived left out, current versions');
  assertSame(ids(await all('desc', true, 2)), [`${d.id}@1`, `${second}@1`, `${first}@1`, `${a.id}@3`], 'pageAgents desc with include_archived, two per page');
  assertSame(ids(await s.pageAgents(w.ws.id, { order: 'asc', limit: 10, created_at: { gte: T0 + 30, lte: T0 + 30 } })), [`${first}@1`, `${second}@1`], 'pageAgents created_at bounds');
  assertSame(ids(await s.pageAgents(other.id, { order: 'asc', limit: 10 })), [`${e.id}@1`], "pageAgents lists only the workspace's agents");
}
