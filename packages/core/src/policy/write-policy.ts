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
  'run.start',
  'run.commit',
  'run.end',
] as const;

/** One of {@link WRITE_ACTIONS}. */
export type WriteAction = (typeof WRITE_ACTIONS)[number];

/**
 * Who writes: the project's `owner`, a `deriver` or `observer` member, `workspace` (any account
 * of the workspace, on a Session outside every project), or the Session `runtime` acting for a
 * Run (starts, commits, ends it).
 */
export const WRITE_ROLES = ['owner', 'deriver', 'observer', 'workspace', 'runtime'] as const;

/** One of {@link WRITE_ROLES}. */
export type WriteRole = (typeof WRITE_ROLES)[number];

/** The state a write is decided on, read under the write's row lock. */
export interface WriteState {
  /** The project written to (or the Session's project); `none` for a Session outside every project. */
  project: 'active' | 'archived' | 'none';
  /** The Session written to; `none` when the write is not to a Session. */
  session: 'live' | 'archived' | 'deleted' | 'none';
  /** The Session's Run: `running` or `idle`; for `run.commit`, whether the committing Run still runs. */
  run: 'running' | 'idle';
}

/** Every value of each {@link WriteState} field (the property tests walk them all). */
export const WRITE_STATE_VALUES = {
  project: ['active', 'archived', 'none'],
  session: ['live', 'archived', 'deleted', 'none'],
  run: ['running', 'idle'],
} as const satisfies { [K in keyof WriteState]: readonly WriteState[K][] };

/** A refused write: the error code (its HTTP status follows from it) and a message safe to show. */
export interface WriteRefusal {
  code: ErrorCode;
  message: string;
}

/** One row of the table: who may, and what each state answers (`null`: that state does not refuse). */
export interface WritePolicyRow {
  /** Roles allowed to write; every other role is refused with `denied`. */
  roles: readonly WriteRole[];
  denied: WriteRefusal;
  /** While the project is archived. */
  archivedProject: ErrorCode | null;
  /** While the Session is archived. */
  archivedSession: ErrorCode | null;
  /** While the Session has a running Run. */
  running: ErrorCode | null;
  /** While the Session has no running Run (for `run.commit`: the committing Run has ended). */
  idle: ErrorCode | null;
}

const OWNER_OF_SESSION = ['owner', 'workspace'] as const;
const deny = (code: ErrorCode, message: string): WriteRefusal => ({ code, message });
const ownerOnly = (what: string) => deny('permission_denied', `Only the project owner may ${what}`);
const runtimeOnly = deny('permission_denied', 'Only the Session Runtime writes the Runs of a Session');

/**
 * The table. Reading a row: "`action` is allowed for `roles`; in an archived project it is
 * refused with `archivedProject` (null: allowed), …". An archived project takes no write but its
 * own (repeated) archive, an interrupt and a Run's end; an archived Session takes no new input
 * (durable messages, turns, pages, Live Inbox edits) and no more of a Run's commits, while its
 * title, metadata, archive and deletion stay the owner's to change.
 */
export const WRITE_POLICY: Readonly<Record<WriteAction, Readonly<WritePolicyRow>>> = Object.freeze({
  'project.archive': { roles: ['owner'], denied: ownerOnly('archive it'), archivedProject: null, archivedSession: null, running: null, idle: null },
  'project.member.add': { roles: ['owner'], denied: ownerOnly('add members'), archivedProject: 'project_archived', archivedSession: null, running: null, idle: null },
  'project.member.remove': { roles: ['owner'], denied: ownerOnly('remove members'), archivedProject: 'project_archived', archivedSession: null, running: null, idle: null },
  'project_inbox.create': {
    roles: ['owner', 'deriver'], denied: deny('project_inbox_write_denied', 'This role may not create inbox items'),
    archivedProject: 'project_archived', archivedSession: null, running: null, idle: null,
  },
  'project_inbox.decide': {
    roles: ['owner'], denied: deny('project_inbox_decide_denied', 'Only the project owner may decide inbox items'),
    archivedProject: 'project_archived', archivedSession: null, running: null, idle: null,
  },
  'session.create': {
    roles: ['owner', 'deriver', 'workspace'], denied: deny('permission_denied', 'Observers may not create sessions'),
    archivedProject: 'project_archived', archivedSession: null, running: null, idle: null,
  },
  'session.update': { roles: OWNER_OF_SESSION, denied: ownerOnly('change this session'), archivedProject: 'project_archived', archivedSession: null, running: null, idle: null },
  'session.archive': { roles: OWNER_OF_SESSION, denied: ownerOnly('change this session'), archivedProject: 'project_archived', archivedSession: null, running: null, idle: null },
  'session.delete': { roles: OWNER_OF_SESSION, denied: ownerOnly('delete this session'), archivedProject: 'project_archived', archivedSession: null, running: 'session_running', idle: null },
  'session.turn.commit': { roles: OWNER_OF_SESSION, denied: ownerOnly('write to this session'), archivedProject: 'project_archived', archivedSession: 'session_archived', running: null, idle: null },
  'session.page.add': { roles: OWNER_OF_SESSION, denied: ownerOnly('write to this session'), archivedProject: 'project_archived', archivedSession: 'session_archived', running: null, idle: null },
  'session.message': {
    roles: OWNER_OF_SESSION, denied: ownerOnly('send events to or steer this session'), archivedProject: 'project_archived', archivedSession: 'session_archived', running: null, idle: null,
  },
  'session.interrupt': { roles: OWNER_OF_SESSION, denied: ownerOnly('send events to or steer this session'), archivedProject: null, archivedSession: null, running: null, idle: null },
  'live_inbox.queue': { roles: OWNER_OF_SESSION, denied: ownerOnly('send events to or steer this session'), archivedProject: 'project_archived', archivedSession: 'session_archived', running: null, idle: null },
  'live_inbox.replace': { roles: OWNER_OF_SESSION, denied: ownerOnly('send events to or steer this session'), archivedProject: 'project_archived', archivedSession: 'session_archived', running: null, idle: null },
  'live_inbox.reorder': { roles: OWNER_OF_SESSION, denied: ownerOnly('send events to or steer this session'), archivedProject: 'project_archived', archivedSession: 'session_archived', running: null, idle: null },
  'live_inbox.withdraw': { roles: OWNER_OF_SESSION, denied: ownerOnly('send events to or steer this session'), archivedProject: 'project_archived', archivedSession: 'session_archived', running: null, idle: null },
  'run.start': { roles: ['runtime'], denied: runtimeOnly, archivedProject: 'project_archived', archivedSession: 'session_archived', running: 'session_running', idle: null },
  'run.commit': { roles: ['runtime'], denied: runtimeOnly, archivedProject: 'project_archived', archivedSession: 'session_archived', running: null, idle: 'conflict' },
  'run.end': { roles: ['runtime'], denied: runtimeOnly, archivedProject: null, archivedSession: null, running: null, idle: null },
} satisfies Record<WriteAction, WritePolicyRow>);
for (const row of Object.values(WRITE_POLICY)) Object.freeze(row);

/** The message each state refusal carries. */
const STATE_MESSAGES: Partial<Record<ErrorCode, string>> = {
  project_archived: 'Project is archived',
  session_archived: 'Session is archived; it takes no new input',
  session_running: 'The session is running; send a user.interrupt and delete it once it is idle',
  conflict: 'The Run has ended; nothing more of it is committed (drained input moves to the next attempt)',
};

/**
 * Decides one write. Pure and total: every action × role × state has one answer.
 * @returns `null` when the write is allowed, else the refusal (error code and message).
 */
export function decideWrite(action: WriteAction, role: WriteRole, state: WriteState): WriteRefusal | null {
  const row = WRITE_POLICY[action];
  if (state.session === 'deleted') return { code: 'session_not_found', message: 'Session not found' };
  if (!row.roles.includes(role)) return row.denied;
  const code = (state.project === 'archived' ? row.archivedProject : null)
    ?? (state.session === 'archived' ? row.archivedSession : null)
    ?? (state.run === 'running' ? row.running : row.idle);
  return code === null ? null : { code, message: STATE_MESSAGES[code] ?? code };
}
