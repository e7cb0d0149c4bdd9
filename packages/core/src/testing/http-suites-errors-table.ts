/**
 * The Project Inbox error table over HTTP (`http-suites-errors.ts`): every code in its exact
 * envelope, nothing written. Data: each `run(ctx)` gets {@link ErrorTableCtx}.
 */
import { expect } from 'vitest';
import { expectError } from './http-world.js';
import type { HttpSuiteCheck } from './http-suites-kit.js';
import { SEED_BODY, type ErrorTableCtx } from './http-suites-errors.js';

export const errorTableChecks: HttpSuiteCheck<ErrorTableCtx>[] = [
  {
    name: '400 validation_error: bodies that do not match the schema, one detail per issue',
    async run(c) {
      const { nothingWritten, create } = c;
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
    },
  },

  {
    name: '400 validation_error: lone surrogates in type or title (escaped in the JSON text)',
    async run(c) {
      const { h, nothingWritten } = c;
      await nothingWritten(async () => {
        for (const raw of ['{"type":"a\\ud800"}', '{"type":"t","title":"x\\udc00y"}', '{"type":"\\ude00\\ud83d"}']) {
          expectError(await h.request('POST', '/projects/proj_main/inbox', { as: 'acc_deriver', raw, headers: { 'content-type': 'application/json' } }), 400, 'validation_error');
        }
      });
    },
  },

  {
    name: '400 validation_error: strict decision bodies',
    async run(c) {
      const { h, nothingWritten, decide, pendingItem } = c;
      const id = await pendingItem();
      await nothingWritten(async () => {
        for (const body of [{}, { decision: 'approve' }, { decision: 'ACCEPT' }, { decision: 'accept', note: 'x'.repeat(501) }, { decision: 'accept', status: 'accepted' }, { decision: 'accept', note: 3 }]) {
          expectError(await decide('acc_owner', id, body), 400, 'validation_error');
        }
      });
      const row = await h.store.getInboxItem('proj_main', id);
      expect(row!.status).toBe('pending');
    },
  },

  {
    name: '400 validation_error: limit out of range and other bad queries',
    async run(c) {
      const { h } = c;
      for (const q of ['limit=0', 'limit=201', 'limit=-1', 'limit=abc', 'limit=1.5', 'limit=', 'limit=1e2', 'status=done', 'unknown=1', 'limit=1&limit=2', 'status=pending&status=accepted']) {
        expectError(await h.request('GET', `/projects/proj_main/inbox?${q}`, { as: 'acc_owner' }), 400, 'validation_error');
      }
      for (const q of ['limit=1', 'limit=200', 'limit=50&status=pending']) {
        expect((await h.request('GET', `/projects/proj_main/inbox?${q}`, { as: 'acc_owner' })).status, q).toBe(200);
      }
    },
  },

  {
    name: '400 invalid_cursor: garbage, another filter set, another project',
    async run(c) {
      const { h, pendingItem } = c;
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
    },
  },

  {
    name: '400 project_inbox_payload_invalid: a payload JSON.parse accepts but JSON cannot carry (lone surrogates)',
    async run(c) {
      const { h, nothingWritten } = c;
      await nothingWritten(async () => {
        for (const raw of ['{"type":"t","payload":{"s":"a\\ud800"}}', '{"type":"t","payload":{"\\udc00":1}}', '{"type":"t","payload":["\\ud83d"]}']) {
          expectError(await h.request('POST', '/projects/proj_main/inbox', { as: 'acc_deriver', raw, headers: { 'content-type': 'application/json' } }), 400, 'project_inbox_payload_invalid');
        }
      });
    },
  },

  {
    name: '403 project_inbox_read_denied: the observer lists or gets',
    async run(c) {
      const { h, pendingItem } = c;
      const id = await pendingItem();
      expectError(await h.request('GET', '/projects/proj_main/inbox', { as: 'acc_observer' }), 403, 'project_inbox_read_denied');
      expectError(await h.request('GET', `/projects/proj_main/inbox/${id}`, { as: 'acc_observer' }), 403, 'project_inbox_read_denied');
      expectError(await h.request('GET', '/projects/proj_main/inbox/pinbox_missing', { as: 'acc_observer' }), 403, 'project_inbox_read_denied');
    },
  },

  {
    name: '403 project_inbox_write_denied: the observer creates; nothing written',
    async run(c) {
      const { nothingWritten, create } = c;
      await nothingWritten(async () => {
        expectError(await create('acc_observer', SEED_BODY), 403, 'project_inbox_write_denied');
      });
    },
  },

  {
    name: '403 project_inbox_decide_denied: derivers and the observer decide (also a missing item); nothing written',
    async run(c) {
      const { nothingWritten, decide, pendingItem } = c;
      const id = await pendingItem();
      await nothingWritten(async () => {
        for (const as of ['acc_deriver', 'acc_deriver2', 'acc_observer']) {
          for (const decision of ['accept', 'reject', 'archive']) {
            expectError(await decide(as, id, { decision }), 403, 'project_inbox_decide_denied');
          }
          expectError(await decide(as, 'pinbox_missing', { decision: 'accept' }), 403, 'project_inbox_decide_denied');
        }
      });
    },
  },

  {
    name: '404 project_not_found: non-member, other tenant, unknown and foreign project bodies are identical except request_id',
    async run(c) {
      const { h, nothingWritten, create, decide, pendingItem } = c;
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
    },
  },

  {
    name: '404 project_inbox_item_not_found: missing, of another project, or not the deriver\'s own — identical bodies',
    async run(c) {
      const { h, nothingWritten, decide, pendingItem } = c;
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
    },
  },

  {
    name: '404 session_not_found / floor_not_found / page_not_found: missing or in another workspace; nothing written',
    async run(c) {
      const { h, nothingWritten, create } = c;
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
    },
  },

  {
    name: '409 project_archived on create and decide, after membership; reads still work',
    async run(c) {
      const { h, nothingWritten, create, decide, pendingItem } = c;
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
    },
  },

  {
    name: '409 project_inbox_invalid_transition; nothing written',
    async run(c) {
      const { nothingWritten, decide, pendingItem } = c;
      const id = await pendingItem();
      expect((await decide('acc_owner', id, { decision: 'reject' })).status).toBe(200);
      await nothingWritten(async () => {
        expectError(await decide('acc_owner', id, { decision: 'accept' }), 409, 'project_inbox_invalid_transition');
        expectError(await decide('acc_owner', id, { decision: 'reject' }), 409, 'project_inbox_invalid_transition');
      });
    },
  },

  {
    name: '409 project_inbox_source_scope_mismatch; nothing written',
    async run(c) {
      const { h, nothingWritten, create } = c;
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
    },
  },

  {
    name: '413 project_inbox_payload_too_large; nothing written',
    async run(c) {
      const { nothingWritten, create } = c;
      await nothingWritten(async () => {
        const env = expectError(await create('acc_deriver', { type: 't', payload: 'x'.repeat(262_143) }), 413, 'project_inbox_payload_too_large');
        expect(env.error.type).toBe('request_too_large');
      });
    },
  },
];
