/**
 * The fetch handler in-process, mounted under `basePath` (a Next.js catch-all route): its routes
 * answer under the mount, a path outside it is 404 in the envelope, the OpenAPI document and the
 * observer's route templates carry the mount, and `authenticate` gets the `Request`.
 */
import { PlatformService, ProjectInboxService, createIdGenerator, createLocalEventBus, systemClock } from '@inbox-kit/core';
import { createMemoryStore } from '@inbox-kit/core/testing';
import { describe, expect, it } from 'vitest';
import { createFetchHandler } from '../src/index.js';

async function services() {
  const deps = { store: createMemoryStore(), bus: createLocalEventBus(), clock: systemClock, ids: createIdGenerator() };
  const platform = new PlatformService(deps);
  await platform.createWorkspace({ id: 'ws_1', name: 'One' });
  await platform.createAccount({ id: 'acc_1', name: 'Ada', workspace_ids: ['ws_1'] });
  return { platform, projectInbox: new ProjectInboxService(deps) };
}

describe('createFetchHandler under a basePath', () => {
  it('serves under the mount, 404s outside it, lists the mount in the document and the observer’s templates', async () => {
    const routes: Array<string | null> = [];
    const handler = createFetchHandler({
      services: await services(), basePath: '/api/inbox/', loadShedding: false,
      observer: { request: ({ route }) => void routes.push(route) },
    });
    expect((await handler(new Request('http://localhost/api/inbox/health'))).status).toBe(200);
    const outside = await handler(new Request('http://localhost/api/other/health'));
    expect(outside.status).toBe(404);
    expect(outside.headers.get('x-request-id')).toMatch(/^req_/);
    expect(await outside.json()).toMatchObject({ error: { code: 'not_found', message: 'Route GET /api/other/health not found' } });
    const doc = await (await handler(new Request('http://localhost/api/inbox/openapi.json'))).json();
    expect(Object.keys(doc.paths)).toContain('/api/inbox/projects/{id}');
    await handler(new Request('http://localhost/api/inbox/projects/p1'));
    expect(routes).toEqual(['/api/inbox/health', '/api/inbox/openapi.json', '/api/inbox/projects/:id']);
    expect(() => createFetchHandler({ services: { platform: undefined as never, projectInbox: undefined as never }, basePath: 'api' })).toThrow(TypeError);
    handler.close();
  });

  it('calls authenticate with the Request, and answers its principal', async () => {
    const handler = createFetchHandler({
      services: await services(), loadShedding: false,
      authenticate: (request) => (request.headers.get('x-user') === 'ada' ? { workspace_id: 'ws_1', account_id: 'acc_1', key_id: 'session:ada', key_kind: 'standard' } : null),
    });
    const me = await handler(new Request('http://localhost/me', { headers: { 'x-user': 'ada' } }));
    expect(me.status).toBe(200);
    expect((await me.json()).account.id).toBe('acc_1');
    expect((await handler(new Request('http://localhost/me'))).status).toBe(401);
    handler.close();
  });
});
