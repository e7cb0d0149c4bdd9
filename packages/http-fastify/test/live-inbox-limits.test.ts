/**
 * Live Inbox bounds over real HTTP on each engine (live-inbox.md "Limits"): past the per-inbox
 * message count or content bytes, `POST …/live-inbox` and `PUT …/live-inbox/:id` answer 409
 * `live_inbox_full` in the envelope and the inbox is unchanged; a drain (the model's next boundary)
 * or a withdraw gives the room back; the OpenAPI document lists the answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines, expectError, startHarness, type Harness } from './harness.js';
import { heldModel, type HeldModel } from './hostile-helpers.js';

const text = (t: string) => [{ type: 'text', text: t }];

describe.each(engines)('Live Inbox limits over HTTP (%s)', (engine) => {
  let h: Harness;
  let model: HeldModel;
  beforeAll(async () => {
    model = heldModel();
    h = await startHarness(engine, { model, liveInboxLimits: { maxMessages: 3, maxBytes: 2_000 } });
  });
  afterAll(async () => {
    model.release();
    await h?.close();
  });

  it('past maxMessages or maxBytes → 409 live_inbox_full (queue and replace), nothing changes; a withdraw gives room back', async () => {
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
  });

  it('the OpenAPI document lists 409 LiveInboxFull on queue and replace, not on order', async () => {
    const doc = (await h.request('GET', '/openapi.json')).body;
    const path = Object.keys(doc.paths).find((p) => p.endsWith('/live-inbox'))!;
    expect(doc.paths[path].post.responses['409']).toEqual({ $ref: '#/components/responses/LiveInboxFull' });
    expect(doc.paths[`${path}/{message_id}`].put.responses['409']).toEqual({ $ref: '#/components/responses/LiveInboxFull' });
    expect(doc.paths[`${path}/order`].put.responses['409']).toEqual({ $ref: '#/components/responses/LiveInboxOrderConflict' });
  });
});
