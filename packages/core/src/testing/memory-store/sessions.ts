/** `SessionStore` in memory: Sessions (deleted ones kept, invisible), Floors, Pages and the Session ledger. */
import type { SessionStore, NewSessionEvent } from '../../ports/store.js';
import type { Session, SessionEvent } from '../../records.js';
import { sessionGateOf } from '../../sessions/access.js';
import { type GetState, copy, unique, byKeyDesc, inBounds } from './state.js';

export function sessionOps(get: GetState): SessionStore {
  const withAccess: NonNullable<SessionStore['getSessionWithAccess']> = async (ws, sid, acc) => {
    const s = get();
    const session = s.sessions.get(sid);
    if (!session || session.workspace_id !== ws || s.deletedSessions.has(sid)) return undefined;
    const p = session.project_id === null ? undefined : s.projects.get(session.project_id);
    const project = p && p.workspace_id === ws ? p : undefined;
    return {
      session: copy(session), project: copy(project),
      membership: project ? copy(s.memberships.get(`${project.id}\u0000${acc}`)) : undefined,
    };
  };
  return {
    async insertSession(x) { const s = get(); unique(s.sessions, x.id, 'session'); s.sessions.set(x.id, copy(x)); },
    async getSession(ws, id) { const s = get(); const x = s.sessions.get(id); return x && x.workspace_id === ws && !s.deletedSessions.has(id) ? copy(x) : undefined; },
    async lockSession(ws, id) { const s = get(); const x = s.sessions.get(id); return x && x.workspace_id === ws && !s.deletedSessions.has(id) ? copy(x) : undefined; },
    async findSession(id) { const s = get(); const x = s.sessions.get(id); return x && !s.deletedSessions.has(id) ? copy(x) : undefined; },
    async listSessions(ws, f) {
      const s = get();
      return [...s.sessions.values()]
        .filter((x) => x.workspace_id === ws && !s.deletedSessions.has(x.id) && (f.project_id === undefined || x.project_id === f.project_id))
        .sort(byKeyDesc).map(copy);
    },
    async pageSessions(ws, q) {
      const s = get();
      const sign = q.order === 'asc' ? 1 : -1;
      const cmp = (a: Session, b: { created_at: number; id: string }) => sign * (a.created_at - b.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      return [...s.sessions.values()]
        .filter((x) => x.workspace_id === ws && !s.deletedSessions.has(x.id)
          && (q.visible_project_ids === undefined || x.project_id === null || q.visible_project_ids.includes(x.project_id))
          && (q.project_id === undefined || x.project_id === q.project_id)
          && (q.include_archived !== false || x.archived_at === null)
          && (q.agent_id === undefined || (x.agent as { id?: unknown } | null)?.id === q.agent_id)
          && inBounds(x.created_at, q.created_at)
          && (q.after === undefined || cmp(x, q.after) > 0))
        .sort((a, b) => cmp(a, b)).slice(0, q.limit).map(copy);
    },
    async updateSession(ws, id, patch) {
      const s = get(); const x = s.sessions.get(id);
      if (!x || x.workspace_id !== ws || s.deletedSessions.has(id)) return undefined;
      if (patch.title !== undefined) x.title = patch.title;
      if (patch.metadata !== undefined) x.metadata = copy(patch.metadata);
      if (patch.archived_at !== undefined) x.archived_at = patch.archived_at;
      x.updated_at = patch.updated_at;
      return copy(x);
    },
    async deleteSession(ws, id) {
      const s = get(); const x = s.sessions.get(id);
      if (!x || x.workspace_id !== ws || s.deletedSessions.has(id)) return false;
      s.deletedSessions.add(id); return true;
    },
    async insertFloor(f) { const s = get(); unique(s.floors, f.id, 'floor'); s.floors.set(f.id, copy(f)); },
    async getFloor(ws, id) { const f = get().floors.get(id); return f && f.workspace_id === ws ? copy(f) : undefined; },
    async listFloors(sid) { return [...get().floors.values()].filter((f) => f.session_id === sid).sort(byFloor).map(copy); },
    async pageFloors(sid, q) {
      const after = q.after;
      return [...get().floors.values()].filter((f) => f.session_id === sid && (after === undefined || byFloor(f, after) > 0)).sort(byFloor).slice(0, q.limit).map(copy);
    },
    async lastFloorNumber(sid, branch) {
      return Math.max(0, ...[...get().floors.values()].filter((f) => f.session_id === sid && f.branch === branch).map((f) => f.number));
    },
    async insertPage(p) { const s = get(); unique(s.pages, p.id, 'page'); s.pages.set(p.id, copy(p)); },
    async getPage(ws, id) { const p = get().pages.get(id); return p && p.workspace_id === ws ? copy(p) : undefined; },
    async listPages(fid) { return [...get().pages.values()].filter((p) => p.floor_id === fid).sort((a, b) => a.version - b.version).map(copy); },
    async pagePages(fid, q) {
      return [...get().pages.values()].filter((p) => p.floor_id === fid && (q.after_version === undefined || p.version > q.after_version))
        .sort((a, b) => a.version - b.version).slice(0, q.limit).map(copy);
    },
    getSessionWithAccess: withAccess,
    async getSessionGate(ws, sid, acc) {
      const access = await withAccess(ws, sid, acc);
      return access && sessionGateOf(access);
    },
    async appendSessionEvents(events: NewSessionEvent[]) {
      const s = get();
      const out: SessionEvent[] = [];
      for (const e of events) {
        const seq = s.sessionEvents.filter((x) => x.session_id === e.session_id).length + 1;
        const stored = { ...copy(e), seq };
        s.sessionEvents.push(stored); out.push(copy(stored));
      }
      return out;
    },
    async listSessionEvents(q) {
      const sign = q.order === 'desc' ? -1 : 1;
      return get().sessionEvents.filter((e) => e.session_id === q.session_id && e.seq > q.after
        && (q.before === undefined || e.seq < q.before) && (q.types === undefined || q.types.includes(e.type))
        && inBounds(e.processed_at, q.processed_at))
        .sort((a, b) => sign * (a.seq - b.seq)).slice(0, q.limit).map(copy);
    },

    async lastSessionEventSeq(sid) {
      return get().sessionEvents.reduce((max, e) => (e.session_id === sid && e.seq > max ? e.seq : max), 0);
    },
  };
}

/** Floors in `(number, branch, id)` ascending order (strings in byte order). */
const bytes = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const byFloor = (a: { number: number; branch: string; id: string }, b: { number: number; branch: string; id: string }) =>
  a.number - b.number || bytes(a.branch, b.branch) || bytes(a.id, b.id);
