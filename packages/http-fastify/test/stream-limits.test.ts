/**
 * The cap on event streams one caller holds open (platform.md "Per-caller bounds"), over real
 * HTTP on each engine: past `maxStreamsPerCaller` a new event stream (on any project) answers
 * 429 `too_many_streams` in the envelope; other keys are unaffected; closing a stream gives its
 * slot back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_STREAMS_PER_CALLER } from '../src/index.js';
import { engines } from './harness.js';
import { startEventsWorld, type EventsServer, type EventsWorld, type SseStream } from './events-harness.js';

describe.each(engines)('event streams per caller (%s)', (engine) => {
  let world: EventsWorld;
  let server: EventsServer;
  beforeAll(async () => {
    world = await startEventsWorld(engine);
    server = await world.startServer({ streamTiming: { heartbeatMs: 60_000, maxStreamsPerCaller: 2 } });
  });
  afterAll(async () => {
    await server?.close();
    await world?.close();
  });

  it('past the cap → 429 too_many_streams; other callers unaffected; a closed stream gives its slot back', async () => {
    expect(DEFAULT_MAX_STREAMS_PER_CALLER).toBe(16);
    const { project_id } = await world.newProject();
    const second = await world.newProject();
    const path = `/projects/${project_id}/events/stream`;
    const open: SseStream[] = [];
    open.push(await server.stream(path, { key: world.keys.acc_owner }));
    open.push(await server.stream(`/projects/${second.project_id}/events/stream`, { key: world.keys.acc_owner }));
    expect(open.map((s) => s.status)).toEqual([200, 200]);

    const refused = await server.stream(path, { key: world.keys.acc_owner });
    await refused.waitFor((s) => s.ended, 'the refusal');
    expect(refused.status).toBe(429);
    expect(refused.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(refused.body)).toMatchObject({ type: 'error', error: { type: 'rate_limit_error', code: 'too_many_streams' } });

    const other = await server.stream(path, { key: world.keys.acc_observer });
    expect(other.status).toBe(200);
    open.push(other);

    open[0]!.destroy();
    let again: SseStream | undefined;
    for (let i = 0; i < 100; i++) {
      again = await server.stream(path, { key: world.keys.acc_owner });
      if (again.status === 200) break;
      await again.waitFor((s) => s.ended, 'the refusal');
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(again!.status).toBe(200);
    open.push(again!);
    for (const s of open) s.destroy();
  });
});
