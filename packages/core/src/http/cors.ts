/**
 * Cross-origin requests (platform.md "Browsers" → "CORS"): off unless an adapter is given exact
 * origins. The rules live here once — which origins, which methods, which headers a page may read,
 * whether credentials are allowed, how long a preflight is cached — and the request pipeline
 * (`createHttpHandler`, every adapter) applies them, gated by {@link corsApplies}, so every
 * adapter's answers agree header for header.
 */

/** The CORS option of every adapter (`cors`), and of the demo (`CORS_ORIGINS`). */
export interface CorsOptions {
  /**
   * Exact origins allowed to call the API from a browser (`scheme://host[:port]`, as a browser
   * sends `Origin`: `https://app.example.com`, `http://localhost:5173`). No wildcard: list each.
   */
  origins: readonly string[];
  /**
   * Answer `Access-Control-Allow-Credentials: true` (default false). inbox-kit uses no cookie:
   * a page sends its key as `Authorization` (`fetch`) or a stream token as `access_token`
   * (`EventSource`), so leave it off unless a proxy in front authenticates with cookies.
   */
  credentials?: boolean;
  /** Seconds a browser may cache a preflight answer (`Access-Control-Max-Age`, default 600). */
  maxAgeSeconds?: number;
}

/** The resolved policy both adapters apply. Values are header values, joined exactly as sent. */
export interface CorsPolicy {
  /** True when `origin` (the request's `Origin` header) is one of the allowed origins. */
  allows(origin: string | undefined): boolean;
  origins: readonly string[];
  /** `Access-Control-Allow-Methods` of a preflight. */
  methods: string;
  /** `Access-Control-Expose-Headers`: response headers a page may read (request ids, retry hints, replays). */
  exposedHeaders: string;
  credentials: boolean;
  /** `Access-Control-Max-Age` of a preflight, seconds. */
  maxAgeSeconds: number;
}

/** Methods a preflight allows (every method of the route table). */
export const CORS_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/**
 * Response headers a page may read: `request-id` and `x-request-id` (what to quote in a bug
 * report, what `@anthropic-ai/sdk` reads into `err.requestID`), `retry-after` and `x-should-retry`
 * (when and whether to retry), `idempotent-replayed` (a replayed create), `allow` (a 405).
 */
export const CORS_EXPOSED_HEADERS = ['request-id', 'x-request-id', 'retry-after', 'x-should-retry', 'idempotent-replayed', 'allow'] as const;

/** Default `Access-Control-Max-Age`: 600 s. */
export const DEFAULT_CORS_MAX_AGE_SECONDS = 600;

const ORIGIN = /^https?:\/\/[^/?#\s*]+$/;

/**
 * The policy of `options`.
 * @throws TypeError when an origin is not an exact `http(s)://host[:port]` origin (a wildcard, a
 *   path, a trailing slash) or `maxAgeSeconds` is not an integer ≥ 0.
 */
export function corsPolicy(options: CorsOptions): CorsPolicy {
  const origins = [...new Set(options.origins)];
  for (const origin of origins) {
    if (!ORIGIN.test(origin)) {
      throw new TypeError(`cors: ${JSON.stringify(origin)} is not an exact origin (scheme://host[:port], no path, no trailing slash, no wildcard)`);
    }
  }
  const maxAgeSeconds = options.maxAgeSeconds ?? DEFAULT_CORS_MAX_AGE_SECONDS;
  if (!Number.isInteger(maxAgeSeconds) || maxAgeSeconds < 0) throw new TypeError(`cors: maxAgeSeconds must be an integer ≥ 0, got ${maxAgeSeconds}`);
  const allowed = new Set(origins);
  return {
    allows: (origin) => origin !== undefined && allowed.has(origin),
    origins,
    methods: CORS_METHODS.join(','),
    exposedHeaders: CORS_EXPOSED_HEADERS.join(','),
    credentials: options.credentials ?? false,
    maxAgeSeconds,
  };
}

/**
 * Whether a request gets CORS headers: it carries an allowed `Origin`. Such an `OPTIONS` request
 * is answered as a preflight (204, on every path); any other `OPTIONS` is an undeclared method
 * (405 with `Allow`), and a request from another origin gets no CORS header at all (the browser
 * then refuses the page the answer).
 */
export function corsApplies(policy: CorsPolicy | undefined, origin: string | undefined): boolean {
  return policy !== undefined && policy.allows(origin);
}

/**
 * Parses the demo's `CORS_ORIGINS`: exact origins separated by commas or spaces; empty → off.
 * @throws TypeError as {@link corsPolicy}.
 */
export function parseCorsOrigins(value: string | undefined): string[] {
  const origins = (value ?? '').split(/[\s,]+/).filter((s) => s !== '');
  if (origins.length > 0) corsPolicy({ origins });
  return origins;
}
