/**
 * Every row of the Project Inbox error table over real HTTP, in the exact envelope, with nothing
 * written; malformed requests (4xx, never 500, never a hang); 500s without stacks; failing writes
 * that leave no partial rows. Spec: project-inbox.md "Error codes", platform.md "Errors". Moved from
 * `@inbox-kit/http-fastify`'s `errors.test.ts` so every adapter runs it; registered by
 * `runHttpConformance`. "Nothing written" is read through the Store port. Data (`http-suites-kit.ts`):
 * three groups of named checks, behaviour layer (in-process once per store).
 */
import { expect } from 'vitest';
import type { HttpConformanceOptions } from './http-conformance-checks.js';
import { expectError, startHttpWorld, type HttpWorld, type WorldEnvelope, type WorldResponse } from './http-world.js';
import { registerSuite, type HttpSuiteBase, type HttpSuiteGroup } from './http-suites-kit.js';
import { errorTableChecks } from './http-suites-errors-table.js';
import { failingWriteChecks, malformedChecks } from './http-suites-errors-malformed.js';

export const SEED_BODY = {
  type: 'derived_output.review',
  title: '候选摘要待确认',
  payload: { derived_output_id: 'dout_001', suggested_action: 'review' },
  source_session_id: 'sess_001',
};

export const json = { 'content-type': 'application/json' };

/** What the error-table checks share: one world and its inbox helpers. */
export interface ErrorTableCtx extends HttpSuiteBase {
  h: HttpWorld;
  /** Runs `fn` and checks no item, inbox log row or inbox event was written, and nothing was published. */
  nothingWritten(fn: () => Promise<unknown>): Promise<void>;
  create(as: string, body: unknown, project?: string): Promise<WorldResponse>;
  decide(as: string, id: string, body: unknown, project?: string): Promise<WorldResponse>;
  /** A fresh pending item filed by `as` in `project`; its id. */
  pendingItem(as?: string, project?: string): Promise<string>;
}

async function openErrorTable(base: HttpSuiteBase): Promise<ErrorTableCtx> {
  const h = await startHttpWorld(base.kit);
  const create = (as: string, body: unknown, project = 'proj_main') => h.request('POST', `/projects/${project}/inbox`, { as, body });
  return {
    ...base, h, create,
    decide: (as, id, body, project = 'proj_main') => h.request('PATCH', `/projects/${project}/inbox/${id}`, { as, body }),
    async nothingWritten(fn) {
      const before = await h.inboxRows();
      const allEvents = (await h.worldState()).counts.events;
      const allLogs = (await h.worldState()).counts.logs;
      const published = h.published.length;
      await fn();
      expect(await h.inboxRows()).toEqual(before);
      expect((await h.worldState()).counts.events).toBe(allEvents);
      expect((await h.worldState()).counts.logs).toBe(allLogs);
      expect(h.published.length).toBe(published);
    },
    async pendingItem(as = 'acc_deriver', project = 'proj_main') {
      const res = await create(as, { type: 'probe' }, project);
      expect(res.status).toBe(201);
      return res.body.item.id as string;
    },
  };
}

/** What the malformed-request checks share: one world with one item (`itemId`). */
export interface MalformedCtx extends HttpSuiteBase {
  h: HttpWorld;
  itemId: string;
  /** Sends as the owner and checks a 4xx envelope with no inbox row nor event written. */
  fourXxNothingWritten(method: string, path: string, raw: string | Uint8Array | undefined, headers: Record<string, string>): Promise<WorldEnvelope>;
}

async function openMalformed(base: HttpSuiteBase): Promise<MalformedCtx> {
  const h = await startHttpWorld(base.kit);
  const res = await h.request('POST', '/projects/proj_main/inbox', { as: 'acc_deriver', body: { type: 'probe' } });
  return {
    ...base, h, itemId: res.body.item.id,
    async fourXxNothingWritten(method, path, raw, headers) {
      const before = await h.inboxRows();
      const events = (await h.worldState()).counts.events;
      const answer = await h.request(method, path, { as: 'acc_owner', raw, headers });
      expect(answer.status, `${method} ${path} ${String(raw).slice(0, 80)} → ${answer.text.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
      expect(answer.status).toBeLessThan(500);
      const env = expectError(answer, answer.status);
      expect(await h.inboxRows()).toEqual(before);
      expect((await h.worldState()).counts.events).toBe(events);
      return env;
    },
  };
}

/** What the failing-write checks share: a world whose store fails on demand (`h.failure`). */
export interface FailingWriteCtx extends HttpSuiteBase {
  h: HttpWorld;
  /** The Project Event sequences of `project`, from the store. */
  sequences(project: string): Promise<number[]>;
  /** Fails when `text` shows a stack, SQL, a table name or a driver's words. */
  expectNoLeak(text: string): void;
}

async function openFailingWrites(base: HttpSuiteBase): Promise<FailingWriteCtx> {
  const h = await startHttpWorld(base.kit);
  return {
    ...base, h,
    sequences: async (project) => (await h.store.listProjectEvents({ project_id: project, after: 0, limit: 1000 })).map((e) => e.sequence),
    expectNoLeak(text) {
      for (const needle of [' at ', 'Error:', '.ts:', '.js:', 'node_modules', 'INSERT', 'insert into', 'UNIQUE', 'unique', 'constraint', 'duplicate', 'SQLITE', 'project_inbox_items', 'operation_logs', 'project_events', 'stack']) {
        expect(text, needle).not.toContain(needle);
      }
    },
  };
}

const closeWorld = async (ctx: { h: HttpWorld } | undefined) => {
  await ctx?.h.close();
};

/** The error table, malformed requests, and failing writes, as data (three groups). */
export const errorGroups: HttpSuiteGroup[] = [
  { name: 'error table over HTTP', open: openErrorTable, close: closeWorld, checks: errorTableChecks } satisfies HttpSuiteGroup<ErrorTableCtx>,
  { name: 'malformed requests over HTTP', open: openMalformed, close: closeWorld, checks: malformedChecks } satisfies HttpSuiteGroup<MalformedCtx>,
  {
    name: 'failing writes and 500s over HTTP', open: openFailingWrites, checks: failingWriteChecks,
    async close(ctx) {
      if (ctx) ctx.h.failure.method = null;
      await ctx?.h.close();
    },
  } satisfies HttpSuiteGroup<FailingWriteCtx>,
];

/** Registers the error-table, malformed-request and failing-write suites for the adapter `kit` starts. */
export function errorsSuite(kit: HttpConformanceOptions): void {
  for (const group of errorGroups) registerSuite(kit, group);
}
