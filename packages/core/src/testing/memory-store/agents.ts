/** `AgentStore` in memory: versioned agents of a workspace (conditional update, archive once, keyset pages). */
import type { AgentStore } from '../../ports/store.js';
import type { Agent } from '../../records.js';
import { type GetState, copy, inBounds } from './state.js';

const byKey = (a: Agent, b: Agent) => a.created_at - b.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export function agentOps(get: GetState): Required<AgentStore> {
  const versionsOf = (workspace_id: string, agent_id: string): Agent[] | undefined => {
    const versions = get().agents.get(agent_id);
    return versions !== undefined && versions[0]?.workspace_id === workspace_id ? versions : undefined;
  };
  return {
    async insertAgent(agent) {
      const s = get();
      if (s.agents.has(agent.id)) throw new Error(`duplicate agent: ${agent.id}`);
      s.agents.set(agent.id, [copy(agent)]);
    },
    async getAgent(workspace_id, agent_id, version) {
      const versions = versionsOf(workspace_id, agent_id);
      if (versions === undefined) return undefined;
      return copy(version === undefined ? versions[versions.length - 1] : versions.find((v) => v.version === version));
    },
    async pageAgents(workspace_id, query) {
      const asc = query.order === 'asc';
      const after = query.after;
      return [...get().agents.values()]
        .map((versions) => versions[versions.length - 1] as Agent)
        .filter((a) => a.workspace_id === workspace_id && (query.include_archived === true || a.archived_at === null) && inBounds(a.created_at, query.created_at))
        .filter((a) => after === undefined || (asc ? byKey(a, { ...a, ...after }) > 0 : byKey(a, { ...a, ...after }) < 0))
        .sort((a, b) => (asc ? byKey(a, b) : byKey(b, a)))
        .slice(0, Math.max(0, Math.floor(query.limit)))
        .map(copy);
    },
    async listAgentVersions(workspace_id, agent_id, query) {
      const versions = versionsOf(workspace_id, agent_id) ?? [];
      const asc = query.order === 'asc';
      const after = query.after_version;
      return versions
        .filter((v) => after === undefined || (asc ? v.version > after : v.version < after))
        .sort((a, b) => (asc ? a.version - b.version : b.version - a.version))
        .slice(0, Math.max(0, Math.floor(query.limit)))
        .map(copy);
    },
    async updateAgent(workspace_id, agent_id, expected_version, next) {
      const versions = versionsOf(workspace_id, agent_id);
      const head = versions?.[versions.length - 1];
      if (versions === undefined || head === undefined || head.version !== expected_version || head.archived_at !== null) return undefined;
      if (next.version !== expected_version + 1) throw new Error(`updateAgent: next.version must be ${expected_version + 1}`);
      versions.push(copy(next));
      return copy(next);
    },
    async archiveAgent(workspace_id, agent_id, at) {
      const versions = versionsOf(workspace_id, agent_id);
      if (versions === undefined) return undefined;
      for (const v of versions) if (v.archived_at === null) v.archived_at = at;
      return copy(versions[versions.length - 1]);
    },
  };
}
