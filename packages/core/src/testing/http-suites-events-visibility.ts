/**
 * Project Events (`http-suites-events.ts`): filters, visibility per role (live and replayed),
 * nothing published by a rolled-back write, the Operation Log page. Data: `run(ctx)` gets {@link EventsCtx}.
 */
import { expect } from 'vitest';
import type { HttpSuiteCheck } from './http-suites-kit.js';
import { createItem, isInbox, openStream, range, waitUntil, type EventsCtx, type SseStream } from './http-suites-events.js';

export const filterChecks: HttpSuiteCheck<EventsCtx>[] = [
  {
    name: 'types and session_id filter the stream, replayed and live',
    async run(c) {
      const { server, world, streamPath, lastSequence } = c;
      const { project_id, session_a, session_b } = await world.newProject();
      const pre = await createItem(server, world.keys.acc_owner, project_id, { source_session_id: session_a });
      await createItem(server, world.keys.acc_owner, project_id, { source_session_id: session_b });
      const byType = await server.stream(streamPath(project_id, 'types=project_inbox.item.accepted,session.created'), { key: world.keys.acc_owner });
      const bySession = await server.stream(streamPath(project_id, `session_id=${session_a}`), { key: world.keys.acc_owner });
      const both = await server.stream(streamPath(project_id, `types=project_inbox.item.created&session_id=${session_a}`), { key: world.keys.acc_owner });
      try {
        const live = await createItem(server, world.keys.acc_owner, project_id, { source_session_id: session_a });
        await server.request('PATCH', `/projects/${project_id}/inbox/${pre.id}`, { key: world.keys.acc_owner, body: { decision: 'accept' } });
        await createItem(server, world.keys.acc_owner, project_id, { source_session_id: session_b });
        const final = await lastSequence(project_id);
        // A frame after the last matching one proves each stream has seen everything up to `final`.
        const marker = await createItem(server, world.keys.acc_owner, project_id, { source_session_id: session_a });
        await server.request('PATCH', `/projects/${project_id}/inbox/${marker.id}`, { key: world.keys.acc_owner, body: { decision: 'accept' } });
        const end = final + 2;
        await byType.waitForId(end);
        await bySession.waitForId(end);
        await both.waitForId(end - 1);

        expect(byType.frames.map((f) => [f.event, f.data.session_id])).toEqual([
          ['session.created', session_a], ['session.created', session_b], ['project_inbox.item.accepted', session_a], ['project_inbox.item.accepted', session_a],
        ]);
        expect(bySession.frames.every((f) => f.data.session_id === session_a)).toBe(true);
        expect(bySession.frames.map((f) => f.event)).toEqual([
          'session.created', 'project_inbox.item.created', 'project_inbox.item.created', 'project_inbox.item.accepted', 'project_inbox.item.created', 'project_inbox.item.accepted',
        ]);
        expect(both.frames.map((f) => f.data.payload.inbox_item_id)).toEqual([pre.id, live.id, marker.id]);
      } finally {
        for (const s of [byType, bySession, both]) s.destroy();
      }
    },
  },
];

export const visibilityChecks: HttpSuiteCheck<EventsCtx>[] = [
  {
    name: 'inbox events reach the owner and the item sender only — never observers or other derivers — live and replayed',
    async run(c) {
      const { server, world, events, streamPath, lastSequence } = c;
      const { project_id } = await world.newProject();
      const k = world.keys;
      // Replayed part: items filed before the streams open.
      const ownerItem = await createItem(server, k.acc_owner, project_id);
      const d1Old = await createItem(server, k.acc_deriver, project_id);
      const d2Old = await createItem(server, k.acc_deriver2, project_id);
      await server.request('PATCH', `/projects/${project_id}/inbox/${d1Old.id}`, { key: k.acc_owner, body: { decision: 'reject' } });

      const roles = ['acc_owner', 'acc_deriver', 'acc_deriver2', 'acc_observer'] as const;
      const streams = Object.fromEntries(await Promise.all(roles.map(async (r) => [r, await server.stream(streamPath(project_id), { key: k[r] })] as const))) as Record<typeof roles[number], SseStream>;
      try {
        // Live part.
        const d1New = await createItem(server, k.acc_deriver, project_id);
        const d2New = await createItem(server, k.acc_deriver2, project_id);
        await server.request('PATCH', `/projects/${project_id}/inbox/${d2New.id}`, { key: k.acc_owner, body: { decision: 'accept' } });
        await server.request('PATCH', `/projects/${project_id}/inbox/${d1New.id}`, { key: k.acc_owner, body: { decision: 'archive' } });
        // A non-inbox event after everything: every member sees it, so it marks the end.
        await server.request('POST', '/sessions', { key: k.acc_owner, body: { project_id, title: 'end' } });
        const final = await lastSequence(project_id);
        for (const r of roles) await streams[r].waitForId(final);

        const inboxOf = (s: SseStream) => s.frames.filter((f) => isInbox(f.event)).map((f) => `${f.event}:${f.data.payload.inbox_item_id}`);
        const all = (await events(project_id, k.acc_owner, 'limit=500')).body.items.filter((e: any) => isInbox(e.type)).map((e: any) => `${e.type}:${e.payload.inbox_item_id}`);
        expect(inboxOf(streams.acc_owner)).toEqual(all);
        expect(inboxOf(streams.acc_deriver)).toEqual([
          `project_inbox.item.created:${d1Old.id}`, `project_inbox.item.rejected:${d1Old.id}`,
          `project_inbox.item.created:${d1New.id}`, `project_inbox.item.archived:${d1New.id}`,
        ]);
        expect(inboxOf(streams.acc_deriver2)).toEqual([
          `project_inbox.item.created:${d2Old.id}`, `project_inbox.item.created:${d2New.id}`, `project_inbox.item.accepted:${d2New.id}`,
        ]);
        expect(inboxOf(streams.acc_observer)).toEqual([]);
        expect(all).toContain(`project_inbox.item.created:${ownerItem.id}`);
        // Non-inbox events reach every member, in the same order.
        const others = (s: SseStream) => s.frames.filter((f) => !isInbox(f.event)).map((f) => f.id);
        for (const r of roles) expect(others(streams[r])).toEqual(others(streams.acc_owner));

        // The history page applies the same rule; a deriver demoted to observer loses its items' events.
        const page = async (key: string) => (await events(project_id, key, 'limit=500')).body.items.filter((e: any) => isInbox(e.type)).length;
        expect(await page(k.acc_observer)).toBe(0);
        expect(await page(k.acc_deriver2)).toBe(3);
        const demote = await server.request('POST', `/projects/${project_id}/members`, { key: k.acc_owner, body: { account_id: 'acc_deriver2', role: 'observer' } });
        expect(demote.status).toBe(201);
        expect(await page(k.acc_deriver2)).toBe(0);
        const replayed = await server.stream(streamPath(project_id), { key: k.acc_deriver2 });
        try {
          await replayed.waitForId(final + 1);
          expect(replayed.frames.filter((f) => isInbox(f.event))).toEqual([]);
        } finally {
          replayed.destroy();
        }
      } finally {
        for (const r of roles) streams[r].destroy();
      }
    },
  },

  {
    name: 'a member demoted, promoted and removed while its stream is open sees exactly what each role may read from then on, and removal ends the stream',
    async run(c) {
      const { server, world, streamPath } = c;
      const { project_id } = await world.newProject();
      const k = world.keys;
      const member = (body: Record<string, string>) => server.request('POST', `/projects/${project_id}/members`, { key: k.acc_owner, body });
      const x = await createItem(server, k.acc_deriver2, project_id); // 7
      const s = await server.stream(streamPath(project_id), { key: k.acc_deriver2 });
      try {
        await s.waitForId(7);
        expect((await member({ account_id: 'acc_deriver2', role: 'observer' })).status).toBe(201); // 8
        await server.request('PATCH', `/projects/${project_id}/inbox/${x.id}`, { key: k.acc_owner, body: { decision: 'accept' } }); // 9: hidden
        // 10: an event every member reads. Frames go out in sequence order, so once 10 arrived, 9 was
        // decided while the member was still an observer (a delivery is authorised as of its send).
        expect((await member({ account_id: 'acc_deriver', role: 'observer' })).status).toBe(201);
        await s.waitForId(10);
        expect((await member({ account_id: 'acc_deriver2', role: 'deriver' })).status).toBe(201); // 11
        const y = await createItem(server, k.acc_deriver2, project_id); // 12: its own item again
        await s.waitForId(12);
        expect((await server.request('DELETE', `/projects/${project_id}/members/acc_deriver2`, { key: k.acc_owner })).status).toBe(204); // 13: ends the stream
        await s.waitFor((st) => st.ended, 'the end of the stream after the removal');
        await server.request('PATCH', `/projects/${project_id}/inbox/${y.id}`, { key: k.acc_owner, body: { decision: 'accept' } }); // 14
        expect(s.ids()).toEqual([...range(1, 8), 10, 11, 12]);
        expect(s.frames.find((f) => f.id === 12)!.data.payload.inbox_item_id).toBe(y.id);
        // The reconnection gets what a fresh request gets.
        const again = await server.stream(streamPath(project_id), { key: k.acc_deriver2, headers: { 'last-event-id': '12' } });
        await again.waitFor((st) => st.ended, 'the end of the 404 answer');
        expect(again.status).toBe(404);
        expect(JSON.parse(again.body).error.code).toBe('project_not_found');
      } finally {
        s.destroy();
      }
    },
  },
];

export const publishingChecks: HttpSuiteCheck<EventsCtx>[] = [
  {
    name: 'a rolled-back write publishes nothing; the next write takes the released sequence', layer: 'wire',
    async run(c) {
      const { h, server, world, streamPath } = c;
      const { project_id } = await world.newProject();
      const s = await server.stream(streamPath(project_id), { key: world.keys.acc_owner });
      try {
        await s.waitForId(6);
        const publishedBefore = h.published.length;
        h.failure.method = 'appendProjectEvent'; // the event row is written, then the transaction fails (a duplicate)
        const failed = await server.request('POST', `/projects/${project_id}/inbox`, { key: world.keys.acc_owner, body: { type: 'summary' } });
        h.failure.method = null;
        expect(failed.status).toBe(500);
        expect(h.published.length).toBe(publishedBefore);
        expect(await h.store.listProjectEvents({ project_id, after: 0, limit: 1000 })).toHaveLength(6); // read through the Store port

        const ok = await createItem(server, world.keys.acc_owner, project_id);
        await s.waitForId(7);
        expect(s.ids()).toEqual(range(1, 7));
        expect(s.frames.at(-1)!.data.payload.inbox_item_id).toBe(ok.id);
        expect(h.published.slice(publishedBefore).map((e) => e.sequence)).toEqual([7]);
      } finally {
        s.destroy();
      }
    },
  },
];

export const operationLogChecks: HttpSuiteCheck<EventsCtx>[] = [
  {
    name: 'the owner pages GET /operation-logs newest first; members get 403, outsiders 404', layer: 'behaviour',
    async run(c) {
      const { server, world } = c;
      const { project_id } = await world.newProject();
      for (let i = 0; i < 3; i++) await createItem(server, world.keys.acc_deriver, project_id);
      const seen: any[] = [];
      let cursor: string | null = null;
      do {
        const res: { status: number; body: any } = await server.request('GET', `/projects/${project_id}/operation-logs?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { key: world.keys.acc_owner });
        expect(res.status).toBe(200);
        expect(res.body.items.length).toBeLessThanOrEqual(2);
        seen.push(...res.body.items);
        cursor = res.body.next_cursor;
      } while (cursor);
      // project.create, 3 × member upsert, 2 × session.create, 3 × item create
      expect(seen).toHaveLength(9);
      expect(new Set(seen.map((l) => l.id)).size).toBe(9);
      const order = seen.map((l) => [l.created_at, l.id]);
      const sorted = [...order].sort((a, b) => (b[0] - a[0]) || (b[1] < a[1] ? -1 : b[1] > a[1] ? 1 : 0));
      expect(order).toEqual(sorted);
      expect(seen.filter((l) => l.action === 'project_inbox_item.create')).toHaveLength(3);
      for (const l of seen.filter((x) => x.action === 'project_inbox_item.create')) {
        expect(l.actor_account_id).toBe('acc_deriver');
        expect(l.metadata).toHaveProperty('payload_byte_count');
      }
      for (const key of [world.keys.acc_deriver, world.keys.acc_observer]) {
        const res = await server.request('GET', `/projects/${project_id}/operation-logs`, { key });
        expect(res.status).toBe(403);
      }
      for (const key of [world.keys.acc_outsider, world.keys.acc_stranger]) {
        const res = await server.request('GET', `/projects/${project_id}/operation-logs`, { key });
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('project_not_found');
      }
    },
  },
];
