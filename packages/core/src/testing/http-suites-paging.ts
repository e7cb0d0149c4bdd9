/**
 * Paging everywhere (platform.md "Lists and pages"): every list route of the API pages — the
 * route inventory of the served OpenAPI document has no list without `limit` and a cursor — and
 * every `{ items, next_cursor }` list, walked two rows at a time, returns each row exactly once in
 * the list's order, ends with `next_cursor: null`, refuses a `limit` outside 1–200 and a forged
 * cursor or one minted for another list or filter (400 `invalid_cursor`).
 */
import { expect } from 'vitest';
import { registerSuite, type HttpSuiteBase, type HttpSuiteGroup } from './http-suites-kit.js';
import type { HttpConformanceOptions } from './http-conformance-checks.js';
import { expectError, heldModel, startHttpWorld, type HttpWorld, type WorldResponse } from './http-world.js';

interface OpenApiOperation {
  parameters?: { name: string; in: string }[];
  responses?: Record<string, { content?: Record<string, { schema?: { properties?: Record<string, unknown> } }> }>;
}

/** What the paging checks share: a world with several rows of every list, in a fresh project (`project_id`, its Session `session_id`). */
interface PagingCtx extends HttpSuiteBase {
  h: HttpWorld;
  project_id: string;
  session_id: string;
  /** Walks a `{ items, next_cursor }` list with `limit=2`; returns the ids in the order served. */
  walk(path: string, as: string, idOf: (row: Record<string, unknown>) => string): Promise<string[]>;
  /** The whole list in one page of 200. */
  whole(path: string, as: string, idOf: (row: Record<string, unknown>) => string): Promise<string[]>;
}

async function openPaging(base: HttpSuiteBase): Promise<PagingCtx> {
  const h = await startHttpWorld(base.kit, { model: heldModel(), managedSessions: true, budgets: { sessionsPerMinute: 0 } });
  const { project_id, session_id } = await h.newProject();
  for (let i = 0; i < 4; i++) expect((await h.request('POST', '/projects', { as: 'acc_owner', body: { name: `Paged ${i}` } })).status).toBe(201);
  for (let i = 0; i < 4; i++) expect((await h.request('POST', '/sessions', { as: 'acc_owner', body: { project_id, title: `paged ${i}` } })).status).toBe(201);
  expect((await h.request('POST', `/projects/${project_id}/members`, { as: 'acc_owner', body: { account_id: 'acc_outsider', role: 'observer' } })).status).toBe(201);
  for (let i = 0; i < 5; i++) expect((await h.request('POST', `/sessions/${session_id}/floors`, { as: 'acc_owner', body: { content: { i } } })).status).toBe(201);
  for (let i = 0; i < 5; i++) expect((await h.request('POST', `/projects/${project_id}/inbox`, { as: 'acc_deriver', body: { type: `paged_${i}` } })).status).toBe(201);
  const walk = async (path: string, as: string, idOf: (row: Record<string, unknown>) => string) => {
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 100; pages++) {
      const sep = path.includes('?') ? '&' : '?';
      const res: WorldResponse = await h.request('GET', `${path}${sep}limit=2${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`, { as });
      expect(res.status, res.text.slice(0, 300)).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['items', 'next_cursor']);
      expect(res.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...(res.body.items as Record<string, unknown>[]).map(idOf));
      cursor = res.body.next_cursor;
      if (cursor === null) return seen;
      expect(typeof cursor).toBe('string');
    }
    throw new Error(`${path}: more than 100 pages`);
  };
  const whole = async (path: string, as: string, idOf: (row: Record<string, unknown>) => string) => {
    const res = await h.request('GET', `${path}${path.includes('?') ? '&' : '?'}limit=200`, { as });
    expect(res.status).toBe(200);
    expect(res.body.next_cursor).toBeNull();
    return (res.body.items as Record<string, unknown>[]).map(idOf);
  };
  return { ...base, h, project_id, session_id, walk, whole };
}

const byId = (r: Record<string, unknown>) => r['id'] as string;

const lists: [string, (c: PagingCtx) => string, string, (r: Record<string, unknown>) => string, number][] = [
  ['projects', () => '/projects', 'acc_owner', byId, 7],
  ['members', (c) => `/projects/${c.project_id}/members`, 'acc_observer', (r) => r['account_id'] as string, 4],
  ['sessions', () => '/sessions', 'acc_owner', byId, 9],
  ['sessions of a project', (c) => `/sessions?project_id=${c.project_id}`, 'acc_owner', byId, 5],
  ['floors', (c) => `/sessions/${c.session_id}/floors`, 'acc_owner', byId, 5],
  ['pages', (c) => `/sessions/sess_001/floors/${c.h.floors.A.id}/pages`, 'acc_owner', byId, 2],
  ['inbox items', (c) => `/projects/${c.project_id}/inbox`, 'acc_owner', byId, 5],
  ['operation logs', (c) => `/projects/${c.project_id}/operation-logs`, 'acc_owner', byId, 10],
];

/** Every paged list of the API, as data. */
export const pagingGroup: HttpSuiteGroup<PagingCtx> = {
  name: 'paging on every list route',
  open: openPaging,
  openTimeout: 60_000,
  async close(ctx) {
    await ctx?.h.close();
  },
  checks: [
    {
      name: 'every list route of the OpenAPI document takes limit and a cursor (a new list without paging fails here)',
      async run(c) {
        const { h } = c;
        const doc = (await h.request('GET', '/openapi.json')).body as { paths: Record<string, Record<string, OpenApiOperation>> };
        const lists: string[] = [];
        for (const [path, item] of Object.entries(doc.paths)) {
          const get = item['get'];
          const schema = get?.responses?.['200']?.content?.['application/json']?.schema;
          const props = Object.keys(schema?.properties ?? {});
          const isList = props.includes('items') || props.includes('data');
          if (!get || !isList || path.endsWith('/live-inbox')) continue;
          const query = (get.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
          lists.push(path);
          expect(query, `${path} takes limit`).toContain('limit');
          // Keyset lists take `cursor` (or `page`, the Managed Agents name); the Project Event list resumes `after` a sequence.
          expect(query.some((q) => q === 'cursor' || q === 'page' || q === 'after'), `${path} takes a cursor`).toBe(true);
          // …and say where the next page starts.
          // (`{ data, meta }` lists say it in `meta`.)
          const meta = Object.keys((schema?.properties?.['meta'] as { properties?: Record<string, unknown> } | undefined)?.properties ?? {});
          expect([...props, ...meta].some((p) => p === 'next_cursor' || p === 'next_page' || p === 'next_after'), `${path} answers a next position`).toBe(true);
        }
        for (const path of ['/projects', '/projects/{id}/members', '/sessions', '/sessions/{id}/floors', '/sessions/{id}/floors/{floor_id}/pages', '/projects/{id}/inbox', '/projects/{id}/operation-logs']) {
          expect(lists).toContain(path);
        }
      },
    },

    {
      name: '%s: pages of 2 give every row once, in the list\'s order, and end with next_cursor null', each: lists,
      async run(c, _name, path, as, idOf, atLeast) {
        const { walk, whole } = c;
        const all = await whole(path(c), as, idOf);
        expect(all.length).toBeGreaterThanOrEqual(atLeast);
        expect(new Set(all).size).toBe(all.length);
        expect(await walk(path(c), as, idOf)).toEqual(all);
      },
    },

    {
      name: '%s: limit outside 1–200 is 400; a forged cursor or one of another list or filter is 400 invalid_cursor', each: lists,
      async run(c, _name, path, as) {
        const { h } = c;
        const p = path(c);
        const sep = p.includes('?') ? '&' : '?';
        for (const limit of ['0', '201', 'x']) expectError(await h.request('GET', `${p}${sep}limit=${limit}`, { as }), 400, 'validation_error');
        expectError(await h.request('GET', `${p}${sep}cursor=not-a-cursor`, { as }), 400, 'invalid_cursor');
        // A cursor of another list (the projects list's, or the sessions list's for the projects list) is refused.
        const other = p === '/projects' ? '/sessions' : '/projects';
        const foreign = (await h.request('GET', `${other}?limit=1`, { as: 'acc_owner' })).body.next_cursor as string;
        expect(typeof foreign).toBe('string');
        expectError(await h.request('GET', `${p}${sep}cursor=${encodeURIComponent(foreign)}`, { as }), 400, 'invalid_cursor');
      },
    },

    {
      name: 'a cursor is bound to its filters and to its caller: another project_id, or another account, is 400 invalid_cursor',
      async run(c) {
        const { h, project_id } = c;
        const cursor = (await h.request('GET', `/sessions?project_id=${project_id}&limit=1`, { as: 'acc_owner' })).body.next_cursor as string;
        expectError(await h.request('GET', `/sessions?limit=1&cursor=${encodeURIComponent(cursor)}`, { as: 'acc_owner' }), 400, 'invalid_cursor');
        expectError(await h.request('GET', `/sessions?project_id=proj_main&limit=1&cursor=${encodeURIComponent(cursor)}`, { as: 'acc_owner' }), 400, 'invalid_cursor');
        expectError(await h.request('GET', `/sessions?project_id=${project_id}&limit=1&cursor=${encodeURIComponent(cursor)}`, { as: 'acc_deriver' }), 400, 'invalid_cursor');
      },
    },

    {
      name: 'GET /sessions lists what the caller may see: its projects\' Sessions and those outside projects, never another tenant\'s',
      async run(c) {
        const { h, whole, project_id } = c;
        const mine = await whole('/sessions', 'acc_deriver', byId);
        expect(mine).toContain('sess_loose');
        expect(mine).toContain('sess_001');
        expect(mine).not.toContain('sess_side');
        expect(mine).not.toContain('sess_foreign');
        expectError(await h.request('GET', '/sessions?project_id=proj_side', { as: 'acc_deriver' }), 404, 'project_not_found');
      },
    },
  ],
};

/** Every paged list of the API. */
export function pagingSuite(kit: HttpConformanceOptions): void {
  registerSuite(kit, pagingGroup);
}
