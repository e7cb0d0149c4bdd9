/**
 * Live Inbox limits (live-inbox.md "Limits") and the per-caller cap on event streams
 * (platform.md "Per-caller bounds") over HTTP, as data (`http-suites-kit.ts`).
 */
import { expect } from 'vitest';
import type { HttpConformanceOptions } from './http-conformance-checks.js';
import { expectError, heldModel, startHttpWorld, type HeldModel, type HttpWorld } from './http-world.js';
import { registerSuite, type HttpSuiteBase, type HttpSuiteCheck, type HttpSuiteGroup } from './http-suites-kit.js';

const text = (t: string) => [{ type: 'text', text: t }];

/** An event stream held open by the suite: its status, headers, the body of a refusal, and `destroy()` to drop it. */
interface HeldStream {
  status: number;
  headers: Record<string, string>;
  /** The whole body when the answer is not a stream (read to its end), else ''. */
  body: string;
  destroy(): void;
}

async function holdStream(h: HttpWorld, path: string, key: string): Promise<HeldStream> {
  const abort = new AbortController();
  const res = await h.fetch(h.url + path, { headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' }, signal: abort.signal });
  const headers: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const body = res.status === 200 ? '' : await res.text();
  return { status: res.status, headers, body, destroy: () => abort.abort() };
}

/** A world with a held model (the Live Inbox limits). */
interface HeldWorldCtx extends HttpSuiteBase {
  h: HttpWorld;
  model: HeldModel;
}

/**
 * Live Inbox bounds: past the per-inbox message count or content bytes, `POST …/live-inbox` and
 * `PUT …/live-inbox/:id` answer 409 `live_inbox_full` in the envelope and the inbox is unchanged;
 * a withdraw gives the room back; the OpenAPI document lists the answer.
 */
export const liveInboxLimitsGroup: HttpSuiteGroup<HeldWorldCtx> = {
  name: 'Live Inbox limits over HTTP',
  async open(base) {
    const model = heldModel();
    return { ...base, model, h: await startHttpWorld(base.kit, { model, liveInboxLimits: { maxMessages: 3, maxBytes: 2_000 } }) };
  },
  async close(ctx) {
    ctx?.model.release();
    await ctx?.h.close();
  },
  checks: [
  {
    name: 'past maxMessages or maxBytes → 409 live_inbox_full (queue and replace), nothing changes; a withdraw gives room back',
    async run(c) {
      const { h, model } = c;
      const { session_id } = await h.newProject();
      const li = `/v1/awaken/sessions/${session_id}/live-inbox`;
      const sent = await h.request('POST', `/v1/sessions/${session_id}/events`, { as: 'acc_owner', body: { events: [{ type: 'user.message', content: text('task') }] } });
      expect(sent.status, sent.text).toBe(200);
      await model.waiting();

      const ids: number[] = [];
      for (const t of ['a', 'b', 'c']) {
        const res = await h.request('POST', li, { as: 'acc_owner', body: { content: text(t) } });
        expect(res.status, res.text).toBe(200);
        ids.push(res.body.id);
      }
      const before = (await h.request('GET', li, { as: 'acc_owner' })).body;
      const count = expectError(await h.request('POST', li, { as: 'acc_owner', body: { content: text('d') } }), 409, 'live_inbox_full');
      expect(count.error.details).toEqual([expect.objectContaining({ path: 'content', code: 'max_messages' })]);

      const big = expectError(await h.request('PUT', `${li}/${ids[0]}`, { as: 'acc_owner', body: { content: text('x'.repeat(2_000)) } }), 409, 'live_inbox_full');
      expect(big.error.details).toEqual([expect.objectContaining({ code: 'max_bytes' })]);
      expect((await h.request('GET', li, { as: 'acc_owner' })).body).toEqual(before);

      expect((await h.request('DELETE', `${li}/${ids[1]}`, { as: 'acc_owner' })).status).toBe(204);
      expectError(await h.request('POST', li, { as: 'acc_owner', body: { content: text('y'.repeat(2_000)) } }), 409, 'live_inbox_full');
      expect((await h.request('POST', li, { as: 'acc_owner', body: { content: text('d') } })).status).toBe(200);
    },
  },

  {
    name: 'the OpenAPI document lists 409 live_inbox_full on queue and replace, not on order (live_inbox_order_conflict there)',
    async run(c) {
      const { h } = c;
      const doc = (await h.request('GET', '/openapi.json')).body;
      const path = Object.keys(doc.paths).find((p) => p.endsWith('/live-inbox'))!;
      const codes409 = (op: any): string[] => op.responses['409'].content['application/json'].schema.allOf[1].properties.error.properties.code.enum;
      expect(codes409(doc.paths[path].post)).toContain('live_inbox_full');
      expect(codes409(doc.paths[`${path}/{message_id}`].put)).toContain('live_inbox_full');
      expect(codes409(doc.paths[`${path}/order`].put)).toContain('live_inbox_order_conflict');
      expect(codes409(doc.paths[`${path}/order`].put)).not.toContain('live_inbox_full');
    },
  },
  ],
};


/**
 * The cap on event streams one caller holds open: past `maxStreamsPerCaller` a new event stream
 * (on any project) answers 429 `too_many_streams` in the envelope; other keys are unaffected;
 * closing a stream gives its slot back.
 */
export const streamsPerCallerGroup: HttpSuiteGroup<HttpSuiteBase & { h: HttpWorld }> = {
  name: 'event streams per caller',
  layer: 'wire',
  open: async (base) => ({ ...base, h: await startHttpWorld(base.kit, { settings: { streamTiming: { heartbeatMs: 60_000, maxStreamsPerCaller: 2 } } }) }),
  async close(ctx) {
    await ctx?.h.close();
  },
  checks: [
  {
    name: 'past the cap → 429 too_many_streams; other callers unaffected; a closed stream gives its slot back',
    async run(c) {
      const { h } = c;
      const { project_id } = await h.newProject();
      const second = await h.newProject();
      const path = `/projects/${project_id}/events/stream`;
      const open: HeldStream[] = [];
      open.push(await holdStream(h, path, h.keys.acc_owner!));
      open.push(await holdStream(h, `/projects/${second.project_id}/events/stream`, h.keys.acc_owner!));
      expect(open.map((s) => s.status)).toEqual([200, 200]);

      const refused = await holdStream(h, path, h.keys.acc_owner!);
      expect(refused.status).toBe(429);
      expect(refused.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(refused.body)).toMatchObject({ type: 'error', error: { type: 'rate_limit_error', code: 'too_many_streams' } });

      const other = await holdStream(h, path, h.keys.acc_observer!);
      expect(other.status).toBe(200);
      open.push(other);

      open[0]!.destroy();
      let again: HeldStream | undefined;
      for (let i = 0; i < 100; i++) {
        again = await holdStream(h, path, h.keys.acc_owner!);
        if (again.status === 200) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(again!.status).toBe(200);
      open.push(again!);
      for (const s of open) s.destroy();
    },
  },
  ],
};

/** Registers the Live Inbox limits (see {@link liveInboxLimitsGroup}). */
export function liveInboxLimitsSuite(kit: HttpConformanceOptions): void {
  registerSuite(kit, liveInboxLimitsGroup);
}

/** Registers the per-caller cap on event streams (see {@link streamsPerCallerGroup}). */
export function streamsPerCallerSuite(kit: HttpConformanceOptions): void {
  registerSuite(kit, streamsPerCallerGroup);
}
