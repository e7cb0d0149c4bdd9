/**
 * The platform the inboxes stand on (platform.md), one service per aggregate — identity
 * (`identity`), projects and members (`projects`), Sessions with their Floors and Pages
 * (`sessions`), Project Events and the Operation Log (`events`), workspace administration
 * (`admin`) — composed over one set of ports, plus the store's readiness (`GET /ready`).
 *
 * The methods of the aggregates are also reachable here under their names (`platform.createProject`
 * is `platform.projects.createProject`), as before the split; new code names the aggregate.
 * Who may write what is decided in one place for all of them: `policy/write-policy.ts`, through
 * the write gate (`policy/write-gate.ts`).
 */
import type { ServiceDeps } from '../context.js';
import type { StoreReadiness } from '../ports/store.js';
import { AdminService } from './admin.js';
import { IdentityService } from './identity.js';
import { SessionLedgerService } from './ledger.js';
import { ProjectEventService } from './project-events.js';
import { ProjectService } from './projects.js';

export { API_KEY_USE_RESOLUTION_MS } from './identity.js';
export { PROJECT_FEED_RECHECK_MS } from './project-events.js';


/** How long (ms) {@link PlatformService.readiness} waits for the store before answering not ready. */
export const READINESS_TIMEOUT_MS = 2_000;

export class PlatformService {
  /** Authentication (API keys, stream tokens), the caller's account, the trusted bootstrap of workspaces, accounts and keys. */
  readonly identity: IdentityService;
  /** Projects and members. */
  readonly projects: ProjectService;
  /** Sessions, their Floors (committed turns) and Pages (versions). */
  readonly sessions: SessionLedgerService;
  /** Project Events (pages, the live feed) and the Operation Log. */
  readonly events: ProjectEventService;
  /** Workspace administration: accounts and API keys (`/admin/*`, platform.md "Administration"). */
  readonly admin: AdminService;

  constructor(private readonly deps: ServiceDeps) {
    this.identity = new IdentityService(deps);
    this.projects = new ProjectService(deps);
    this.sessions = new SessionLedgerService(deps);
    this.events = new ProjectEventService(deps);
    this.admin = new AdminService(deps, {
      forgetKey: (key_id) => this.identity.forgetKey(key_id),
      forgetAccount: (workspace_id, account_id, key_ids) => this.identity.forgetAccount(workspace_id, account_id, [...key_ids]),
    });
  }

  /**
   * Whether the store can serve now (`GET /ready`, platform.md "Health"): its `readiness()` (the
   * database answers and is migrated), or — for a store without it — a read that answers. Waits
   * at most `timeoutMs` ({@link READINESS_TIMEOUT_MS}); never throws.
   */
  async readiness(timeoutMs = READINESS_TIMEOUT_MS): Promise<StoreReadiness> {
    const store = this.deps.store;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const unreachable = (message: string): StoreReadiness => ({ ready: false, reason: 'unreachable', message });
    const check = (async (): Promise<StoreReadiness> => {
      if (store.readiness) return store.readiness();
      await store.getWorkspace('ws_readiness_probe');
      return { ready: true };
    })().catch(() => unreachable('The database cannot be reached'));
    const deadline = new Promise<StoreReadiness>((resolve) => {
      timer = setTimeout(() => resolve(unreachable(`The database did not answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      return await Promise.race([check, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  // — the aggregates' methods under their names (see the module comment) —
  // `identity` (IdentityService)
  authenticate(...args: Parameters<IdentityService['authenticate']>): ReturnType<IdentityService['authenticate']> {
    return this.identity.authenticate(...args);
  }
  issueStreamToken(...args: Parameters<IdentityService['issueStreamToken']>): ReturnType<IdentityService['issueStreamToken']> {
    return this.identity.issueStreamToken(...args);
  }
  authenticateStreamToken(...args: Parameters<IdentityService['authenticateStreamToken']>): ReturnType<IdentityService['authenticateStreamToken']> {
    return this.identity.authenticateStreamToken(...args);
  }
  cachedAuthentication(...args: Parameters<IdentityService['cachedAuthentication']>): ReturnType<IdentityService['cachedAuthentication']> {
    return this.identity.cachedAuthentication(...args);
  }
  listWorkspaces(...args: Parameters<IdentityService['listWorkspaces']>): ReturnType<IdentityService['listWorkspaces']> {
    return this.identity.listWorkspaces(...args);
  }
  createWorkspace(...args: Parameters<IdentityService['createWorkspace']>): ReturnType<IdentityService['createWorkspace']> {
    return this.identity.createWorkspace(...args);
  }
  createAccount(...args: Parameters<IdentityService['createAccount']>): ReturnType<IdentityService['createAccount']> {
    return this.identity.createAccount(...args);
  }
  issueApiKey(...args: Parameters<IdentityService['issueApiKey']>): ReturnType<IdentityService['issueApiKey']> {
    return this.identity.issueApiKey(...args);
  }
  revokeApiKey(...args: Parameters<IdentityService['revokeApiKey']>): ReturnType<IdentityService['revokeApiKey']> {
    return this.identity.revokeApiKey(...args);
  }
  whoami(...args: Parameters<IdentityService['whoami']>): ReturnType<IdentityService['whoami']> {
    return this.identity.whoami(...args);
  }

  // `projects` (ProjectService)
  createProject(...args: Parameters<ProjectService['createProject']>): ReturnType<ProjectService['createProject']> {
    return this.projects.createProject(...args);
  }
  listProjects(...args: Parameters<ProjectService['listProjects']>): ReturnType<ProjectService['listProjects']> {
    return this.projects.listProjects(...args);
  }
  getProject(...args: Parameters<ProjectService['getProject']>): ReturnType<ProjectService['getProject']> {
    return this.projects.getProject(...args);
  }
  archiveProject(...args: Parameters<ProjectService['archiveProject']>): ReturnType<ProjectService['archiveProject']> {
    return this.projects.archiveProject(...args);
  }
  addMember(...args: Parameters<ProjectService['addMember']>): ReturnType<ProjectService['addMember']> {
    return this.projects.addMember(...args);
  }
  listMembers(...args: Parameters<ProjectService['listMembers']>): ReturnType<ProjectService['listMembers']> {
    return this.projects.listMembers(...args);
  }
  removeMember(...args: Parameters<ProjectService['removeMember']>): ReturnType<ProjectService['removeMember']> {
    return this.projects.removeMember(...args);
  }

  // `sessions` (SessionLedgerService)
  createSession(...args: Parameters<SessionLedgerService['createSession']>): ReturnType<SessionLedgerService['createSession']> {
    return this.sessions.createSession(...args);
  }
  listSessions(...args: Parameters<SessionLedgerService['listSessions']>): ReturnType<SessionLedgerService['listSessions']> {
    return this.sessions.listSessions(...args);
  }
  getSession(...args: Parameters<SessionLedgerService['getSession']>): ReturnType<SessionLedgerService['getSession']> {
    return this.sessions.getSession(...args);
  }
  listFloors(...args: Parameters<SessionLedgerService['listFloors']>): ReturnType<SessionLedgerService['listFloors']> {
    return this.sessions.listFloors(...args);
  }
  listPages(...args: Parameters<SessionLedgerService['listPages']>): ReturnType<SessionLedgerService['listPages']> {
    return this.sessions.listPages(...args);
  }
  commitTurn(...args: Parameters<SessionLedgerService['commitTurn']>): ReturnType<SessionLedgerService['commitTurn']> {
    return this.sessions.commitTurn(...args);
  }
  addPage(...args: Parameters<SessionLedgerService['addPage']>): ReturnType<SessionLedgerService['addPage']> {
    return this.sessions.addPage(...args);
  }

  // `events` (ProjectEventService)
  listProjectEvents(...args: Parameters<ProjectEventService['listProjectEvents']>): ReturnType<ProjectEventService['listProjectEvents']> {
    return this.events.listProjectEvents(...args);
  }
  projectEventFeed(...args: Parameters<ProjectEventService['projectEventFeed']>): ReturnType<ProjectEventService['projectEventFeed']> {
    return this.events.projectEventFeed(...args);
  }
  listOperationLogs(...args: Parameters<ProjectEventService['listOperationLogs']>): ReturnType<ProjectEventService['listOperationLogs']> {
    return this.events.listOperationLogs(...args);
  }
}
