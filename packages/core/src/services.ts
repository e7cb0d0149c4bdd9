/**
 * Composition of the core's services over one set of ports (platform.md "Embedding"):
 * {@link createServices} builds the platform's aggregates and the Project Inbox from the store,
 * bus, clock and ids (`ServiceDeps`), and — when asked — the Session Runtime and the Session
 * resource on top, as the object the HTTP adapters take (`services`).
 */
import type { ServiceDeps } from './context.js';
import { PlatformService } from './platform/service.js';
import { ProjectInboxService } from './project-inbox/service.js';
import { ManagedSessionsService, type ManagedSessionsDeps } from './sessions/managed-sessions.js';
import { SessionRuntimeService, type SessionRuntimeDeps } from './sessions/service.js';

/** What {@link createServices} builds: the services every route calls, and the optional runtime ones. */
export interface CoreServices {
  /** Identity, projects and members, Sessions with Floors and Pages, Project Events and the Operation Log, administration. */
  platform: PlatformService;
  projectInbox: ProjectInboxService;
  /** Given `options.runtime`: the Session Runtime (Session events, the Live Inbox, Runs). */
  runtime?: SessionRuntimeService;
  /** Given `options.runtime` and `options.managedSessions`: the Session resource and agents (`/v1/sessions`, `/v1/agents`). */
  managedSessions?: ManagedSessionsService;
}

/** Options of {@link createServices}. */
export interface CreateServicesOptions {
  /** The Session Runtime's own dependencies (Live Inbox host, model, agents, tools…); the ports are `deps`'. */
  runtime?: Omit<SessionRuntimeDeps, keyof ServiceDeps>;
  /** Serve the Session resource: `true`, or its options (the agents `agent` may name; default the Runtime's). Needs `runtime`. */
  managedSessions?: true | Omit<ManagedSessionsDeps, 'store' | 'clock' | 'platform' | 'runtime'>;
}

/**
 * Every core service over `deps`: `{ platform, projectInbox }`, plus `runtime` with
 * `options.runtime` and `managedSessions` with both options — the `services` of the HTTP adapters.
 * @throws TypeError when `managedSessions` is asked without `runtime`.
 */
export function createServices(deps: ServiceDeps, options: CreateServicesOptions = {}): CoreServices {
  const platform = new PlatformService(deps);
  const projectInbox = new ProjectInboxService(deps);
  if (options.managedSessions !== undefined && options.runtime === undefined) throw new TypeError('createServices: managedSessions needs runtime');
  if (options.runtime === undefined) return { platform, projectInbox };
  const runtime = new SessionRuntimeService({ ...deps, ...options.runtime } as SessionRuntimeDeps);
  if (options.managedSessions === undefined) return { platform, projectInbox, runtime };
  const extra = options.managedSessions === true ? {} : options.managedSessions;
  const managedSessions = new ManagedSessionsService({ ...deps, ...extra, platform, runtime });
  return { platform, projectInbox, runtime, managedSessions };
}
