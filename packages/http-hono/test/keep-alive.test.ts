/**
 * Keep-alive that fits load balancers (platform.md "Connections and request bodies"): by default
 * `serveInboxKit` keeps a connection that has served a request open ≥ 65 s (72 s; `@hono/node-server`
 * alone closed it after 5 s) with the headers timeout above it, while a socket that never sends a
 * request is closed after the first-request window. Over real sockets: a served connection outlives
 * an idle one opened with it whose 6 s window passed — longer than the old 5 s.
 */
import net from 'node:net';
import { PlatformService, ProjectInboxService, createIdGenerator, createLocalEventBus, systemClock } from '@inbox-kit/core';
import { createMemoryStore } from '@inbox-kit/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveInboxKit, type InboxKitHonoServer } from '../src/index.js';

const deps = { store: createMemoryStore(), bus: createLocalEventBus(), clock: systemClock, ids: createIdGenerator() };
const services = { platform: new PlatformService(deps), projectInbox: new ProjectInboxService(deps) };

function connect(port: number): Promise<{ socket: net.Socket; closed: () => boolean; text: () => string }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let closed = false;
    let text = '';
    socket.on('data', (d) => (text += d.toString()));
    socket.on('close', () => (closed = true));
    socket.on('connect', () => resolve({ socket, closed: () => closed, text: () => text }));
  });
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (const deadline = Date.now() + 30_000; !check();) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('keep-alive on @hono/node-server', () => {
  let server: InboxKitHonoServer;
  beforeAll(async () => {
    server = await serveInboxKit({ services, connections: { firstRequestTimeoutMs: 6_000 } });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('defaults: keep-alive 72 s (≥ 65 s), headers timeout above it', async () => {
    const plain = await serveInboxKit({ services });
    try {
      expect(plain.connections.policy.keepAliveTimeoutMs).toBeGreaterThanOrEqual(65_000);
      expect(plain.connections.policy.headersTimeoutMs).toBeGreaterThan(plain.connections.policy.keepAliveTimeoutMs);
      expect(plain.connections.policy.firstRequestTimeoutMs).toBe(10_000);
    } finally {
      await plain.close();
    }
  });

  it('a served connection stays open past an idle socket\'s 6 s window (more than the old 5 s) and serves again', async () => {
    const served = await connect(server.port);
    const idle = await connect(server.port);
    served.socket.write('GET /health HTTP/1.1\r\nhost: x\r\n\r\n');
    await until(() => served.text().includes('"status":"ok"'), 'the first answer');
    await until(() => idle.closed(), 'the idle socket to be closed');
    expect(idle.text()).toBe('');
    expect(served.closed()).toBe(false);
    served.socket.write('GET /health HTTP/1.1\r\nhost: x\r\n\r\n');
    await until(() => served.text().split('"status":"ok"').length === 3, 'the second answer on the same connection');
    served.socket.destroy();
  }, 40_000);
});
