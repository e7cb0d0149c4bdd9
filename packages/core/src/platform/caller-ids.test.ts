/**
 * Ids are global (one primary key across workspaces), so only trusted code passes ids to the
 * service (HTTP takes none: platform.md "Ids and time"; the wire schemas have no `id`). For that
 * trusted code, an id another workspace holds is taken — 409 `conflict`, never an unexpected
 * error that would answer 500 — and nothing is written. Over HTTP every `id` field is refused
 * alike (http-fastify test/security-auth.test.ts).
 */
import { describe, expect, it } from 'vitest';
import type { RequestContext } from '../context.js';
import { InboxKitError } from '../errors.js';
import { createManualClock, createSequentialIdGenerator } from '../ports/clock.js';
import { createLocalEventBus } from '../ports/event-bus.js';
import { createMemoryStore } from '../testing/memory-store.js';
import { createProjectRequest, createSessionRequest } from './schemas.js';
import { PlatformService } from './service.js';

const ctx = (workspace_id: string, account_id: string): RequestContext => ({
  principal: { workspace_id, account_id, key_id: `key_${account_id}`, key_kind: 'standard' },
  request_id: 'req_test',
});

async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(InboxKitError);
    return (error as InboxKitError).code;
  }
}

describe('caller-chosen ids across workspaces', () => {
  it('a project or session id held by another workspace is a conflict, and nothing is written', async () => {
    const store = createMemoryStore();
    const platform = new PlatformService({ store, bus: createLocalEventBus(), clock: createManualClock(), ids: createSequentialIdGenerator() });
    await platform.createWorkspace({ id: 'ws_a', name: 'A' });
    await platform.createWorkspace({ id: 'ws_b', name: 'B' });
    await platform.createAccount({ id: 'acc_a', name: 'a', workspace_ids: ['ws_a'] });
    await platform.createAccount({ id: 'acc_b', name: 'b', workspace_ids: ['ws_b'] });
    const a = ctx('ws_a', 'acc_a');
    const b = ctx('ws_b', 'acc_b');
    await platform.createProject(a, { id: 'proj_x', name: 'A' });
    await platform.createSession(a, { id: 'sess_x', project_id: 'proj_x' });
    await platform.createProject(b, { id: 'proj_b', name: 'B' });
    const before = await store.listProjectEvents({ project_id: 'proj_b', after: 0, limit: 100 });

    expect(await codeOf(platform.createProject(b, { id: 'proj_x', name: 'mine' }))).toBe('conflict');
    expect(await codeOf(platform.createSession(b, { id: 'sess_x' }))).toBe('conflict');
    expect(await codeOf(platform.createSession(b, { id: 'sess_x', project_id: 'proj_b' }))).toBe('conflict');

    expect((await store.getProject('ws_a', 'proj_x'))!.name).toBe('A');
    expect(await store.getProject('ws_b', 'proj_x')).toBeUndefined();
    expect(await store.getSession('ws_b', 'sess_x')).toBeUndefined();
    expect(await store.listProjectEvents({ project_id: 'proj_b', after: 0, limit: 100 })).toEqual(before);
    // Generated ids are unaffected.
    expect((await platform.createProject(b, { name: 'generated' })).id).toMatch(/^proj_/);
  });

  it('the request schemas of POST /projects and POST /sessions take no id', () => {
    expect(createProjectRequest.safeParse({ name: 'x' }).success).toBe(true);
    expect(createSessionRequest.safeParse({ title: 'x' }).success).toBe(true);
    for (const id of ['proj_main', 'proj_never_used']) {
      expect(createProjectRequest.safeParse({ id, name: 'x' }).success).toBe(false);
      expect(createSessionRequest.safeParse({ id: id.replace('proj', 'sess') }).success).toBe(false);
    }
  });
});
