/**
 * Slow and refused request bodies over raw sockets (`node:net`; platform.md "Connections and
 * request bodies"), with the adapter's body deadline set to 300 ms (`settings.bodyTimeoutMs`): a
 * body that does not arrive within the deadline is answered 408 `request_timeout` in the envelope
 * and the server closes the socket; an answer sent before the body arrived (401, 404, 413) closes
 * the socket at once; a request whose body arrived keeps its connection alive. Nothing is written
 * by a request cut short. Moved here from `@inbox-kit/http-fastify`'s `slow-bodies.test.ts`.
 */
import net from 'node:net';
import { expect } from 'vitest';
import { registerSuite, type HttpSuiteGroup } from './http-suites-kit.js';
import type { HttpConformanceOptions } from './http-conformance-checks.js';
import { startHttpWorld, type HttpWorld } from './http-world.js';

/** One raw connection: what the server sent, and a promise settled when the server closed it. */
interface RawConnection {
  socket: net.Socket;
  received(): string;
  /** Resolves once the server ended or reset the connection (the client never ends it first). */
  closedByServer: Promise<void>;
}

function connect(url: string): Promise<RawConnection> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: hostname, port: Number(port) });
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    const closedByServer = new Promise<void>((done) => {
      socket.once('end', () => done());
      socket.once('close', () => done());
    });
    socket.on('error', () => {});
    socket.once('connect', () => resolve({ socket, received: () => text, closedByServer }));
    socket.once('error', reject);
  });
}

/** Status line, head and parsed JSON body of the first response in `raw`. */
function firstResponse(raw: string): { status: number; headers: string; body: any } {
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1]);
  const [head, rest = ''] = raw.split('\r\n\r\n');
  const length = Number(/content-length: (\d+)/i.exec(head!)?.[1] ?? rest.length);
  return { status, headers: head!, body: JSON.parse(rest.slice(0, length)) };
}

const requestHead = (path: string, headers: Record<string, string>) =>
  `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;

async function waitFor(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!check()) throw new Error('condition not reached');
}

/** Slow and refused request bodies over raw sockets (see the file comment), as data: one world with a 300 ms body deadline. */
export const slowBodiesGroup: HttpSuiteGroup<{ h: HttpWorld }> = {
  name: 'slow and refused request bodies',
  layer: 'wire',
  open: async (base) => ({ ...base, h: await startHttpWorld(base.kit, { settings: { bodyTimeoutMs: 300 } }) }),
  async close(ctx) {
    await ctx?.h.close();
  },
  checks: [
    {
      name: 'an authenticated body that does not arrive in time → 408 request_timeout in the envelope, socket closed, nothing written',
      async run(ctx) {
        const { h } = ctx;
        const before = await h.worldState();
        const c = await connect(h.url);
        c.socket.write(requestHead('/projects/proj_main/inbox', {
          authorization: `Bearer ${h.keys.acc_deriver}`, 'content-type': 'application/json', 'content-length': '100000', 'x-request-id': 'req-slow-1',
        }) + '{');
        await c.closedByServer;
        const res = firstResponse(c.received());
        expect(res.status).toBe(408);
        expect(res.headers).toMatch(/connection: close/i);
        expect(res.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', code: 'request_timeout', request_id: 'req-slow-1' } });
        expect(JSON.stringify(res.body)).not.toMatch(/at .*\.(js|ts):\d+/);
        expect(await h.worldState()).toEqual(before);
        c.socket.destroy();
      },
    },

    {
      name: 'a chunked body that trickles → 408 and the socket closed',
      async run(ctx) {
        const { h } = ctx;
        const c = await connect(h.url);
        c.socket.write(requestHead('/projects/proj_main/inbox', {
          authorization: `Bearer ${h.keys.acc_deriver}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked',
        }) + '1\r\n{\r\n');
        await c.closedByServer;
        expect(firstResponse(c.received()).status).toBe(408);
        c.socket.destroy();
      },
    },

    {
      name: 'refused before the body is read (401, 404, 413) → answered at once and the socket closed, not held',
      async run(ctx) {
        const { h } = ctx;
        const cases: [Record<string, string>, string, number, string][] = [
          [{ 'content-type': 'application/json', 'content-length': '100000' }, '/projects/proj_main/inbox', 401, 'authentication_required'],
          [{ authorization: 'Bearer ik_not_a_key', 'content-type': 'application/json', 'content-length': '100000' }, '/projects/proj_main/inbox', 401, 'invalid_credentials'],
          [{ authorization: `Bearer ${h.keys.acc_deriver}`, 'content-type': 'application/json', 'content-length': '100000' }, '/no/such/route', 404, 'not_found'],
          [{ authorization: `Bearer ${h.keys.acc_deriver}`, 'content-type': 'application/json', 'content-length': String(2 * 1_048_576) }, '/projects/proj_main/inbox', 413, ''],
        ];
        for (const [headers, path, status, type] of cases) {
          const c = await connect(h.url);
          c.socket.write(requestHead(path, headers) + '{');
          await c.closedByServer;
          const res = firstResponse(c.received());
          expect(res.status, `${path} ${JSON.stringify(headers)}`).toBe(status);
          if (type) expect(res.body.error.code).toBe(type);
          expect(res.headers).toMatch(/connection: close/i);
          c.socket.destroy();
        }
      },
    },

    {
      name: 'a request whose body arrived keeps its connection alive for the next request',
      async run(ctx) {
        const { h } = ctx;
        const c = await connect(h.url);
        const body = JSON.stringify({ type: 'keep.alive' });
        const one = requestHead('/projects/proj_main/inbox', {
          authorization: `Bearer ${h.keys.acc_deriver}`, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)),
        }) + body;
        c.socket.write(one);
        await waitFor(() => (c.received().match(/HTTP\/1\.1 201/g) ?? []).length === 1);
        c.socket.write(one);
        await waitFor(() => (c.received().match(/HTTP\/1\.1 201/g) ?? []).length === 2);
        expect(c.socket.destroyed).toBe(false);
        expect(c.received()).not.toMatch(/connection: close/i);
        c.socket.destroy();
      },
    },
  ],
};

/** Slow and refused request bodies (the body deadline, and early answers closing the socket). */
export function slowBodiesSuite(kit: HttpConformanceOptions): void {
  registerSuite(kit, slowBodiesGroup);
}
