/**
 * Malformed requests and failing writes over HTTP (`http-suites-errors.ts`): 4xx, never 500,
 * never a hang; 500s without stacks, and no partial rows. Data: `run(ctx)` gets
 * {@link MalformedCtx} or {@link FailingWriteCtx}.
 */
import { expect } from 'vitest';
import { expectError } from './http-world.js';
import type { HttpSuiteCheck } from './http-suites-kit.js';
import { SEED_BODY, json, type FailingWriteCtx, type MalformedCtx } from './http-suites-errors.js';

export const malformedChecks: HttpSuiteCheck<MalformedCtx>[] = [
  {
    name: 'POST inbox with %s → 4xx envelope, nothing written', each: [
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
  ],
    async run(c, _, raw, headers) {
      const { fourXxNothingWritten } = c;
      await fourXxNothingWritten('POST', '/projects/proj_main/inbox', raw, headers);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    },
  },

  {
    name: 'POST inbox with bytes that are not UTF-8 → 4xx envelope, nothing written',
    async run(c) {
      const { fourXxNothingWritten } = c;
      await fourXxNothingWritten('POST', '/projects/proj_main/inbox', new Uint8Array([0x7b, 0x22, 0x74, 0x79, 0x70, 0x65, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]), json);
    },
  },

  {
    name: 'PATCH item with %s → 4xx envelope, item unchanged', each: [
    ['malformed JSON', '{"decision":', json],
    ['an empty body with a JSON content type', '', json],
    ['no body', undefined, {}],
    ['JSON null', 'null', json],
    ['text/plain', '{"decision":"accept"}', { 'content-type': 'text/plain' }],
  ],
    async run(c, _, raw, headers) {
      const { h, fourXxNothingWritten, itemId } = c;
      await fourXxNothingWritten('PATCH', `/projects/proj_main/inbox/${itemId}`, raw, headers);
      const row = await h.store.getInboxItem('proj_main', itemId);
      expect(row!.status).toBe('pending');
    },
  },

  {
    name: 'a body over the 1 MiB HTTP limit → 413 payload_too_large in the envelope, nothing written',
    async run(c) {
      const { fourXxNothingWritten } = c;
      const raw = JSON.stringify({ type: 't', payload: 'x'.repeat(1_048_577) });
      const env = await fourXxNothingWritten('POST', '/projects/proj_main/inbox', raw, json);
      expect(env.error.code).toBe('payload_too_large');
      expect(env.error.type).toBe('request_too_large');
    },
  },

  {
    name: 'the HTTP limit sits well above the payload limit: a legal payload, a 200-character title and \\u escapes are not refused',
    async run(c) {
      const { h } = c;
      // 131,071 × "\u00e9" in the JSON text is 786,426 bytes on the wire but 262,144 bytes once compact.
      const raw = `{"type":"t","title":${JSON.stringify('😀'.repeat(200))},"payload":"${'\\u00e9'.repeat(131_071)}"}`;
      expect(Buffer.byteLength(raw)).toBeGreaterThan(786_000);
      const res = await h.request('POST', '/projects/proj_main/inbox', { as: 'acc_deriver', raw, headers: json });
      expect(res.status, res.text.slice(0, 300)).toBe(201);
      expect(res.body.item.payload).toBe('é'.repeat(131_071));
      expect(res.body.item.title).toBe('😀'.repeat(200));
    },
  },

  {
    name: 'a deeply nested payload within the size limit answers 201 or a 4xx, never a 500',
    async run(c) {
      const { h } = c;
      const depth = 100_000;
      const raw = `{"type":"t","payload":${'['.repeat(depth)}${']'.repeat(depth)}}`;
      const before = await h.inboxRows();
      const res = await h.request('POST', '/projects/proj_main/inbox', { as: 'acc_deriver', raw, headers: json });
      expect(res.status, res.text.slice(0, 300)).toBeLessThan(500);
      if (res.status !== 201) {
        expectError(res, res.status);
        expect(await h.inboxRows()).toEqual(before);
      }
    },
  },

  {
    name: 'bad path parameters → 400 validation_error in the envelope',
    async run(c) {
      const { h } = c;
      for (const path of ['/projects/%20/inbox', '/projects/proj%20main/inbox', '/projects/proj_main/inbox/%C3%A9', '/projects/proj_main/inbox/a%00b']) {
        expectError(await h.request('GET', path, { as: 'acc_owner' }), 400, 'validation_error');
      }
    },
  },

  {
    name: 'ids up to 128 characters (the id schema) reach the routes; longer ones get a 4xx in the envelope',
    async run(c) {
      const { h } = c;
      // A 128-character unknown project is simply not found.
      expectError(await h.request('GET', `/projects/${'p'.repeat(128)}/inbox`, { as: 'acc_owner' }), 404, 'project_not_found');
      expectError(await h.request('GET', `/projects/proj_main/inbox/${'i'.repeat(128)}`, { as: 'acc_owner' }), 404, 'project_inbox_item_not_found');
      for (const path of [`/projects/${'p'.repeat(129)}/inbox`, `/projects/${'p'.repeat(5000)}/inbox`]) {
        const res = await h.request('GET', path, { as: 'acc_owner' });
        expect(res.status, res.text.slice(0, 200)).toBeGreaterThanOrEqual(400);
        expect(res.status).toBeLessThan(500);
        expectError(res, res.status);
      }
    },
  },

  {
    name: 'a malformed URL (bad percent-encoding) → 4xx in the envelope',
    async run(c) {
      const { h } = c;
      for (const path of ['/projects/%E0%A4%A/inbox', '/projects/proj_main/inbox?cursor=%E0%A4%A']) {
        const res = await h.request('GET', path, { as: 'acc_owner' });
        expect(res.status, `${path} → ${res.text}`).toBeGreaterThanOrEqual(400);
        expect(res.status).toBeLessThan(500);
        expectError(res, res.status);
      }
    },
  },

  {
    name: 'an over-long cursor or filter → 400 in the envelope',
    async run(c) {
      const { h } = c;
      expectError(await h.request('GET', `/projects/proj_main/inbox?cursor=${'A'.repeat(5000)}`, { as: 'acc_owner' }), 400);
      expectError(await h.request('GET', `/projects/proj_main/inbox?type=${'t'.repeat(600)}`, { as: 'acc_owner' }), 400, 'validation_error');
    },
  },
];

export const failingWriteChecks: HttpSuiteCheck<FailingWriteCtx>[] = [
  {
    name: 'create: when %s fails in the database → 500 without stack or SQL, and no item, log row or event remains', each: ['appendProjectEvent', 'appendOperationLog', 'insertInboxItem'] as const,
    async run(c, method) {
      const { h, sequences, expectNoLeak } = c;
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
    },
  },

  {
    name: 'decide: when %s fails in the database → 500, the item keeps its status and no log row or event remains', each: ['appendProjectEvent', 'appendOperationLog'] as const,
    async run(c, method) {
      const { h, expectNoLeak } = c;
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
    },
  },
];
