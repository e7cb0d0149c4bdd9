/**
 * Every row of the Project Inbox error table over real HTTP, in the exact envelope, with nothing
 * written; malformed requests (4xx, never 500, never a hang); 500s without stacks; failing writes
 * that leave no partial rows. Spec: project-inbox.md "Error codes", platform.md "Errors". Moved from
 * `@inbox-kit/http-fastify`'s `errors.test.ts` so every adapter runs it; registered by
 * `runHttpConformance`. "Nothing written" is read through the Store port.
 */
import { afterAll, beforeAll, describe, expect} from 'vitest';
import { groupRuns, kitIt } from './http-kit.js';
import type { HttpConformanceOptions } from './http-conformance-checks.js';
import { expectError, startHttpWorld, type HttpWorld, type WorldEnvelope } from './http-world.js';

const SEED_BODY = {
  type: 'derived_output.review',
  title: '候选摘要待确认',
  payload: { derived_output_id: 'dout_001', suggested_action: 'review' },
  source_session_id: 'sess_001',
};

/** Registers the error-table, malformed-request and failing-write suites for the adapter `kit` starts. */
export function errorsSuite(kit: HttpConformanceOptions): void {
  if (!groupRuns(kit, 'behaviour')) return;
  const it = kitIt(kit, 'error table over HTTP');
  describe('error table over HTTP', () => {
    let h: HttpWorld;
    beforeAll(async () => {
      h = await startHttpWorld(kit);
    });
    afterAll(async () => {
      await h?.close();
    });

    /** Runs `fn` and checks no item, inbox log row or inbox event was written, and nothing was published. */
    async function nothingWritten(fn: () => Promise<unknown>): Promise<void> {
      const before = await h.inboxRows();
      const allEvents = (await h.worldState()).counts.events;
      const allLogs = (await h.worldState()).counts.logs;
      const published = h.published.length;
      await fn();
      expect(await h.inboxRows()).toEqual(before);
      expect((await h.worldState()).counts.events).toBe(allEvents);
      expect((await h.worldState()).counts.logs).toBe(allLogs);
      expect(h.published.length).toBe(published);
    }

    const create = (as: string, body: unknown, project = 'proj_main') => h.request('POST', `/projects/${project}/inbox`, { as, body });
    const decide = (as: string, id: string, body: unknown, project = 'proj_main') => h.request('PATCH', `/projects/${project}/inbox/${id}`, { as, body });
    async function pendingItem(as = 'acc_deriver', project = 'proj_main'): Promise<string> {
      const res = await create(as, { type: 'probe' }, project);
      expect(res.status).toBe(201);
      return res.body.item.id as string;
    }

    it('400 validation_error: bodies that do not match the schema, one detail per issue', async () => {
      const bad: unknown[] = [
        {},
        { type: '' },
        { type: '   ' },
        { type: 'x'.repeat(129) },
        { type: '😀'.repeat(129) },
        { type: 7 },
        { type: 't', title: 'x'.repeat(201) },
        { type: 't', extra: true },
        { type: 't', sourceSessionId: 'sess_001' },
        { type: 't', source_session_id: 42 },
        { type: 't', source_session_id: '' },
      ];
      await nothingWritten(async () => {
        for (const body of bad) {
          const env = expectError(await create('acc_deriver', body), 400, 'validation_error');
          expect(env.error.details.length, JSON.stringify(body)).toBeGreaterThan(0);
          for (const d of env.error.details) expect(typeof d.path === 'string' && typeof d.message === 'string').toBe(true);
        }
        const many = expectError(await create('acc_deriver', { type: '', title: 5, nope: 1 }), 400, 'validation_error');
        expect(many.error.details.length).toBeGreaterThanOrEqual(3);
      });
    });

    it('400 validation_error: lone surrogates in type or title (escaped in the JSON text)', async () => {
      await nothingWritten(async () => {
        for (const raw of ['{"type":"a\\ud800"}', '{"type":"t","title":"x\\udc00y"}', '{"type":"\\ude00\\ud83d"}']) {
          expectError(await h.request('POST', '/projects/proj_main/inbox', { as: 'acc_deriver', raw, headers: { 'content-type': 'application/json' } }), 400, 'validation_error');
        }
      });
    });

    it('400 validation_error: strict decision bodies', async () => {
      const id = await pendingItem();
      await nothingWritten(async () => {
        for (const body of [{}, { decision: 'approve' }, { decision: 'ACCEPT' }, { decision: 'accept', note: 'x'.repeat(501) }, { decision: 'accept', status: 'accepted' }, { decision: 'accept', note: 3 }]) {
          expectError(await decide('acc_owner', id, body), 400, 'validation_error');
        }
      });
      const row = await h.store.getInboxItem('proj_main', id);
      expect(row!.status).toBe('pending');
    });

    it('400 validation_error: limit out of range and other bad queries', async () => {
      for (const q of ['limit=0', 'limit=201', 'limit=-1', 'limit=abc', 'limit=1.5', 'limit=', 'limit=1e2', 'status=done', 'unknown=1', 'limit=1&limit=2', 'status=pending&status=accepted']) {
        expectError(await h.request('GET', `/projects/proj_main/inbox?${q}`, { as: 'acc_owner' }), 400, 'validation_error');
      }
      for (const q of ['limit=1', 'limit=200', 'limit=50&status=pending']) {
        expect((await h.request('GET', `/projects/proj_main/inbox?${q}`, { as: 'acc_owner' })).status, q).toBe(200);
      }
    });

    it('400 invalid_cursor: garbage, another filter set, another project', async () => {
      const { project_id } = await h.newProject();
      for (let i = 0; i < 3; i++) await pendingItem('acc_owner');
      for (let i = 0; i < 3; i++) await pendingItem('acc_owner', project_id);
      const cursorOf = async (path: string) => {
        const res = await h.request('GET', path, { as: 'acc_owner' });
        expect(res.status).toBe(200);
        expect(typeof res.body.next_cursor).toBe('string');
        return encodeURIComponent(res.body.next_cursor as string);
      };
      const plain = await cursorOf('/projects/proj_main/inbox?limit=1');
      const pending = await cursorOf('/projects/proj_main/inbox?limit=1&status=pending');
      const other = await cursorOf(`/projects/${project_id}/inbox?limit=1`);
      for (const path of [
        '/projects/proj_main/inbox?cursor=garbage',
        '/projects/proj_main/inbox?cursor=eyJ2IjoxfQ',
        `/projects/proj_main/inbox?cursor=${plain}&status=pending`,
        `/projects/proj_main/inbox?cursor=${plain}&type=probe`,
        `/projects/proj_main/inbox?cursor=${plain}&sender_account_id=acc_owner`,
        `/projects/proj_main/inbox?cursor=${pending}`,
        `/projects/proj_main/inbox?cursor=${other}`,
        `/projects/${project_id}/inbox?cursor=${plain}`,
        `/projects/proj_main/inbox?cursor=${plain}%3D%3D`,
      ]) {
        expectError(await h.request('GET', path, { as: 'acc_owner' }), 400, 'invalid_cursor');
      }
      expect((await h.request('GET', `/projects/proj_main/inbox?cursor=${plain}&limit=2`, { as: 'acc_owner' })).status).toBe(200);
    });

    it('400 project_inbox_payload_invalid: a payload JSON.parse accepts but JSON cannot carry (lone surrogates)', async () => {
      await nothingWritten(async () => {
        for (const raw of ['{"type":"t","payload":{"s":"a\\ud800"}}', '{"type":"t","payload":{"\\udc00":1}}', '{"type":"t","payload":["\\ud83d"]}']) {
          expectError(await h.request('POST', '/projects/proj_main/inbox', { as: 'acc_deriver', raw, headers: { 'content-type': 'application/json' } }), 400, 'project_inbox_payload_invalid');
        }
      });
    });

    it('403 project_inbox_read_denied: the observer lists or gets', async () => {
      const id = await pendingItem();
      expectError(await h.request('GET', '/projects/proj_main/inbox', { as: 'acc_observer' }), 403, 'project_inbox_read_denied');
      expectError(await h.request('GET', `/projects/proj_main/inbox/${id}`, { as: 'acc_observer' }), 403, 'project_inbox_read_denied');
      expectError(await h.request('GET', '/projects/proj_main/inbox/pinbox_missing', { as: 'acc_observer' }), 403, 'project_inbox_read_denied');
    });

    it('403 project_inbox_write_denied: the observer creates; nothing written', async () => {
      await nothingWritten(async () => {
        expectError(await create('acc_observer', SEED_BODY), 403, 'project_inbox_write_denied');
      });
    });

    it('403 project_inbox_decide_denied: derivers and the observer decide (also a missing item); nothing written', async () => {
      const id = await pendingItem();
      await nothingWritten(async () => {
        for (const as of ['acc_deriver', 'acc_deriver2', 'acc_observer']) {
          for (const decision of ['accept', 'reject', 'archive']) {
            expectError(await decide(as, id, { decision }), 403, 'project_inbox_decide_denied');
          }
          expectError(await decide(as, 'pinbox_missing', { decision: 'accept' }), 403, 'project_inbox_decide_denied');
        }
      });
    });

    it('404 project_not_found: non-member, other tenant, unknown and foreign project bodies are identical except request_id', async () => {
      const id = await pendingItem();
      const bodies: string[] = [];
      await nothingWritten(async () => {
        for (const [as, project] of [['acc_outsider', 'proj_main'], ['acc_stranger', 'proj_main'], ['acc_owner', 'proj_missing'], ['acc_owner', 'proj_foreign'], ['acc_deriver', 'proj_side']] as const) {
          const responses = [
            await h.request('GET', `/projects/${project}/inbox`, { as }),
            await h.request('GET', `/projects/${project}/inbox/${id}`, { as }),
            await create(as, SEED_BODY, project),
            await decide(as, id, { decision: 'accept' }, project),
          ];
          for (const res of responses) {
            const env = expectError(res, 404, 'project_not_found');
            expect(res.text).not.toContain(project);
            expect(res.text).not.toContain(id);
            bodies.push(JSON.stringify({ ...env, error: { ...env.error, request_id: 'x' } }));
          }
        }
      });
      expect(new Set(bodies).size).toBe(1);
    });

    it('404 project_inbox_item_not_found: missing, of another project, or not the deriver\'s own — identical bodies', async () => {
      const theirs = await pendingItem('acc_deriver2');
      const side = await pendingItem('acc_owner', 'proj_side');
      const bodies: string[] = [];
      await nothingWritten(async () => {
        for (const res of [
          await h.request('GET', '/projects/proj_main/inbox/pinbox_missing', { as: 'acc_owner' }),
          await h.request('GET', `/projects/proj_main/inbox/${side}`, { as: 'acc_owner' }),
          await h.request('GET', `/projects/proj_main/inbox/${theirs}`, { as: 'acc_deriver' }),
          await h.request('GET', '/projects/proj_main/inbox/pinbox_missing', { as: 'acc_deriver' }),
          await decide('acc_owner', 'pinbox_missing', { decision: 'archive' }),
          await decide('acc_owner', side, { decision: 'accept' }),
        ]) {
          const env = expectError(res, 404, 'project_inbox_item_not_found');
          bodies.push(JSON.stringify({ ...env, error: { ...env.error, request_id: 'x' } }));
        }
      });
      expect(new Set(bodies).size).toBe(1);
    });

    it('404 session_not_found / floor_not_found / page_not_found: missing or in another workspace; nothing written', async () => {
      await nothingWritten(async () => {
        for (const [field, missing, foreign, code] of [
          ['source_session_id', 'sess_missing', 'sess_foreign', 'session_not_found'],
          ['source_floor_id', 'floor_missing', h.floors.F.id, 'floor_not_found'],
          ['source_page_id', 'page_missing', h.pages.F1.id, 'page_not_found'],
        ] as const) {
          const a = expectError(await create('acc_deriver', { type: 't', [field]: missing }), 404, code);
          const b = expectError(await create('acc_deriver', { type: 't', [field]: foreign }), 404, code);
          expect({ ...a.error, request_id: '' }).toEqual({ ...b.error, request_id: '' });
        }
      });
    });

    it('409 project_archived on create and decide, after membership; reads still work', async () => {
      const { project_id } = await h.newProject();
      const id = await pendingItem('acc_deriver', project_id);
      expect((await h.request('POST', `/projects/${project_id}/archive`, { as: 'acc_owner' })).status).toBe(200);
      await nothingWritten(async () => {
        expectError(await create('acc_owner', { type: 't' }, project_id), 409, 'project_archived');
        expectError(await create('acc_deriver', { type: 't' }, project_id), 409, 'project_archived');
        for (const decision of ['accept', 'reject', 'archive']) expectError(await decide('acc_owner', id, { decision }, project_id), 409, 'project_archived');
        expectError(await create('acc_outsider', { type: 't' }, project_id), 404, 'project_not_found');
        expectError(await decide('acc_outsider', id, { decision: 'accept' }, project_id), 404, 'project_not_found');
      });
      expect((await h.request('GET', `/projects/${project_id}/inbox`, { as: 'acc_owner' })).body.items).toHaveLength(1);
      expect((await h.request('GET', `/projects/${project_id}/inbox/${id}`, { as: 'acc_deriver' })).status).toBe(200);
    });

    it('409 project_inbox_invalid_transition; nothing written', async () => {
      const id = await pendingItem();
      expect((await decide('acc_owner', id, { decision: 'reject' })).status).toBe(200);
      await nothingWritten(async () => {
        expectError(await decide('acc_owner', id, { decision: 'accept' }), 409, 'project_inbox_invalid_transition');
        expectError(await decide('acc_owner', id, { decision: 'reject' }), 409, 'project_inbox_invalid_transition');
      });
    });

    it('409 project_inbox_source_scope_mismatch; nothing written', async () => {
      const [sideEvent] = await h.store.listProjectEvents({ project_id: 'proj_side', after: 0, limit: 1 });
      await nothingWritten(async () => {
        for (const sources of [
          { source_page_id: h.pages.A1.id, source_floor_id: h.floors.B.id },
          { source_floor_id: h.floors.A.id, source_session_id: 'sess_002' },
          { source_page_id: h.pages.C1.id, source_session_id: 'sess_001' },
          { source_session_id: 'sess_side' },
          { source_floor_id: h.floors.S.id },
          { source_page_id: h.pages.S1.id },
          { source_session_id: 'sess_loose' },
          { source_event_id: sideEvent!.id },
          { source_event_id: 'evt_missing' },
        ]) {
          expectError(await create('acc_deriver', { type: 't', ...sources }), 409, 'project_inbox_source_scope_mismatch');
        }
      });
    });

    it('413 project_inbox_payload_too_large; nothing written', async () => {
      await nothingWritten(async () => {
        const env = expectError(await create('acc_deriver', { type: 't', payload: 'x'.repeat(262_143) }), 413, 'project_inbox_payload_too_large');
        expect(env.error.type).toBe('request_too_large');
      });
    });
  });

  describe('malformed requests over HTTP', () => {
    let h: HttpWorld;
    beforeAll(async () => {
      h = await startHttpWorld(kit);
    });
    afterAll(async () => {
      await h?.close();
    });

    async function fourXxNothingWritten(method: string, path: string, raw: string | Uint8Array | undefined, headers: Record<string, string>): Promise<WorldEnvelope> {
      const before = await h.inboxRows();
      const events = (await h.worldState()).counts.events;
      const res = await h.request(method, path, { as: 'acc_owner', raw, headers });
      expect(res.status, `${method} ${path} ${String(raw).slice(0, 80)} → ${res.text.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      const env = expectError(res, res.status);
      expect(await h.inboxRows()).toEqual(before);
      expect((await h.worldState()).counts.events).toBe(events);
      return env;
    }

    const json = { 'content-type': 'application/json' };
    let itemId: string;
    beforeAll(async () => {
      const res = await h.request('POST', '/projects/proj_main/inbox', { as: 'acc_deriver', body: { type: 'probe' } });
      itemId = res.body.item.id;
    });

    it.each<[string, string | undefined, Record<string, string>]>([
      ['malformed JSON', '{"type":', json],
      ['trailing garbage', '{"type":"t"} x', json],
      ['single quotes', "{'type':'t'}", json],
      ['an empty body with a JSON content type', '', json],
      ['JSON null', 'null', json],
      ['a JSON array', '[{"type":"t"}]', json],
      ['a JSON string', '"t"', json],
      ['a JSON number', '42', json],
      ['no body at all', undefined, {}],
      ['text/plain', '{"type":"t"}', { 'content-type': 'text/plain' }],
      ['form encoding', 'type=t', { 'content-type': 'application/x-www-form-urlencoded' }],
      ['XML', '<type>t</type>', { 'content-type': 'application/xml' }],
      ['an unparseable content type', '{"type":"t"}', { 'content-type': '///' }],
      ['__proto__ poisoning', '{"type":"t","__proto__":{"polluted":true}}', json],
      ['constructor poisoning', '{"type":"t","constructor":{"prototype":{"polluted":true}}}', json],
      ['a NUL byte', '\u0000', json],
    ])('POST inbox with %s → 4xx envelope, nothing written', async (_, raw, headers) => {
      await fourXxNothingWritten('POST', '/projects/proj_main/inbox', raw, headers);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('POST inbox with bytes that are not UTF-8 → 4xx envelope, nothing written', async () => {
      await fourXxNothingWritten('POST', '/projects/proj_main/inbox', new Uint8Array([0x7b, 0x22, 0x74, 0x79, 0x70, 0x65, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]), json);
    });

    it.each<[string, string | undefined, Record<string, string>]>([
      ['malformed JSON', '{"decision":', json],
      ['an empty body with a JSON content type', '', json],
      ['no body', undefined, {}],
      ['JSON null', 'null', json],
      ['text/plain', '{"decision":"accept"}', { 'content-type': 'text/plain' }],
    ])('PATCH item with %s → 4xx envelope, item unchanged', async (_, raw, headers) => {
      await fourXxNothingWritten('PATCH', `/projects/proj_main/inbox/${itemId}`, raw, headers);
      const row = await h.store.getInboxItem('proj_main', itemId);
      expect(row!.status).toBe('pending');
    });

    it('a body over the 1 MiB HTTP limit → 413 payload_too_large in the envelope, nothing written', async () => {
      const raw = JSON.stringify({ type: 't', payload: 'x'.repeat(1_048_577) });
      const env = await fourXxNothingWritten('POST', '/projects/proj_main/inbox', raw, json);
      expect(env.error.code).toBe('payload_too_large');
      expect(env.error.type).toBe('request_too_large');
    });

    it('the HTTP limit sits well above the payload limit: a legal payload, a 200-character title and \\u escapes are not refused', async () => {
      // 131,071 × "\u00e9" in the JSON text is 786,426 bytes on the wire but 262,144 bytes once compact.
      const raw = `{"type":"t","title":${JSON.stringify('😀'.repeat(200))},"payload":"${'\\u00e9'.repeat(131_071)}"}`;
      expect(Buffer.byteLength(raw)).toBeGreaterThan(786_000);
      const res = await h.request('POST', '/projects/proj_main/inbox', { as: 'acc_deriver', raw, headers: json });
      expect(res.status, res.text.slice(0, 300)).toBe(201);
      expect(res.body.item.payload).toBe('é'.repeat(131_071));
      expect(res.body.item.title).toBe('😀'.repeat(200));
    });

    it('a deeply nested payload within the size limit answers 201 or a 4xx, never a 500', async () => {
      const depth = 100_000;
      const raw = `{"type":"t","payload":${'['.repeat(depth)}${']'.repeat(depth)}}`;
      const before = await h.inboxRows();
      const res = await h.request('POST', '/projects/proj_main/inbox', { as: 'acc_deriver', raw, headers: json });
      expect(res.status, res.text.slice(0, 300)).toBeLessThan(500);
      if (res.status !== 201) {
        expectError(res, res.status);
        expect(await h.inboxRows()).toEqual(before);
      }
    });

    it('bad path parameters → 400 validation_error in the envelope', async () => {
      for (const path of ['/projects/%20/inbox', '/projects/proj%20main/inbox', '/projects/proj_main/inbox/%C3%A9', '/projects/proj_main/inbox/a%00b']) {
        expectError(await h.request('GET', path, { as: 'acc_owner' }), 400, 'validation_error');
      }
    });

    it('ids up to 128 characters (the id schema) reach the routes; longer ones get a 4xx in the envelope', async () => {
      // A 128-character unknown project is simply not found.
      expectError(await h.request('GET', `/projects/${'p'.repeat(128)}/inbox`, { as: 'acc_owner' }), 404, 'project_not_found');
      expectError(await h.request('GET', `/projects/proj_main/inbox/${'i'.repeat(128)}`, { as: 'acc_owner' }), 404, 'project_inbox_item_not_found');
      for (const path of [`/projects/${'p'.repeat(129)}/inbox`, `/projects/${'p'.repeat(5000)}/inbox`]) {
        const res = await h.request('GET', path, { as: 'acc_owner' });
        expect(res.status, res.text.slice(0, 200)).toBeGreaterThanOrEqual(400);
        expect(res.status).toBeLessThan(500);
        expectError(res, res.status);
      }
    });

    it('a malformed URL (bad percent-encoding) → 4xx in the envelope', async () => {
      for (const path of ['/projects/%E0%A4%A/inbox', '/projects/proj_main/inbox?cursor=%E0%A4%A']) {
        const res = await h.request('GET', path, { as: 'acc_owner' });
        expect(res.status, `${path} → ${res.text}`).toBeGreaterThanOrEqual(400);
        expect(res.status).toBeLessThan(500);
        expectError(res, res.status);
      }
    });

    it('an over-long cursor or filter → 400 in the envelope', async () => {
      expectError(await h.request('GET', `/projects/proj_main/inbox?cursor=${'A'.repeat(5000)}`, { as: 'acc_owner' }), 400);
      expectError(await h.request('GET', `/projects/proj_main/inbox?type=${'t'.repeat(600)}`, { as: 'acc_owner' }), 400, 'validation_error');
    });
  });

  describe('failing writes and 500s over HTTP', () => {
    let h: HttpWorld;
    beforeAll(async () => {
      h = await startHttpWorld(kit);
    });
    afterAll(async () => {
      if (h) h.failure.method = null;
      await h?.close();
    });

    const sequences = async (project: string) => (await h.store.listProjectEvents({ project_id: project, after: 0, limit: 1000 })).map((e) => e.sequence);

    function expectNoLeak(text: string): void {
      for (const needle of [' at ', 'Error:', '.ts:', '.js:', 'node_modules', 'INSERT', 'insert into', 'UNIQUE', 'unique', 'constraint', 'duplicate', 'SQLITE', 'project_inbox_items', 'operation_logs', 'project_events', 'stack']) {
        expect(text, needle).not.toContain(needle);
      }
    }

    it.each(['appendProjectEvent', 'appendOperationLog', 'insertInboxItem'] as const)(
      'create: when %s fails in the database → 500 without stack or SQL, and no item, log row or event remains', async (method) => {
        const before = await h.inboxRows();
        const seqBefore = await sequences('proj_main');
        h.failure.method = method;
        const res = await h.request('POST', '/projects/proj_main/inbox', { as: 'acc_deriver', body: { ...SEED_BODY, source_page_id: h.pages.A1.id, source_session_id: undefined } });
        h.failure.method = null;
        const env = expectError(res, 500, 'internal_error');
        expect(env.error.type).toBe('api_error');
        expect(env.error.message).toBe('Internal server error');
        expect(env.error.details).toEqual([]);
        expectNoLeak(res.text);
        expect(await h.inboxRows()).toEqual(before);
        expect(await sequences('proj_main')).toEqual(seqBefore);

        // the next write succeeds and its event takes the next sequence, with no gap
        const ok = await h.request('POST', '/projects/proj_main/inbox', { as: 'acc_deriver', body: SEED_BODY });
        expect(ok.status).toBe(201);
        const seqAfter = await sequences('proj_main');
        expect(seqAfter).toEqual(seqAfter.map((_, i) => i + 1));
        expect(seqAfter.length).toBe(seqBefore.length + 1);
      });

    it.each(['appendProjectEvent', 'appendOperationLog'] as const)(
      'decide: when %s fails in the database → 500, the item keeps its status and no log row or event remains', async (method) => {
        const created = await h.request('POST', '/projects/proj_main/inbox', { as: 'acc_deriver', body: { type: 'probe' } });
        const id = created.body.item.id as string;
        const before = await h.inboxRows();
        h.failure.method = method;
        const res = await h.request('PATCH', `/projects/proj_main/inbox/${id}`, { as: 'acc_owner', body: { decision: 'accept', note: 'n' } });
        h.failure.method = null;
        expectError(res, 500, 'internal_error');
        expectNoLeak(res.text);
        expect(await h.inboxRows()).toEqual(before);
        const stored = await h.store.getInboxItem('proj_main', id);
        const row = { status: stored!.status, decided_by_account_id: stored!.decided_by_account_id, decided_at: stored!.decided_at };
        expect(row).toEqual({ status: 'pending', decided_by_account_id: null, decided_at: null });
        const ok = await h.request('PATCH', `/projects/proj_main/inbox/${id}`, { as: 'acc_owner', body: { decision: 'accept' } });
        expect(ok.status).toBe(200);
      });
  });
}
