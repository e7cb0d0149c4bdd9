/**
 * `GET /openapi.json` on Hono: public, the contract's `openApiDocument` of exactly the routes served
 * (the same path as the Fastify adapter's; the demo's `openapi-adapters.test.ts` checks the two
 * documents agree), with this package's version; `openapi: false` serves none.
 */
import { LiveInboxHost, PlatformService, ProjectInboxService, SessionRuntimeService, createIdGenerator, createLocalEventBus, systemClock } from '@inbox-kit/core';
import { httpRoutesFor, openApiDocument } from '@inbox-kit/core/http';
import { createMemoryStore } from '@inbox-kit/core/testing';
import { describe, expect, it } from 'vitest';
import packageJson from '../package.json' with { type: 'json' };
import { inboxKitHono } from '../src/index.js';

const deps = { store: createMemoryStore(), bus: createLocalEventBus(), clock: systemClock, ids: createIdGenerator() };
const base = { platform: new PlatformService(deps), projectInbox: new ProjectInboxService(deps) };

describe('GET /openapi.json on hono', () => {
  it('is public JSON: the contract document of the routes served, with this package version', async () => {
    const res = await inboxKitHono({ services: base }).app.request('/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    const doc = await res.json();
    expect(doc).toEqual(JSON.parse(JSON.stringify(openApiDocument(httpRoutesFor(base), { info: { version: packageJson.version } }))));
    expect(Object.keys(doc.paths).some((p) => p.startsWith('/v1/'))).toBe(false);
    expect(doc.paths['/openapi.json'].get.security).toEqual([]);
  });

  it('documents the runtime routes when the runtime is served, and takes info and servers', async () => {
    const runtime = new SessionRuntimeService({ ...deps, host: new LiveInboxHost(), model: { step: async () => ({ content: [], continue: false }) } });
    try {
      const { app } = inboxKitHono({ services: { ...base, runtime }, openapi: { info: { title: 'Mine', version: '9.9.9' }, servers: [{ url: 'https://api.example' }] } });
      const doc = await (await app.request('/openapi.json')).json();
      expect(doc.info).toMatchObject({ title: 'Mine', version: '9.9.9' });
      expect(doc.servers).toEqual([{ url: 'https://api.example' }]);
      expect(doc.paths['/v1/awaken/sessions/{session_id}/live-inbox'].post.responses['410'].content['application/json'].schema.allOf[1])
        .toEqual({ type: 'object', properties: { error: { type: 'object', properties: { code: { enum: ['live_inbox_inactive'] } } } } });
    } finally {
      await runtime.close();
    }
  });

  it('is not served with openapi: false', async () => {
    const res = await inboxKitHono({ services: base, openapi: false }).app.request('/openapi.json');
    expect(res.status).toBe(404);
    expect((await res.json()).error.code).toBe('not_found');
  });
});
