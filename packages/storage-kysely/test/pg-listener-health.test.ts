// The PostgreSQL event bus on the infrastructure deployments run on (platform.md "Many processes"):
// a listener whose backend freezes (SIGSTOP of its PostgreSQL backend, as a half-open TCP
// connection or a stuck failover looks to the client) misses its health check, reconnects and
// delivers every event committed meanwhile, in order; a listener behind PgBouncer in transaction
// mode is refused at start (the pooler drops every notification), while the writes may go through
// that pooler when the listener has its own direct connection (`listenUrl`). PgBouncer 1.18 from
// Debian (`/usr/sbin/pgbouncer`) is started here; without it those tests report themselves
// skipped (and fail in CI). Needs INBOX_KIT_TEST_PG_URL.
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BusMessage, ProjectEvent } from '@inbox-kit/core';
import { EVENT_BUS_APPLICATION_NAME, createKyselyStore, openStore, type OpenedStore, type PostgresEventBus } from '../src/index.js';
import { createPostgresEventBus, EventBusListenError, openPostgres } from '../src/entry-postgres.js';
import { PG_URL, freshPostgresDatabase, postgresUnavailable } from './helpers.js';

/** scripts/pgbouncer.mjs, loaded by URL (it is plain JavaScript outside this package). */
interface PgBouncer { url(database?: string): string; stop(): Promise<void>; version: string; log(): string }
const pgbouncerScript = pathToFileURL(fileURLToPath(new URL('../../../scripts/pgbouncer.mjs', import.meta.url))).href;
const { startPgBouncer, PGBOUNCER } = (await import(pgbouncerScript)) as {
  startPgBouncer(o: { target: string; poolMode?: string }): Promise<PgBouncer | null>;
  PGBOUNCER: string;
};

async function waitUntil(check: () => boolean | Promise<boolean>, label: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${label}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const pgUrl = PG_URL;
if (!pgUrl) {
  postgresUnavailable('PostgreSQL listener health');
} else {
  describe('postgres event bus: listener health and poolers', () => {
    let database: { url: string; drop(): Promise<void> };
    let opened: OpenedStore;
    const buses: PostgresEventBus[] = [];
    let n = 0;

    beforeAll(async () => {
      database = await freshPostgresDatabase(pgUrl);
      opened = await openStore({ databaseUrl: database.url });
      await opened.store.insertWorkspace({ id: 'ws_h', name: 'h', created_at: 1 });
      await opened.store.insertAccount({ id: 'acc_h', name: 'h', created_at: 1 }, ['ws_h']);
    });
    afterAll(async () => {
      for (const bus of buses) await bus.close();
      await opened?.close();
      await database?.drop();
    });

    const newProject = async () => {
      const id = `proj_h_${++n}`;
      await opened.store.insertProject({ id, workspace_id: 'ws_h', account_id: 'acc_h', name: id, status: 'active', created_at: 1, updated_at: 1 });
      return id;
    };
    const commitEvent = (project_id: string): Promise<ProjectEvent> => opened.store.transaction((tx) => tx.appendProjectEvent({
      id: `evt_h_${++n}`, workspace_id: 'ws_h', project_id, type: 'test.event', actor_account_id: 'acc_h', session_id: null, floor_id: null,
      page_id: null, operation_log_id: null, correlation_id: null, causation_event_id: null, visibility: 'project', source: 'api', payload: {}, created_at: Date.now(),
    }));
    const sequences = (messages: BusMessage[]) => messages.map((m) => (m.kind === 'project_event' ? m.event.sequence : m.event.seq));

    it('a frozen listener backend (SIGSTOP) misses its health check; the bus reconnects and delivers every event committed meanwhile, in order', async (ctx) => {
      const errors: unknown[] = [];
      const a = createPostgresEventBus({ url: database.url, onError: () => undefined });
      const b = createPostgresEventBus({ url: database.url, onError: (e) => errors.push(e), healthCheckIntervalMs: 200, healthCheckTimeoutMs: 400, reconnectMinMs: 20 });
      buses.push(a, b);
      await a.start();
      await b.start();
      const project_id = await newProject();
      const onB: BusMessage[] = [];
      b.subscribe(`project:${project_id}`, (m) => onB.push(m));
      a.publish({ kind: 'project_event', event: await commitEvent(project_id) });
      await waitUntil(() => onB.length === 1, 'event 1 on B');
      expect(b.listenerStats()).toMatchObject({ reconnects: 0, missedHealthChecks: 0 });

      const admin = new pg.Client({ connectionString: database.url });
      await admin.connect();
      const { rows } = await admin.query<{ pid: number }>('select pid from pg_stat_activity where application_name = $1', [`${EVENT_BUS_APPLICATION_NAME} ${b.origin}`]);
      expect(rows).toHaveLength(1);
      const pid = rows[0]!.pid;
      try {
        try {
          process.kill(pid, 'SIGSTOP');
        } catch (error) {
          const why = `cannot signal the PostgreSQL backend ${pid} (${(error as Error).message}): run the tests as the server's user or root`;
          if (process.env.CI) expect.fail(why);
          ctx.skip(why);
        }
        // The connection stays up (TCP is fine); only the missed health check can tell.
        for (let i = 0; i < 5; i++) a.publish({ kind: 'project_event', event: await commitEvent(project_id) });
        await waitUntil(() => b.listenerStats().missedHealthChecks >= 1, 'the missed health check');
        await waitUntil(() => b.listenerStats().reconnects >= 1 && b.isListening(), 'the reconnect');
        await waitUntil(() => onB.length === 6, 'events 2–6 on B after the reconnect');
        expect(sequences(onB)).toEqual([1, 2, 3, 4, 5, 6]);
        // And live delivery works on the new listener.
        a.publish({ kind: 'project_event', event: await commitEvent(project_id) });
        await waitUntil(() => onB.length === 7, 'event 7 on B');
        expect(errors.some((e) => /missed its health check/.test(String(e)))).toBe(true);
      } finally {
        try {
          process.kill(pid, 'SIGCONT');
        } catch {
          // not stopped
        }
        await admin.end();
      }
    });

    describe('behind PgBouncer', () => {
      let bouncer: PgBouncer | null = null;
      beforeAll(async () => {
        bouncer = await startPgBouncer({ target: database.url, poolMode: 'transaction' });
      });
      afterAll(async () => {
        await bouncer?.stop();
      });
      const needBouncer = (ctx: { skip(note?: string): void }): PgBouncer => {
        if (bouncer !== null) return bouncer;
        const why = `${PGBOUNCER} is not installed: the PgBouncer tests did not run (apt-get install pgbouncer)`;
        if (process.env.CI) expect.fail(why);
        ctx.skip(why);
        throw new Error('unreachable');
      };

      it('a listener through PgBouncer in transaction mode is refused at start with a message naming the pooler', async (ctx) => {
        const pooled = needBouncer(ctx).url(new URL(database.url).pathname.slice(1));
        const bus = createPostgresEventBus({ url: pooled, onError: () => undefined, healthCheckTimeoutMs: 1_000 });
        buses.push(bus);
        const error = await bus.start().then(() => undefined, (e: unknown) => e);
        expect(error).toBeInstanceOf(EventBusListenError);
        expect(String((error as Error).message)).toMatch(/transaction or statement mode.*PgBouncer/s);
        expect(bus.isListening()).toBe(false);
      });

      it('writes and notifications through the pooler, LISTEN on its own direct connection: events cross buses', async (ctx) => {
        const pooled = needBouncer(ctx).url(new URL(database.url).pathname.slice(1));
        const pooledStore = await openStore({ databaseUrl: pooled, postgres: { preparedStatements: false } });
        try {
          const a = createPostgresEventBus({ url: pooled, listenUrl: database.url, db: pooledStore.db, onError: () => undefined, healthCheckIntervalMs: 200, healthCheckTimeoutMs: 1_000 });
          // b reads through its own pool on the pooler, left at preparedStatements' default: its
          // first named read may be refused (PgBouncer 1.18 keeps no prepared statements), the pool
          // then runs unnamed and the read is retried — nothing is lost.
          const bErrors: unknown[] = [];
          const b = createPostgresEventBus({ url: pooled, listenUrl: database.url, onError: (e) => bErrors.push(e), healthCheckIntervalMs: 200, healthCheckTimeoutMs: 1_000 });
          buses.push(a, b);
          await a.start();
          await b.start();
          const project_id = await newProject();
          const onB: BusMessage[] = [];
          b.subscribe(`project:${project_id}`, (m) => onB.push(m));
          for (let i = 0; i < 5; i++) {
            const event = await pooledStore.store.transaction((tx) => tx.appendProjectEvent({
              id: `evt_hp_${++n}`, workspace_id: 'ws_h', project_id, type: 'test.event', actor_account_id: 'acc_h', session_id: null, floor_id: null,
              page_id: null, operation_log_id: null, correlation_id: null, causation_event_id: null, visibility: 'project', source: 'api', payload: {}, created_at: Date.now(),
            }));
            a.publish({ kind: 'project_event', event });
          }
          await waitUntil(() => onB.length === 5, 'five events on B');
          expect(sequences(onB)).toEqual([1, 2, 3, 4, 5]);
          // Health checks pass on the direct listener (their notifications are sent through the pooler).
          await new Promise((r) => setTimeout(r, 600));
          expect(b.listenerStats()).toMatchObject({ reconnects: 0, missedHealthChecks: 0 });
          for (const e of bErrors) expect(String((e as Error).message)).toMatch(/prepared statement/);
        } finally {
          await pooledStore.close();
        }
      });

      it('a pool left at named prepared statements through the pooler: at most one failure per connection (storage_unavailable), then every statement runs unnamed', async (ctx) => {
        const pooled = needBouncer(ctx).url(new URL(database.url).pathname.slice(1));
        const errors: Error[] = [];
        const db = openPostgres(pooled, { max: 4, onError: (e) => errors.push(e) });
        const store = createKyselyStore(db, { dialect: 'postgres' });
        const project_id = await newProject();
        try {
          const failures: unknown[] = [];
          // Rounds of four concurrent reads of compiled-once (named) statements, so the pooler
          // hands them to whichever server connection is free.
          for (let round = 0; round < 25; round++) {
            const results = await Promise.allSettled([0, 1, 2, 3].map((i) => (i % 2 === 0
              ? store.getProject('ws_h', project_id)
              : store.listProjectEvents({ project_id, after: 0, limit: 10 }))));
            for (const r of results) if (r.status === 'rejected') failures.push(r.reason);
          }
          expect(failures.length).toBeLessThanOrEqual(4);
          for (const f of failures) expect(f).toMatchObject({ code: 'storage_unavailable' });
          const notices = errors.filter((e) => /does not keep the named prepared statements/.test(e.message));
          expect(notices.length).toBe(failures.length === 0 ? 0 : 1);
          // From now on nothing fails.
          for (let i = 0; i < 40; i++) expect((await store.getProject('ws_h', project_id))?.id).toBe(project_id);
        } finally {
          await db.destroy();
        }
      });
    });
  });
}
