/**
 * Health (platform.md "Health") with PostgreSQL stopped and started again under the running demo,
 * on both HTTP adapters (two demo processes on one throw-away cluster of scripts/postgres.mjs):
 * `/health` stays 200 (liveness); `/ready` answers 503 `storage_unavailable` (reason
 * `unreachable`, `Retry-After`) while the server is down and 200 once it is back; requests that
 * need the database answer 503 `storage_unavailable` with `Retry-After` meanwhile — never a 500 —
 * and work again afterwards. And readiness of a database whose migrations are pending
 * (`migrate: false`): 503 `not_migrated` on both adapters until the migrations ran; the demo with
 * `DATABASE_MIGRATE=false` refuses such a database. The three cases share nothing and run
 * concurrently. Needs the build and the PostgreSQL binaries.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { spawn } from 'node:child_process';
import {
  createIdGenerator, createLocalEventBus, PlatformService, ProjectInboxService, systemClock,
} from '@inbox-kit/core';
import { createServer } from '@inbox-kit/http-fastify/server';
import { serveInboxKit } from '@inbox-kit/http-hono';
import { migrateToLatest, openStore } from '@inbox-kit/storage-kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { credentialsOf, MAIN, REPO_ROOT, runAdminCommand, startDemoProcess, stopDemoProcess, stopWhenFileEnds, waitUntil, type DemoProcess } from './demo-process.js';

interface ThrowAwayPostgres {
  url: string;
  halt(): Promise<void>;
  resume(): Promise<void>;
  stop(): Promise<void>;
}

/** A cluster of our own (stopping the suite's shared one would break the other tests), or null without the binaries. */
async function ownPostgres(): Promise<ThrowAwayPostgres | null> {
  const { startPostgres } = (await import(pathToFileURL(join(REPO_ROOT, 'scripts', 'postgres.mjs')).href)) as { startPostgres(): Promise<ThrowAwayPostgres | null> };
  return startPostgres();
}

/** One request: status, `Retry-After` and the envelope's `error` (or the body). */
async function call(url: string, init: RequestInit = {}) {
  const res = await fetch(url, init);
  const body = (await res.json().catch(() => undefined)) as any;
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body, error: body?.error };
}

describe.concurrent('PostgreSQL stopped and started again under the running demo', () => {
  const cleanup: Array<() => Promise<void> | void> = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  it('/ready 503 while it is down and 200 once it is back; requests 503 storage_unavailable meanwhile (Fastify and Hono)', { timeout: 120_000 }, async (ctx) => {
    const pg = await ownPostgres();
    if (pg === null) return ctx.skip('the PostgreSQL binaries are not installed');
    cleanup.push(() => pg.stop());
    const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-health-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const servers: Array<{ name: string; demo: DemoProcess }> = [];
    for (const adapter of ['fastify', 'hono']) {
      const demo = await startDemoProcess({ DATABASE_URL: pg.url, DATA_DIR: join(dir, adapter), HTTP_ADAPTER: adapter, PRINCIPAL_CACHE_TTL_MS: '200' });
      cleanup.push(() => stopDemoProcess(demo));
      servers.push({ name: adapter, demo });
    }
    const key = credentialsOf(join(dir, 'fastify')).acc_owner!;
    const auth = { authorization: `Bearer ${key}` };
    const create = (url: string) => call(`${url}/projects/proj_main/inbox`, {
      method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ type: 'health.check', title: 'while down' }),
    });
    for (const { name, demo } of servers) {
      expect(await call(`${demo.url}/ready`), name).toMatchObject({ status: 200, body: { status: 'ready' } });
      expect((await create(demo.url)).status, name).toBe(201);
    }

    await pg.halt();
    for (const { name, demo } of servers) {
      // A process that died of the outage says why (its output) instead of failing a fetch.
      if (demo.child.exitCode !== null || demo.child.signalCode !== null) throw new Error(`${name}: the demo process ended when PostgreSQL stopped:\n${demo.output()}`);
      const ready = await call(`${demo.url}/ready`).catch((error: Error) => {
        throw new Error(`${name}: ${error.message} (process ${demo.child.exitCode ?? demo.child.signalCode ?? 'running'}):\n${demo.output()}`);
      });
      expect(ready, name).toMatchObject({ status: 503, retryAfter: '5', error: { type: 'overloaded_error', code: 'storage_unavailable', details: [{ path: 'storage', code: 'unreachable' }] } });
      expect(JSON.stringify(ready.body), name).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|postgres:/);
      expect((await call(`${demo.url}/health`)).status, name).toBe(200);
      // Once the principal cache (PRINCIPAL_CACHE_TTL_MS, 200 ms here) no longer answers for the
      // key, every request needs the database: 503 with Retry-After, never a 500.
      let answer = await call(`${demo.url}/projects`, { headers: auth });
      await waitUntil(async () => {
        answer = await call(`${demo.url}/projects`, { headers: auth });
        expect([200, 503], `${name}: ${JSON.stringify(answer.body)}`).toContain(answer.status);
        return answer.status === 503;
      }, `${name}: GET /projects to answer 503`, 10_000);
      expect(answer, name).toMatchObject({ retryAfter: '5', error: { code: 'storage_unavailable', message: 'The database cannot be reached; retry later', details: [] } });
      expect(await create(demo.url), name).toMatchObject({ status: 503, retryAfter: '5', error: { code: 'storage_unavailable' } });
      expect(await call(`${demo.url}/admin/keys`, { headers: { authorization: `Bearer ${credentialsOf(join(dir, 'fastify')).admin}` } }), name)
        .toMatchObject({ status: 503, error: { code: 'storage_unavailable' } });
    }

    await pg.resume();
    for (const { name, demo } of servers) {
      await waitUntil(async () => (await call(`${demo.url}/ready`)).status === 200, `${name}: /ready to answer 200 again`, 20_000);
      expect((await call(`${demo.url}/projects`, { headers: auth })).status, name).toBe(200);
      expect((await create(demo.url)).status, name).toBe(201);
      expect(demo.child.exitCode, name).toBeNull();
    }
  });
});

describe.concurrent('readiness of a database whose migrations are pending', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('migrate: false → /ready 503 not_migrated on both adapters, 200 once the migrations ran', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-not-migrated-'));
    dirs.push(dir);
    const opened = await openStore({ sqliteFile: join(dir, 'db.sqlite'), migrate: false });
    expect(opened.migrations.pending).toContain('0010_administration');
    const deps = { store: opened.store, bus: createLocalEventBus(), clock: systemClock, ids: createIdGenerator() };
    const services = { platform: new PlatformService(deps), projectInbox: new ProjectInboxService(deps) };
    const fastify = await createServer({ services, logger: false, underPressure: false });
    await fastify.listen({ host: '127.0.0.1', port: 0 });
    const hono = await serveInboxKit({ services, hostname: '127.0.0.1', port: 0 });
    const urls = [`http://127.0.0.1:${(fastify.server.address() as { port: number }).port}`, hono.url];
    try {
      for (const url of urls) {
        const ready = await call(`${url}/ready`);
        expect(ready, url).toMatchObject({ status: 503, retryAfter: '5', error: { code: 'storage_unavailable', details: [{ code: 'not_migrated' }] } });
        expect(ready.error.message, url).toMatch(/lacks \d+ migrations of this release \(0001_initial, .*0011_session_agent_snapshots\): run the migrations/);
      }
      await migrateToLatest(opened.db);
      for (const url of urls) expect(await call(`${url}/ready`), url).toMatchObject({ status: 200, body: { status: 'ready' } });
    } finally {
      await hono.close();
      await fastify.close();
      await opened.close();
    }
  });

  it('the demo with DATABASE_MIGRATE=false refuses such a database, naming the command that migrates it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-no-migrate-'));
    dirs.push(dir);
    const child = spawn(process.execPath, [MAIN], { env: { ...process.env, DATABASE_URL: '', DATA_DIR: dir, DATABASE_MIGRATE: 'false', PORT: '0', LOG_LEVEL: 'silent' }, stdio: ['ignore', 'pipe', 'pipe'] });
    stopWhenFileEnds(child);
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const code = await new Promise<number | null>((r) => child.on('close', (c) => r(c)));
    expect(code, out).toBe(1);
    expect(out).toContain('DATABASE_MIGRATE=false: run `npm run admin -- migrate`');
    expect(out.trim().split('\n')).toHaveLength(1);
    // Migrated ahead (as before a rolling deploy), it starts.
    expect((await runAdminCommand(['migrate'], { DATA_DIR: dir })).code).toBe(0);
    const started = await startDemoProcess({ DATA_DIR: dir, DATABASE_MIGRATE: 'false' });
    try {
      expect((await call(`${started.url}/ready`)).status).toBe(200);
    } finally {
      await stopDemoProcess(started);
    }
  });
});
