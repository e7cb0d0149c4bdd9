/**
 * Route matching of the pipeline: a request path (within the mount, without query) to the route
 * of the table it names and its decoded `:name` parameters. Static paths are one map lookup; paths
 * with parameters are tried per method and segment count. No trailing-slash folding: `/v1/me/` is
 * not `/v1/me` (as Hono's and Fastify's routers by default).
 */
import type { HttpRoute } from '../routes.js';

/** A route found for a request: the route and its path parameters (percent-decoded). */
export interface RouteMatch<R> {
  route: R;
  params: Record<string, string>;
}

/** The compiled table. */
export interface Router<R> {
  /** The route of `method` (`HEAD` finds `GET` routes) at `path`, or undefined. */
  match(method: string, path: string): RouteMatch<R> | undefined;
}

interface Dynamic<R> {
  route: R;
  segments: string[];
  /** The parameter name of each `:name` segment (undefined for a literal segment), read once here, not per request. */
  names: (string | undefined)[];
}

/** Compiles `routes` (each with `method` and `:name` `path`). */
export function createRouter<R extends Pick<HttpRoute, 'method' | 'path'>>(routes: readonly R[]): Router<R> {
  // Per method: static paths by path, parameter routes by segment count (in table order).
  const statics = new Map<string, Map<string, R>>();
  const dynamics = new Map<string, Map<number, Dynamic<R>[]>>();
  for (const route of routes) {
    const segments = route.path.split('/');
    if (!segments.some((s) => s.startsWith(':'))) {
      const byPath = statics.get(route.method) ?? new Map<string, R>();
      statics.set(route.method, byPath);
      byPath.set(route.path, route);
      continue;
    }
    const byCount = dynamics.get(route.method) ?? new Map<number, Dynamic<R>[]>();
    dynamics.set(route.method, byCount);
    const list = byCount.get(segments.length) ?? [];
    list.push({ route, segments, names: segments.map((s) => (s.startsWith(':') ? s.slice(1) : undefined)) });
    byCount.set(segments.length, list);
  }
  const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;
  return {
    match(requestMethod, path) {
      const method = requestMethod === 'HEAD' ? 'GET' : requestMethod;
      const found = statics.get(method)?.get(path);
      if (found !== undefined) return { route: found, params: NO_PARAMS };
      const parts = path.split('/');
      const candidates = dynamics.get(method)?.get(parts.length);
      if (candidates === undefined) return undefined;
      for (const candidate of candidates) {
        if (fits(candidate, parts)) return { route: candidate.route, params: paramsOf(candidate, parts) };
      }
      return undefined;
    },
  };
}

/** Whether `parts` (as many as the route's segments) fit the route: every literal segment equal, every parameter non-empty. */
function fits(route: Dynamic<unknown>, parts: string[]): boolean {
  const { segments, names } = route;
  for (let i = 0; i < segments.length; i++) {
    if (names[i] === undefined ? segments[i] !== parts[i] : parts[i] === '') return false;
  }
  return true;
}

/** The percent-decoded parameters of `parts`, which {@link fits} the route. */
function paramsOf(route: Dynamic<unknown>, parts: string[]): Record<string, string> {
  const params: Record<string, string> = {};
  const { names } = route;
  for (let i = 0; i < names.length; i++) {
    const name = names[i];
    if (name === undefined) continue;
    const part = parts[i]!;
    params[name] = part.includes('%') ? decodeURIComponent(part) : part;
  }
  return params;
}
