/**
 * The binding of every declared route to the services (`HttpServices`): for each operation id,
 * the service call that answers it and how its result becomes an `HttpOutcome`. Holds no
 * declaration (method, path, schemas, errors live in `./declarations/`).
 */
import type { RequestContext } from '../context.js';
import { InboxKitError } from '../errors.js';
import type { Feed, FeedItem } from '../ports/feed.js';
import type { SessionEvent } from '../records.js';
import type { LiveInboxOperation, SessionRuntimeService } from '../sessions/index.js';
import { managedSessionEvent } from '../sessions/managed-agents.js';
import type { ManagedSessionsService } from '../sessions/managed-sessions.js';
import { lastEventIdOf, resumePosition } from '../stream-resume.js';
import { memberRecord, operationLogData, projectRecord } from './project-records.js';
import type { HttpCall, HttpOutcome, HttpServices, RouteHandler } from './route-types.js';

/**
 * The Session feed with each item's data in the Managed Agents wire shape; `latest`, `authorize`
 * and `visible` are the feed's own (given the stored items the wire items were made from).
 */
export function wireSessionFeed(feed: Feed<SessionEvent>): Feed {
  const stored = new WeakMap<FeedItem, FeedItem<SessionEvent>>();
  const wire = (item: FeedItem<SessionEvent>): FeedItem => {
    const out = { id: item.id, type: item.type, data: managedSessionEvent(item.data) };
    stored.set(out, item);
    return out;
  };
  const original = (item: FeedItem): FeedItem<SessionEvent> => stored.get(item) ?? (item as FeedItem<SessionEvent>);
  return {
    replay: async (after, limit) => (await feed.replay(after, limit)).map(wire),
    latest: () => feed.latest(),
    subscribe: (push) => feed.subscribe((item) => push(wire(item))),
    authorize: (next) => feed.authorize(next.map(original)),
    visible: (item) => feed.visible(original(item)),
  };
}

const json = (status: number, body: unknown, headers?: Record<string, string>): HttpOutcome => (headers ? { kind: 'json', status, body, headers } : { kind: 'json', status, body });
const empty: HttpOutcome = { kind: 'empty', status: 204 };
const runtimeOf = (services: HttpServices): SessionRuntimeService => {
  if (services.runtime === undefined) throw new InboxKitError('not_found', 'The Session Runtime is not served here');
  return services.runtime;
};
const managedSessionsOf = (services: HttpServices): ManagedSessionsService => {
  if (services.managedSessions === undefined) throw new InboxKitError('not_found', 'The Session resource is not served here');
  return services.managedSessions;
};

/**
 * A Live Inbox (or durable input) operation: answered here by `local`, or — when another process
 * owns the Session's attempt — forwarded there, after the local visibility and permission checks.
 */
async function routed(services: HttpServices, call: HttpCall, operation: LiveInboxOperation, local: (ctx: RequestContext) => Promise<HttpOutcome>): Promise<HttpOutcome> {
  const runtime = runtimeOf(services);
  const ctx = call.ctx();
  const route = await runtime.routeLiveInbox(ctx, call.params.session_id, operation, { forwarded: call.forwarded });
  return route.route === 'forwarded' ? { kind: 'forwarded', reply: route.reply } : local(ctx);
}

/** The service call of every route, by operation id (the declarations are in `./declarations/`). */
export const ROUTE_BINDINGS: Readonly<Record<string, RouteHandler>> = {
  health: async () => json(200, { status: 'ok' }),
  ready: async (s) => {
    const readiness = await s.platform.readiness();
    if (!readiness.ready) {
      throw new InboxKitError('storage_unavailable', readiness.message, [{ path: 'storage', message: readiness.message, code: readiness.reason }]);
    }
    return json(200, { status: 'ready' });
  },
  // — identity —
  getMe: async (s, c) => json(200, await s.platform.identity.whoami(c.ctx())),
  createStreamToken: async (s, c) => json(201, await s.platform.identity.issueStreamToken(c.ctx(), c.body)),
  // — projects —
  createProject: async (s, c) => json(201, { project: projectRecord(await s.platform.projects.createProject(c.ctx(), c.body), 'owner') }),
  listProjects: async (s, c) => {
    const ctx = c.ctx();
    const page = await s.platform.projects.listProjects(ctx, c.query);
    const items = await Promise.all(page.items.map(async (p) => projectRecord(p, p.account_id === ctx.principal.account_id ? 'owner' : (await s.platform.projects.getProject(ctx, p.id)).role)));
    return json(200, { items, next_cursor: page.next_cursor });
  },
  getProject: async (s, c) => {
    const { project, role } = await s.platform.projects.getProject(c.ctx(), c.params.id);
    return json(200, { project: projectRecord(project, role), role });
  },
  archiveProject: async (s, c) => json(200, { project: projectRecord(await s.platform.projects.archiveProject(c.ctx(), c.params.id), 'owner') }),
  // — members —
  addMember: async (s, c) => {
    const ctx = c.ctx();
    return json(201, { member: memberRecord(await s.platform.projects.addMember(ctx, c.params.id, c.body), ctx.principal.workspace_id) });
  },
  listMembers: async (s, c) => {
    const ctx = c.ctx();
    const page = await s.platform.projects.listMembers(ctx, c.params.id, c.query);
    return json(200, { items: page.items.map((m) => memberRecord(m, ctx.principal.workspace_id)), next_cursor: page.next_cursor });
  },
  removeMember: async (s, c) => {
    await s.platform.projects.removeMember(c.ctx(), c.params.id, c.params.account_id);
    return empty;
  },
  // — events and logs —
  listProjectEvents: async (s, c) => json(200, await s.platform.events.listProjectEvents(c.ctx(), c.params.id, c.query)),
  streamProjectEvents: async (s, c) => {
    // The position is read first: a malformed Last-Event-ID is 400 whatever the access.
    const after = resumePosition(c.query.after, c.lastEventId);
    const lastEventId = lastEventIdOf(c.lastEventId);
    return { kind: 'stream', feed: await s.platform.events.projectEventFeed(c.ctx(), c.params.id, c.query), after, ...(lastEventId === undefined ? {} : { lastEventId }) };
  },
  listOperationLogs: async (s, c) => json(200, await s.platform.events.listOperationLogs(c.ctx(), c.params.id, c.query)),
  listOperationLogsByProject: async (s, c) => {
    const { project_id, ...page } = c.query as { project_id: string; limit: number; cursor?: string };
    return json(200, operationLogData(await s.platform.events.listOperationLogs(c.ctx(), project_id, page), page.limit));
  },
  listProjectSessions: async (s, c) => json(200, await s.platform.sessions.listSessions(c.ctx(), { ...c.query, project_id: c.params.id })),
  // — sessions, floors, pages —
  createSession: async (s, c) => json(201, { session: await s.platform.sessions.createSession(c.ctx(), c.body) }),
  listSessions: async (s, c) => json(200, await s.platform.sessions.listSessions(c.ctx(), c.query)),
  getSession: async (s, c) => json(200, { session: await s.platform.sessions.getSession(c.ctx(), c.params.id) }),
  listFloors: async (s, c) => json(200, await s.platform.sessions.listFloors(c.ctx(), c.params.id, c.query)),
  commitTurn: async (s, c) => json(201, await s.platform.sessions.commitTurn(c.ctx(), c.params.id, c.body)),
  listPages: async (s, c) => json(200, await s.platform.sessions.listPages(c.ctx(), c.params.id, c.params.floor_id, c.query)),
  addPage: async (s, c) => json(201, { page: await s.platform.sessions.addPage(c.ctx(), c.params.id, c.params.floor_id, c.body) }),
  // — Project Inbox —
  createInboxItem: async (s, c) => {
    const key = c.headers['idempotency-key'] as string | undefined;
    const { item, replayed } = await s.projectInbox.createWithOutcome(c.ctx(), c.params.id, c.body, key === undefined ? {} : { idempotency_key: key });
    return json(201, { item }, replayed ? { 'idempotent-replayed': 'true' } : undefined);
  },
  listInboxItems: async (s, c) => ({ kind: 'json', status: 200, body: undefined, text: await s.projectInbox.listJson(c.ctx(), c.params.id, c.query) }),
  getInboxItem: async (s, c) => json(200, { item: await s.projectInbox.get(c.ctx(), c.params.id, c.params.item_id) }),
  decideInboxItem: async (s, c) => json(200, { item: await s.projectInbox.decide(c.ctx(), c.params.id, c.params.item_id, c.body) }),
  // — workspace administration (an API key of kind `admin`) —
  adminCreateAccount: async (s, c) => json(201, { account: await s.platform.admin.createAccount(c.ctx(), c.body) }),
  adminListAccounts: async (s, c) => json(200, await s.platform.admin.listAccounts(c.ctx(), c.query)),
  adminDisableAccount: async (s, c) => json(200, { account: await s.platform.admin.disableAccount(c.ctx(), c.params.id) }),
  adminEnableAccount: async (s, c) => json(200, { account: await s.platform.admin.enableAccount(c.ctx(), c.params.id) }),
  adminCreateApiKey: async (s, c) => json(201, await s.platform.admin.createKey(c.ctx(), c.params.id, c.body)),
  adminListApiKeys: async (s, c) => json(200, await s.platform.admin.listKeys(c.ctx(), c.query)),
  adminRotateApiKey: async (s, c) => json(200, await s.platform.admin.rotateKey(c.ctx(), c.params.id, c.body)),
  adminRevokeApiKey: async (s, c) => {
    await s.platform.admin.revokeKey(c.ctx(), c.params.id);
    return empty;
  },
  adminListOperationLogs: async (s, c) => json(200, await s.platform.admin.listOperationLogs(c.ctx(), c.query)),
  // — the Session resource (Managed Agents wire shape: what `client.beta.sessions.*` of `@anthropic-ai/sdk` calls) —
  createManagedSession: async (s, c) => json(200, await managedSessionsOf(s).create(c.ctx(), c.body)),
  listManagedSessions: async (s, c) => json(200, await managedSessionsOf(s).list(c.ctx(), c.query)),
  retrieveManagedSession: async (s, c) => json(200, await managedSessionsOf(s).retrieve(c.ctx(), c.params.session_id)),
  updateManagedSession: async (s, c) => json(200, await managedSessionsOf(s).update(c.ctx(), c.params.session_id, c.body)),
  archiveManagedSession: async (s, c) => json(200, await managedSessionsOf(s).archive(c.ctx(), c.params.session_id)),
  deleteManagedSession: async (s, c) => json(200, await managedSessionsOf(s).delete(c.ctx(), c.params.session_id)),
  // — agents (Managed Agents wire shape: what `client.beta.agents.*` of `@anthropic-ai/sdk` calls) —
  createAgent: async (s, c) => json(200, await managedSessionsOf(s).agents.create(c.ctx(), c.body)),
  listAgents: async (s, c) => json(200, await managedSessionsOf(s).agents.list(c.ctx(), c.query)),
  retrieveAgent: async (s, c) => json(200, await managedSessionsOf(s).agents.retrieve(c.ctx(), c.params.agent_id, c.query)),
  updateAgent: async (s, c) => json(200, await managedSessionsOf(s).agents.update(c.ctx(), c.params.agent_id, c.body)),
  archiveAgent: async (s, c) => json(200, await managedSessionsOf(s).agents.archive(c.ctx(), c.params.agent_id)),
  listAgentVersions: async (s, c) => json(200, await managedSessionsOf(s).agents.listVersions(c.ctx(), c.params.agent_id, c.query)),
  // — durable Session events (Managed Agents wire shape) —
  sendSessionEvents: (s, c) => routed(s, c, { type: 'send_events', body: c.body }, async (ctx) => {
    const { data } = await runtimeOf(s).sendEvents(ctx, c.params.session_id, c.body);
    return json(200, { data: data.map(managedSessionEvent) });
  }),
  listSessionEvents: async (s, c) => {
    const page = await runtimeOf(s).listEvents(c.ctx(), c.params.session_id, c.query);
    return json(200, { ...page, data: page.data.map(managedSessionEvent) });
  },
  streamSessionEvents: async (s, c) => {
    const after = resumePosition(c.query.after, c.lastEventId);
    const lastEventId = lastEventIdOf(c.lastEventId);
    return { kind: 'stream', feed: wireSessionFeed(await runtimeOf(s).eventFeed(c.ctx(), c.params.session_id)), after, ...(lastEventId === undefined ? {} : { lastEventId }) };
  },
  // — Live Inbox —
  // The snapshot's text as the queue holds it (built once per state of the queue, not per read).
  getLiveInbox: (s, c) => routed(s, c, { type: 'snapshot' }, async (ctx) => ({ kind: 'json', status: 200, body: undefined, text: await runtimeOf(s).liveInboxSnapshotJson(ctx, c.params.session_id) })),
  queueLiveInboxMessage: (s, c) => routed(s, c, { type: 'queue', body: c.body }, async (ctx) => json(200, await runtimeOf(s).liveInboxQueue(ctx, c.params.session_id, c.body))),
  reorderLiveInbox: (s, c) => routed(s, c, { type: 'reorder', body: c.body }, async (ctx) => {
    await runtimeOf(s).liveInboxReorder(ctx, c.params.session_id, c.body);
    return empty;
  }),
  replaceLiveInboxMessage: (s, c) => routed(s, c, { type: 'replace', message_id: c.params.message_id, body: c.body }, async (ctx) => {
    await runtimeOf(s).liveInboxReplace(ctx, c.params.session_id, c.params.message_id, c.body);
    return empty;
  }),
  withdrawLiveInboxMessage: (s, c) => routed(s, c, { type: 'withdraw', message_id: c.params.message_id }, async (ctx) => {
    await runtimeOf(s).liveInboxWithdraw(ctx, c.params.session_id, c.params.message_id);
    return empty;
  }),
};
