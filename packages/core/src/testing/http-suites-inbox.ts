/**
 * The Project Inbox end to end over real HTTP: the seed page's flow, the role table, the transition
 * table, cursor paging over shared timestamps, the payload limit at its exact bytes, Operation Log
 * and Project Event rows per write, the events page per role, and concurrent decisions. Spec:
 * project-inbox.md. Moved from `@inbox-kit/http-fastify`'s `inbox.test.ts` so every adapter runs
 * it; registered by `runHttpConformance`. Stored rows are read through the Store port. Data
 * (`http-suites-kit.ts`): one group over one world, its blocks' checks in `http-suites-inbox-*.ts`.
 */
import { expect } from 'vitest';
import type { HttpConformanceOptions } from './http-conformance-checks.js';
import { expectError, startHttpWorld, type HttpWorld, type WorldResponse } from './http-world.js';
import { registerSuite, type HttpSuiteBase, type HttpSuiteCheck, type HttpSuiteGroup } from './http-suites-kit.js';
import { concurrencyChecks, eventsPageChecks, payloadLimitChecks } from './http-suites-inbox-limits.js';
import { cursorPagingChecks, roleTableChecks, transitionChecks } from './http-suites-inbox-tables.js';

export const SEED_BODY = {
  type: 'derived_output.review',
  title: '候选摘要待确认',
  payload: { derived_output_id: 'dout_001', suggested_action: 'review' },
  source_session_id: 'sess_001',
};
export const SEED_NOTE = '已记录。稍后由应用层决定是否写入主会话。';

export interface Item {
  id: string;
  status: string;
  sender_account_id: string;
  created_at: number;
  [k: string]: unknown;
}

/** What the Project Inbox checks share: one world, its inbox calls, and its Store-port readers. */
export interface InboxCtx extends HttpSuiteBase {
  h: HttpWorld;
  create(as: string, body: unknown, project?: string): Promise<WorldResponse>;
  decide(as: string, id: string, body: unknown, project?: string): Promise<WorldResponse>;
  /** A fresh item filed by `as` in `project`, then decided by the owner into `status`. */
  itemIn(status: string, project?: string, as?: string): Promise<Item>;
  /** Every Session, Floor and Page of the world, by id (read through the Store port). */
  sessionRows(): Promise<string>;
  /** Every project of the world. */
  projectIds(): Promise<string[]>;
  /** Operation Log rows, Project Events and inbox items of one project, or of every project (read through the Store port). */
  logsOf(project_id?: string): Promise<any[]>;
  eventsOf(project_id?: string): Promise<any[]>;
  itemsOf(project_id?: string): Promise<any[]>;
  utf8Bytes(text: string): number;
}

async function openInbox(base: HttpSuiteBase): Promise<InboxCtx> {
  const h = await startHttpWorld(base.kit);
  const create = (as: string, body: unknown, project = 'proj_main') => h.request('POST', `/projects/${project}/inbox`, { as, body });
  const decide = (as: string, id: string, body: unknown, project = 'proj_main') => h.request('PATCH', `/projects/${project}/inbox/${id}`, { as, body });
  const projectIds = async () => [...await h.store.listProjectsForAccount('ws_demo', 'acc_owner'), ...await h.store.listProjectsForAccount('ws_other', 'acc_stranger')].map((p) => p.id);
  const each = async <T>(project_id: string | undefined, read: (id: string) => Promise<T[]>) => (await Promise.all((project_id ? [project_id] : await projectIds()).map(read))).flat();
  return {
    ...base, h, create, decide, projectIds,
    async itemIn(status, project = 'proj_main', as = 'acc_deriver') {
      const res = await create(as, { type: 'probe' }, project);
      expect(res.status).toBe(201);
      const decision = ({ pending: null, accepted: 'accept', rejected: 'reject', archived: 'archive' } as Record<string, string | null>)[status];
      if (!decision) return res.body.item;
      const d = await decide('acc_owner', res.body.item.id, { decision }, project);
      expect(d.status).toBe(200);
      return d.body.item;
    },
    async sessionRows() {
      const sessions = [...await h.store.listSessions('ws_demo', {}), ...await h.store.listSessions('ws_other', {})].sort((x, y) => (x.id < y.id ? -1 : 1));
      const floors = (await Promise.all(sessions.map((s) => h.store.listFloors(s.id)))).flat().sort((x, y) => (x.id < y.id ? -1 : 1));
      const pages = (await Promise.all(floors.map((f) => h.store.listPages(f.id)))).flat().sort((x, y) => (x.id < y.id ? -1 : 1));
      return JSON.stringify([sessions, floors, pages]);
    },
    logsOf: (project_id) => each(project_id, (id) => h.store.listOperationLogs({ project_id: id, limit: 1000 })),
    eventsOf: (project_id) => each(project_id, (id) => h.store.listProjectEvents({ project_id: id, after: 0, limit: 1000 })),
    itemsOf: (project_id) => each(project_id, (id) => h.store.listInboxItems({ project_id: id, limit: 1000 })),
    utf8Bytes: (text) => new TextEncoder().encode(text).length,
  };
}

const flowChecks: HttpSuiteCheck<InboxCtx>[] = [
  {
    name: 'runs the seed page flow: the deriver files, the owner accepts, the session is untouched', layer: 'both',
    async run(ctx) {
      const { h, create, decide, sessionRows, logsOf, eventsOf } = ctx;
      const sessionsBefore = await sessionRows();
      const created = await create('acc_deriver', SEED_BODY);
      expect(created.status).toBe(201);
      expect(Object.keys(created.body)).toEqual(['item']);
      const item = created.body.item as Item;
      expect(item).toEqual({
        id: expect.stringMatching(/^pinbox_[A-Za-z0-9_-]{21}$/),
        workspace_id: 'ws_demo',
        project_id: 'proj_main',
        account_id: 'acc_owner',
        sender_account_id: 'acc_deriver',
        type: 'derived_output.review',
        title: '候选摘要待确认',
        payload: { derived_output_id: 'dout_001', suggested_action: 'review' },
        source_event_id: null,
        source_session_id: 'sess_001',
        source_floor_id: null,
        source_page_id: null,
        status: 'pending',
        decided_by_account_id: null,
        decided_at: null,
        created_at: expect.any(Number),
        updated_at: item.created_at,
      });
      expect(Number.isInteger(item.created_at)).toBe(true);

      const got = await h.request('GET', `/projects/proj_main/inbox/${item.id}`, { as: 'acc_deriver' });
      expect(got.status).toBe(200);
      expect(got.body).toEqual({ item });

      const accepted = await decide('acc_owner', item.id, { decision: 'accept', note: SEED_NOTE });
      expect(accepted.status).toBe(200);
      expect(Object.keys(accepted.body)).toEqual(['item']);
      expect(accepted.body.item).toEqual({
        ...item,
        status: 'accepted',
        decided_by_account_id: 'acc_owner',
        decided_at: expect.any(Number),
        updated_at: accepted.body.item.decided_at,
      });
      expect(accepted.body.item.decided_at).toBeGreaterThanOrEqual(item.created_at);
      expect(await sessionRows()).toBe(sessionsBefore);

      const stored = await h.store.getInboxItem('proj_main', item.id);
      expect({ status: stored!.status, decided_by_account_id: stored!.decided_by_account_id }).toEqual({ status: 'accepted', decided_by_account_id: 'acc_owner' });
      const log = (await logsOf('proj_main')).find((l) => l.target_id === item.id && l.action === 'project_inbox_item.decide');
      expect(log!.metadata).toEqual({ decision: 'accept', note: SEED_NOTE });
      const events = (await eventsOf()).filter((e) => e.type.startsWith('project_inbox.'));
      for (const e of events) expect(JSON.stringify(e.payload)).not.toContain('已记录');
    },
  },

  {
    name: 'writes one Operation Log row and one Project Event per write, tied to the request id',
    async run(ctx) {
      const { h, decide, logsOf, eventsOf, utf8Bytes } = ctx;
      const before = await h.inboxRows();
      h.clock.freeze(1_800_000_000_000);
      const created = await h.request('POST', '/projects/proj_main/inbox', { as: 'acc_deriver', body: { ...SEED_BODY, source_page_id: h.pages.A2.id, source_session_id: undefined } });
      expect(created.status).toBe(201);
      const id = created.body.item.id as string;
      const createReq = created.headers.get('x-request-id')!;
      expect(await h.inboxRows()).toEqual({ items: before.items + 1, logs: before.logs + 1, events: before.events + 1 });
      const [log] = (await logsOf('proj_main')).filter((l) => l.target_id === id);
      expect(log).toEqual({
        id: expect.stringMatching(/^oplog_/), workspace_id: 'ws_demo', project_id: 'proj_main', actor_account_id: 'acc_deriver',
        action: 'project_inbox_item.create', target_type: 'project_inbox_item', target_id: id, request_id: createReq,
        metadata: { payload_byte_count: utf8Bytes(JSON.stringify(SEED_BODY.payload)) }, created_at: created.body.item.created_at,
      });
      const [event] = (await eventsOf('proj_main')).filter((e) => e.operation_log_id === log!.id);
      expect(event).toEqual({
        id: expect.stringMatching(/^evt_/), workspace_id: 'ws_demo', project_id: 'proj_main', sequence: expect.any(Number),
        type: 'project_inbox.item.created', actor_account_id: 'acc_deriver', session_id: 'sess_001', floor_id: h.floors.A.id, page_id: h.pages.A2.id,
        operation_log_id: log!.id, correlation_id: createReq, causation_event_id: null, created_at: created.body.item.created_at,
        visibility: 'owner', source: 'api',
        payload: {
          inbox_item_id: id, type: 'derived_output.review', title: '候选摘要待确认', status: 'pending', sender_account_id: 'acc_deriver',
          source_event_id: null, source_session_id: 'sess_001', source_floor_id: h.floors.A.id, source_page_id: h.pages.A2.id,
        },
      });

      const decided = await decide('acc_owner', id, { decision: 'reject', note: '  not now  ' });
      h.clock.unfreeze();
      const decideReq = decided.headers.get('x-request-id')!;
      expect(await h.inboxRows()).toEqual({ items: before.items + 1, logs: before.logs + 2, events: before.events + 2 });
      const [dlog] = (await logsOf('proj_main')).filter((l) => l.target_id === id && l.action === 'project_inbox_item.decide');
      expect(dlog!.request_id).toBe(decideReq);
      expect(dlog!.metadata).toEqual({ decision: 'reject', note: 'not now' });
      const [devent] = (await eventsOf('proj_main')).filter((e) => e.operation_log_id === dlog!.id);
      expect(devent!.type).toBe('project_inbox.item.rejected');
      expect(devent!.correlation_id).toBe(decideReq);
      expect(devent!.sequence).toBe(event!.sequence + 1);
      expect(devent!.payload).toEqual({
        inbox_item_id: id, type: 'derived_output.review', status: 'rejected', decision: 'reject', sender_account_id: 'acc_deriver',
        decided_by_account_id: 'acc_owner', source_event_id: null, source_session_id: 'sess_001', source_floor_id: h.floors.A.id, source_page_id: h.pages.A2.id,
      });

      // the owner reads the same rows through the Operation Log route; a deriver may not
      const logs = await h.request('GET', '/projects/proj_main/operation-logs?limit=200', { as: 'acc_owner' });
      expect(logs.status).toBe(200);
      expect(logs.body.items.filter((l: { target_id: string }) => l.target_id === id).map((l: { action: string }) => l.action).sort())
        .toEqual(['project_inbox_item.create', 'project_inbox_item.decide']);
      expectError(await h.request('GET', '/projects/proj_main/operation-logs', { as: 'acc_deriver' }), 403);
    },
  },

  {
    name: 'accepts the seed page\'s full request body shape (explicit null sources, a source event)',
    async run(ctx) {
      const { h, create, eventsOf } = ctx;
      const seedRequest = {
        type: 'derived_output.review',
        title: '候选摘要待确认',
        payload: { derived_output_id: 'dout_001', suggested_action: 'review' },
        source_event_id: 'evt_001',
        source_session_id: 'sess_001',
        source_floor_id: null,
        source_page_id: null,
      };
      // evt_001 is the page's illustrative id: not an event of this project → 409, nothing written
      const before = await h.inboxRows();
      expectError(await create('acc_deriver', seedRequest), 409, 'project_inbox_source_scope_mismatch');
      expect(await h.inboxRows()).toEqual(before);
      const [event] = await h.store.listProjectEvents({ project_id: 'proj_main', after: 0, limit: 1 });
      const res = await create('acc_deriver', { ...seedRequest, source_event_id: event!.id });
      expect(res.status).toBe(201);
      expect(res.body.item).toMatchObject({ source_event_id: event!.id, source_session_id: 'sess_001', source_floor_id: null, source_page_id: null });
      const [row] = (await eventsOf()).filter((e) => e.correlation_id === res.headers.get('x-request-id'));
      expect(row!.causation_event_id).toBe(event!.id);
    },
  },

  {
    name: 'never stores the payload in an event or a log row',
    async run(ctx) {
      const { create, decide, logsOf, eventsOf, itemsOf } = ctx;
      const marker = 'PAYLOAD-MARKER-c0ffee';
      const res = await create('acc_deriver', { type: 't', payload: { secret: marker, nested: [marker] } });
      await decide('acc_owner', res.body.item.id, { decision: 'accept' });
      await decide('acc_owner', res.body.item.id, { decision: 'archive' });
      expect((await eventsOf()).filter((e) => JSON.stringify(e.payload).includes(marker))).toHaveLength(0);
      expect((await logsOf()).filter((l) => JSON.stringify(l.metadata).includes(marker))).toHaveLength(0);
      expect((await itemsOf()).filter((i) => JSON.stringify(i.payload).includes(marker))).toHaveLength(1);
    },
  },
];

/** The Project Inbox end to end (see the file comment), as data. */
export const projectInboxGroup: HttpSuiteGroup<InboxCtx> = {
  name: 'Project Inbox over HTTP',
  open: openInbox,
  async close(ctx) {
    await ctx?.h.close();
  },
  afterEach(ctx) {
    ctx.h.clock.unfreeze();
  },
  checks: flowChecks,
  blocks: [
    { name: 'role table', layer: 'behaviour', checks: roleTableChecks },
    { name: 'transition table', layer: 'behaviour', checks: transitionChecks },
    { name: 'cursor paging', layer: 'behaviour', checks: cursorPagingChecks },
    { name: 'payload limit (262,144 bytes of compact UTF-8 JSON)', layer: 'behaviour', checks: payloadLimitChecks },
    { name: 'Project Events page', layer: 'behaviour', checks: eventsPageChecks },
    { name: 'concurrency', layer: 'behaviour', checks: concurrencyChecks },
  ],
};

/** Registers the Project Inbox suite for the adapter `kit` starts. */
export function projectInboxSuite(kit: HttpConformanceOptions): void {
  registerSuite(kit, projectInboxGroup);
}
