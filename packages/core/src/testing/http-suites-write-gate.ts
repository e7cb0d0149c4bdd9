/**
 * The write gate over HTTP (platform.md "The write gate"): every write the API exposes, by every
 * role, in every project / Session / Run state, answers exactly what the policy table
 * (`decideWrite`) says — allowed writes succeed, refused ones get the table's status and code and
 * write nothing (on the in-memory store) — and, on every store, the Live Inbox of an archived
 * project or Session answers 409 and nothing queued before the archive is committed after it.
 * Data (`http-suites-kit.ts`): the matrices' checks are built from the table's states
 * (`http-suites-write-gate-matrix.ts` runs them).
 */
import { expect } from 'vitest';
import { STATUS_BY_CODE } from '../http/errors.js';
import { decideWrite, type WriteAction, type WriteRole, type WriteState } from '../policy/write-policy.js';
import type { HttpConformanceOptions } from './http-conformance-checks.js';
import { registerSuite, type HttpSuiteGroup } from './http-suites-kit.js';
import { WORKSPACE_WRITES, archivedDuringRun, workspaceWrite, writeMatrix } from './http-suites-write-gate-matrix.js';
import { expectError, heldModel, startHttpWorld, type HttpWorld, type WorldResponse } from './http-world.js';

export const text = (t: string) => [{ type: 'text', text: t }];

/** The fixture a case acts on. */
export interface Target {
  project_id: string | null;
  session_id: string;
  floor_id: string;
  item_id: string | null;
  /** The queued Live Inbox message (running states), else 1 (never queued). */
  message_id: number;
  /** Who acts as each role (`workspace`: a Session outside projects). */
  as: Record<Exclude<WriteRole, 'runtime'>, string>;
}

/** Writes no route makes: the Runtime's own for a Run, and `startRun` of an application (core tests cover them). */
export type LibraryWrite = 'run.start' | 'run.commit' | 'run.end' | 'session.run.start';
/** Workspace writes (decided by role alone): the administration and `/v1/agents`. */
export type WorkspaceWrite = Extract<WriteAction, `account.${string}` | `api_key.${string}` | `agent.${string}`>;

/** The request of each HTTP-reachable project or Session write, and its success status. */
export const WRITES: Record<Exclude<WriteAction, LibraryWrite | WorkspaceWrite>, { level: 'project' | 'session'; call(t: Target): [string, string, unknown?]; ok: number }> = {
  'project.archive': { level: 'project', call: (t) => ['POST', `/projects/${t.project_id}/archive`], ok: 200 },
  'project.member.add': { level: 'project', call: (t) => ['POST', `/projects/${t.project_id}/members`, { account_id: 'acc_outsider', role: 'observer' }], ok: 201 },
  'project.member.remove': { level: 'project', call: (t) => ['DELETE', `/projects/${t.project_id}/members/acc_deriver2`], ok: 204 },
  'project_inbox.create': { level: 'project', call: (t) => ['POST', `/projects/${t.project_id}/inbox`, { type: 'gate' }], ok: 201 },
  'project_inbox.decide': { level: 'project', call: (t) => ['PATCH', `/projects/${t.project_id}/inbox/${t.item_id}`, { decision: 'accept' }], ok: 200 },
  'session.create': { level: 'project', call: (t) => ['POST', '/sessions', t.project_id === null ? {} : { project_id: t.project_id }], ok: 201 },
  'session.update': { level: 'session', call: (t) => ['POST', `/v1/sessions/${t.session_id}`, { title: 'renamed' }], ok: 200 },
  'session.archive': { level: 'session', call: (t) => ['POST', `/v1/sessions/${t.session_id}/archive`], ok: 200 },
  'session.delete': { level: 'session', call: (t) => ['DELETE', `/v1/sessions/${t.session_id}`], ok: 200 },
  'session.turn.commit': { level: 'session', call: (t) => ['POST', `/sessions/${t.session_id}/floors`, { content: { text: 'turn' } }], ok: 201 },
  'session.page.add': { level: 'session', call: (t) => ['POST', `/sessions/${t.session_id}/floors/${t.floor_id}/pages`, { content: { text: 'again' } }], ok: 201 },
  'session.message': { level: 'session', call: (t) => ['POST', `/v1/sessions/${t.session_id}/events`, { events: [{ type: 'user.message', content: text('gate') }] }], ok: 200 },
  'session.interrupt': { level: 'session', call: (t) => ['POST', `/v1/sessions/${t.session_id}/events`, { events: [{ type: 'user.interrupt' }] }], ok: 200 },
  'live_inbox.queue': { level: 'session', call: (t) => ['POST', `/v1/awaken/sessions/${t.session_id}/live-inbox`, { content: text('steer') }], ok: 200 },
  'live_inbox.replace': { level: 'session', call: (t) => ['PUT', `/v1/awaken/sessions/${t.session_id}/live-inbox/${t.message_id}`, { content: text('replaced') }], ok: 204 },
  'live_inbox.reorder': { level: 'session', call: (t) => ['PUT', `/v1/awaken/sessions/${t.session_id}/live-inbox/order`, { order: [t.message_id] }], ok: 204 },
  'live_inbox.withdraw': { level: 'session', call: (t) => ['DELETE', `/v1/awaken/sessions/${t.session_id}/live-inbox/${t.message_id}`], ok: 204 },
};

/** Roles of a project, in the order they act: refused ones first, the owner (whose write may change the state) last. */
export const MEMBERS: WriteRole[] = ['observer', 'deriver', 'owner'];

/**
 * Every state the table distinguishes, with the roles that act in it: project states for writes to
 * a project; project × Session × Run states (a Session outside projects: the `workspace` role) and
 * deleted Sessions for writes to a Session.
 */
export function everyState(): { state: WriteState; roles: WriteRole[] }[] {
  const out: { state: WriteState; roles: WriteRole[] }[] = [];
  for (const project of ['active', 'archived'] as const) out.push({ state: { project, session: 'none', run: 'idle' }, roles: MEMBERS });
  out.push({ state: { project: 'none', session: 'none', run: 'idle' }, roles: ['workspace'] });
  for (const run of ['idle', 'running'] as const) {
    for (const session of ['live', 'archived'] as const) {
      for (const project of ['active', 'archived'] as const) out.push({ state: { project, session, run }, roles: MEMBERS });
      out.push({ state: { project: 'none', session, run }, roles: ['workspace'] });
    }
  }
  out.push({ state: { project: 'active', session: 'deleted', run: 'idle' }, roles: MEMBERS });
  out.push({ state: { project: 'none', session: 'deleted', run: 'idle' }, roles: ['workspace'] });
  return out;
}

/**
 * The writes that may run on one shared fixture, in an order where an allowed write never changes
 * what a later one is decided on (reorder before queue: the order is the one queued id).
 */
export const SHARED: WriteAction[] = [
  'project_inbox.create', 'project_inbox.decide', 'project.member.add', 'project.member.remove', 'session.create', 'session.update',
  'session.turn.commit', 'session.page.add', 'live_inbox.reorder', 'live_inbox.replace', 'live_inbox.queue', 'live_inbox.withdraw',
];
/** The writes that change the state they are decided on (a Run started or ended, an archive, a deletion): a fixture each. */
export const ALONE: WriteAction[] = ['session.message', 'session.interrupt', 'session.archive', 'session.delete', 'project.archive'];
/** Runs only on the kit's in-memory run: the answers do not depend on the store (not registered, so not counted as skipped, on a store's run). */
const onTheMemoryStore = (kit: HttpConformanceOptions) => kit.openStore === undefined;

/** The write gate through the HTTP API (see the file comment), as data. */
export const writeGateGroup: HttpSuiteGroup = {
  name: 'the write gate over HTTP',
  blocks: [
    {
      // The exhaustive pass runs on the in-memory store (every adapter runs the kit there): the answers
      // do not depend on the store, and that each is decided atomically with the write under its lock
      // is the storage kit's row-lock check. On a store of the adapter author's, the archive cases below run.
      name: 'every write × role × state answers as the policy table says; a refused write writes nothing',
      only: onTheMemoryStore,
      checks: everyState().map(({ state, roles }) => ({
        name: `${JSON.stringify(state)}: every write by every role`, timeout: 120_000,
        run: (c: { kit: HttpConformanceOptions }) => writeMatrix(c.kit, state, roles),
      })),
    },
    {
      name: 'workspace writes (administration, /v1/agents) answer as the policy table says, by role alone; a refused one writes nothing',
      only: onTheMemoryStore,
      checks: [{ name: '%s', each: Object.keys(WORKSPACE_WRITES), timeout: 60_000, run: (c: { kit: HttpConformanceOptions }, action: keyof typeof WORKSPACE_WRITES) => workspaceWrite(c.kit, action) }],
    },
  ],
  checks: [
    {
      name: 'a project archived during a Run: its Live Inbox answers 409 project_archived to queue, replace, reorder and withdraw; nothing is committed after the archive',
      timeout: 60_000, run: (c: { kit: HttpConformanceOptions }) => archivedDuringRun(c.kit, 'project'),
    },
    {
      name: 'a Session archived during its Run: its Live Inbox answers 409 session_archived; nothing is committed after the archive',
      timeout: 60_000, run: (c: { kit: HttpConformanceOptions }) => archivedDuringRun(c.kit, 'session'),
    },
  ],
};

/** The write gate through the HTTP API: every action × role × state, and the Live Inbox after an archive. */
export function writeGateSuite(kit: HttpConformanceOptions): void {
  registerSuite(kit, writeGateGroup);
}
