/**
 * `Idempotency-Key` on `POST /projects/:id/inbox` over HTTP (project-inbox.md), as data (`http-suites-kit.ts`).
 */
import { expect } from 'vitest';
import type { HttpConformanceOptions } from './http-conformance-checks.js';
import { expectError, heldModel, startHttpWorld, type HeldModel, type HttpWorld, type WorldResponse } from './http-world.js';
import { registerSuite, type HttpSuiteBase, type HttpSuiteCheck, type HttpSuiteGroup } from './http-suites-kit.js';

/** What the idempotency checks share: one world and its Store-port readers. */
interface IdempotencyCtx extends HttpSuiteBase {
  h: HttpWorld;
  create(key: string | undefined, body: unknown, opts?: { as?: string; accountId?: string; project?: string }): Promise<WorldResponse>;
  /** Items, create log rows and created events of a project (read through the Store port); what was published. */
  rows(project_id: string): Promise<{ items: number; logs: number; events: number; published: number }>;
  /** Idempotency records with this key, over every account of ws_demo (read through the Store port). */
  records(key: string): Promise<number>;
  /** Every stored Project Event sequence of a project, ascending (read through the Store port). */
  sequences(project_id: string): Promise<number[]>;
}

async function openIdempotency(base: HttpSuiteBase): Promise<IdempotencyCtx> {
  const h = await startHttpWorld(base.kit);
  return {
    ...base, h,
    create: (key, body, opts = {}) =>
      h.request('POST', `/projects/${opts.project ?? 'proj_main'}/inbox`, {
        as: opts.as ?? 'acc_deriver', body, headers: key === undefined ? {} : { 'idempotency-key': key },
        ...(opts.accountId ? { accountId: opts.accountId } : {}),
      }),
    async rows(project_id) {
      const logs = await h.store.listOperationLogs({ project_id, limit: 1000 });
      return {
        items: (await h.store.listInboxItems({ project_id, limit: 1000 })).length,
        logs: logs.filter((l) => l.action === 'project_inbox_item.create').length,
        events: (await h.store.listProjectEvents({ project_id, after: 0, types: ['project_inbox.item.created'], limit: 1000 })).length,
        published: h.published.filter((e) => e.project_id === project_id && e.type === 'project_inbox.item.created').length,
      };
    },
    async records(key) {
      let n = 0;
      for (const account_id of ['acc_owner', 'acc_deriver', 'acc_deriver2', 'acc_observer', 'acc_outsider']) {
        if (await h.store.findIdempotencyRecord({ workspace_id: 'ws_demo', account_id, key })) n++;
      }
      return n;
    },
    sequences: async (project_id) => (await h.store.listProjectEvents({ project_id, after: 0, limit: 1000 })).map((e) => e.sequence),
  };
}


/**
 * `Idempotency-Key` on `POST /projects/:id/inbox`: a repeat with the same key and body answers 201
 * with the same item and `Idempotent-Replayed: true` and writes nothing; another body → 409
 * `idempotency_key_reused`; a bad key → 400; keys are per workspace and acting account; a failed
 * write records nothing; 10 concurrent requests with one key make one item, one Operation Log row
 * and one Project Event.
 */
export const idempotencyGroup: HttpSuiteGroup<IdempotencyCtx> = {
  name: 'Idempotency-Key on POST /projects/:id/inbox',
  open: openIdempotency,
  async close(ctx) {
    await ctx?.h.close();
  },
  checks: [
  {
    name: 'the same key and body → 201 with the same item and Idempotent-Replayed: true; nothing written or published again', layer: 'both',
    async run(c) {
      const { h, create, rows, records } = c;
      const { project_id } = await h.newProject();
      const body = { type: 'derived_output.review', title: '候选摘要待确认', payload: { derived_output_id: 'dout_001', n: [1, 2] } };
      const first = await create('idem-same-1', body, { project: project_id });
      expect(first.status, first.text).toBe(201);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      const after = await rows(project_id);
      expect(after).toEqual({ items: 1, logs: 1, events: 1, published: 1 });

      const second = await create('idem-same-1', body, { project: project_id });
      expect(second.status).toBe(201);
      expect(second.headers.get('idempotent-replayed')).toBe('true');
      expect(second.body).toEqual(first.body);
      // The same request with the body's keys in another order and blank-padded strings is the same request.
      const reordered = await create('idem-same-1', { payload: { n: [1, 2], derived_output_id: 'dout_001' }, title: ' 候选摘要待确认 ', type: 'derived_output.review' }, { project: project_id });
      expect(reordered.status).toBe(201);
      expect(reordered.body.item.id).toBe(first.body.item.id);
      expect(await rows(project_id)).toEqual(after);
      expect(await records('idem-same-1')).toBe(1);
      // Without a key, the same body is a new item.
      expect((await create(undefined, body, { project: project_id })).status).toBe(201);
      expect((await rows(project_id)).items).toBe(2);
    },
  },

  {
    name: 'a replay answers the item as it is now',
    async run(c) {
      const { h, create } = c;
      const { project_id } = await h.newProject();
      const first = await create('idem-now', { type: 't' }, { project: project_id });
      const decided = await h.request('PATCH', `/projects/${project_id}/inbox/${first.body.item.id}`, { as: 'acc_owner', body: { decision: 'reject' } });
      expect(decided.status).toBe(200);
      const replay = await create('idem-now', { type: 't' }, { project: project_id });
      expect(replay.status).toBe(201);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.body).toEqual(decided.body);
    },
  },

  {
    name: 'a replay answers only what the caller may see now: demoted → 403, removed → 404, archived → 409, as a fresh request',
    async run(c) {
      const { h, create, rows, records } = c;
      const { project_id } = await h.newProject();
      const first = await create('idem-access', { type: 't' }, { project: project_id });
      expect(first.status, first.text).toBe(201);
      expect((await h.request('PATCH', `/projects/${project_id}/inbox/${first.body.item.id}`, { as: 'acc_owner', body: { decision: 'accept' } })).status).toBe(200);
      const member = (role: string) => h.request('POST', `/projects/${project_id}/members`, { as: 'acc_owner', body: { account_id: 'acc_deriver', role } });
      expect((await member('observer')).status).toBe(201);
      expectError(await create('idem-access', { type: 't' }, { project: project_id }), 403, 'project_inbox_write_denied');
      expect((await h.request('DELETE', `/projects/${project_id}/members/acc_deriver`, { as: 'acc_owner' })).status).toBe(204);
      const removed = await create('idem-access', { type: 't' }, { project: project_id });
      expectError(removed, 404, 'project_not_found');
      expect(removed.text).not.toContain(first.body.item.id);
      expect((await member('deriver')).status).toBe(201);
      expect((await h.request('POST', `/projects/${project_id}/archive`, { as: 'acc_owner' })).status).toBe(200);
      expectError(await create('idem-access', { type: 't' }, { project: project_id }), 409, 'project_archived');
      expect(await rows(project_id)).toMatchObject({ items: 1 });
      expect(await records('idem-access')).toBe(1);
    },
  },

  {
    name: 'the same key with another body or project → 409 idempotency_key_reused; nothing written',
    async run(c) {
      const { h, create, rows, records } = c;
      const { project_id } = await h.newProject();
      expect((await create('idem-reused', { type: 't', payload: { n: 1 } }, { project: project_id })).status).toBe(201);
      const before = await rows(project_id);
      const beforeMain = await rows('proj_main');
      for (const [project, body] of [
        [project_id, { type: 't', payload: { n: 2 } }],
        [project_id, { type: 'other', payload: { n: 1 } }],
        [project_id, { type: 't', title: 'with a title', payload: { n: 1 } }],
        [project_id, { type: 't', payload: { n: 1 }, source_session_id: `sess_${project_id}` }],
        ['proj_main', { type: 't', payload: { n: 1 } }],
      ] as const) {
        const env = expectError(await create('idem-reused', body, { project }), 409, 'idempotency_key_reused');
        expect(env.error.message).toMatch(/Idempotency-Key/);
      }
      expect(await rows(project_id)).toEqual(before);
      expect(await rows('proj_main')).toEqual(beforeMain);
      expect(await records('idem-reused')).toBe(1);
    },
  },

  {
    name: 'a key that is not 1–255 printable ASCII → 400 validation_error naming the header; nothing written',
    async run(c) {
      const { create, rows } = c;
      const before = await rows('proj_main');
      for (const key of ['', 'x'.repeat(256), 'caf\u00e9']) {
        const env = expectError(await create(key, { type: 't' }), 400, 'validation_error');
        expect(env.error.details.map((d) => d.path), JSON.stringify(key)).toContain('headers.idempotency-key');
      }
      expect(await rows('proj_main')).toEqual(before);
      for (const key of ['x'.repeat(255), ' !"#$%&\'()*+,-./09:;<=>?@AZ[\\]^_`az{|}~', 'k']) {
        expect((await create(key, { type: 't' })).status, key).toBe(201);
      }
    },
  },

  {
    name: 'keys are per workspace and acting account: another account gets its own item; a service key acting as the account replays it',
    async run(c) {
      const { h, create, records } = c;
      const { project_id } = await h.newProject();
      const body = { type: 't' };
      const deriver = await create('idem-scope', body, { project: project_id, as: 'acc_deriver' });
      const deriver2 = await create('idem-scope', body, { project: project_id, as: 'acc_deriver2' });
      const owner = await create('idem-scope', body, { project: project_id, as: 'acc_owner' });
      expect([deriver, deriver2, owner].map((r) => r.status)).toEqual([201, 201, 201]);
      expect(new Set([deriver, deriver2, owner].map((r) => r.body.item.id)).size).toBe(3);
      const viaService = await create('idem-scope', body, { project: project_id, as: 'service', accountId: 'acc_deriver' });
      expect(viaService.status).toBe(201);
      expect(viaService.headers.get('idempotent-replayed')).toBe('true');
      expect(viaService.body.item.id).toBe(deriver.body.item.id);
      expect(await records('idem-scope')).toBe(3);
    },
  },

  {
    name: 'a write that fails inside the transaction records nothing: a retry with the key creates the item',
    async run(c) {
      const { h, create, rows, records } = c;
      const { project_id } = await h.newProject();
      for (const method of ['insertInboxItem', 'appendOperationLog', 'appendProjectEvent'] as const) {
        h.failure.method = method;
        try {
          expectError(await create(`idem-fail-${method}`, { type: 't' }, { project: project_id }), 500, 'internal_error');
        } finally {
          h.failure.method = null;
        }
        expect(await records(`idem-fail-${method}`)).toBe(0);
        const retry = await create(`idem-fail-${method}`, { type: 't' }, { project: project_id });
        expect(retry.status).toBe(201);
        expect(retry.headers.get('idempotent-replayed')).toBeNull();
      }
      expect(await rows(project_id)).toEqual({ items: 3, logs: 3, events: 3, published: 3 });
    },
  },

  {
    name: 'a failed check (403, 404, 409) records nothing either',
    async run(c) {
      const { h, create, records } = c;
      const { project_id } = await h.newProject();
      expectError(await create('idem-check', { type: 't' }, { project: project_id, as: 'acc_observer' }), 403, 'project_inbox_write_denied');
      expectError(await create('idem-check', { type: 't', source_page_id: h.pages.F1.id }, { project: project_id }), 404, 'page_not_found');
      expectError(await create('idem-check', { type: 't', source_session_id: 'sess_001' }, { project: project_id }), 409, 'project_inbox_source_scope_mismatch');
      expect(await records('idem-check')).toBe(0);
      expect((await create('idem-check', { type: 't' }, { project: project_id })).status).toBe(201);
    },
  },

  {
    name: '10 concurrent creates with one key → one item, one log row, one event, gap-free sequences; all answer that item',
    async run(c) {
      const { h, create, rows, records, sequences } = c;
      const { project_id } = await h.newProject();
      const seqBefore = (await sequences(project_id)).length;
      const body = { type: 'race', title: 'one of ten', payload: { n: 10 } };
      const answers = await Promise.all(Array.from({ length: 10 }, () => create('idem-race', body, { project: project_id })));
      expect(answers.map((a) => a.status)).toEqual(Array(10).fill(201));
      expect(new Set(answers.map((a) => a.body.item.id)).size).toBe(1);
      expect(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(9);
      expect(await rows(project_id)).toEqual({ items: 1, logs: 1, events: 1, published: 1 });
      expect(await records('idem-race')).toBe(1);
      expect(await sequences(project_id)).toEqual(Array.from({ length: Number(seqBefore) + 1 }, (_, i) => i + 1));
    },
  },

  {
    name: '10 concurrent creates with one key and different bodies → one 201, nine 409 idempotency_key_reused',
    async run(c) {
      const { h, create, rows } = c;
      const { project_id } = await h.newProject();
      const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => create('idem-race-bodies', { type: 'race', payload: { i } }, { project: project_id })));
      expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
      for (const a of answers.filter((x) => x.status !== 201)) expectError(a, 409, 'idempotency_key_reused');
      expect(await rows(project_id)).toEqual({ items: 1, logs: 1, events: 1, published: 1 });
    },
  },

  {
    name: 'the OpenAPI document describes the Idempotency-Key header of the create',
    async run(c) {
      const { h } = c;
      const doc = (await h.request('GET', '/openapi.json')).body;
      const op = doc.paths['/projects/{id}/inbox'].post;
      const header = (op.parameters as Array<{ in: string; name: string; required?: boolean; schema?: { pattern?: string } }>).find((p) => p.in === 'header' && p.name === 'idempotency-key');
      expect(header).toBeDefined();
      expect(header?.required ?? false).toBe(false);
      expect(op.description).toMatch(/Idempotent-Replayed: true/);
    },
  },
  ],
};

/** Registers the idempotency checks (see {@link idempotencyGroup}). */
export function idempotencySuite(kit: HttpConformanceOptions): void {
  registerSuite(kit, idempotencyGroup);
}
