/**
 * HTTP_ADAPTER=hono: the built demo serves the same API on `@inbox-kit/http-hono` (real process,
 * real socket, SQLite file): health, authentication, the Project Inbox, roles and the envelope, and
 * BODY_TIMEOUT_MS (a body that does not arrive in time → 408); an unknown adapter is refused at start. (Every route is covered by the conformance kit in http-hono.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import net from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { credentialsOf, startDemoProcess, stopDemoProcess, type DemoProcess } from './demo-process.js';

describe('HTTP_ADAPTER', () => {
  it('defaults to fastify and refuses an unknown adapter', () => {
    expect(loadConfig({}).httpAdapter).toBe('fastify');
    expect(loadConfig({ HTTP_ADAPTER: 'hono' }).httpAdapter).toBe('hono');
    expect(() => loadConfig({ HTTP_ADAPTER: 'express' })).toThrow(/HTTP_ADAPTER must be fastify or hono/);
  });
});

describe('the demo on hono', () => {
  let dataDir: string;
  let demo: DemoProcess | undefined;
  let keys: Record<string, string>;
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'inbox-kit-demo-hono-'));
    demo = await startDemoProcess({ DATA_DIR: dataDir, HTTP_ADAPTER: 'hono', DEMO_MODEL_STEP_MS: '0', BODY_TIMEOUT_MS: '300' });
    keys = credentialsOf(dataDir);
  });
  afterAll(async () => {
    await stopDemoProcess(demo);
    rmSync(dataDir, { recursive: true, force: true });
  });

  const call = async (path: string, init: RequestInit & { key?: string } = {}) => {
    const res = await fetch(`${demo!.url}${path}`, {
      ...init,
      headers: { ...(init.key ? { authorization: `Bearer ${init.key}` } : {}), ...(init.body ? { 'content-type': 'application/json' } : {}), ...init.headers },
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text === '' ? undefined : JSON.parse(text) };
  };

  it('says which adapter serves', () => {
    expect(demo!.output()).toMatch(/HTTP adapter: hono/);
  });

  it('serves the API with the same answers', async () => {
    expect((await call('/health')).body).toEqual({ status: 'ok' });
    const me = await call('/me', { key: keys.acc_owner });
    expect(me).toMatchObject({ status: 200, body: { account: { id: 'acc_owner' }, workspace_id: 'ws_demo' } });
    expect(me.headers.get('x-request-id')).toMatch(/^req_/);
    const item = await call('/projects/proj_main/inbox', { method: 'POST', key: keys.acc_deriver, body: JSON.stringify({ type: 'demo.check', title: 'On hono' }) });
    expect(item).toMatchObject({ status: 201, body: { item: { status: 'pending', title: 'On hono' } } });
    const decided = await call(`/projects/proj_main/inbox/${item.body.item.id}`, { method: 'PATCH', key: keys.acc_owner, body: JSON.stringify({ decision: 'accept' }) });
    expect(decided).toMatchObject({ status: 200, body: { item: { status: 'accepted' } } });
    const denied = await call('/projects/proj_main/inbox', { key: keys.acc_observer });
    expect(denied).toMatchObject({ status: 403, body: { type: 'error', error: { type: 'permission_error', code: 'project_inbox_read_denied' } } });
    expect(denied.body.error.request_id).toBe(denied.headers.get('x-request-id'));
    expect(await call('/nowhere')).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
  });

  it('applies BODY_TIMEOUT_MS: a body that does not arrive in time → 408 request_timeout and the socket closed', async () => {
    const { hostname, port } = new URL(demo!.url);
    const socket = net.connect({ host: hostname, port: Number(port) });
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      received += chunk;
    });
    socket.on('error', () => {});
    const closed = new Promise<void>((done) => socket.once('close', () => done()));
    socket.write(`POST /projects/proj_main/inbox HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${keys.acc_deriver}\r\n`
      + 'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{');
    await closed;
    expect(received).toMatch(/^HTTP\/1\.1 408/);
    expect(received).toMatch(/connection: close/i);
    expect(received).toContain('"code":"request_timeout"');
  });
});
