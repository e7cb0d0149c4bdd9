/**
 * Embedding with the host's own authentication (platform.md "Embedding"), as the Fastify
 * plugin's: the app's `authenticate` option (a principal → served, `null` → 401 in the envelope, a
 * throw → 500 without a stack and reported, an `InboxKitError` → its own status, a non-principal
 * → 500), the project roles still applying, and which host middleware runs on inbox-kit's routes
 * (the host's `use` before the mount does, before `authenticate`, which reads what it set; one
 * registered on another path does not). A host app on a real socket and a real SQLite file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { InboxKitError, PlatformService, ProjectInboxService, createIdGenerator, createLocalEventBus, systemClock, type Principal, type ServiceDeps } from '@inbox-kit/core';
import { openStore, type OpenedStore } from '@inbox-kit/storage-kysely';
import { Hono, type Context } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inboxKitHono, type InboxKitHonoApp } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-host-auth-'));
let opened: OpenedStore;
let kit: InboxKitHonoApp;
let server: ReturnType<typeof serve>;
let url: string;
let secret: string;
const hostMiddlewareRuns: string[] = [];
const otherMiddlewareRuns: string[] = [];
const reported: unknown[] = [];

/** The host's users (what its middleware put in `c.var.hostUser`) and what its authenticate answers. */
function hostAuthenticate(c: Context): Principal | null {
  const user = c.get('hostUser') as string | undefined;
  switch (user) {
    case undefined: return null;
    case 'crash': throw new Error('host auth backend down at /srv/secret/auth.js:12');
    case 'banned': throw new InboxKitError('permission_denied', 'Banned by the host');
    case 'broken': return { account_id: 'acc_owner' } as Principal;
    default: return { workspace_id: 'ws_host', account_id: user, key_id: `host_${user}`, key_kind: 'standard' };
  }
}

beforeAll(async () => {
  opened = await openStore({ sqliteFile: join(dir, 'host.sqlite') });
  const deps: ServiceDeps = { store: opened.store, bus: createLocalEventBus(), clock: systemClock, ids: createIdGenerator() };
  const platform = new PlatformService(deps);
  await platform.createWorkspace({ id: 'ws_host', name: 'Host' });
  await platform.createAccount({ id: 'acc_owner', name: 'Owner', workspace_ids: ['ws_host'] });
  await platform.createAccount({ id: 'acc_stranger', name: 'Stranger', workspace_ids: ['ws_host'] });
  secret = (await platform.issueApiKey({ workspace_id: 'ws_host', account_id: 'acc_owner' })).secret;
  kit = inboxKitHono({
    services: { platform, projectInbox: new ProjectInboxService(deps) }, authenticate: hostAuthenticate, loadShedding: false,
    reportError: (error) => reported.push(error),
  });
  const host = new Hono();
  host.use('*', async (c, next) => {
    hostMiddlewareRuns.push(new URL(c.req.url).pathname);
    const user = c.req.header('x-host-user');
    if (user !== undefined) c.set('hostUser' as never, user as never);
    await next();
  });
  host.use('/other/*', async (c, next) => {
    otherMiddlewareRuns.push(new URL(c.req.url).pathname);
    await next();
  });
  host.get('/hello', (c) => c.json({ hello: 'host' }));
  host.route('/inbox', kit.app);
  await new Promise<void>((resolve) => {
    server = serve({ fetch: host.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve());
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  kit?.close();
  await new Promise((resolve) => server?.close(resolve));
  await opened?.close();
  rmSync(dir, { recursive: true, force: true });
});

const as = (user: string | undefined, init: RequestInit = {}): RequestInit => ({
  ...init, headers: { ...(user !== undefined ? { 'x-host-user': user } : {}), ...(init.body ? { 'content-type': 'application/json' } : {}), ...(init.headers as Record<string, string>) },
});

describe('authenticate: the host authenticates every inbox-kit request', () => {
  it('serves the principal it answers; the project roles still apply', async () => {
    const me = await fetch(`${url}/inbox/me`, as('acc_owner'));
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ account: { id: 'acc_owner' }, workspace_id: 'ws_host' });
    const created = await fetch(`${url}/inbox/projects`, as('acc_owner', { method: 'POST', body: JSON.stringify({ name: 'Host project' }) }));
    expect(created.status).toBe(201);
    const { project } = await created.json() as { project: { id: string } };
    expect((await fetch(`${url}/inbox/projects/${project.id}`, as('acc_owner'))).status).toBe(200);
    const stranger = await fetch(`${url}/inbox/projects/${project.id}`, as('acc_stranger'));
    expect(stranger.status).toBe(404);
    expect(await stranger.json()).toMatchObject({ type: 'error', error: { code: 'project_not_found' } });
  });

  it('null → 401 authentication_required in the envelope; an inbox-kit API key is not looked at', async () => {
    for (const init of [as(undefined), as(undefined, { headers: { authorization: `Bearer ${secret}` } })]) {
      const res = await fetch(`${url}/inbox/me`, init);
      expect(res.status).toBe(401);
      expect(res.headers.get('x-request-id')).toMatch(/^req_/);
      expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error', code: 'authentication_required' } });
    }
  });

  it('a throw → 500 internal_error without a stack or its message (reported); an InboxKitError → its own status; a non-principal → 500', async () => {
    reported.length = 0;
    const crash = await fetch(`${url}/inbox/me`, as('crash'));
    expect(crash.status).toBe(500);
    const text = await crash.text();
    expect(JSON.parse(text)).toMatchObject({ type: 'error', error: { type: 'api_error', code: 'internal_error' } });
    expect(text).not.toMatch(/secret|auth\.js|at |stack/);
    expect(reported).toHaveLength(1);
    const banned = await fetch(`${url}/inbox/me`, as('banned'));
    expect(banned.status).toBe(403);
    expect(await banned.json()).toMatchObject({ error: { code: 'permission_denied', message: 'Banned by the host' } });
    const broken = await fetch(`${url}/inbox/me`, as('broken'));
    expect(broken.status).toBe(500);
    expect(await broken.json()).toMatchObject({ error: { code: 'internal_error' } });
  });

  it('public routes are not authenticated', async () => {
    expect((await fetch(`${url}/inbox/health`)).status).toBe(200);
  });
});

describe("the host's middleware on inbox-kit's routes (as the README's embedding section says)", () => {
  it("the host's use('*') before the mount runs on inbox-kit's routes (before authenticate); one on another path does not", async () => {
    hostMiddlewareRuns.length = 0;
    otherMiddlewareRuns.length = 0;
    expect((await fetch(`${url}/inbox/me`, as('acc_owner'))).status).toBe(200);
    expect((await fetch(`${url}/hello`)).status).toBe(200);
    expect(hostMiddlewareRuns).toEqual(['/inbox/me', '/hello']);
    expect(otherMiddlewareRuns).toEqual([]);
  });
});
