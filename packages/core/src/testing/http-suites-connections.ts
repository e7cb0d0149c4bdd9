/**
 * The connection policy over raw sockets (platform.md "Connections and request bodies"): a socket
 * that sends no request is closed once its first-request window passes, while a connection that
 * has served a request stays open for the next one (keep-alive); sockets past the per-address cap
 * are closed at once while another address is served; past the total cap too. States and counts
 * only: each check waits for the server to do what it must (polling), never for a fixed time.
 */
import net from 'node:net';
import { expect } from 'vitest';
import { registerSuite, type HttpSuiteBase, type HttpSuiteGroup } from './http-suites-kit.js';
import type { HttpConformanceOptions } from './http-conformance-checks.js';
import { parseRawResponse, rawRequest } from './http-raw.js';
import { startHttpWorld, type HttpWorld } from './http-world.js';

/** A raw client socket and what became of it. */
interface Probe {
  socket: net.Socket;
  closed: boolean;
  received: string;
}

function connect(url: string, localAddress?: string): Promise<Probe> {
  const { port, hostname } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port: Number(port), host: hostname, ...(localAddress ? { localAddress } : {}) });
    const probe: Probe = { socket, closed: false, received: '' };
    socket.on('data', (d) => {
      probe.received += d.toString('utf8');
    });
    socket.on('close', () => {
      probe.closed = true;
    });
    socket.on('error', () => {});
    socket.once('connect', () => resolve(probe));
    socket.once('error', reject);
  });
}

async function until(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !check();) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Sends one keep-alive request on `probe` and waits for its whole answer. */
async function ask(probe: Probe, path: string, host: string): Promise<number> {
  probe.received = '';
  probe.socket.write(`GET ${path} HTTP/1.1\r\nhost: ${host}\r\n\r\n`);
  await until(() => {
    const cut = probe.received.indexOf('\r\n\r\n');
    if (cut < 0) return false;
    const length = /content-length:\s*(\d+)/i.exec(probe.received.slice(0, cut))?.[1];
    return length !== undefined && Buffer.byteLength(probe.received.slice(cut + 4)) >= Number(length);
  }, `the answer to GET ${path}`);
  return parseRawResponse(probe.received).status;
}

/** Starts a world with `settings`, runs `run` on it, and stops it whatever happened. */
async function within(kit: HttpConformanceOptions, settings: NonNullable<Parameters<typeof startHttpWorld>[1]>['settings'], run: (h: HttpWorld) => Promise<void>): Promise<void> {
  const h = await startHttpWorld(kit, { settings });
  try {
    await run(h);
  } finally {
    await h.close();
  }
}

/** The connection policy over raw sockets, as data: each check on a world of its own settings. */
export const connectionsGroup: HttpSuiteGroup<HttpSuiteBase> = {
  name: 'the connection policy over raw sockets',
  layer: 'wire',
  checks: [
    {
      name: 'idle sockets that send no request are closed after the first-request window; a connection that served one stays open and serves again',
      run: (c: HttpSuiteBase) => within(c.kit, { connections: { firstRequestTimeoutMs: 300 } }, async (h) => {
      const host = new URL(h.url).host;
      const served = await connect(h.url);
      expect(await ask(served, '/health', host)).toBe(200);
      const idle = await Promise.all(Array.from({ length: 50 }, () => connect(h.url)));
      await until(() => idle.every((p) => p.closed), 'the server to close every idle socket');
      expect(idle.filter((p) => p.received !== '').length, 'closed without an answer').toBe(0);
      // The served connection outlived the idle ones opened after it: it is kept alive, and serves again.
      expect(served.closed).toBe(false);
      expect(await ask(served, '/health', host)).toBe(200);
      served.socket.destroy();
    }),
    },

    {
      name: 'past the per-address cap new sockets are closed at once; another address is served',
      run: (c: HttpSuiteBase) => within(c.kit, { connections: { maxConnectionsPerAddress: 5, firstRequestTimeoutMs: 60_000 } }, async (h) => {
      const probes: Probe[] = [];
      try {
        for (let i = 0; i < 10; i++) probes.push(await connect(h.url));
        await until(() => probes.filter((p) => p.closed).length >= 5, 'the sockets over the cap to close');
        expect(probes.filter((p) => p.closed).length).toBe(5);
        const other = await rawRequest(h.url, { method: 'GET', path: '/me', localAddress: '127.0.0.2', headers: { authorization: `Bearer ${h.keys.acc_owner}` } });
        expect(other.status, other.text).toBe(200);
        // The address itself is served again once its sockets close.
        for (const p of probes) p.socket.destroy();
        await until(() => probes.every((p) => p.closed), 'our sockets to close');
        let again = await rawRequest(h.url, { method: 'GET', path: '/health' }).catch(() => undefined);
        for (const deadline = Date.now() + 10_000; again?.status !== 200 && Date.now() < deadline;) again = await rawRequest(h.url, { method: 'GET', path: '/health' }).catch(() => undefined);
        expect(again?.status).toBe(200);
      } finally {
        for (const p of probes) p.socket.destroy();
      }
    }),
    },

    {
      name: 'past the total cap new sockets are closed at once; an open connection still serves',
      run: (c: HttpSuiteBase) => within(c.kit, { connections: { maxConnections: 8, maxConnectionsPerAddress: 8, firstRequestTimeoutMs: 60_000 } }, async (h) => {
      const host = new URL(h.url).host;
      const probes: Probe[] = [];
      try {
        const first = await connect(h.url);
        probes.push(first);
        expect(await ask(first, '/health', host)).toBe(200);
        for (let i = 0; i < 11; i++) probes.push(await connect(h.url, i % 2 === 0 ? '127.0.0.2' : '127.0.0.3'));
        await until(() => probes.filter((p) => p.closed).length >= 4, 'the sockets over the total cap to close');
        expect(probes.filter((p) => p.closed).length).toBe(4);
        expect(first.closed).toBe(false);
        expect(await ask(first, '/health', host)).toBe(200);
      } finally {
        for (const p of probes) p.socket.destroy();
      }
    }),
    },
  ],
};

/** The connection policy of the adapter's server. */
export function connectionsSuite(kit: HttpConformanceOptions): void {
  registerSuite(kit, connectionsGroup);
}
