/** `InboxStore` in memory: Project Inbox items. */
import type { InboxStore, InboxItemQuery } from '../../ports/store.js';
import { type GetState, copy, unique, byKeyDesc, isAfterDesc } from './state.js';

export function inboxOps(get: GetState): InboxStore {
  /** One keyset page of `q` (read synchronously: one snapshot). */
  const list = (q: InboxItemQuery) => [...get().items.values()]
    .filter((i) => i.project_id === q.project_id
      && (q.status === undefined || i.status === q.status)
      && (q.type === undefined || i.type === q.type)
      && (q.sender_account_id === undefined || i.sender_account_id === q.sender_account_id)
      && (q.source_session_id === undefined || i.source_session_id === q.source_session_id)
      && isAfterDesc(i, q.after))
    .sort(byKeyDesc).slice(0, q.limit).map(copy);
  return {
    async insertInboxItem(i) { const s = get(); unique(s.items, i.id, 'inbox item'); s.items.set(i.id, copy(i)); },
    async getInboxItem(pid, id) { const i = get().items.get(id); return i && i.project_id === pid ? copy(i) : undefined; },
    async getInboxItemWithAccess(ws, pid, acc, id) {
      const s = get();
      const p = s.projects.get(pid);
      if (!p || p.workspace_id !== ws) return undefined;
      const i = s.items.get(id);
      return { project: copy(p), membership: copy(s.memberships.get(`${pid}\u0000${acc}`)), item: i && i.project_id === pid ? copy(i) : undefined };
    },
    async listInboxItemsWithAccess(ws, pid, acc, q) {
      const s = get();
      const p = s.projects.get(pid);
      if (!p || p.workspace_id !== ws) return undefined;
      // Anyone but the owner: only its own items (none when the query names another sender).
      const owner = p.account_id === acc;
      const items = !owner && q.sender_account_id !== undefined && q.sender_account_id !== acc
        ? [] : list({ ...q, project_id: pid, ...(owner ? {} : { sender_account_id: acc }) });
      return { project: copy(p), membership: copy(s.memberships.get(`${pid}\u0000${acc}`)), items };
    },
    async listInboxItems(q: InboxItemQuery) {
      return list(q);
    },
    async decideInboxItem(pid, id, seen, patch) {
      const i = get().items.get(id);
      if (!i || i.project_id !== pid || i.status !== seen) return undefined;
      Object.assign(i, patch); return copy(i);
    },
  };
}
