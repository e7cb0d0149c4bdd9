/**
 * `createServices` and the platform's aggregates (platform.md "Embedding"): one call builds every
 * service over the same ports; `PlatformService` is its aggregates, and their methods stay
 * reachable on it under their names.
 */
import { describe, expect, it } from 'vitest';
import { createManualClock, createSequentialIdGenerator } from './ports/clock.js';
import { createLocalEventBus } from './ports/event-bus.js';
import { IdentityService } from './platform/identity.js';
import { SessionLedgerService } from './platform/ledger.js';
import { ProjectEventService } from './platform/project-events.js';
import { ProjectService } from './platform/projects.js';
import { createServices } from './services.js';
import { LiveInboxHost } from './live-inbox/index.js';
import { createMemoryStore } from './testing/memory-store.js';

const deps = () => ({ store: createMemoryStore(), bus: createLocalEventBus(), clock: createManualClock(), ids: createSequentialIdGenerator() });

describe('createServices', () => {
  it('builds the platform (one service per aggregate) and the Project Inbox over the same ports', async () => {
    const { platform, projectInbox, runtime, managedSessions } = createServices(deps());
    expect(runtime).toBeUndefined();
    expect(managedSessions).toBeUndefined();
    expect(platform.identity).toBeInstanceOf(IdentityService);
    expect(platform.projects).toBeInstanceOf(ProjectService);
    expect(platform.sessions).toBeInstanceOf(SessionLedgerService);
    expect(platform.events).toBeInstanceOf(ProjectEventService);
    await platform.identity.createWorkspace({ id: 'ws_1', name: 'W' });
    await platform.identity.createAccount({ id: 'acc_1', name: 'A', workspace_ids: ['ws_1'] });
    const { secret } = await platform.identity.issueApiKey({ workspace_id: 'ws_1', account_id: 'acc_1' });
    const ctx = { principal: await platform.identity.authenticate(secret), request_id: 'req_1' };
    const project = await platform.projects.createProject(ctx, { name: 'P' });
    // The aggregate's method, reachable on the platform under its name, answers from the same store.
    expect(await platform.getProject(ctx, project.id)).toEqual(await platform.projects.getProject(ctx, project.id));
    const item = await projectInbox.create(ctx, project.id, { type: 'note', title: 'T', payload: {} } as never);
    const events = await platform.events.listProjectEvents(ctx, project.id);
    expect(events.items.map((e) => e.type)).toEqual(['project.created', 'project_inbox.item.created']);
    expect(item.project_id).toBe(project.id);
    // A revocation through the identity aggregate reaches the principals the admin service caches too.
    await platform.revokeApiKey(ctx.principal.key_id);
    await expect(platform.identity.authenticate(secret)).rejects.toMatchObject({ code: 'invalid_credentials' });
  });

  it('adds the runtime and the Session resource when asked, and refuses the Session resource without a runtime', async () => {
    const services = createServices(deps(), { runtime: { host: new LiveInboxHost() }, managedSessions: true });
    expect(services.runtime).toBeDefined();
    expect(services.managedSessions).toBeDefined();
    await services.runtime?.close();
    expect(() => createServices(deps(), { managedSessions: true })).toThrow(TypeError);
  });
});
