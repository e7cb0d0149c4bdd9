/**
 * Helpers of this package's remaining hostile-input and security tests (the suites themselves are
 * the conformance kit's `hostileInputSuite` and `securitySuite`): the route inventory checked
 * against Fastify's router, and every row of every table of the database.
 */
import { routeInventory as documentedRoutes, type RouteInfo } from '@inbox-kit/core/testing';
import { expect } from 'vitest';
import type { Harness } from './harness.js';

export { expectNoLeak, heldModel } from '@inbox-kit/core/testing';

/**
 * Every route of the server, from its own OpenAPI document, checked against the router itself
 * (`printRoutes`): a route missing from the document fails here instead of escaping the kit's
 * suites, which attack the routes the document lists. The API reference (`/docs…`) and automatic
 * `HEAD` routes are left out.
 */
export async function routeInventory(h: Harness): Promise<RouteInfo[]> {
  const routes = await documentedRoutes(h.url);
  const documented = routes.map((r) => `${r.method} ${r.template.replace(/\{([^}]+)\}/g, ':$1')}`).sort();
  const served = routerRoutes(h.app.printRoutes({ commonPrefix: false }))
    .filter(([method, path]) => method !== 'HEAD' && !path.startsWith('/docs'))
    .map(([method, path]) => `${method} ${path}`)
    .sort();
  expect(documented, 'every served route is in /openapi.json (a hidden route would escape these suites)').toEqual(served);
  return routes;
}

/** `[method, path]` of every route in Fastify's `printRoutes({ commonPrefix: false })` tree. */
export function routerRoutes(tree: string): [string, string][] {
  const out: [string, string][] = [];
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const m = /^([│ ]*)[├└]── (.*?)(?: \(([^)]*)\))?$/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    stack.length = depth;
    const path = (depth > 0 ? stack[depth - 1]! : '') + m[2]!;
    stack[depth] = path;
    for (const method of (m[3] ?? '').split(',').map((s) => s.trim()).filter(Boolean)) out.push([method, path]);
  }
  return out;
}

// — "nothing was written" —

/** The application tables of the database (migration bookkeeping excluded). */
export async function tableNames(h: Harness): Promise<string[]> {
  const rows = h.engine === 'sqlite'
    ? await h.raw<{ name: string }>(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
    : await h.raw<{ name: string }>(`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`);
  return rows.map((r) => r.name).filter((n) => !n.startsWith('kysely_')).sort();
}

/** Every row of every table, canonically ordered (catches updates as well as inserts). */
export async function dumpAll(h: Harness, tables: string[]): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const t of tables) out[t] = (await h.raw(`SELECT * FROM ${t}`)).map((r) => JSON.stringify(r)).sort();
  return out;
}
