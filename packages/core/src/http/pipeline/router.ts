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
}

/** Compiles `routes` (each with `method` and `:name` `path`). */
export function createRouter<R extends Pick<HttpRoute, 'method' | 'path'>>(routes: readonly R[]): Router<R> {
  const statics = new Map<string, R>();
  const dynamics = new Map<string, Dynamic<R>[]>();
  for (const route of routes) {
    const segments = route.path.split('/');
    if (!segments.some((s) => s.startsWith(':'))) {
      statics.set(`${route.method} ${route.path}`, route);
      continue;
    }
    const key = `${route.method} ${segments.length}`;
    const list = dynamics.get(key) ?? [];
    list.push({ route, segments });
    dynamics.set(key, list);
  }
  const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;
  return {
    match(requestMethod, path) {
      const method = requestMethod === 'HEAD' ? 'GET' : requestMethod;
      const found = statics.get(`${method} ${path}`);
      if (found !== undefined) return { route: found, params: NO_PARAMS };
      const parts = path.split('/');
      const candidates = dynamics.get(`${method} ${parts.length}`);
      if (candidates === undefined) return undefined;
      for (const { route, segments } of candidates) {
        const params = matchSegments(segments, parts);
        if (params !== undefined) return { route, params };
      }
      return undefined;
    },
  };
}

/** The parameters when `parts` fit `segments` (same length), else undefined. */
function matchSegments(segments: string[], parts: string[]): Record<string, string> | undefined {
  let params: Record<string, string> | undefined;
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    const part = parts[i]!;
    if (segment.startsWith(':')) {
      if (part === '') return undefined;
      (params ??= {})[segment.slice(1)] = part.includes('%') ? decodeURIComponent(part) : part;
    } else if (segment !== part) {
      return undefined;
    }
  }
  return params ?? {};
}
