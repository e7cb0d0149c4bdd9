/** Tests of the SSE consumer: frame parsing, reconnect with Last-Event-ID, retry hints, abort. */
import { describe, expect, it, vi } from 'vitest';
import { createClient, InboxKitApiError, type ProjectEvent } from './index.js';
import { apiError, fakeFetch, frame, sse, type Step } from '../test/fake-fetch.js';

const BASE = 'http://api.test';
const setup = (...steps: Step[]) => {
  const fake = fakeFetch(...steps);
  return { ...fake, client: createClient({ baseUrl: BASE, apiKey: 'sk_test', fetch: fake.fetch, retry: { retries: 1, baseDelayMs: 1 } }) };
};
const event = (sequence: number) => ({
  id: `evt_${sequence}`,
  workspace_id: 'ws_1',
  project_id: 'proj_1',
  sequence,
  type: 'project_inbox.item.created',
  actor_account_id: 'acc_1',
  session_id: null,
  floor_id: null,
  page_id: null,
  operation_log_id: null,
  correlation_id: 'req_1',
  causation_event_id: null,
  payload: { inbox_item_id: `pinbox_${sequence}` },
  visibility: 'owner',
  source: 'api',
  created_at: sequence,
});

async function take<T>(iterator: AsyncIterable<T>, n: number): Promise<T[]> {
  const out: T[] = [];
  if (n === 0) return out;
  for await (const value of iterator) {
    out.push(value);
    if (out.length >= n) break;
  }
  return out;
}

describe('SSE streams: frames and resync', () => {
  it('a session stream passes its resync frame to onResync and yields only events', async () => {
    const resync = { type: 'resync', reason: 'ahead_of_latest', requested_after: 40, latest: 12 };
    const body = sse([`id: 12\nevent: resync\ndata: ${JSON.stringify(resync)}\n\nid: 13\nevent: user.message\ndata: {"id":"sevt_13","seq":13,"type":"user.message"}\n\n`], { hang: true });
    const { client } = setup(body.response);
    const seen: unknown[] = [];
    const events = await take(client.sessions.events.stream('sess_1', { after: 40, onResync: (r) => seen.push(r) }), 1);
    expect(seen).toEqual([{ type: 'resync', reason: 'ahead_of_latest', requestedAfter: 40, latest: 12 }]);
    expect(events).toEqual([{ id: 'sevt_13', seq: 13, type: 'user.message' }]);
  });

  it('maps visibility and source; a resync frame goes to onResync (never yielded) and moves the resume position', async () => {
    const resync = { type: 'resync', reason: 'ahead_of_latest', requested_after: 151, latest: 148 };
    const first = sse([`retry: 5\n\nid: 148\nevent: resync\ndata: ${JSON.stringify(resync)}\n\n: heartbeat\n\n${frame(149, 'a', event(149))}`]);
    const second = sse([frame(150, 'a', event(150))], { hang: true });
    const { client, requests } = setup(first.response, second.response);
    const seen: unknown[] = [];
    const events = await take(client.projects.events.stream('proj_1', { after: 151, onResync: (r) => seen.push(r) }), 2);
    expect(seen).toEqual([{ type: 'resync', reason: 'ahead_of_latest', requestedAfter: 151, latest: 148 }]);
    expect(events.map((e) => [e.sequence, e.visibility, e.source])).toEqual([[149, 'owner', 'api'], [150, 'owner', 'api']]);
    expect(requests[1]!.headers.get('last-event-id')).toBe('149');
  });

  it('parses frames split across chunks, skips heartbeats, maps the data camelCase', async () => {
    const text = `: heartbeat\n\n${frame(1, 'project_inbox.item.created', event(1))}${frame(2, 'project_inbox.item.created', event(2))}`;
    const body = sse([text.slice(0, 40), text.slice(40, 300), text.slice(300)], { hang: true });
    const { client, requests } = setup(body.response);
    const events = await take(client.projects.events.stream('proj_1', { after: 0, types: ['project_inbox.item.created'], accountId: 'acc_owner' }), 2);
    expect(events.map((e) => e.sequence)).toEqual([1, 2]);
    expect(events[0]).toMatchObject({ workspaceId: 'ws_1', actorAccountId: 'acc_1', correlationId: 'req_1', payload: { inbox_item_id: 'pinbox_1' } });
    const req = requests[0]!;
    expect(req.url).toBe(`${BASE}/projects/proj_1/events/stream?after=0&types=project_inbox.item.created`);
    expect(req.method).toBe('GET');
    expect(req.headers.get('accept')).toBe('text/event-stream');
    expect(req.headers.get('authorization')).toBe('Bearer sk_test');
    expect(req.headers.get('x-account-id')).toBe('acc_owner');
    expect(req.headers.has('last-event-id')).toBe(false);
    await body.cancelled; // breaking out of the loop closed the connection
  });
});

describe('SSE streams: reconnects', () => {
  it('reconnects with Last-Event-ID after the stream ends, honouring the retry: hint', async () => {
    const first = sse([`retry: 5\n\n${frame(1, 'a', event(1))}${frame(2, 'a', event(2))}`]);
    const second = sse([frame(3, 'a', event(3))], { hang: true });
    const { client, requests } = setup(first.response, second.response);
    const started = Date.now();
    const events = await take(client.projects.events.stream('proj_1', { after: 0, types: ['a'] }), 3);
    expect(Date.now() - started).toBeLessThan(900); // the 5 ms hint, not the 1000 ms default
    expect(events.map((e) => e.sequence)).toEqual([1, 2, 3]);
    expect(requests).toHaveLength(2);
    expect(requests[1]!.headers.get('last-event-id')).toBe('2');
    expect(requests[1]!.url).toBe(`${BASE}/projects/proj_1/events/stream?types=a`); // `after` only on the first connection
  });

  it('without a retry: hint, waits the default 1000 ms before reconnecting', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const { client, requests } = setup(sse([frame(1, 'a', event(1))]).response, sse([frame(2, 'a', event(2))], { hang: true }).response);
      const pending = take(client.projects.events.stream('proj_1'), 2);
      await vi.advanceTimersByTimeAsync(999);
      expect(requests).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(1);
      expect((await pending).map((e) => e.sequence)).toEqual([1, 2]);
      expect(requests).toHaveLength(2);
      expect(requests[1]!.headers.get('last-event-id')).toBe('1');
    } finally {
      vi.useRealTimers();
    }
  });

  it('reconnects after a connection drops mid-stream (read error)', async () => {
    const encoder = new TextEncoder();
    let sent = false;
    const broken = new Response(
      new ReadableStream<Uint8Array>({
        pull(controller) {
          if (!sent) {
            sent = true;
            controller.enqueue(encoder.encode(`retry: 1\n\n${frame(7, 'a', event(7))}`));
          } else controller.error(new TypeError('terminated'));
        },
      }),
      { status: 200 },
    );
    const { client, requests } = setup(broken, sse([frame(8, 'a', event(8))], { hang: true }).response);
    const events = await take(client.projects.events.stream('proj_1'), 2);
    expect(events.map((e) => e.sequence)).toEqual([7, 8]);
    expect(requests[1]!.headers.get('last-event-id')).toBe('7');
  });
});

describe('SSE streams: abort, connect errors, the session stream', () => {
  it('abort stops the iterator cleanly and closes the connection', async () => {
    const body = sse([frame(1, 'a', event(1))], { hang: true });
    const { client, requests } = setup(body.response);
    const controller = new AbortController();
    const seen: ProjectEvent[] = [];
    const done = (async () => {
      for await (const e of client.projects.events.stream('proj_1', { signal: controller.signal })) {
        seen.push(e);
        setTimeout(() => controller.abort(), 5);
      }
      return 'returned';
    })();
    await expect(done).resolves.toBe('returned');
    await body.cancelled;
    expect(seen.map((e) => e.sequence)).toEqual([1]);
    expect(requests).toHaveLength(1);
  });

  it('an already-aborted signal yields nothing and sends nothing', async () => {
    const { client, requests } = setup();
    const controller = new AbortController();
    controller.abort();
    expect(await take(client.projects.events.stream('proj_1', { signal: controller.signal }), 1)).toEqual([]);
    expect(requests).toHaveLength(0);
  });

  it('abort during the reconnect wait stops the iterator', async () => {
    const { client, requests } = setup(sse([`retry: 60000\n\n${frame(1, 'a', event(1))}`]).response);
    const controller = new AbortController();
    const seen: number[] = [];
    for await (const e of client.projects.events.stream('proj_1', { signal: controller.signal })) {
      seen.push(e.sequence);
      setTimeout(() => controller.abort(), 20); // fires while waiting the 60 s retry
    }
    expect(seen).toEqual([1]);
    expect(requests).toHaveLength(1);
  });

  it('a non-2xx answer on connect throws the API error', async () => {
    const { client } = setup(apiError(404, 'project_not_found', 'not_found_error', 'Project not found'));
    const err = await take(client.projects.events.stream('proj_1'), 1).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InboxKitApiError);
    expect(err).toMatchObject({ status: 404, code: 'project_not_found' });
  });

  it('a network error on connect is retried (client backoff), then thrown after `retries + 1` consecutive failures', async () => {
    const ok = setup(new TypeError('fetch failed'), sse([frame(1, 'a', event(1))], { hang: true }).response);
    expect((await take(ok.client.projects.events.stream('proj_1'), 1)).map((e) => e.sequence)).toEqual([1]);
    expect(ok.requests).toHaveLength(2);

    const down = setup(new TypeError('fetch failed'), new TypeError('fetch failed again'));
    await expect(take(down.client.projects.events.stream('proj_1'), 1)).rejects.toThrow('fetch failed again');
    expect(down.requests).toHaveLength(2);
  });

  it('session stream: /v1/sessions/:id/events/stream, reconnect with Last-Event-ID', async () => {
    const wire = (seq: number) => ({ id: `sevt_${seq}`, session_id: 'sess_1', seq, type: 'agent.message', run_id: 'run_1', message_id: null, content: [{ type: 'text', text: `m${seq}` }], floor_id: null, page_id: null, processed_at: seq });
    const { client, requests } = setup(sse([`retry: 1\n\n${frame(1, 'agent.message', wire(1))}`]).response, sse([frame(2, 'agent.message', wire(2))], { hang: true }).response);
    const events = await take(client.sessions.events.stream('sess_1', { after: 'np_0' }), 2);
    expect(events).toEqual([
      { id: 'sevt_1', sessionId: 'sess_1', seq: 1, type: 'agent.message', runId: 'run_1', messageId: null, content: [{ type: 'text', text: 'm1' }], floorId: null, pageId: null, processedAt: 1 },
      { id: 'sevt_2', sessionId: 'sess_1', seq: 2, type: 'agent.message', runId: 'run_1', messageId: null, content: [{ type: 'text', text: 'm2' }], floorId: null, pageId: null, processedAt: 2 },
    ]);
    expect(requests[0]!.url).toBe(`${BASE}/v1/sessions/sess_1/events/stream?after=np_0`);
    expect(requests[1]!.url).toBe(`${BASE}/v1/sessions/sess_1/events/stream`);
    expect(requests[1]!.headers.get('last-event-id')).toBe('1');
  });
});
