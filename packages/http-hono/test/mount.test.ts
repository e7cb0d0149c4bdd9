/**
 * The Hono app mounted in a host's own Hono app (`host.route('/inbox', app)`): every path under
 * the mount is inbox-kit's (unknown ones 404 `not_found` in the envelope, with `x-request-id`),
 * the host's other paths, 404 included, stay untouched, and the OpenAPI document lists its paths
 * under the mount (as the Fastify plugin's under a `prefix`).
 */
import { PlatformService, ProjectInboxService, createIdGenerator, createLocalEventBus, systemClock } from '@inbox-kit/core';
import { createMemoryStore } from '@inbox-kit/core/testing';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { inboxKitHono } from '../src/index.js';

const deps = { store: createMemoryStore(), bus: createLocalEventBus(), clock: systemClock, ids: createIdGenerator() };
const services = { platform: new PlatformService(deps), projectInbox: new ProjectInboxService(deps) };

function host(mount: string): Hono {
  const app = new Hono();
  app.get('/', (c) => c.text('mine'));
  app.route(mount, inboxKitHono({ services }).app);
  app.get('/after', (c) => c.text('after'));
  app.notFound((c) => c.json({ host: 'not-found' }, 404));
  return app;
}

describe.each(['/inbox', '/api/v2'])('inbox-kit on hono mounted at %s', (mount) => {
  const app = host(mount);

  it('answers unknown paths under the mount with 404 not_found in the envelope', async () => {
    for (const path of [`${mount}/nope`, `${mount}/projects/p1/nope`]) {
      for (const method of ['GET', 'DELETE']) {
        const res = await app.request(path, { method });
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(res.headers.get('x-request-id')).toMatch(/^req_/);
        expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error', code: 'not_found' } });
      }
    }
  });

  it("leaves the host's routes and 404 untouched, without request id headers", async () => {
    for (const [path, status, text] of [['/', 200, 'mine'], ['/after', 200, 'after'], ['/nope', 404, '{"host":"not-found"}'], ['/inboxes', 404, '{"host":"not-found"}']] as const) {
      const res = await app.request(path);
      expect(res.status, path).toBe(status);
      expect(await res.text(), path).toBe(text);
      expect(res.headers.get('x-request-id'), path).toBeNull();
      expect(res.headers.get('request-id'), path).toBeNull();
    }
  });

  it('serves its routes under the mount', async () => {
    const res = await app.request(`${mount}/health`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
  });

  it('lists its paths under the mount in the OpenAPI document', async () => {
    const res = await app.request(`${mount}/openapi.json`);
    expect(res.status).toBe(200);
    const doc = await res.json();
    const paths = Object.keys(doc.paths);
    expect(paths).toContain(`${mount}/me`);
    expect(paths).toContain(`${mount}/projects/{id}`);
    expect(paths).toContain(`${mount}/openapi.json`);
    expect(paths.every((p) => p.startsWith(`${mount}/`))).toBe(true);
    // Unmounted, the same app lists them at the root.
    const root = await (await inboxKitHono({ services }).app.request('/openapi.json')).json();
    expect(Object.keys(root.paths).map((p) => `${mount}${p}`).sort()).toEqual([...paths].sort());
  });
});
