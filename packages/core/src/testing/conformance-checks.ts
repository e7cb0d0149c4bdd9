/**
 * The checks of the storage conformance kit, as plain async functions (no test framework), one
 * module per sub-port of the storage port (`conformance-checks/*.ts`): each
 * takes a fresh subject `{ store, raw }`, exercises one guarantee of the storage port
 * (`ports/store.ts`) and throws a {@link ConformanceError} naming what broke. `conformance.ts`
 * registers them as a vitest suite; adapter authors can also call one directly (e.g. to prove that
 * a deliberately broken adapter fails it).
 *
 * The assertions do not trust the adapter under test where a second read path exists: counts,
 * sequences, statuses and stored JSON are read through the {@link RawReader} the adapter author
 * writes with raw queries (SQL, or the in-memory rows).
 *
 * Every check creates its own workspace, accounts and projects with fresh random ids, so checks
 * also work on a store shared between them.
 */
import type { StoreTx } from '../ports/store.js';
import { checkAgents } from './conformance-checks/agents.js';
import {
  checkAttemptOwnership, checkEndRunConditional, checkFindSession, checkListRunningRuns, checkRunStatusChanges, checkStoreClock,
} from './conformance-checks/runs.js';
import { checkAppendAudited, checkEventVisibilitySourceAndLatest, checkGapFreeProjectSequences } from './conformance-checks/events.js';
import { checkIdempotencyRecords, checkIdempotencySweep } from './conformance-checks/idempotency.js';
import { checkProjectAndMemberPages, checkTurnAndSessionPages } from './conformance-checks/paging.js';
import { checkAccountsAndKeys, checkIdentityAndProjects, checkWorkspaceScoping } from './conformance-checks/identity.js';
import { checkDecideHasOneWinner, checkInboxItemWithAccess, checkJsonRoundTrip, checkKeysetPaging, checkLockInboxItemWithAccess } from './conformance-checks/inbox.js';
import { checkInboxItemsJson, checkInboxItemsWithAccess } from './conformance-checks/inbox-list-access.js';
import {
  checkDecideInboxItemAudited, checkDecideInboxItemIfUnchanged, checkGetProjectWithAccess, checkInsertInboxItemAudited, checkInsertInboxItemIfUnchanged, checkLockProjectWithAccess,
} from './conformance-checks/inbox-audited.js';
import { checkMemberships } from './conformance-checks/projects.js';
import { checkGapFreeSessionSeq, checkManagedSessions, checkSessionGate, checkSessionWithAccess, checkSessionsFloorsPages } from './conformance-checks/sessions.js';
import { checkReadiness, checkRowLocks, checkTransactionAtomicity } from './conformance-checks/transactions.js';
import type { StoreConformanceSubject } from './conformance-checks/support.js';

export { ConformanceError, type RawReader, type RawTable, type StoreConformanceSubject } from './conformance-checks/support.js';
export { checkReadiness, checkRowLocks, checkTransactionAtomicity } from './conformance-checks/transactions.js';
export { checkAccountsAndKeys, checkIdentityAndProjects, checkWorkspaceScoping } from './conformance-checks/identity.js';
export { checkMemberships } from './conformance-checks/projects.js';
export { JSON_SAMPLES, checkDecideHasOneWinner, checkInboxItemWithAccess, checkJsonRoundTrip, checkKeysetPaging } from './conformance-checks/inbox.js';
export { checkAppendAudited, checkEventVisibilitySourceAndLatest, checkGapFreeProjectSequences } from './conformance-checks/events.js';
export { checkGapFreeSessionSeq, checkManagedSessions, checkSessionGate, checkSessionWithAccess, checkSessionsFloorsPages } from './conformance-checks/sessions.js';
export {
  checkAttemptOwnership, checkEndRunConditional, checkFindSession, checkListRunningRuns, checkRunStatusChanges, checkStoreClock,
} from './conformance-checks/runs.js';
export { checkAgents } from './conformance-checks/agents.js';
export { checkIdempotencyRecords, checkIdempotencySweep } from './conformance-checks/idempotency.js';
export { checkProjectAndMemberPages, checkTurnAndSessionPages } from './conformance-checks/paging.js';

/**
 * The sub-ports of the storage port (`ports/store.ts`), by which the kit groups its checks:
 * `identity` (IdentityStore), `projects` (ProjectStore), `inbox` (InboxStore), `events`
 * (ProjectEventStore), `sessions` (SessionStore), `runs` (RunStore), `idempotency`
 * (IdempotencyStore), `agents` (AgentStore).
 */
export const STORE_PORT_GROUPS = ['identity', 'projects', 'inbox', 'events', 'sessions', 'runs', 'idempotency', 'agents'] as const;

/** One sub-port of the storage port, as the kit names it. */
export type StorePortGroup = (typeof STORE_PORT_GROUPS)[number];

/** The methods of each sub-port (optional ones included), e.g. to build a partial store in a test. */
export const STORE_PORT_METHODS = {
  identity: [
    'insertWorkspace', 'getWorkspace', 'listWorkspaces', 'insertAccount', 'getWorkspaceAccount', 'listWorkspaceAccounts', 'lockWorkspaceAccount',
    'disableWorkspaceAccount', 'enableWorkspaceAccount', 'insertApiKey', 'findApiKeyByHash', 'getApiKey', 'listApiKeys', 'revokeApiKey', 'recordApiKeyUse',
  ],
  projects: [
    'insertProject', 'getProject', 'getProjectWithAccess', 'lockProject', 'lockProjectWithAccess', 'listProjectsForAccount', 'pageProjectsForAccount', 'setProjectStatus', 'getMembership', 'upsertMembership',
    'deleteMembership', 'listMemberships', 'pageMemberships',
  ],
  inbox: [
    'insertInboxItem', 'getInboxItem', 'getInboxItemWithAccess', 'lockInboxItemWithAccess', 'listInboxItems', 'listInboxItemsJson', 'listInboxItemsWithAccess', 'decideInboxItem', 'insertInboxItemAudited',
    'decideInboxItemAudited', 'decideInboxItemIfUnchanged', 'insertInboxItemIfUnchanged',
  ],
  events: [
    'appendProjectEvent', 'getProjectEvent', 'listProjectEvents', 'lastProjectEventSequence', 'appendOperationLog', 'appendAudited', 'listOperationLogs',
    'listWorkspaceOperationLogs',
  ],
  sessions: [
    'insertSession', 'getSession', 'lockSession', 'findSession', 'listSessions', 'getSessionWithAccess', 'getSessionGate', 'pageSessions', 'updateSession', 'deleteSession',
    'insertFloor', 'getFloor', 'listFloors', 'pageFloors', 'lastFloorNumber', 'insertPage', 'getPage', 'listPages', 'pagePages', 'appendSessionEvents',
    'listSessionEvents', 'lastSessionEventSeq',
  ],
  runs: [
    'now', 'insertRun', 'getRunningRun', 'listRunningRuns', 'endRun', 'updateRunStatus', 'getAwaitingRun', 'claimAttemptOwnership',
    'renewAttemptOwnership', 'releaseAttemptOwnership', 'findAttemptOwner',
  ],
  idempotency: ['findIdempotencyRecord', 'insertIdempotencyRecord', 'sweepIdempotencyRecords'],
  agents: ['insertAgent', 'getAgent', 'pageAgents', 'listAgentVersions', 'updateAgent', 'archiveAgent'],
} as const satisfies Record<StorePortGroup, readonly (keyof StoreTx)[]>;

// Compile-time proof that the lists name every method of the port exactly (a new method fails `tsc` until it is listed).
type ListedMethods = (typeof STORE_PORT_METHODS)[StorePortGroup][number];
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const everyMethodListed: Same<ListedMethods, keyof StoreTx> = true;
void everyMethodListed;

/** One check of the kit. */
export interface StoreConformanceCheck {
  /** Human-readable name (the vitest test title). */
  name: string;
  /** The sub-port whose guarantee it checks, or `transactions` for the units of work of `Store`. */
  group: StorePortGroup | 'transactions';
  /** Every sub-port whose methods the check calls (to seed its world or to read back): it runs only on a store that has them all. */
  requires: readonly StorePortGroup[];
  run(subject: Pick<StoreConformanceSubject, 'store' | 'raw'>): Promise<void>;
}

/** What every check needs to seed its world: a workspace, accounts, a project with a member, a Session. */
const WORLD: readonly StorePortGroup[] = ['identity', 'projects', 'sessions'];
const needs = (...more: StorePortGroup[]): readonly StorePortGroup[] => [...WORLD, ...more];

/** Every check of the kit, grouped by sub-port, in the order the suite runs them. */
export const storeConformanceChecks: readonly StoreConformanceCheck[] = [
  { group: 'transactions', requires: needs('inbox', 'events'), name: 'transactions are atomic (rollback after 1, 2 or 3 writes leaves nothing; commit keeps all)', run: checkTransactionAtomicity },
  { group: 'transactions', requires: needs('inbox', 'events', 'runs'), name: 'row locks: no write checked under lockProject / lockSession commits after a change it did not see', run: checkRowLocks },
  { group: 'transactions', requires: [], name: 'readiness (optional): a migrated store is ready', run: checkReadiness },
  { group: 'identity', requires: needs('inbox', 'events'), name: 'workspace and project scoping of lookups and lists', run: checkWorkspaceScoping },
  { group: 'identity', requires: needs(), name: 'identity, API keys (revocation kept earliest) and conditional project status', run: checkIdentityAndProjects },
  { group: 'identity', requires: needs('events'), name: 'administration (optional methods): accounts, disabling, keys, last use, workspace Operation Log', run: checkAccountsAndKeys },
  { group: 'projects', requires: needs(), name: 'memberships: upsert and delete', run: checkMemberships },
  { group: 'projects', requires: needs(), name: 'pageProjectsForAccount and pageMemberships (optional): keyset pages are exactly the lists, ties kept', run: checkProjectAndMemberPages },
  { group: 'inbox', requires: needs('inbox', 'events'), name: 'decideInboxItem: 20 concurrent decisions → exactly one winner, one log row, one event', run: checkDecideHasOneWinner },
  { group: 'inbox', requires: needs('inbox', 'events'), name: 'keyset pages neither skip nor repeat rows sharing created_at (with filters)', run: checkKeysetPaging },
  { group: 'inbox', requires: needs('inbox'), name: 'getInboxItemWithAccess (optional): project, membership and item in one read, as the three reads give them', run: checkInboxItemWithAccess },
  { group: 'inbox', requires: needs('inbox'), name: 'listInboxItemsWithAccess (optional): project, membership and page in one read, as the two-step reads give them (filters, cursors, limits, roles, misses)', run: checkInboxItemsWithAccess },
  { group: 'inbox', requires: needs('inbox'), name: 'listInboxItemsJson (optional): the page listInboxItems reads, as JSON text that parses to it (filters, cursors, limits, escapes, every JSON kind, more and last)', run: checkInboxItemsJson },
  { group: 'inbox', requires: needs('inbox'), name: 'lockInboxItemWithAccess (optional): in a transaction, the locked project, membership and item in one read, as the three reads give them', run: checkLockInboxItemWithAccess },
  { group: 'projects', requires: needs(), name: 'lockProjectWithAccess (optional): in a transaction, the locked project and the membership read once the lock is held, as the two reads give them (a member removed by the transaction it waited for is gone)', run: checkLockProjectWithAccess },
  { group: 'projects', requires: needs(), name: 'getProjectWithAccess (optional): the project and the membership as the two reads give them, undefined through another workspace or for a missing project', run: checkGetProjectWithAccess },
  { group: 'inbox', requires: needs('inbox', 'events'), name: 'insertInboxItemAudited (optional): item, Operation Log row and event in one call, gap-free under 40 concurrent writers, all or nothing', run: checkInsertInboxItemAudited },
  { group: 'inbox', requires: needs('inbox', 'events'), name: 'decideInboxItemAudited (optional): 20 concurrent decisions → one winner, one log row, one event; a stale decision writes nothing', run: checkDecideInboxItemAudited },
  { group: 'inbox', requires: needs('inbox', 'events'), name: 'decideInboxItemIfUnchanged (optional): decides only on the project and item as seen, one winner of 20, nothing written otherwise', run: checkDecideInboxItemIfUnchanged },
  { group: 'inbox', requires: needs('inbox', 'events'), name: 'insertInboxItemIfUnchanged (optional): creates only on the project and membership as seen (also after waiting for a removal or demotion), 20 concurrent creates gap-free, nothing written otherwise', run: checkInsertInboxItemIfUnchanged },
  { group: 'inbox', requires: needs('inbox', 'events'), name: 'JSON round trip: what was written is what is read', run: checkJsonRoundTrip },
  { group: 'events', requires: needs('inbox', 'events'), name: 'appendProjectEvent: gap-free per-project sequences under 270 concurrent writers', run: checkGapFreeProjectSequences },
  { group: 'events', requires: needs('events'), name: 'Project Events keep visibility and source; lastProjectEventSequence and lastSessionEventSeq', run: checkEventVisibilitySourceAndLatest },
  { group: 'events', requires: needs('events'), name: 'appendAudited (optional): the Operation Log row and the event in one call, gap-free under 40 concurrent writers, both or neither', run: checkAppendAudited },
  { group: 'sessions', requires: needs(), name: 'getSessionWithAccess (optional): session, project and membership in one read, as the three reads give them', run: checkSessionWithAccess },
  { group: 'sessions', requires: needs(), name: 'getSessionGate (optional): the Session\'s id, project and archive, the project\'s owner and status, the caller\'s role in one read, as the three reads give them', run: checkSessionGate },
  { group: 'sessions', requires: needs(), name: 'session ledger: gap-free seq under concurrent appends', run: checkGapFreeSessionSeq },
  { group: 'sessions', requires: needs(), name: 'sessions, floors and pages', run: checkSessionsFloorsPages },
  { group: 'sessions', requires: needs(), name: 'managed sessions: pages, update, delete, ledger filters', run: checkManagedSessions },
  { group: 'sessions', requires: needs(), name: 'pageFloors, pagePages (optional) and pageSessions by project_id: keyset pages are exactly the lists', run: checkTurnAndSessionPages },
  { group: 'runs', requires: needs('runs'), name: 'runs: endRun is conditional', run: checkEndRunConditional },
  { group: 'runs', requires: needs('runs'), name: 'runs: listRunningRuns lists running Runs oldest first, at most limit', run: checkListRunningRuns },
  { group: 'runs', requires: needs('runs'), name: 'attempt ownership: conditional claim, lease expiry, exact renew and release, one winner of 20', run: checkAttemptOwnership },
  { group: 'runs', requires: needs('runs'), name: 'run status (optional): running ⇄ awaiting and → idle are conditional, one winner of 10; an awaiting Run is not running', run: checkRunStatusChanges },
  { group: 'runs', requires: needs('runs'), name: 'now (optional): the store\'s clock in integer ms, never backwards, the time of the call inside a transaction, the database\'s', run: checkStoreClock },
  { group: 'sessions', requires: needs(), name: 'findSession (optional): a Session by id alone, never a deleted one', run: checkFindSession },
  { group: 'idempotency', requires: needs('idempotency', 'inbox', 'events'), name: 'idempotency records: conditional insert, exact scope, released by rollback, one winner of 20', run: checkIdempotencyRecords },
  { group: 'idempotency', requires: needs('idempotency'), name: 'sweepIdempotencyRecords (optional): only expired records, oldest first, bounded, scoped, undone by rollback; a swept key is free', run: checkIdempotencySweep },
  { group: 'agents', requires: needs('agents'), name: 'agents (optional): versions, conditional update (one winner of 10), archive once, keyset pages, workspace scoping', run: checkAgents },
];

/**
 * Sub-ports a store declares it does not implement: a list (`['runs']`) or a reason per sub-port
 * (`{ runs: 'this store keeps no Runs' }`).
 */
export type UnsupportedStorePorts = readonly StorePortGroup[] | Partial<Record<StorePortGroup, string>>;

/** One check as a run of the kit treats it: `skip` is the reason it does not run, if it does not. */
export interface PlannedStoreCheck {
  check: StoreConformanceCheck;
  skip: string | undefined;
}

/**
 * Which checks run on a store that declares `unsupported` sub-ports: a check that requires one of
 * them is skipped, with the reason; every other check runs.
 *
 * @throws TypeError when `unsupported` names something that is not a sub-port (a typo must not
 *   silently skip nothing).
 */
export function planStoreConformance(checks: readonly StoreConformanceCheck[], unsupported: UnsupportedStorePorts = []): PlannedStoreCheck[] {
  const reasons = new Map<string, string | undefined>(Array.isArray(unsupported)
    ? (unsupported as readonly string[]).map((group) => [group, undefined])
    : Object.entries(unsupported));
  for (const group of reasons.keys()) {
    if (!(STORE_PORT_GROUPS as readonly string[]).includes(group)) {
      throw new TypeError(`@inbox-kit/core/testing: unknown sub-port "${group}" in unsupported (one of: ${STORE_PORT_GROUPS.join(', ')})`);
    }
  }
  return checks.map((check) => {
    const missing = check.requires.filter((group) => reasons.has(group));
    const skip = missing.length === 0 ? undefined : `the store declares ${missing.map((group) => {
      const reason = reasons.get(group);
      return reason === undefined ? `"${group}"` : `"${group}" (${reason})`;
    }).join(' and ')} unsupported`;
    return { check, skip };
  });
}
