/** `IdentityStore` in memory: workspaces, accounts and API keys. */
import type { IdentityStore } from '../../ports/store.js';
import { type GetState, copy, unique } from './state.js';

export function identityOps(get: GetState): IdentityStore {
  return {
    async insertWorkspace(w) { const s = get(); unique(s.workspaces, w.id, 'workspace'); s.workspaces.set(w.id, copy(w)); },
    async getWorkspace(id) { return copy(get().workspaces.get(id)); },
    async insertAccount(a, wsIds) {
      const s = get(); unique(s.accounts, a.id, 'account'); s.accounts.set(a.id, copy(a));
      for (const w of wsIds) s.workspaceMembers.add(`${w}\u0000${a.id}`);
    },
    async getWorkspaceAccount(ws, id) { const s = get(); return s.workspaceMembers.has(`${ws}\u0000${id}`) ? copy(s.accounts.get(id)) : undefined; },
    async insertApiKey(k) { const s = get(); unique(s.keys, k.id, 'api key'); s.keys.set(k.id, copy(k)); },
    async findApiKeyByHash(h) { return copy([...get().keys.values()].find((k) => k.key_hash === h)); },
    async revokeApiKey(id, at) { const k = get().keys.get(id); if (k && k.revoked_at === null) k.revoked_at = at; },
  };
}
