/**
 * Methods of a path (platform.md "Errors" → "Methods"): a request whose path is one of the route
 * table's but whose method is not declared there is 405 `method_not_allowed` with `Allow` listing
 * the methods the path answers; only a path no route has is 404 `not_found`. One matcher for every
 * adapter: they call {@link methodNotAllowedAnswer} where their framework found no route.
 */
import { InboxKitError } from '../errors.js';
import { envelopeOf, type ErrorAnswer } from './errors.js';

/** What the matcher needs of a route: its method and `:name` path. */
export interface RouteShape {
  method: string;
  path: string;
}

/** A `:name` path as a matcher of request paths (a parameter is one non-empty segment). */
function matcherOf(path: string): RegExp {
  const source = path
    .split('/')
    .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${source}/?$`);
}

/** The methods `path` answers, for {@link methodNotAllowedAnswer}: built once per route table. */
export interface MethodIndex {
  /**
   * The methods declared for the request path `path` (without query, without the adapter's prefix
   * or mount), upper-case, in a fixed order, `HEAD` with every `GET`; `OPTIONS` too when CORS
   * answers preflights. Empty when no route has this path.
   */
  allowed(path: string): string[];
}

const ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * The method index of `routes` (the ones an adapter serves, plus `GET /openapi.json` when served).
 * @param options.options `true` when CORS is on: `OPTIONS` (its preflight) is allowed on every path.
 */
export function methodIndex(routes: readonly RouteShape[], options: { options?: boolean } = {}): MethodIndex {
  const byPath = new Map<string, { matcher: RegExp; methods: Set<string> }>();
  for (const route of routes) {
    let entry = byPath.get(route.path);
    if (entry === undefined) {
      entry = { matcher: matcherOf(route.path), methods: new Set() };
      byPath.set(route.path, entry);
    }
    const method = route.method.toUpperCase();
    entry.methods.add(method);
    if (method === 'GET') entry.methods.add('HEAD');
    if (options.options) entry.methods.add('OPTIONS');
  }
  const entries = [...byPath.values()];
  return {
    allowed(path) {
      const methods = new Set<string>();
      for (const entry of entries) if (entry.matcher.test(path)) for (const m of entry.methods) methods.add(m);
      return ORDER.filter((m) => methods.has(m));
    },
  };
}

/**
 * The answer for a request no route took: 405 `method_not_allowed` with `Allow: <methods>` when
 * the path is one the table has (under another method), else `undefined` (answer the 404).
 * @param path the request path within the adapter (its prefix or mount removed), without query.
 */
export function methodNotAllowedAnswer(index: MethodIndex, method: string, path: string, request_id: string): ErrorAnswer | undefined {
  const allowed = index.allowed(path);
  if (allowed.length === 0) return undefined;
  const answer = envelopeOf(new InboxKitError('method_not_allowed', `Method ${method.toUpperCase()} is not allowed on ${path}; allowed: ${allowed.join(', ')}`), request_id);
  return { ...answer, headers: { ...answer.headers, allow: allowed.join(', ') } };
}
