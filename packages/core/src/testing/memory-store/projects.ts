/** `ProjectStore` in memory: projects and members (transactions run one at a time: reading is locking). */
import type { ProjectStore } from '../../ports/store.js';
import { type GetState, copy, unique, byKeyDesc, isAfterDesc } from './state.js';

export function projectOps(get: GetState): ProjectStore {
  return {
    async insertProject(p) { const s = get(); unique(s.projects, p.id, 'project'); s.projects.set(p.id, copy(p)); },
    async getProject(ws, id) { const p = get().projects.get(id); return p && p.workspace_id === ws ? copy(p) : undefined; },
    // Transactions of this store run one at a time: reading is locking.
    async lockProject(ws, id) { const p = get().projects.get(id); return p && p.workspace_id === ws ? copy(p) : undefined; },
    async listProjectsForAccount(ws, acc) {
      const s = get();
      return [...s.projects.values()]
        .filter((p) => p.workspace_id === ws && (p.account_id === acc || s.memberships.has(`${p.id}\u0000${acc}`)))
        .sort(byKeyDesc).map(copy);
    },
    async pageProjectsForAccount(ws, acc, q) {
      const s = get();
      return [...s.projects.values()]
        .filter((p) => p.workspace_id === ws && (p.account_id === acc || s.memberships.has(`${p.id}\u0000${acc}`)) && isAfterDesc(p, q.after))
        .sort(byKeyDesc).slice(0, q.limit).map(copy);
    },
    async setProjectStatus(id, status, at) {
      const p = get().projects.get(id);
      if (!p || p.status === status) return undefined;
      p.status = status; p.updated_at = at; return copy(p);
    },
    async getMembership(pid, acc) { return copy(get().memberships.get(`${pid}\u0000${acc}`)); },
    async upsertMembership(m) {
      const s = get(); const key = `${m.project_id}\u0000${m.account_id}`;
      const prev = s.memberships.get(key);
      const next = prev ? { ...prev, role: m.role } : copy(m);
      s.memberships.set(key, next); return copy(next);
    },
    async deleteMembership(pid, acc) { return get().memberships.delete(`${pid}\u0000${acc}`); },
    async listMemberships(pid) {
      return [...get().memberships.values()].filter((m) => m.project_id === pid).sort(byJoined).map(copy);
    },
    async pageMemberships(pid, q) {
      const after = q.after;
      return [...get().memberships.values()]
        .filter((m) => m.project_id === pid && (after === undefined || m.created_at > after.created_at || (m.created_at === after.created_at && m.account_id > after.id)))
        .sort(byJoined).slice(0, q.limit).map(copy);
    },
  };
}

/** Members in `(created_at, account_id)` ascending order (byte order). */
const byJoined = (a: { created_at: number; account_id: string }, b: { created_at: number; account_id: string }) =>
  a.created_at - b.created_at || (a.account_id < b.account_id ? -1 : a.account_id > b.account_id ? 1 : 0);
