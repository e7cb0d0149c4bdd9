/**
 * Nobody takes the demo down with connections (issue 26, platform.md "Connections and request
 * bodies"), on both HTTP adapters, on SQLite and (when configured) PostgreSQL: the demo runs in a
 * child process under a low file-descriptor limit, and 25,000 TCP connections without a key (from
 * 4 loopback addresses, each held until the server closes it) leave it alive and answering an
 * authenticated request afterwards; with a connection cap above that limit on purpose, the process
 * runs out of descriptors (`EMFILE`: what does not fit is dropped at accept) and serves on once the
 * flood ends. Counts and states only.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { credentialsOf, freshPostgresDatabase, PG_ADMIN_URL, startDemoProcess, stopDemoProcess, waitUntil, type DemoProcess } from './demo-process.js';

const ADAPTERS = ['fastify', 'hono'] as const;
const ENGINES = PG_ADMIN_URL ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const);

/**
 * Opens `total` connections to `url` (at most `width` at once, spread over `addresses`), each held
 * until the server closes it. A connection the kernel completed but dropped from a full accept
 * queue is never seen by the server (nor closed by it): the client gives up on it after 10 s
 * (`lost`).
 */
async function flood(url: string, total: number, width: number, addresses: string[]): Promise<{ opened: number; refused: number; closedByServer: number; lost: number; answered: number }> {
  const { port, hostname } = new URL(url);
  const counts = { opened: 0, refused: 0, closedByServer: 0, lost: 0, answered: 0 };
  let next = 0;
  const one = (i: number) => new Promise<void>((resolve) => {
    const socket = net.connect({ port: Number(port), host: hostname, localAddress: addresses[i % addresses.length]! });
    let lost = false;
    let connected = false;
    socket.setTimeout(10_000, () => {
      lost = true;
      socket.destroy();
    });
    socket.on('connect', () => {
      connected = true;
      counts.opened++;
    });
    socket.on('data', () => counts.answered++);
    socket.on('error', () => {});
    socket.on('close', () => {
      if (lost) counts.lost++;
      else if (!connected) counts.refused++;
      else counts.closedByServer++;
      resolve();
    });
  });
  const worker = async () => {
    while (next < total) await one(next++);
  };
  await Promise.all(Array.from({ length: width }, worker));
  return counts;
}

const ADDRESSES = Array.from({ length: 4 }, (_, i) => `127.0.0.${i + 1}`);

describe.each(ENGINES.flatMap((engine) => ADAPTERS.map((adapter) => [engine, adapter] as const)))('a connection flood (%s, %s)', (engine, adapter) => {
  let demo: DemoProcess | undefined;
  let dir: string | undefined;
  let db: { url: string; drop(): Promise<void> } | undefined;
  afterEach(async () => {
    await stopDemoProcess(demo);
    demo = undefined;
    await db?.drop();
    db = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  const start = async (env: Record<string, string>, fdLimit: number) => {
    dir = mkdtempSync(join(tmpdir(), 'inbox-kit-flood-'));
    if (engine === 'postgres') db = await freshPostgresDatabase('flood');
    demo = await startDemoProcess({
      DATA_DIR: dir, HTTP_ADAPTER: adapter, DATABASE_URL: db?.url ?? '', FIRST_REQUEST_TIMEOUT_MS: '500', LOG_LEVEL: 'error', LOG_FORMAT: 'json', ...env,
    }, { fdLimit });
    return { demo, key: credentialsOf(dir).acc_owner! };
  };
  const answers = async (url: string, key: string) => {
    // Once the flood's sockets are gone, the server answers again, with and without a key.
    let me: Response | undefined;
    await waitUntil(async () => {
      me = await fetch(`${url}/me`, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(5_000) }).catch(() => undefined);
      return me?.status === 200;
    }, 'an authenticated request to be answered after the flood', 30_000);
    expect(((await me!.json()) as { account: { id: string } }).account.id).toBe('acc_owner');
    expect((await fetch(`${url}/health`, { signal: AbortSignal.timeout(5_000) })).status).toBe(200);
  };

  it('25,000 idle sockets without a key, under a 2,048 file-descriptor limit: the process stays up and answers an authenticated request afterwards', async () => {
    const { demo: p, key } = await start({}, 2048);
    // More at once than the caps hold (70% of 2,048 in total, a quarter of that per address): most are refused at once.
    const counts = await flood(p.url, 25_000, 2_000, ADDRESSES);
    // Every socket was closed by the server (refused at the caps, or idle past its first-request
    // window), or never reached it (a full accept queue): none was answered, none left open.
    expect(counts.closedByServer + counts.refused + counts.lost).toBe(25_000);
    expect(counts.closedByServer).toBeGreaterThan(20_000);
    expect(counts.answered).toBe(0);
    expect(p.child.exitCode).toBeNull();
    expect(p.child.signalCode).toBeNull();
    await answers(p.url, key);
    expect(p.output()).not.toMatch(/EMFILE|uncaught/i);
  }, 180_000);

  it('a cap above the file-descriptor limit (on purpose): the process runs out of descriptors, stays up and serves again once the flood ends', async () => {
    const { demo: p, key } = await start({ MAX_CONNECTIONS: '10000', MAX_CONNECTIONS_PER_ADDRESS: '10000', FIRST_REQUEST_TIMEOUT_MS: '3000' }, 512);
    let peak = 0;
    const watch = setInterval(() => {
      try {
        peak = Math.max(peak, readdirSync(`/proc/${p.child.pid}/fd`).length);
      } catch {
        // not Linux, or the process is gone (the assertions below tell which)
      }
    }, 20);
    try {
      const counts = await flood(p.url, 3_000, 1_500, ADDRESSES);
      expect(counts.closedByServer + counts.refused + counts.lost).toBe(3_000);
    } finally {
      clearInterval(watch);
    }
    // It did run out: every descriptor of its limit was in use at the peak.
    expect(peak).toBeGreaterThanOrEqual(500);
    expect(p.child.exitCode).toBeNull();
    await answers(p.url, key);
    expect(p.child.exitCode).toBeNull();
    expect(p.output()).not.toMatch(/uncaught/i);
  }, 180_000);
});
