/**
 * The Live Inbox routes and the durable Session event routes over HTTP (`http-suites-live-inbox.ts`).
 * Data: each `run(ctx)` gets {@link LiveInboxCtx} and starts its own world with `harness()`.
 */
import { expect } from 'vitest';
import type { Store } from '../ports/store.js';
import { collectSseFrames, type SseFrame } from './http-checks-support.js';
import type { HttpSuiteCheck } from './http-suites-kit.js';
import { EV, LI, everyRoute, history, startRun, text, waitFor, type LiveInboxCtx } from './http-suites-live-inbox.js';

export const liveInboxRouteChecks: HttpSuiteCheck<LiveInboxCtx>[] = [
  {
    name: 'idle Session: GET inactive, every mutation 410 invalid_request_error',
    async run(c) {
      const { harness } = c;
      const h = await harness();
      const get = await h.call(h.keys.acc_owner!, 'GET', LI());
      expect(get).toMatchObject({ status: 200, body: { active: false, version: 0, messages: [] } });
      for (const [method, path, body] of everyRoute().slice(1, 5)) {
        const res = await h.call(h.keys.acc_owner!, method, path, body);
        expect(res.status, `${method} ${path}`).toBe(410);
        expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'live_inbox_inactive' });
      }
    },
  },

  {
    name: 'steers a running Run: queue, reorder, replace, withdraw, 404, 409; the drained message commits before the next model output', layer: 'both',
    async run(c) {
      const { harness } = c;
      const h = await harness();
      const { sent, step, run } = await startRun(h);
      expect(sent.body.data).toEqual([{
        id: expect.stringMatching(/^sevt_/), type: 'user.message', processed_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/), content: text('task'),
        session_id: 'sess_001', seq: 1, run_id: run.id, message_id: null, floor_id: expect.any(String), page_id: expect.any(String),
      }]);
      const owner = h.keys.acc_owner!;

      expect((await h.call(owner, 'GET', LI())).body).toEqual({ active: true, version: 0, messages: [] });
      expect(await h.call(owner, 'POST', LI(), { content: text('first') })).toMatchObject({ status: 200, body: { id: 1 } });
      expect(await h.call(owner, 'POST', LI(), { content: text('second') })).toMatchObject({ status: 200, body: { id: 2 } });
      expect((await h.call(owner, 'PUT', `${LI()}/order`, { order: [2, 1] })).status).toBe(204);
      expect((await h.call(owner, 'PUT', `${LI()}/1`, { content: text('first, edited') })).status).toBe(204);
      expect((await h.call(owner, 'DELETE', `${LI()}/2`)).status).toBe(204);
      const again = await h.call(owner, 'DELETE', `${LI()}/2`);
      expect(again.status).toBe(404);
      expect(again.body.error).toMatchObject({ type: 'not_found_error', code: 'live_inbox_message_not_found' });
      const snapshot = (await h.call(owner, 'GET', LI())).body;
      expect(snapshot).toEqual({ active: true, version: 5, messages: [{ id: 1, content: text('first, edited') }] });
      const stale = await h.call(owner, 'PUT', `${LI()}/order`, { order: [2, 1] });
      expect(stale.status).toBe(409);
      expect(stale.body.error).toMatchObject({ type: 'invalid_request_error', code: 'live_inbox_order_conflict' });
      expect((await h.call(owner, 'GET', LI())).body).toEqual(snapshot);

      step.reply('step zero', true);
      const next = await h.model.next();
      expect(next.transcript.at(-1)).toMatchObject({ id: `${run.id}-inbox-0`, content: text('first, edited') });
      next.reply('step one');
      await h.runtime.whenIdle('sess_001');
      const events = await history(h);
      expect(events.map((e) => `${e.type}${e.message_id ? `:${e.message_id}` : ''}`)).toEqual([
        'user.message', 'session.status_running', `agent.message:${run.id}-step-0`, `user.message:${run.id}-inbox-0`,
        `agent.message:${run.id}-step-1`, 'session.status_idle',
      ]);
      expect((await h.call(owner, 'GET', LI())).body).toEqual({ active: false, version: 0, messages: [] });
    },
  },

  {
    name: 'answers 400 for bad ids and bodies, and 413 over the body limit',
    async run(c) {
      const { harness } = c;
      const h = await harness();
      await startRun(h);
      const owner = h.keys.acc_owner!;
      const cases: [string, string, unknown?][] = [
        ['PUT', `${LI()}/abc`, { content: text('x') }],
        ['PUT', `${LI()}/1.5`, { content: text('x') }],
        ['DELETE', `${LI()}/1e3`],
        ['DELETE', `${LI()}/order`],
        ['POST', LI(), { content: [] }],
        ['POST', LI(), { content: text('x'), extra: true }],
        ['POST', LI(), { content: [{ type: 'text', text: 'x', bold: true }] }],
        ['POST', LI(), { content: [{ type: 'audio', data: 'x' }] }],
        ['POST', LI(), { content: [{ type: 'image', source: { type: 'file', path: '/etc/passwd' } }] }],
        ['PUT', `${LI()}/order`, { order: ['1'] }],
        ['POST', EV(), { events: [] }],
        ['POST', EV(), { events: [{ type: 'user.message' }] }],
        ['GET', `${EV()}?limit=0`],
      ];
      for (const [method, path, body] of cases) {
        const res = await h.call(owner, method, path, body);
        expect(res.status, `${method} ${path} ${JSON.stringify(body)}`).toBe(400);
        expect(res.body.error.type).toBe('invalid_request_error');
      }
      const big = await h.call(owner, 'POST', LI(), { content: text('x'.repeat(1_100_000)) });
      expect(big.status).toBe(413);
      expect(big.body.error.type).toBe('request_too_large');
      expect((await h.call(owner, 'GET', LI())).body).toEqual({ active: true, version: 0, messages: [] });
    },
  },

  {
    name: 'derivers and observers read (200) but get 403 permission_error on every mutation',
    async run(c) {
      const { harness } = c;
      const h = await harness();
      const { step } = await startRun(h);
      for (const who of ['acc_deriver', 'acc_observer']) {
        const key = h.keys[who]!;
        expect((await h.call(key, 'GET', LI())).status).toBe(200);
        expect((await h.call(key, 'GET', EV())).status).toBe(200);
        for (const [method, path, body] of everyRoute().filter(([m]) => m !== 'GET')) {
          const res = await h.call(key, method, path, body);
          expect(res.status, `${who} ${method} ${path}`).toBe(403);
          expect(res.body.error.type).toBe('permission_error');
        }
      }
      // A service key acting as the owner may steer.
      expect(await h.call(h.keys.service!, 'POST', LI(), { content: text('as owner') }, { 'x-account-id': 'acc_owner' })).toMatchObject({ status: 200, body: { id: 1 } });
      expect((await h.call(h.keys.service!, 'POST', LI(), { content: text('as observer') }, { 'x-account-id': 'acc_observer' })).status).toBe(403);
      step.reply('done');
      await h.model.next().then((s) => s.reply('ack'));
      await h.runtime.whenIdle('sess_001');
    },
  },

  {
    name: 'a Session outside any Project is open to every account of its workspace',
    async run(c) {
      const { harness } = c;
      const h = await harness();
      const sent = await h.call(h.keys.acc_observer!, 'POST', EV('sess_free'), { events: [{ type: 'user.message', content: text('hi') }] });
      expect(sent.status).toBe(200);
      const step = await h.model.next();
      expect(await h.call(h.keys.acc_outsider!, 'POST', LI('sess_free'), { content: text('steer') })).toMatchObject({ status: 200, body: { id: 1 } });
      expect((await h.call(h.keys.acc_deriver!, 'DELETE', `${LI('sess_free')}/1`)).status).toBe(204);
      expect((await h.call(h.keys.acc_stranger!, 'GET', LI('sess_free'))).status).toBe(404);
      step.reply('ok');
      await h.runtime.whenIdle('sess_free');
    },
  },

  {
    name: 'another workspace gets 404 not_found_error on every route and leaves no trace',
    async run(c) {
      const { harness } = c;
      const h = await harness();
      const { step } = await startRun(h);
      for (const key of [h.keys.acc_stranger!, h.keys.acc_outsider!]) {
        for (const [method, path, body] of everyRoute()) {
          const res = await h.call(key, method, path, body);
          expect(res.status, `${method} ${path}`).toBe(404);
          expect(res.body.error).toMatchObject({ type: 'not_found_error', code: 'session_not_found' });
        }
      }
      // Same answer as a Session that does not exist at all.
      expect((await h.call(h.keys.acc_owner!, 'GET', LI('sess_nope'))).body.error.code).toBe('session_not_found');
      expect((await h.call(h.keys.acc_owner!, 'GET', LI())).body).toEqual({ active: true, version: 0, messages: [] });
      expect(await h.call(h.keys.acc_owner!, 'POST', LI(), { content: text('mine') })).toMatchObject({ status: 200, body: { id: 1 } });
      expect((await history(h)).map((e) => e.type)).toEqual(['user.message', 'session.status_running']);
      expect(step.signal.aborted).toBe(false);
      step.reply('done');
      await h.model.next().then((s) => s.reply('ack'));
      await h.runtime.whenIdle('sess_001');
    },
  },

  {
    name: 'a failing Session ownership read answers 500 api_error and leaves the queue untouched',
    async run(c) {
      const { harness } = c;
      let failing = false;
      const h = await harness({
        // Every edit reads the Session's gate (a cached one would answer without a read for 1 s: platform.md "The write gate").
        sessionGateCacheTtlMs: 0,
        wrapStore: (store: Store) => new Proxy(store, {
          get(target, prop, receiver) {
            if ((prop === 'getSession' || prop === 'getSessionWithAccess' || prop === 'getSessionGate') && failing) return async () => { throw new Error('SQLITE_BUSY: secret detail'); };
            return Reflect.get(target, prop, receiver) as unknown;
          },
        }),
      });
      const { step } = await startRun(h);
      const owner = h.keys.acc_owner!;
      await h.call(owner, 'POST', LI(), { content: text('keep me') });
      const before = (await h.call(owner, 'GET', LI())).body;
      failing = true;
      for (const [method, path, body] of everyRoute().slice(0, 5)) {
        const res = await h.call(owner, method, path, body);
        expect(res.status, `${method} ${path}`).toBe(500);
        expect(res.body.error).toMatchObject({ type: 'api_error', code: 'session_ownership_unavailable' });
        expect(JSON.stringify(res.body)).not.toContain('SQLITE');
      }
      failing = false;
      expect((await h.call(owner, 'GET', LI())).body).toEqual(before);
      step.reply('done');
      await h.model.next().then((s) => s.reply('ack'));
      await h.runtime.whenIdle('sess_001');
    },
  },
];

export const sessionEventChecks: HttpSuiteCheck<LiveInboxCtx>[] = [
  {
    name: 'interrupt cancels the running Run; the queued message is committed ahead of it and reaches the next Run before the newer message',
    async run(c) {
      const { harness } = c;
      const h = await harness();
      const owner = h.keys.acc_owner!;
      const { step, run } = await startRun(h);
      expect(await h.call(owner, 'POST', LI(), { content: text('not yet consumed') })).toMatchObject({ status: 200, body: { id: 1 } });
      const interrupted = await h.call(owner, 'POST', EV(), { events: [{ type: 'user.interrupt' }] });
      expect(interrupted.status).toBe(200);
      expect(interrupted.body.data).toEqual([{
        id: expect.any(String), type: 'user.interrupt', processed_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/), session_id: 'sess_001', seq: expect.any(Number), run_id: run.id,
        message_id: null, floor_id: null, page_id: null,
      }]);
      await h.runtime.whenIdle('sess_001');
      expect(step.signal.aborted).toBe(true);
      expect((await history(h)).at(-1)).toMatchObject({ type: 'session.status_idle', run_id: run.id, stop_reason: { type: 'end_turn' }, stop_details: null, outcome: 'cancelled' });
      expect((await h.call(owner, 'POST', LI(), { content: text('late') })).status).toBe(410);

      const committed = (await history(h)).filter((e) => e.type === 'user.message' || e.type === 'user.interrupt');
      expect(committed.map((e) => [e.type, e.run_id, e.message_id, e.content ?? null])).toEqual([
        ['user.message', run.id, null, text('task')], ['user.message', null, null, text('not yet consumed')], ['user.interrupt', run.id, null, null],
      ]);

      const second = await startRun(h, 'continue');
      expect(second.run.id).not.toBe(run.id);
      expect(second.step.transcript.slice(-2).map((m) => m.content)).toEqual([text('not yet consumed'), text('continue')]);
      const events = await history(h);
      expect(events.at(-1)).toMatchObject({ type: 'session.status_running', run_id: second.run.id });
      second.step.reply('done');
      await h.runtime.whenIdle('sess_001');
    },
  },

  {
    name: 'pages committed history',
    async run(c) {
      const { harness } = c;
      const h = await harness();
      const owner = h.keys.acc_owner!;
      await h.call(owner, 'POST', EV(), { events: [{ type: 'user.interrupt' }, { type: 'user.interrupt' }, { type: 'user.interrupt' }] });
      const p1 = await h.call(owner, 'GET', `${EV()}?limit=2`);
      expect(p1.body).toMatchObject({ has_more: true, next_page: expect.any(String) });
      expect(p1.body.data.map((e: { seq: number }) => e.seq)).toEqual([1, 2]);
      const p2 = await h.call(h.keys.acc_observer!, 'GET', `${EV()}?limit=2&page=${encodeURIComponent(p1.body.next_page)}`);
      expect(p2.body).toMatchObject({ has_more: false, next_page: null });
      expect(p2.body.data.map((e: { seq: number }) => e.seq)).toEqual([3]);
    },
  },

  {
    name: 'streams stored events first, then live ones, and resumes from Last-Event-ID', layer: 'wire',
    async run(c) {
      const { harness } = c;
      const h = await harness();
      const owner = h.keys.acc_owner!;
      await h.call(owner, 'POST', EV(), { events: [{ type: 'user.interrupt' }] });

      const controller = new AbortController();
      const res = await h.fetch(`${h.base}${EV()}/stream`, { headers: { authorization: `Bearer ${h.keys.acc_observer}` }, signal: controller.signal });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/event-stream');
      const frames: SseFrame[] = [];
      const reading = collectSseFrames(res.body!, frames);
      await waitFor(() => frames.length >= 1, 'the stored event');
      expect(frames[0]).toMatchObject({ id: 1, event: 'user.interrupt', data: { seq: 1, session_id: 'sess_001' } });

      const { step, run } = await startRun(h, 'live please');
      step.reply('live answer');
      await h.runtime.whenIdle('sess_001');
      await waitFor(() => frames.some((f) => f.event === 'session.status_idle'), 'live events');
      expect(frames.map((f) => f.id)).toEqual([1, 2, 3, 4, 5]);
      expect(frames.map((f) => f.event)).toEqual(['user.interrupt', 'user.message', 'session.status_running', 'agent.message', 'session.status_idle']);
      expect(frames[3]!.data).toMatchObject({ message_id: `${run.id}-step-0`, content: text('live answer') });
      controller.abort();
      await reading;

      // Resume: only what follows the Last-Event-ID.
      const resumed = new AbortController();
      const again = await h.fetch(`${h.base}${EV()}/stream`, { headers: { authorization: `Bearer ${owner}`, 'last-event-id': '3' }, signal: resumed.signal });
      let got = '';
      try {
        for await (const chunk of again.body as unknown as AsyncIterable<Uint8Array>) {
          got += new TextDecoder().decode(chunk);
          if (got.includes('id: 5')) resumed.abort();
        }
      } catch {
        // aborted
      }
      expect(got).not.toContain('id: 3\n');
      expect(got).toContain('id: 4\n');
    },
  },
];
