/**
 * Two demo server PROCESSES (`node apps/demo/dist/main.js`) on one fresh PostgreSQL database: each
 * sees the other's Project Events on its live streams, in order, with no gap or duplicate, within
 * the deadline; visibility holds across processes; and killing their LISTEN connections
 * (`pg_terminate_backend`) loses nothing. Spec: platform.md "Project Events" ("With PostgreSQL,
 * events committed by one server process reach the streams held by every other process"),
 * ARCHITECTURE.md "Stream events".
 *
 * Needs the built demo (`pnpm exec turbo run build`; `pnpm test` builds first) and
 * INBOX_KIT_TEST_PG_URL (without it one test says so and fails in CI — never a silent skip).
 */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  PG_ADMIN_URL, credentialsOf, freshPostgresDatabase, openEventStream, startDemoProcess, stopDemoProcess, type DemoProcess,
} from './demo-process.js';

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

if (!PG_ADMIN_URL) {
  describe('two demo processes on one PostgreSQL', () => {
    it('PostgreSQL is available (INBOX_KIT_TEST_PG_URL)', (ctx) => {
      const why = 'INBOX_KIT_TEST_PG_URL is not set: cross-process Project Events were not tested. '
        + 'Start a server with `node scripts/postgres.mjs` and export the URL it prints.';
      if (process.env.CI) expect.fail(why);
      ctx.skip(why); // counted as skipped, not passed
    });
  });
} else {
  describe('two demo processes on one PostgreSQL', () => {
    const dirs: string[] = [];
    let database: { url: string; drop(): Promise<void> } | undefined;
    let dbUrl: string;
    let p1: DemoProcess | undefined;
    let p2: DemoProcess | undefined;
    let keys: Record<string, string>;

    beforeAll(async () => {
      database = await freshPostgresDatabase('inbox_kit_proc');
      dbUrl = database.url;
      const dir1 = mkdtempSync(join(tmpdir(), 'inbox-kit-proc1-'));
      const dir2 = mkdtempSync(join(tmpdir(), 'inbox-kit-proc2-'));
      dirs.push(dir1, dir2);
      // The first process seeds the database and writes the keys to its DATA_DIR; the second one
      // finds the database seeded and reads the same keys (copied, as a second machine would get them).
      p1 = await startDemoProcess({ DATABASE_URL: dbUrl, DATA_DIR: dir1 });
      expect(p1.output()).toContain('postgres, freshly seeded');
      copyFileSync(join(dir1, 'credentials.json'), join(dir2, 'credentials.json'));
      p2 = await startDemoProcess({ DATABASE_URL: dbUrl, DATA_DIR: dir2 });
      expect(p2.output()).not.toContain('freshly seeded');
      keys = credentialsOf(dir1);
    });

    afterAll(async () => {
      await Promise.all([stopDemoProcess(p1), stopDemoProcess(p2)]);
      await database?.drop();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    });

    const createItem = async (base: string, key: string, body: Record<string, unknown> = {}) => {
      const res = await fetch(`${base}/projects/proj_main/inbox`, {
        method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'summary', title: 'from a process', payload: {}, ...body }),
      });
      if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { item: { id: string } }).item;
    };
    const lastSequence = async (base: string) => {
      let after = 0;
      for (;;) {
        const res = await fetch(`${base}/projects/proj_main/events?after=${after}&limit=500`, { headers: { authorization: `Bearer ${keys.acc_owner}` } });
        const page = (await res.json()) as { next_after: number; has_more: boolean };
        after = page.next_after;
        if (!page.has_more) return after;
      }
    };

    it('each process streams the other\'s events, in order, with no gap or duplicate', async () => {
      const s1 = await openEventStream(`${p1!.url}/projects/proj_main/events/stream`, keys.acc_owner!);
      const s2 = await openEventStream(`${p2!.url}/projects/proj_main/events/stream`, keys.acc_owner!);
      try {
        const start = await lastSequence(p1!.url);
        await s1.waitForId(start);
        await s2.waitForId(start);
        // One event on process 1 reaches the stream on process 2, and one on 2 reaches 1 (5 s deadline).
        await createItem(p1!.url, keys.acc_owner!);
        await s2.waitForId(start + 1);
        await createItem(p2!.url, keys.acc_owner!);
        await s1.waitForId(start + 2);
        // Then concurrent writers on both processes.
        await Promise.all([p1!, p1!, p2!, p2!].map(async (p) => {
          for (let i = 0; i < 10; i++) await createItem(p.url, keys.acc_owner!);
        }));
        const final = start + 42;
        expect(await lastSequence(p2!.url)).toBe(final);
        await s1.waitForId(final);
        await s2.waitForId(final);
        expect(s1.ids()).toEqual(range(1, final));
        expect(s2.ids()).toEqual(range(1, final));
        expect(s2.events.map((e) => e.data.id)).toEqual(s1.events.map((e) => e.data.id));
      } finally {
        s1.close();
        s2.close();
      }
    });

    it('visibility holds across processes: the deriver on process 2 sees only its own items\' events from process 1; the observer none', async () => {
      const start = await lastSequence(p1!.url);
      const deriver = await openEventStream(`${p2!.url}/projects/proj_main/events/stream?after=${start}`, keys.acc_deriver!);
      const observer = await openEventStream(`${p2!.url}/projects/proj_main/events/stream?after=${start}`, keys.acc_observer!);
      const owner = await openEventStream(`${p2!.url}/projects/proj_main/events/stream?after=${start}`, keys.acc_owner!);
      try {
        const mine = await createItem(p1!.url, keys.acc_deriver!);
        const ownerItem = await createItem(p1!.url, keys.acc_owner!);
        await fetch(`${p1!.url}/projects/proj_main/inbox/${mine.id}`, {
          method: 'PATCH', headers: { authorization: `Bearer ${keys.acc_owner}`, 'content-type': 'application/json' }, body: JSON.stringify({ decision: 'accept' }),
        });
        await fetch(`${p1!.url}/sessions`, {
          method: 'POST', headers: { authorization: `Bearer ${keys.acc_owner}`, 'content-type': 'application/json' },
          body: JSON.stringify({ project_id: 'proj_main', title: 'end marker' }),
        });
        const end = start + 4;
        await owner.waitForId(end);
        await deriver.waitForId(end);
        await observer.waitForId(end);
        expect(owner.ids()).toEqual(range(start + 1, end));
        expect(deriver.events.map((e) => [e.type, e.data.payload.inbox_item_id ?? null])).toEqual([
          ['project_inbox.item.created', mine.id], ['project_inbox.item.accepted', mine.id], ['session.created', null],
        ]);
        expect(observer.events.map((e) => e.type)).toEqual(['session.created']);
        expect(owner.events.some((e) => e.data.payload.inbox_item_id === ownerItem.id)).toBe(true);
      } finally {
        deriver.close();
        observer.close();
        owner.close();
      }
    });

    it('after both LISTEN connections are killed, the streams still get every event', async () => {
      const start = await lastSequence(p1!.url);
      const s1 = await openEventStream(`${p1!.url}/projects/proj_main/events/stream?after=${start}`, keys.acc_owner!);
      const s2 = await openEventStream(`${p2!.url}/projects/proj_main/events/stream?after=${start}`, keys.acc_owner!);
      try {
        await createItem(p1!.url, keys.acc_owner!);
        await s2.waitForId(start + 1);
        const admin = new pg.Client({ connectionString: dbUrl });
        await admin.connect();
        try {
          const killed = await admin.query(
            "SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'inbox-kit-bus %'",
          );
          expect(killed.rows).toEqual([{ ok: true }, { ok: true }]);
        } finally {
          await admin.end();
        }
        for (let i = 0; i < 5; i++) {
          await createItem(p1!.url, keys.acc_owner!);
          await createItem(p2!.url, keys.acc_owner!);
        }
        const final = start + 11;
        await s1.waitForId(final);
        await s2.waitForId(final);
        expect(s1.ids()).toEqual(range(start + 1, final));
        expect(s2.ids()).toEqual(range(start + 1, final));
      } finally {
        s1.close();
        s2.close();
      }
    });
  });
}
