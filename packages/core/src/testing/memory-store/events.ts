/** `ProjectEventStore` in memory: Project Events (sequence = count + 1, under the store mutex) and the Operation Log. */
import type { ProjectEventStore, NewProjectEvent } from '../../ports/store.js';
import type { ProjectEvent } from '../../records.js';
import { type GetState, copy, byKeyDesc, isAfterDesc } from './state.js';

export function projectEventOps(get: GetState): ProjectEventStore {
  return {
    async appendProjectEvent(e: NewProjectEvent) {
      const s = get();
      // The id is the primary key, as in the SQL stores.
      if (s.events.some((x) => x.id === e.id)) throw new Error(`duplicate project event: ${e.id}`);
      const sequence = s.events.filter((x) => x.project_id === e.project_id).length + 1;
      const stored: ProjectEvent = { ...copy(e), sequence };
      s.events.push(stored); return copy(stored);
    },
    async getProjectEvent(pid, id) { return copy(get().events.find((e) => e.project_id === pid && e.id === id)); },
    async listProjectEvents(q) {
      return get().events
        .filter((e) => e.project_id === q.project_id && e.sequence > q.after
          && (!q.types || q.types.includes(e.type)) && (q.session_id === undefined || e.session_id === q.session_id))
        .sort((a, b) => a.sequence - b.sequence).slice(0, q.limit).map(copy);
    },
    async lastProjectEventSequence(pid) {
      return get().events.reduce((max, e) => (e.project_id === pid && e.sequence > max ? e.sequence : max), 0);
    },
    async appendOperationLog(l) {
      const s = get();
      if (s.logs.some((x) => x.id === l.id)) throw new Error(`duplicate operation log: ${l.id}`);
      s.logs.push(copy(l));
    },
    async listOperationLogs(q) {
      return get().logs.filter((l) => l.project_id === q.project_id && isAfterDesc(l, q.after)).sort(byKeyDesc).slice(0, q.limit).map(copy);
    },
    async listWorkspaceOperationLogs(q) {
      return get().logs.filter((l) => l.workspace_id === q.workspace_id && l.project_id === null && isAfterDesc(l, q.after))
        .sort(byKeyDesc).slice(0, q.limit).map(copy);
    },
  };
}
