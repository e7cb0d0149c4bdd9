/**
 * Project Events (`http-suites-events.ts`): resume by `?after=` and `Last-Event-ID`, with no gap
 * and no duplicate across the replay → live switch. Data: each `run(ctx)` gets {@link EventsCtx}.
 */
import { expect } from 'vitest';
import type { HttpSuiteCheck } from './http-suites-kit.js';
import { createItem, isInbox, openStream, range, waitUntil, type EventsCtx, type SseStream } from './http-suites-events.js';

export const resumeChecks: HttpSuiteCheck<EventsCtx>[] = [
  {
    name: 'Last-Event-ID after a disconnect delivers exactly the missed events, then live ones',
    async run(c) {
      const { server, world, streamPath } = c;
      const { project_id } = await world.newProject();
      const first = await server.stream(streamPath(project_id), { key: world.keys.acc_owner });
      await createItem(server, world.keys.acc_owner, project_id);
      await first.waitForId(7);
      first.destroy();
      const seen = first.ids();
      expect(seen).toEqual(range(1, 7));

      for (let i = 0; i < 5; i++) await createItem(server, world.keys.acc_owner, project_id); // 8–12, missed
      const resumed = await server.stream(streamPath(project_id), { key: world.keys.acc_owner, headers: { 'last-event-id': '7' } });
      try {
        await resumed.waitForId(12);
        expect(resumed.ids()).toEqual(range(8, 12));
        await createItem(server, world.keys.acc_owner, project_id); // 13, live
        await resumed.waitForId(13);
        expect(resumed.ids()).toEqual(range(8, 13));
      } finally {
        resumed.destroy();
      }
    },
  },

  {
    name: 'with both ?after= and Last-Event-ID the later wins; a malformed Last-Event-ID is 400 in the envelope',
    async run(c) {
      const { server, world, streamPath } = c;
      const { project_id } = await world.newProject();
      for (let i = 0; i < 3; i++) await createItem(server, world.keys.acc_owner, project_id); // 7–9
      const queryLater = await server.stream(streamPath(project_id, 'after=7'), { key: world.keys.acc_owner, headers: { 'last-event-id': '2' } });
      const headerLater = await server.stream(streamPath(project_id, 'after=2'), { key: world.keys.acc_owner, headers: { 'last-event-id': '5' } });
      const byHeader = await server.stream(streamPath(project_id), { key: world.keys.acc_owner, headers: { 'last-event-id': '5' } });
      try {
        await queryLater.waitForId(9);
        await headerLater.waitForId(9);
        await byHeader.waitForId(9);
        expect(queryLater.ids()).toEqual([8, 9]);
        expect(headerLater.ids()).toEqual(range(6, 9));
        expect(byHeader.ids()).toEqual(range(6, 9));
      } finally {
        for (const s of [queryLater, headerLater, byHeader]) s.destroy();
      }
      for (const bad of ['abc', '-1', '1.5', '+3', '0x10', '9007199254740992']) {
        const refused = await server.stream(streamPath(project_id), { key: world.keys.acc_owner, headers: { 'last-event-id': bad } });
        await refused.waitFor((s) => s.ended, 'the end of the 400 answer');
        expect(refused.status, bad).toBe(400);
        expect(JSON.parse(refused.body)).toEqual({
          type: 'error',
          error: {
            type: 'invalid_request_error', code: 'validation_error', message: expect.any(String),
            details: [{ path: 'Last-Event-ID', message: 'Expected a decimal integer from 0 to 9007199254740991', code: 'invalid_resume_position' }],
            request_id: refused.headers['x-request-id'],
          },
        });
      }
    },
  },

  {
    name: 'a position after the newest event gets one resync frame carrying the newest, then everything after it, live',
    async run(c) {
      const { server, world, streamPath, lastSequence } = c;
      const { project_id } = await world.newProject(); // 1–6
      for (const [query, header] of [['after=151', undefined], [undefined, '151'], ['after=3', '151'], ['after=151', '150']] as const) {
        const latest = await lastSequence(project_id);
        const s = await server.stream(streamPath(project_id, query ?? ''), { key: world.keys.acc_owner, headers: header ? { 'last-event-id': header } : {} });
        try {
          await s.waitFor((x) => x.frames.length >= 1, 'the resync frame');
          expect(s.frames[0]).toEqual({
            id: latest, event: 'resync', dataLines: [expect.any(String)],
            data: { type: 'resync', reason: 'ahead_of_latest', requested_after: 151, latest },
          });
          const item = await createItem(server, world.keys.acc_owner, project_id);
          await s.waitForId(latest + 1);
          expect(s.ids()).toEqual([latest, latest + 1]);
          expect(s.frames[1]!.data.payload.inbox_item_id).toBe(item.id);
        } finally {
          s.destroy();
        }
      }
      // Exactly the newest position is not ahead: no resync, nothing replayed.
      const latest = await lastSequence(project_id);
      const atLatest = await server.stream(streamPath(project_id, `after=${latest}`), { key: world.keys.acc_owner });
      try {
        await createItem(server, world.keys.acc_owner, project_id);
        await atLatest.waitForId(latest + 1);
        expect(atLatest.frames.map((f) => [f.id, f.event])).toEqual([[latest + 1, 'project_inbox.item.created']]);
      } finally {
        atLatest.destroy();
      }
      // The position of another project's stream, beyond this one's newest: resync too.
      const other = await world.newProject();
      for (let i = 0; i < 3; i++) await createItem(server, world.keys.acc_owner, other.project_id);
      const fresh = await world.newProject();
      const crossed = await server.stream(streamPath(fresh.project_id), { key: world.keys.acc_owner, headers: { 'last-event-id': String(await lastSequence(other.project_id)) } });
      try {
        await crossed.waitFor((x) => x.frames.length >= 1, 'the resync frame');
        expect(crossed.frames[0]!.data).toEqual({ type: 'resync', reason: 'ahead_of_latest', requested_after: 9, latest: 6 });
      } finally {
        crossed.destroy();
      }
    },
  },

  {
    name: 'a reconnect whose URL keeps a stale after (past the newest) resumes from its Last-Event-ID: one resync in all, nothing skipped (what a browser EventSource sends)',
    async run(c) {
      const { server, world, streamPath } = c;
      const { project_id } = await world.newProject(); // 1–6
      const path = streamPath(project_id, 'after=151');
      const first = await server.stream(path, { key: world.keys.acc_owner });
      let resumeFrom: number;
      try {
        await first.waitFor((x) => x.frames.length >= 1, 'the resync frame');
        expect(first.frames[0]).toMatchObject({ id: 6, event: 'resync' });
        resumeFrom = first.frames[0]!.id!;
      } finally {
        first.destroy();
      }
      // Written while the client was away: the reconnect (same URL, Last-Event-ID of the resync) gets them.
      await createItem(server, world.keys.acc_owner, project_id); // 7
      await createItem(server, world.keys.acc_owner, project_id); // 8
      const again = await server.stream(path, { key: world.keys.acc_owner, headers: { 'last-event-id': String(resumeFrom) } });
      try {
        await again.waitForId(8);
        await createItem(server, world.keys.acc_owner, project_id); // 9, live
        await again.waitForId(9);
        expect(again.frames.map((f) => [f.id, f.event])).toEqual([[7, 'project_inbox.item.created'], [8, 'project_inbox.item.created'], [9, 'project_inbox.item.created']]);
      } finally {
        again.destroy();
      }
      // An older Last-Event-ID replays from it, with no resync either.
      const older = await server.stream(path, { key: world.keys.acc_owner, headers: { 'last-event-id': '3' } });
      try {
        await older.waitForId(9);
        expect(older.ids()).toEqual(range(4, 9));
        expect(older.frames.some((f) => f.event === 'resync')).toBe(false);
      } finally {
        older.destroy();
      }
    },
  },

  {
    name: 'no gap and no duplicate across the replay → live switch under concurrent writes, and after repeated reconnects',
    async run(c) {
      const { server, world, streamPath, lastSequence } = c;
      const { project_id } = await world.newProject();
      const total = 80;
      let written = 0;
      // Writers: 4 concurrent lanes filing items while streams connect, drop and resume.
      const writers = Promise.all(range(1, 4).map(async () => {
        while (written < total) {
          written++;
          await createItem(server, world.keys.acc_owner, project_id);
        }
      }));
      const streams: SseStream[] = [];
      // Streams opened at different moments with different cursors, while writes happen.
      for (let i = 0; i < 6; i++) {
        streams.push(await server.stream(streamPath(project_id, i % 2 ? `after=${i}` : ''), { key: world.keys.acc_owner }));
        await new Promise((r) => setTimeout(r, 5));
      }
      // A client that drops and resumes with Last-Event-ID several times during the writes.
      const hopper: number[] = [];
      let last = 0;
      for (let hop = 0; hop < 4; hop++) {
        const s = await server.stream(streamPath(project_id), { key: world.keys.acc_owner, headers: { 'last-event-id': String(last) } });
        await s.waitFor((x) => x.frames.length > 0, 'a frame on the hopping client');
        s.destroy();
        hopper.push(...s.ids());
        last = s.ids().at(-1)!;
      }
      await writers;
      const final = await lastSequence(project_id);
      expect(final).toBe(6 + total);
      const tail = await server.stream(streamPath(project_id), { key: world.keys.acc_owner, headers: { 'last-event-id': String(last) } });
      try {
        await tail.waitForId(final);
        hopper.push(...tail.ids());
        expect(hopper).toEqual(range(1, final));
        for (const [i, s] of streams.entries()) {
          await s.waitForId(final);
          expect(s.ids()).toEqual(range(i % 2 ? i + 1 : 1, final));
        }
      } finally {
        for (const s of [...streams, tail]) s.destroy();
      }
    },
  },
];
