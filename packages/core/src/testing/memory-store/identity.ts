/** `IdentityStore` in memory: workspaces, accounts (their memberships, disabled or not) and API keys. */
import type { IdentityStore } from '../../ports/store.js';
import type { ApiKey, WorkspaceAccount } from '../../records.js';
import { type GetState, type State, byKeyDesc, copy, unique } from './state.js';

const memberKey = (workspace_id: string, account_id: string) => `${workspace_id}\u0000${account_id}`;

/** The account of a workspace with its membership, disabled or not; undefined for a non-member. */
function workspaceAccount(s: State, workspace_id: string, account_id: string): WorkspaceAccount | undefined {
  const account = s.accounts.get(account_id);
  if (!account || !s.workspaceMembers.has(memberKey(workspace_id, account_id))) return undefined;
  return { ...copy(account), workspace_id, disabled_at: s.disabledMembers.get(memberKey(workspace_id, account_id)) ?? null };
}

/** Revokes from `at`, keeping an earlier revocation. */
function revoke(key: ApiKey, at: number): void {
  if (key.revoked_at === null || key.revoked_at > at) key.revoked_at = at;
}

export function identityOps(get: GetState): IdentityStore {
  return {
    async insertWorkspace(w) { const s = get(); unique(s.workspaces, w.id, 'workspace'); s.workspaces.set(w.id, copy(w)); },
    async getWorkspace(id) { return copy(get().workspaces.get(id)); },
    async listWorkspaces() {
      return [...get().workspaces.values()].sort((a, b) => a.created_at - b.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map(copy);
    },
    async insertAccount(a, wsIds) {
      const s = get(); unique(s.accounts, a.id, 'account'); s.accounts.set(a.id, copy(a));
      for (const w of wsIds) s.workspaceMembers.add(memberKey(w, a.id));
    },
    async getWorkspaceAccount(ws, id) {
      const s = get();
      return s.workspaceMembers.has(memberKey(ws, id)) && !s.disabledMembers.has(memberKey(ws, id)) ? copy(s.accounts.get(id)) : undefined;
    },
    async listWorkspaceAccounts(ws) {
      const s = get();
      return [...s.accounts.keys()].map((id) => workspaceAccount(s, ws, id)).filter((a): a is WorkspaceAccount => a !== undefined).sort(byKeyDesc);
    },
    async lockWorkspaceAccount(ws, id) { return workspaceAccount(get(), ws, id); },
    async enableWorkspaceAccount(ws, id) {
      const s = get();
      const current = workspaceAccount(s, ws, id);
      if (!current || current.disabled_at === null) return undefined;
      s.disabledMembers.delete(memberKey(ws, id));
      return workspaceAccount(s, ws, id);
    },
    async disableWorkspaceAccount(ws, id, at) {
      const s = get();
      const current = workspaceAccount(s, ws, id);
      if (!current || current.disabled_at !== null) return undefined;
      s.disabledMembers.set(memberKey(ws, id), at);
      for (const key of s.keys.values()) if (key.workspace_id === ws && key.account_id === id) revoke(key, at);
      return { ...current, disabled_at: at };
    },
    async insertApiKey(k) { const s = get(); unique(s.keys, k.id, 'api key'); s.keys.set(k.id, copy(k)); },
    async findApiKeyByHash(h) { return copy([...get().keys.values()].find((k) => k.key_hash === h)); },
    async getApiKey(ws, id) { const k = get().keys.get(id); return k && k.workspace_id === ws ? copy(k) : undefined; },
    async listApiKeys(ws, q) {
      return [...get().keys.values()]
        .filter((k) => k.workspace_id === ws && (q.account_id === undefined || k.account_id === q.account_id)
          && (q.active_at === undefined || k.revoked_at === null || k.revoked_at > q.active_at))
        .sort(byKeyDesc).map(copy);
    },
    async revokeApiKey(id, at) { const k = get().keys.get(id); if (k) revoke(k, at); },
    async recordApiKeyUse(id, at) { const k = get().keys.get(id); if (k && (k.last_used_at === null || k.last_used_at < at)) k.last_used_at = at; },
  };
}
