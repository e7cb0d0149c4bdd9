/**
 * On `@hono/node-server` the adapter reads a request from Node's own request (its headers object
 * and body stream, as the Fastify adapter does) instead of the web `Request` the server would build
 * in full for it; a host middleware that read the body before the mount leaves the request to the
 * web `Request`, whose body Hono kept (it was a 500 before). Both answer as the contract says.
 */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { PlatformService, ProjectInboxService, createIdGenerator, createLocalEventBus, systemClock } from '@inbox-kit/core';
import { createMemoryStore, seedTestWorld } from '@inbox-kit/core/testing';
import { Hono } from 'hono';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { inboxKitHono } from '../src/index.js';

let url = '';
let keys: Record<string, string> = {};
let close = async () => {};
const seen: string[] = [];

beforeAll(async () => {
  const deps = { store: createMemoryStore(), bus: createLocalEventBus(), clock: systemClock, ids: createIdGenerator() };
  const platform = new PlatformService(deps);
  keys = (await seedTestWorld(platform)).keys;
  const services = { platform, projectInbox: new ProjectInboxService(deps) };
  const host = new Hono();
  // A host middleware that reads the body itself before the mount.
  host.use('/read-first/*', async (c, next) => {
    if (c.req.method === 'POST') seen.push(await c.req.text());
    await next();
  });
  host.route('/direct', inboxKitHono({ services }).app);
  host.route('/read-first', inboxKitHono({ services }).app);
  const server = serve({ fetch: host.fetch, hostname: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = () => new Promise<void>((resolve) => server.close(() => resolve()));
});
afterAll(() => close());

const create = (mount: string, body: string, headers: Record<string, string> = {}) => fetch(`${url}${mount}/projects/proj_main/inbox`, {
  method: 'POST', body, headers: { authorization: `Bearer ${keys.acc_deriver}`, 'content-type': 'application/json', ...headers },
});

it.each(['/direct', '/read-first'])('creates an item under %s with the body as sent, and refuses a bad one in the envelope', async (mount) => {
  const title = `候选摘要 ${mount}`;
  const made = await create(mount, JSON.stringify({ type: 't', title, payload: { k: 'v' } }));
  expect(made.status).toBe(201);
  expect(made.headers.get('x-request-id')).toMatch(/^req_/);
  expect(await made.json()).toMatchObject({ item: { title, payload: { k: 'v' }, sender_account_id: 'acc_deriver' } });
  const bad = await create(mount, '{"type":');
  expect(bad.status).toBe(400);
  expect(await bad.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  if (mount === '/read-first') expect(seen).toEqual([JSON.stringify({ type: 't', title, payload: { k: 'v' } }), '{"type":']);
});

it('reads the headers of Node\'s request: the caller, the request id it sent, the content type', async () => {
  const res = await create('/direct', JSON.stringify({ type: 't', title: 'with an id' }), { 'x-request-id': 'req_mine_0001' });
  expect(res.status).toBe(201);
  expect(res.headers.get('x-request-id')).toBe('req_mine_0001');
  const unsupported = await create('/direct', 'type=t', { 'content-type': 'application/x-www-form-urlencoded' });
  expect(unsupported.status).toBe(415);
  const anonymous = await fetch(`${url}/direct/projects/proj_main/inbox`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
  expect(anonymous.status).toBe(401);
});
