/**
 * The in-memory reference adapter of the storage port: simple, obviously correct, used by the
 * core's unit tests and as the first subject of the conformance kit. Transactions are serialised
 * by a mutex and rolled back by restoring a snapshot.
 */
import type { AttemptOwnership, IdempotencyRecord, InboxItemQuery, NewProjectEvent, NewSessionEvent, Store, StoreTx, TimeBounds } from '../ports/store.js';
import type {
  Account, ApiKey, Floor, Membership, OperationLog, Page, Project, ProjectEvent, ProjectInboxItem, Run, Session,
  SessionEvent, Workspace,
} from '../records.js';

interface State {
  workspaces: Map<string, Workspace>;
  accounts: Map<string, Account>;
  workspaceMembers: Set<string>;
  keys: Map<string, ApiKey>;
  projects: Map<string, Project>;
  memberships: Map<string, Membership>;
  sessions: Map<string, Session>;
  /** Ids of deleted Sessions (kept in `sessions`, invisible to every read). */
  deletedSessions: Set<string>;
  floors: Map<string, Floor>;
  pages: Map<string, Page>;
  items: Map<string, ProjectInboxItem>;
  events: ProjectEvent[];
  logs: OperationLog[];
  runs: Map<string, Run>;
  sessionEvents: SessionEvent[];
  /** Keyed by `JSON.stringify([workspace_id, account_id, key])`. */
  idempotency: Map<string, IdempotencyRecord>;
  /** Attempt ownership rows, by session id (expired ones included). */
  attemptOwners: Map<string, AttemptOwnership>;
}

const emptyState = (): State => ({
  workspaces: new Map(), accounts: new Map(), workspaceMembers: new Set(), keys: new Map(), projects: new Map(),
  memberships: new Map(), sessions: new Map(), deletedSessions: new Set(), floors: new Map(), pages: new Map(), items: new Map(), events: [],
  logs: [], runs: new Map(), sessionEvents: [], idempotency: new Map(), attemptOwners: new Map(),
});

const copy = <T>(v: T): T => structuredClone(v);
/** Whether `t` (ms) lies within the bounds (absent bounds pass). */
const inBounds = (t: number, b: TimeBounds | undefined): boolean =>
  b === undefined || ((b.gt === undefined || t > b.gt) && (b.gte === undefined || t >= b.gte) && (b.lt === undefined || t < b.lt) && (b.lte === undefined || t <= b.lte));
const byKeyDesc = (a: { created_at: number; id: string }, b: { created_at: number; id: string }) =>
  b.created_at - a.created_at || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
const isAfterDesc = (row: { created_at: number; id: string }, after?: { created_at: number; id: string }) =>
  !after || row.created_at < after.created_at || (row.created_at === after.created_at && row.id < after.id);

function unique<K>(map: Map<K, unknown>, key: K, what: string): void {
  if (map.has(key)) throw new Error(`duplicate ${what}: ${String(key)}`);
}

function operations(get: () => State): StoreTx {
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
      return [...get().memberships.values()].filter((m) => m.project_id === pid)
        .sort((a, b) => a.created_at - b.created_at || (a.account_id < b.account_id ? -1 : a.account_id > b.account_id ? 1 : 0)).map(copy);
    },

    async insertSession(x) { const s = get(); unique(s.sessions, x.id, 'session'); s.sessions.set(x.id, copy(x)); },
    async getSession(ws, id) { const s = get(); const x = s.sessions.get(id); return x && x.workspace_id === ws && !s.deletedSessions.has(id) ? copy(x) : undefined; },
    async lockSession(ws, id) { const s = get(); const x = s.sessions.get(id); return x && x.workspace_id === ws && !s.deletedSessions.has(id) ? copy(x) : undefined; },
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
    async listFloors(sid) { return [...get().floors.values()].filter((f) => f.session_id === sid).sort((a, b) => a.number - b.number || a.branch.localeCompare(b.branch)).map(copy); },
    async lastFloorNumber(sid, branch) {
      return Math.max(0, ...[...get().floors.values()].filter((f) => f.session_id === sid && f.branch === branch).map((f) => f.number));
    },
    async insertPage(p) { const s = get(); unique(s.pages, p.id, 'page'); s.pages.set(p.id, copy(p)); },
    async getPage(ws, id) { const p = get().pages.get(id); return p && p.workspace_id === ws ? copy(p) : undefined; },
    async listPages(fid) { return [...get().pages.values()].filter((p) => p.floor_id === fid).sort((a, b) => a.version - b.version).map(copy); },

    async insertInboxItem(i) { const s = get(); unique(s.items, i.id, 'inbox item'); s.items.set(i.id, copy(i)); },
    async getInboxItem(pid, id) { const i = get().items.get(id); return i && i.project_id === pid ? copy(i) : undefined; },
    async getSessionWithAccess(ws, sid, acc) {
      const s = get();
      const session = s.sessions.get(sid);
      if (!session || session.workspace_id !== ws || s.deletedSessions.has(sid)) return undefined;
      const p = session.project_id === null ? undefined : s.projects.get(session.project_id);
      const project = p && p.workspace_id === ws ? p : undefined;
      return {
        session: copy(session), project: copy(project),
        membership: project ? copy(s.memberships.get(`${project.id}\u0000${acc}`)) : undefined,
      };
    },
    async getInboxItemWithAccess(ws, pid, acc, id) {
      const s = get();
      const p = s.projects.get(pid);
      if (!p || p.workspace_id !== ws) return undefined;
      const i = s.items.get(id);
      return { project: copy(p), membership: copy(s.memberships.get(`${pid}\u0000${acc}`)), item: i && i.project_id === pid ? copy(i) : undefined };
    },
    async listInboxItems(q: InboxItemQuery) {
      return [...get().items.values()]
        .filter((i) => i.project_id === q.project_id
          && (q.status === undefined || i.status === q.status)
          && (q.type === undefined || i.type === q.type)
          && (q.sender_account_id === undefined || i.sender_account_id === q.sender_account_id)
          && (q.source_session_id === undefined || i.source_session_id === q.source_session_id)
          && isAfterDesc(i, q.after))
        .sort(byKeyDesc).slice(0, q.limit).map(copy);
    },
    async decideInboxItem(pid, id, seen, patch) {
      const i = get().items.get(id);
      if (!i || i.project_id !== pid || i.status !== seen) return undefined;
      Object.assign(i, patch); return copy(i);
    },

    async findIdempotencyRecord(q) { return copy(get().idempotency.get(JSON.stringify([q.workspace_id, q.account_id, q.key]))); },
    async insertIdempotencyRecord(r) {
      const s = get(); const key = JSON.stringify([r.workspace_id, r.account_id, r.key]);
      if (s.idempotency.has(key)) return false;
      s.idempotency.set(key, copy(r)); return true;
    },

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

    async insertRun(r) { const s = get(); unique(s.runs, r.id, 'run'); s.runs.set(r.id, copy(r)); },
    async getRunningRun(sid) { return copy([...get().runs.values()].find((r) => r.session_id === sid && r.status === 'running')); },
    async listRunningRuns(limit) {
      return [...get().runs.values()].filter((r) => r.status === 'running')
        .sort((a, b) => a.started_at - b.started_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        .slice(0, Math.max(0, Math.floor(limit))).map(copy);
    },
    async endRun(id, outcome, at) {
      const r = get().runs.get(id);
      if (!r || r.status !== 'running') return false;
      r.status = 'idle'; r.outcome = outcome; r.ended_at = at; return true;
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

    async claimAttemptOwnership(claim, now) {
      const s = get(); const held = s.attemptOwners.get(claim.session_id);
      if (held && held.lease_expires_at > now && held.host_id !== claim.host_id) return false;
      s.attemptOwners.set(claim.session_id, copy(claim)); return true;
    },
    async renewAttemptOwnership(key, lease_expires_at) {
      const held = get().attemptOwners.get(key.session_id);
      if (!held || held.run_id !== key.run_id || held.host_id !== key.host_id) return false;
      held.lease_expires_at = lease_expires_at; return true;
    },
    async releaseAttemptOwnership(key) {
      const s = get(); const held = s.attemptOwners.get(key.session_id);
      if (!held || held.run_id !== key.run_id || held.host_id !== key.host_id) return false;
      return s.attemptOwners.delete(key.session_id);
    },
    async findAttemptOwner(session_id, now) {
      const held = get().attemptOwners.get(session_id);
      return held && held.lease_expires_at > now ? copy(held) : undefined;
    },
  };
}

/** The in-memory store with a raw view of its rows (for conformance assertions). */
export interface MemoryStore extends Store {
  /** Direct read access to the rows, bypassing the port (tests only). */
  readonly raw: () => State;
}

/** Creates an empty in-memory store. */
export function createMemoryStore(): MemoryStore {
  let state = emptyState();
  let queue: Promise<unknown> = Promise.resolve();
  const ops = operations(() => state);
  const serialise = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = queue.then(fn, fn);
    queue = run.catch(() => undefined);
    return run;
  };
  const autocommit = Object.fromEntries(
    Object.entries(ops).map(([name, f]) => [name, (...args: unknown[]) => serialise(() => (f as (...a: unknown[]) => Promise<unknown>)(...args))]),
  ) as unknown as StoreTx;
  return {
    ...autocommit,
    raw: () => state,
    transaction: <T>(fn: (tx: StoreTx) => Promise<T>) =>
      serialise(async () => {
        const snapshot = copy(state);
        try {
          return await fn(ops);
        } catch (error) {
          state = snapshot;
          throw error;
        }
      }),
    close: async () => {},
  };
}
