/** The rows of the in-memory store and the helpers its sub-port modules share. */
import type { AttemptOwnership, IdempotencyRecord, TimeBounds } from '../../ports/store.js';
import type {
  Account, Agent, ApiKey, Floor, Membership, OperationLog, Page, Project, ProjectEvent, ProjectInboxItem, Run, Session,
  SessionEvent, Workspace,
} from '../../records.js';

/** Reads the store's current rows (a transaction's rollback replaces them with a snapshot). */
export type GetState = () => State;

/** The rows of an in-memory store. */
export interface State {
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
  /** Agent versions, by agent id, oldest version first. */
  agents: Map<string, Agent[]>;
}

export const emptyState = (): State => ({
  workspaces: new Map(), accounts: new Map(), workspaceMembers: new Set(), keys: new Map(), projects: new Map(),
  memberships: new Map(), sessions: new Map(), deletedSessions: new Set(), floors: new Map(), pages: new Map(), items: new Map(), events: [],
  logs: [], runs: new Map(), sessionEvents: [], idempotency: new Map(), attemptOwners: new Map(), agents: new Map(),
});

export const copy = <T>(v: T): T => structuredClone(v);
/** Whether `t` (ms) lies within the bounds (absent bounds pass). */
export const inBounds = (t: number, b: TimeBounds | undefined): boolean =>
  b === undefined || ((b.gt === undefined || t > b.gt) && (b.gte === undefined || t >= b.gte) && (b.lt === undefined || t < b.lt) && (b.lte === undefined || t <= b.lte));
export const byKeyDesc = (a: { created_at: number; id: string }, b: { created_at: number; id: string }) =>
  b.created_at - a.created_at || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
export const isAfterDesc = (row: { created_at: number; id: string }, after?: { created_at: number; id: string }) =>
  !after || row.created_at < after.created_at || (row.created_at === after.created_at && row.id < after.id);

export function unique<K>(map: Map<K, unknown>, key: K, what: string): void {
  if (map.has(key)) throw new Error(`duplicate ${what}: ${String(key)}`);
}
