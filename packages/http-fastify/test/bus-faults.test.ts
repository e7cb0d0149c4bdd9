/**
 * The event bus failing after commit (project-inbox.md "Project Events and Operation Log": a push
 * failure never rolls back or hides the committed write): the write still answers 2xx with its
 * rows committed, and a stream opened before gets the event anyway — from storage, when the next
 * event arrives (catch-up) or when it reconnects with Last-Event-ID. On SQLite and, with
 * INBOX_KIT_TEST_PG_URL, PostgreSQL (PostgreSQL event bus).
 */
import type { BusMessage } from '@inbox-kit/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createItem, engines, range, startEventsWorld, type EventsServer, type EventsWorld } from './events-harness.js';

describe.each(engines)('event bus failing after commit (%s)', (engine) => {
  let world: EventsWorld;
  let server: EventsServer;
  beforeAll(async () => {
    world = await startEventsWorld(engine);
    server = await world.startServer({ streamTiming: { retryMs: 50 } });
  });
  afterAll(async () => {
    await world?.close();
  });

  /** Makes the bus throw for the next `n` Project Events (they are not delivered live). */
  function failNextPublishes(n: number): { failed: BusMessage[]; restore(): void } {
    const publish = server.bus.publish;
    const failed: BusMessage[] = [];
    let left = n;
    server.bus.publish = (message) => {
      if (message.kind === 'project_event' && left > 0) {
        left -= 1;
        failed.push(message);
        throw new Error('event bus is down');
      }
      publish(message);
    };
    return { failed, restore: () => { server.bus.publish = publish; } };
  }

  const rowsOf = async (item_id: string) => ({
    items: Number((await world.raw<{ n: string | number }>(`SELECT COUNT(*) AS n FROM project_inbox_items WHERE id = '${item_id}'`))[0]!.n),
    logs: Number((await world.raw<{ n: string | number }>(`SELECT COUNT(*) AS n FROM operation_logs WHERE target_id = '${item_id}'`))[0]!.n),
    events: Number((await world.raw<{ n: string | number }>(`SELECT COUNT(*) AS n FROM project_events WHERE operation_log_id IN (SELECT id FROM operation_logs WHERE target_id = '${item_id}')`))[0]!.n),
  });

  it('the write answers 201 with every row committed; an open stream gets the event by catch-up from storage with the next event', async () => {
    const { project_id } = await world.newProject(); // events 1–6
    const stream = await server.stream(`/projects/${project_id}/events/stream`, { key: world.keys.acc_owner });
    try {
      await stream.waitForId(6);
      const bus = failNextPublishes(1);
      let lost: any;
      try {
        lost = await createItem(server, world.keys.acc_deriver, project_id, { title: 'published to a broken bus' }); // 7
      } finally {
        bus.restore();
      }
      expect(bus.failed).toHaveLength(1);
      expect(await rowsOf(lost.id)).toEqual({ items: 1, logs: 1, events: 1 });
      const get = await server.request('GET', `/projects/${project_id}/inbox/${lost.id}`, { key: world.keys.acc_owner });
      expect(get.status).toBe(200);
      expect(get.body.item).toEqual(lost);

      const next = await createItem(server, world.keys.acc_deriver, project_id, { title: 'next' }); // 8, published
      await stream.waitForId(8);
      expect(stream.ids()).toEqual(range(1, 8));
      expect(stream.frames[6]!.data.payload).toMatchObject({ inbox_item_id: lost.id, title: 'published to a broken bus' });
      expect(stream.frames[7]!.data.payload).toMatchObject({ inbox_item_id: next.id });
    } finally {
      stream.destroy();
    }
  });

  it('a decision whose publish fails answers 200; a client that reconnects with Last-Event-ID gets the event from storage', async () => {
    const { project_id } = await world.newProject(); // 1–6
    const item = await createItem(server, world.keys.acc_deriver, project_id); // 7
    const first = await server.stream(`/projects/${project_id}/events/stream`, { key: world.keys.acc_owner });
    await first.waitForId(7);
    const bus = failNextPublishes(2);
    try {
      const decided = await server.request('PATCH', `/projects/${project_id}/inbox/${item.id}`, { key: world.keys.acc_owner, body: { decision: 'accept', note: 'ok' } }); // 8
      expect(decided.status).toBe(200);
      expect(decided.body.item.status).toBe('accepted');
      await createItem(server, world.keys.acc_owner, project_id, { title: 'also unpublished' }); // 9
    } finally {
      bus.restore();
    }
    expect(bus.failed).toHaveLength(2);
    const stored = await world.raw<{ status: string }>(`SELECT status FROM project_inbox_items WHERE id = '${item.id}'`);
    expect(stored).toEqual([{ status: 'accepted' }]);
    // Nothing reached the open stream live; it drops, and the client resumes from its last id.
    expect(first.ids()).toEqual(range(1, 7));
    first.destroy();
    const resumed = await server.stream(`/projects/${project_id}/events/stream`, { key: world.keys.acc_owner, headers: { 'last-event-id': '7' } });
    try {
      await resumed.waitForId(9);
      expect(resumed.ids()).toEqual([8, 9]);
      expect(resumed.frames.map((f) => f.event)).toEqual(['project_inbox.item.accepted', 'project_inbox.item.created']);
    } finally {
      resumed.destroy();
    }
  });
});
