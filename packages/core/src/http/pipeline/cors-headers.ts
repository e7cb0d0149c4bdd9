/**
 * CORS headers of the pipeline (platform.md "Browsers" → "CORS"): the policy of `corsPolicy`
 * applied to one request. Only a request with an allowed `Origin` gets CORS headers; its
 * preflight (`OPTIONS` with `Access-Control-Request-Method`) is answered 204 on every path, before
 * authentication and load shedding; any other `OPTIONS` is an undeclared method (405 with `Allow`).
 */
import type { CorsPolicy } from '../cors.js';

/** The headers every answer to an allowed origin carries (besides `Vary`). */
export function corsHeaders(policy: CorsPolicy, origin: string): Record<string, string> {
  const headers: Record<string, string> = { 'access-control-allow-origin': origin };
  if (policy.credentials) headers['access-control-allow-credentials'] = 'true';
  headers['access-control-expose-headers'] = policy.exposedHeaders;
  return headers;
}

/** True when `method` and `headers` make a preflight (an `OPTIONS` naming the method it asks for). */
export function isPreflight(method: string, headers: Readonly<Record<string, string | undefined>>): boolean {
  return method === 'OPTIONS' && headers['access-control-request-method'] !== undefined;
}

/** The 204 answer's headers for a preflight from the allowed `origin`. */
export function preflightHeaders(policy: CorsPolicy, origin: string, requestHeaders: string | undefined): Record<string, string> {
  const headers = corsHeaders(policy, origin);
  headers['vary'] = 'Origin';
  headers['access-control-max-age'] = String(policy.maxAgeSeconds);
  headers['access-control-allow-methods'] = policy.methods;
  if (requestHeaders !== undefined && requestHeaders !== '') {
    headers['access-control-allow-headers'] = requestHeaders.split(',').map((h) => h.trim()).join(',');
    headers['vary'] = 'Origin, Access-Control-Request-Headers';
  }
  return headers;
}
