/**
 * Who may write what, when: the one policy table of every write (platform.md "The write gate").
 * Pure data and one pure function: action × role × project / Session / Run state → allowed, or
 * the error the write is refused with. Every write of the services passes it through the gate
 * (`write-gate.ts`) under its row lock; nothing else in the core decides these rules.
 *
 * Checks run in one fixed order, so a caller learns the first thing that stops it:
 * deleted Session (404) → role (403) → archived project (409) → archived Session (409) →
 * the Session's Run (409). Visibility (404 for a project or Session the caller may not see) is
 * decided before, when the target is loaded.
 *
 * What the table covers, by level:
 * - project and Session writes (the Project Inbox, members, Sessions, turns, durable input, the
 *   Live Inbox, a Run an application starts with `startRun`) and the Runtime's own writes for a
 *   Run (start, every ledger commit — native steps, drains of the Live Inbox bridge, framework
 *   attempts' commits, a Run parking —, the end, `finish` included): role × project / Session /
 *   Run state;
 * - workspace writes, decided on no project, Session or Run (their state is always
 *   `{ project: 'none', session: 'none', run: 'idle' }`): the administration (`account.*`,
 *   `api_key.*`: role `admin`, a key of kind admin; every other key is `workspace` and refused)
 *   and the workspace's agents (`agent.*` of `/v1/agents`: any account of the workspace). Agents
 *   and administration belong to the workspace, not to a project, so no project role, archive or
 *   Run bears on them. The rules on their own target's state stay with the write, decided under
 *   the same row lock or conditional update: a disabled account takes no key and an admin key
 *   cannot disable its own account or revoke the key it sends (409 `conflict`), a revoked key is
 *   not rotated (409 `conflict`), an archived agent takes no new version (409 `agent_archived`),
 *   an agent configured by the deployment is not changed (403 `permission_denied`).
 */
import type { ErrorCode } from '../errors.js';

/** Every write the services make, by the resource it changes. */
export const WRITE_ACTIONS = [
  'project.archive',
  'project.member.add',
  'project.member.remove',
  'project_inbox.create',
  'project_inbox.decide',
  'session.create',
  'session.update',
  'session.archive',
  'session.delete',
  'session.turn.commit',
  'session.page.add',
  'session.message',
  'session.interrupt',
  'live_inbox.queue',
  'live_inbox.replace',
  'live_inbox.reorder',
  'live_inbox.withdraw',
  'session.run.start',
  'run.start',
  'run.commit',
  'run.end',
  'account.create',
  'account.disable',
  'account.enable',
  'api_key.create',
  'api_key.rotate',
  'api_key.revoke',
  'agent.create',
  'agent.update',
  'agent.archive',
] as const;

/** One of {@link WRITE_ACTIONS}. */
export type WriteAction = (typeof WRITE_ACTIONS)[number];

/**
 * Who writes: the project's `owner`, a `deriver` or `observer` member, `workspace` (any account
 * of the workspace, on a Session outside every project or a workspace write), `admin` (a caller
 * whose API key is of kind `admin`, for the workspace administration; its project writes are
 * decided by its role there), or the Session `runtime` acting for a Run (starts, commits, ends it).
 */
export const WRITE_ROLES = ['owner', 'deriver', 'observer', 'workspace', 'admin', 'runtime'] as const;

/** One of {@link WRITE_ROLES}. */
export type WriteRole = (typeof WRITE_ROLES)[number];

/** The state a write is decided on, read under the write's row lock. */
export interface WriteState {
  /** The project written to (or the Session's project); `none` for a Session outside every project. */
  project: 'active' | 'archived' | 'none';
  /** The Session written to; `none` when the write is not to a Session. */
  session: 'live' | 'archived' | 'deleted' | 'none';
  /**
   * The Session's Run: `running`, `awaiting` (parked on client tool results or confirmations:
   * nobody executes it) or `idle`; for `run.commit` and `run.end`, the state of the Run written
   * (`idle`: it has ended).
   */
  run: 'running' | 'awaiting' | 'idle';
}

/** Every value of each {@link WriteState} field (the property tests walk them all). */
export const WRITE_STATE_VALUES = {
  project: ['active', 'archived', 'none'],
  session: ['live', 'archived', 'deleted', 'none'],
  run: ['running', 'awaiting', 'idle'],
} as const satisfies { [K in keyof WriteState]: readonly WriteState[K][] };

/** A refused write: the error code (its HTTP status follows from it) and a message safe to show. */
export interface WriteRefusal {
  code: ErrorCode;
  message: string;
}

/** One row of the table: who may, and what each state answers (`null`: that state does not refuse). */
export interface WritePolicyRow {
  /**
   * What the write changes: a `project` (decided on its status), a `session` (its project, its own
   * state and its Run) or the `workspace` (decided by role alone: no project, Session or Run state
   * bears on it, see the module comment).
   */
  level: 'project' | 'session' | 'workspace';
  /** Roles allowed to write; every other role is refused with `denied`. */
  roles: readonly WriteRole[];
  denied: WriteRefusal;
  /** While the project is archived. */
  archivedProject: ErrorCode | null;
  /** While the Session is archived. */
  archivedSession: ErrorCode | null;
  /** While the Session has a running Run. */
  running: ErrorCode | null;
  /** While the Session's Run is parked, awaiting the client (for `run.commit`: the committing Run is). */
  awaiting: ErrorCode | null;
  /** While the Session has no running or parked Run (for `run.commit`: the committing Run has ended). */
  idle: ErrorCode | null;
}

const OWNER_OF_SESSION = ['owner', 'workspace'] as const;
const WORKSPACE_CALLERS = ['workspace', 'admin'] as const;
const deny = (code: ErrorCode, message: string): WriteRefusal => ({ code, message });
const ownerOnly = (what: string) => deny('permission_denied', `Only the project owner may ${what}`);
const runtimeOnly = deny('permission_denied', 'Only the Session Runtime writes the Runs of a Session');
const adminOnly = deny('permission_denied', 'Only an API key of kind admin may administer the workspace');
const steer = ownerOnly('send events to or steer this session');

type States = Partial<Pick<WritePolicyRow, 'archivedProject' | 'archivedSession' | 'running' | 'awaiting' | 'idle'>>;
const row = (level: WritePolicyRow['level'], roles: readonly WriteRole[], denied: WriteRefusal, states: States = {}): WritePolicyRow => ({
  level, roles, denied, archivedProject: null, archivedSession: null, running: null, awaiting: null, idle: null, ...states,
});
/** Refused in an archived project. */
const ACTIVE_PROJECT: States = { archivedProject: 'project_archived' };
/** Input: refused in an archived project or Session. */
const INPUT: States = { archivedProject: 'project_archived', archivedSession: 'session_archived' };

/**
 * The table. Reading a row: "`action` is allowed for `roles`; in an archived project it is
 * refused with `archivedProject` (null: allowed), …". An archived project takes no write but its
 * own (repeated) archive, an interrupt and a Run's end; an archived Session takes no new input
 * (durable messages, turns, pages, Live Inbox edits, Run starts) and no more of a Run's commits,
 * while its title, metadata, archive and deletion stay the owner's to change. A parked Run
 * (`awaiting`) takes no commit until the client's answers resume it, starts no second Run, and
 * ends with an interrupt or with its Session's deletion (in the delete's own transaction).
 */
export const WRITE_POLICY: Readonly<Record<WriteAction, Readonly<WritePolicyRow>>> = Object.freeze({
  'project.archive': row('project', ['owner'], ownerOnly('archive it')),
  'project.member.add': row('project', ['owner'], ownerOnly('add members'), ACTIVE_PROJECT),
  'project.member.remove': row('project', ['owner'], ownerOnly('remove members'), ACTIVE_PROJECT),
  'project_inbox.create': row('project', ['owner', 'deriver'], deny('project_inbox_write_denied', 'This role may not create inbox items'), ACTIVE_PROJECT),
  'project_inbox.decide': row('project', ['owner'], deny('project_inbox_decide_denied', 'Only the project owner may decide inbox items'), ACTIVE_PROJECT),
  'session.create': row('project', ['owner', 'deriver', 'workspace'], deny('permission_denied', 'Observers may not create sessions'), ACTIVE_PROJECT),
  'session.update': row('session', OWNER_OF_SESSION, ownerOnly('change this session'), ACTIVE_PROJECT),
  'session.archive': row('session', OWNER_OF_SESSION, ownerOnly('change this session'), ACTIVE_PROJECT),
  // A parked Run does not hold the Session: it ends (`cancelled`) with it.
  'session.delete': row('session', OWNER_OF_SESSION, ownerOnly('delete this session'), { ...ACTIVE_PROJECT, running: 'session_running' }),
  'session.turn.commit': row('session', OWNER_OF_SESSION, ownerOnly('write to this session'), INPUT),
  'session.page.add': row('session', OWNER_OF_SESSION, ownerOnly('write to this session'), INPUT),
  // Tool results and confirmations resume a parked Run (a plain message while tool uses are pending is 400 `actions_pending`: a rule of the events' order).
  'session.message': row('session', OWNER_OF_SESSION, steer, INPUT),
  'session.interrupt': row('session', OWNER_OF_SESSION, steer),
  'live_inbox.queue': row('session', OWNER_OF_SESSION, steer, INPUT),
  'live_inbox.replace': row('session', OWNER_OF_SESSION, steer, INPUT),
  'live_inbox.reorder': row('session', OWNER_OF_SESSION, steer, INPUT),
  'live_inbox.withdraw': row('session', OWNER_OF_SESSION, steer, INPUT),
  // A Run an application executes itself (`SessionRuntimeService.startRun`): the caller's input, and one Run at a time.
  'session.run.start': row('session', OWNER_OF_SESSION, ownerOnly('start Runs of this session'), { ...INPUT, running: 'session_running', awaiting: 'session_running' }),
  'run.start': row('session', ['runtime'], runtimeOnly, { ...INPUT, running: 'session_running', awaiting: 'session_running' }),
  'run.commit': row('session', ['runtime'], runtimeOnly, { ...INPUT, awaiting: 'conflict', idle: 'conflict' }),
  'run.end': row('session', ['runtime'], runtimeOnly),
  'account.create': row('workspace', ['admin'], adminOnly),
  'account.disable': row('workspace', ['admin'], adminOnly),
  'account.enable': row('workspace', ['admin'], adminOnly),
  'api_key.create': row('workspace', ['admin'], adminOnly),
  'api_key.rotate': row('workspace', ['admin'], adminOnly),
  'api_key.revoke': row('workspace', ['admin'], adminOnly),
  'agent.create': row('workspace', WORKSPACE_CALLERS, deny('permission_denied', 'Only an account of the workspace may change its agents')),
  'agent.update': row('workspace', WORKSPACE_CALLERS, deny('permission_denied', 'Only an account of the workspace may change its agents')),
  'agent.archive': row('workspace', WORKSPACE_CALLERS, deny('permission_denied', 'Only an account of the workspace may change its agents')),
} satisfies Record<WriteAction, WritePolicyRow>);
for (const value of Object.values(WRITE_POLICY)) Object.freeze(value);

/** The state of a workspace write (no project, Session or Run bears on it). */
export const WORKSPACE_STATE: Readonly<WriteState> = Object.freeze({ project: 'none', session: 'none', run: 'idle' });

/** The message each state refusal carries. */
const STATE_MESSAGES: Partial<Record<ErrorCode, string>> = {
  project_archived: 'Project is archived',
  session_archived: 'Session is archived; it takes no new input',
  session_running: 'The session is running; send a user.interrupt and delete it once it is idle',
  conflict: 'The Run has ended; nothing more of it is committed (drained input moves to the next attempt)',
};
/** The message of a refusal because the Session's Run is parked. */
const AWAITING_MESSAGES: Partial<Record<ErrorCode, string>> = {
  session_running: 'The Run of this Session awaits tool results or confirmations: answer them, or send a user.interrupt',
  conflict: 'The Run is parked awaiting the client; nothing of it is committed until its answers resume it',
};

/**
 * Decides one write. Pure and total: every action × role × state has one answer.
 * @returns `null` when the write is allowed, else the refusal (error code and message).
 */
export function decideWrite(action: WriteAction, role: WriteRole, state: WriteState): WriteRefusal | null {
  const row = WRITE_POLICY[action];
  // A workspace write is decided by role alone (no project, Session or Run bears on it).
  if (row.level === 'workspace') return row.roles.includes(role) ? null : row.denied;
  if (state.session === 'deleted') return { code: 'session_not_found', message: 'Session not found' };
  if (!row.roles.includes(role)) return row.denied;
  const project = state.project === 'archived' ? row.archivedProject : null;
  const session = state.session === 'archived' ? row.archivedSession : null;
  const run = state.run === 'running' ? row.running : state.run === 'awaiting' ? row.awaiting : row.idle;
  const code = project ?? session ?? run;
  if (code === null) return null;
  const byRun = project === null && session === null && state.run === 'awaiting';
  return { code, message: (byRun ? AWAITING_MESSAGES[code] : undefined) ?? STATE_MESSAGES[code] ?? code };
}
