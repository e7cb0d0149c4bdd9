/**
 * Project Events (`http-suites-events.ts`): the stream's format (headers, frames, heartbeats, HEAD,
 * 401/404) and the history page. Data: each `run(ctx)` gets {@link EventsCtx}.
 */
import { expect } from 'vitest';
import type { HttpSuiteCheck } from './http-suites-kit.js';
import { createItem, isInbox, openStream, range, waitUntil, type EventsCtx, type SseStream } from './http-suites-events.js';

export const streamFormatChecks: HttpSuiteCheck<EventsCtx>[] = [
  {
    name: 'answers text/event-stream with no-cache/no-transform, no buffering, no compression (even when gzip is accepted), a retry hint and heartbeats',
    async run(c) {
      const { server, world, streamPath } = c;
      const { project_id } = await world.newProject();
      const s = await server.stream(streamPath(project_id), { key: world.keys.acc_owner, headers: { 'accept-encoding': 'gzip, deflate, br' } });
      try {
        expect(s.status).toBe(200);
        expect(s.headers['content-type']).toMatch(/^text\/event-stream/);
        expect(s.headers['cache-control']).toBe('no-cache, no-transform');
        expect(s.headers['x-accel-buffering']).toBe('no');
        expect(s.headers['content-encoding'] ?? 'identity').toBe('identity');
        expect(s.headers['content-length']).toBeUndefined();
        expect(s.headers['x-request-id']).toMatch(/\S/);
        await s.waitFor((x) => x.retry !== undefined && x.comments.length >= 2, 'retry hint and two heartbeats');
        expect(s.retry).toBe(1234);
        expect(s.text.startsWith('retry: 1234\n\n')).toBe(true);
        // Exactly the comment line `: heartbeat` (TavernHeadless-style readers count only that line).
        expect(s.comments.every((c) => c === 'heartbeat')).toBe(true);
        expect(s.text).toContain('\n\n: heartbeat\n\n');
        expect(s.text).not.toMatch(/: heartbeat[^\n]/);
      } finally {
        s.destroy();
      }
    },
  },

  {
    name: 'every event, listed and streamed, carries visibility and source (TavernHeadless-style readers drop events without them)',
    async run(c) {
      const { server, world, events, streamPath } = c;
      const { project_id } = await world.newProject();
      await createItem(server, world.keys.acc_deriver, project_id); // 7
      const s = await server.stream(streamPath(project_id), { key: world.keys.acc_owner });
      try {
        await s.waitForId(7);
        const listed = await server.request('GET', `/projects/${project_id}/events?limit=100`, { key: world.keys.acc_owner });
        expect(listed.status).toBe(200);
        const pairs = (events: any[]) => events.map((e) => [e.sequence, e.type, e.visibility, e.source]);
        const expected = [
          [1, 'project.created', 'project', 'api'], [2, 'project.member.added', 'project', 'api'], [3, 'project.member.added', 'project', 'api'],
          [4, 'project.member.added', 'project', 'api'], [5, 'session.created', 'project', 'api'], [6, 'session.created', 'project', 'api'],
          [7, 'project_inbox.item.created', 'owner', 'api'],
        ];
        expect(pairs(listed.body.items)).toEqual(expected);
        expect(pairs(s.frames.map((f) => f.data))).toEqual(expected);
      } finally {
        s.destroy();
      }
    },
  },

  {
    name: 'a TavernHeadless-style reader (drops events without a known visibility and source, counts only `: heartbeat` lines) gets every event and the heartbeats',
    async run(c) {
      const { server, world, events, streamPath } = c;
      // What @tavern/sdk's listEvents/streamEvents/onHeartbeat accept, re-stated from the issue.
      const VISIBILITY = ['project', 'owner', 'internal'];
      const SOURCE = ['api', 'runtime_job', 'migration', 'system'];
      const accepted = (e: any) => VISIBILITY.includes(e?.visibility) && SOURCE.includes(e?.source);
      const read = (text: string) => {
        const events: any[] = [];
        let heartbeats = 0;
        for (const block of text.split('\n\n')) {
          const lines = block.split('\n');
          heartbeats += lines.filter((line) => line === ': heartbeat').length;
          const data = lines.filter((line) => line.startsWith('data:')).map((line) => line.slice(5).trim());
          if (data.length === 1) {
            const event = JSON.parse(data[0]!);
            if (accepted(event)) events.push(event);
          }
        }
        return { events, heartbeats };
      };
      const { project_id } = await world.newProject();
      await createItem(server, world.keys.acc_deriver, project_id); // 7
      const s = await server.stream(streamPath(project_id), { key: world.keys.acc_owner });
      try {
        await s.waitForId(7);
        await s.waitFor((x) => read(x.text).heartbeats >= 2, 'two `: heartbeat` lines');
        expect(read(s.text).events.map((e) => e.sequence)).toEqual(range(1, 7));
        const listed = await server.request('GET', `/projects/${project_id}/events`, { key: world.keys.acc_owner });
        expect(listed.body.items.filter(accepted).map((e: any) => e.sequence)).toEqual(range(1, 7));
      } finally {
        s.destroy();
      }
    },
  },

  {
    name: 'HEAD answers at once with the stream headers and no body, after the same access checks, and holds no socket',
    async run(c) {
      const { h, server, world, streamPath } = c;
      const { project_id } = await world.newProject();
      const before = h.subscriberCount();
      const head = await fetch(server.url + streamPath(project_id), { method: 'HEAD', headers: { authorization: `Bearer ${world.keys.acc_observer}` }, signal: AbortSignal.timeout(5_000) });
      expect(head.status).toBe(200);
      expect(head.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(head.headers.get('cache-control')).toBe('no-cache, no-transform');
      expect(head.headers.get('x-request-id')).toMatch(/\S/);
      expect(await head.text()).toBe('');
      expect(h.subscriberCount()).toBe(before);
      const denied = await fetch(server.url + streamPath(project_id), { method: 'HEAD', headers: { authorization: `Bearer ${world.keys.acc_outsider}` }, signal: AbortSignal.timeout(5_000) });
      expect(denied.status).toBe(404);
      const anonymous = await fetch(server.url + streamPath(project_id), { method: 'HEAD', signal: AbortSignal.timeout(5_000) });
      expect(anonymous.status).toBe(401);
      const malformed = await fetch(server.url + streamPath(project_id), { method: 'HEAD', headers: { authorization: `Bearer ${world.keys.acc_owner}`, 'last-event-id': 'x' }, signal: AbortSignal.timeout(5_000) });
      expect(malformed.status).toBe(400);
    },
  },

  {
    name: 'each frame is `id: <sequence>`, `event: <type>` and one `data:` line holding the event as JSON',
    async run(c) {
      const { server, world, streamPath } = c;
      const { project_id, session_a } = await world.newProject();
      const s = await server.stream(streamPath(project_id), { key: world.keys.acc_owner });
      try {
        const item = await createItem(server, world.keys.acc_deriver, project_id, { title: 'multi\nline', source_session_id: session_a });
        await s.waitForId(7);
        const frame = s.frames.find((f) => f.id === 7)!;
        expect(frame.event).toBe('project_inbox.item.created');
        expect(frame.dataLines).toHaveLength(1);
        expect(frame.data).toMatchObject({
          project_id, sequence: 7, type: 'project_inbox.item.created', actor_account_id: 'acc_deriver', session_id: session_a,
          payload: { inbox_item_id: item.id, title: 'multi\nline', sender_account_id: 'acc_deriver', status: 'pending' },
        });
        expect(frame.data.payload).not.toHaveProperty('payload'); // never the item payload
        // Replayed history comes first: 1–6 (project, members, sessions), in order.
        expect(s.ids()).toEqual(range(1, 7));
        for (const f of s.frames) {
          expect(f.dataLines).toHaveLength(1);
          expect(f.event).toBe(f.data.type);
          expect(f.id).toBe(f.data.sequence);
        }
        // Raw framing: every frame block is exactly `id:`, `event:`, `data:` lines.
        const blocks = s.text.split('\n\n').filter((b) => b.startsWith('id:'));
        for (const b of blocks) expect(b).toMatch(/^id: \d+\nevent: [^\n]+\ndata: [^\n]+$/);
      } finally {
        s.destroy();
      }
    },
  },

  {
    name: 'answers 401 without a key, 404 for a non-member, a stranger and an unknown project, 400 for a bad ?after=',
    async run(c) {
      const { h, server, world, streamPath } = c;
      const { project_id } = await world.newProject();
      const anon = await openStream(server.url, streamPath(project_id));
      expect(anon.status).toBe(401);
      for (const key of [world.keys.acc_outsider, world.keys.acc_stranger]) {
        const s = await server.stream(streamPath(project_id), { key });
        expect(s.status).toBe(404);
        expect(JSON.parse(s.body).error.code).toBe('project_not_found');
      }
      const missing = await server.stream(streamPath('proj_missing'), { key: world.keys.acc_owner });
      expect(missing.status).toBe(404);
      const bad = await server.stream(streamPath(project_id, 'after=-1'), { key: world.keys.acc_owner });
      expect(bad.status).toBe(400);
      await waitUntil(() => h.subscriberCount() === 0, 'no subscription left by refused streams');
    },
  },
];

export const historyPageChecks: HttpSuiteCheck<EventsCtx>[] = [
  {
    name: 'GET /events pages ascending by sequence, with types and session_id filters', layer: 'behaviour',
    async run(c) {
      const { server, world, events } = c;
      const { project_id, session_a, session_b } = await world.newProject();
      const a = await createItem(server, world.keys.acc_owner, project_id, { source_session_id: session_a });
      const b = await createItem(server, world.keys.acc_owner, project_id, { source_session_id: session_b });
      const decided = await server.request('PATCH', `/projects/${project_id}/inbox/${a.id}`, { key: world.keys.acc_owner, body: { decision: 'accept' } });
      expect(decided.status).toBe(200);

      const all = await events(project_id, world.keys.acc_owner, 'limit=500');
      expect(all.status).toBe(200);
      expect(all.body.items.map((e: any) => e.sequence)).toEqual(range(1, 9));
      expect(all.body).toMatchObject({ next_after: 9, has_more: false });

      const p1 = await events(project_id, world.keys.acc_owner, 'limit=4');
      expect(p1.body.items.map((e: any) => e.sequence)).toEqual([1, 2, 3, 4]);
      expect(p1.body).toMatchObject({ next_after: 4, has_more: true });
      const p2 = await events(project_id, world.keys.acc_owner, `after=${p1.body.next_after}&limit=4`);
      expect(p2.body.items.map((e: any) => e.sequence)).toEqual([5, 6, 7, 8]);
      const p3 = await events(project_id, world.keys.acc_owner, `after=${p2.body.next_after}&limit=4`);
      expect(p3.body.items.map((e: any) => e.sequence)).toEqual([9]);
      expect(p3.body.has_more).toBe(false);

      const types = await events(project_id, world.keys.acc_owner, 'types=project_inbox.item.created,project_inbox.item.accepted');
      expect(types.body.items.map((e: any) => [e.type, e.payload.inbox_item_id])).toEqual([
        ['project_inbox.item.created', a.id], ['project_inbox.item.created', b.id], ['project_inbox.item.accepted', a.id],
      ]);
      const bySession = await events(project_id, world.keys.acc_owner, `session_id=${session_b}`);
      expect(bySession.body.items.map((e: any) => e.type)).toEqual(['session.created', 'project_inbox.item.created']);
      expect(bySession.body.items.every((e: any) => e.session_id === session_b)).toBe(true);
    },
  },
];
