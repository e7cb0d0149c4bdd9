/**
 * Graceful shutdown of the demo process (`node apps/demo/dist/main.js`, SQLite): on SIGTERM the
 * open Project Events stream ends, new connections are refused, a request already in flight still
 * completes with 201, and the process exits 0; the item it created is there after a restart.
 * In-process: `demo.close()` ends open streams (Project Events and Session events) and drains an
 * in-flight request. Needs the built demo.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStreamCount } from '@inbox-kit/http-fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { buildDemo, loadConfig } from '../src/index.js';
import {
  connectionRefused, credentialsOf, openEventStream, rawConnection, startDemoProcess, stopDemoProcess, waitUntil, type DemoProcess,
} from './demo-process.js';
import { listen } from './listen.js';

/** Sends the head of a create with `Expect: 100-continue` and half its body; returns the rest to send later. */
async function startSlowCreate(url: string, key: string, title: string) {
  const body = JSON.stringify({ type: 'summary', title });
  const half = Math.floor(body.length / 2);
  const conn = await rawConnection(url);
  conn.socket.write(
    `POST /projects/proj_main/inbox HTTP/1.1\r\nHost: demo\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n`
    + `Content-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\n\r\n`,
  );
  await waitUntil(() => conn.received().startsWith('HTTP/1.1 100'), 'the server to take the request');
  conn.socket.write(body.slice(0, half));
  return {
    finish: () => conn.socket.write(body.slice(half)),
    /** The final response: status and parsed JSON body. */
    async response(): Promise<{ status: number; body: any }> {
      await waitUntil(() => /HTTP\/1\.1 (?!100)\d{3}[^]*\r\n\r\n\{[^]*\}$/.test(conn.received()), 'the final response');
      const final = conn.received().slice(conn.received().lastIndexOf('HTTP/1.1 '));
      return { status: Number(final.slice(9, 12)), body: JSON.parse(final.slice(final.indexOf('\r\n\r\n') + 4)) };
    },
  };
}

describe('SIGTERM to the demo process', () => {
  const dirs: string[] = [];
  const processes: DemoProcess[] = [];
  afterAll(async () => {
    for (const p of processes) await stopDemoProcess(p);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('ends the open stream, refuses new connections, lets the in-flight request finish with 201, and exits 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-sigterm-'));
    dirs.push(dir);
    const p = await startDemoProcess({ DATA_DIR: dir });
    processes.push(p);
    const keys = credentialsOf(dir);

    const stream = await openEventStream(`${p.url}/projects/proj_main/events/stream`, keys.acc_owner!);
    await waitUntil(() => stream.text().includes('retry:'), 'the stream to open');
    const slow = await startSlowCreate(p.url, keys.acc_deriver!, 'in flight at SIGTERM');

    p.child.kill('SIGTERM');
    await waitUntil(() => stream.ended(), 'the server to end the open stream');
    await waitUntil(() => connectionRefused(p.url), 'new connections to be refused');
    expect(p.child.exitCode).toBeNull(); // still draining the in-flight request

    slow.finish();
    const res = await slow.response();
    expect(res.status).toBe(201);
    expect(res.body.item).toMatchObject({ type: 'summary', title: 'in flight at SIGTERM', status: 'pending' });
    expect(await p.exited).toEqual({ code: 0, signal: null });

    // The write is durable: a restarted process serves it.
    const again = await startDemoProcess({ DATA_DIR: dir });
    processes.push(again);
    expect(again.output()).not.toContain('freshly seeded');
    const get = await fetch(`${again.url}/projects/proj_main/inbox/${res.body.item.id}`, { headers: { authorization: `Bearer ${keys.acc_owner}` } });
    expect(get.status).toBe(200);
    expect(((await get.json()) as { item: unknown }).item).toEqual(res.body.item);
    await stopDemoProcess(again);
    expect(await again.exited).toEqual({ code: 0, signal: null });
  });
});

describe('demo.close() in process', () => {
  it('ends open Project Events and Session event streams and drains an in-flight request', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-close-'));
    const demo = await buildDemo(loadConfig({ DATA_DIR: dir, PORT: '0', LOG_LEVEL: 'silent' }));
    try {
      const url = await listen(demo);
      const key = demo.credentials.acc_owner!;
      const events = await openEventStream(`${url}/projects/proj_main/events/stream`, key);
      const ledger = await openEventStream(`${url}/v1/sessions/sess_001/events/stream`, key);
      await waitUntil(() => openStreamCount(demo.app) === 2, 'both streams to open');
      const slow = await startSlowCreate(url, demo.credentials.acc_deriver!, 'in flight at close');

      let closed = false;
      const closing = demo.close().then(() => {
        closed = true;
      });
      await waitUntil(() => events.ended() && ledger.ended(), 'close to end both streams');
      expect(openStreamCount(demo.app)).toBe(0);
      await waitUntil(() => connectionRefused(url), 'new connections to be refused');
      expect(closed).toBe(false);

      slow.finish();
      const res = await slow.response();
      expect(res.status).toBe(201);
      expect(res.body.item.title).toBe('in flight at close');
      await closing;
      expect(demo.bus.subscriberCount()).toBe(0);
    } finally {
      await demo.close().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
