/**
 * The error responses of each OpenAPI operation, from the route's declaration (platform.md
 * "HTTP contract" → "OpenAPI"): exactly the codes {@link declaredErrorCodes} gives the route,
 * grouped by their status ({@link STATUS_BY_CODE}), each status one response in the error envelope
 * (`#/components/schemas/ErrorEnvelope`) whose `error.code` is narrowed to those codes (`enum`).
 */
import type { ErrorCode } from '../errors.js';
import { RETRY_AFTER_BY_CODE, STATUS_BY_CODE } from './errors.js';
import { declaredErrorCodes, type ErrorDeclaration, type RouteDeclaration } from './route-types.js';

type Json = Record<string, unknown>;

/** What an answer of each error status means, before the list of its codes. */
const STATUS_MEANING: Record<number, string> = {
  400: 'Invalid request',
  401: 'Not authenticated: no credential, or an unknown, revoked or throttled one',
  403: 'The caller may not do this',
  404: 'Not found, or not visible to the caller (indistinguishable)',
  405: 'The path does not answer this method',
  408: 'The request body did not arrive in time',
  409: 'Conflicts with the current state; nothing changed',
  410: 'No native attempt accepts live input: send the content as a durable Session event instead',
  413: 'Too large',
  415: 'The body is not `application/json`',
  429: 'Too many requests: retry after `Retry-After`',
  431: 'The request headers are too large',
  500: 'Server error; never a stack or SQL',
  503: 'Unavailable now: retry after `Retry-After`',
};

/**
 * The codes an operation documents: its route's declared codes, or — for an operation no route
 * declares (the document's own route, a host's) — the shared ones its security and body imply.
 */
export function documentedErrorCodes(route: ErrorDeclaration | undefined, op: { auth: boolean; body: boolean; method: string }): ErrorCode[] {
  if (route !== undefined) return declaredErrorCodes(route);
  const method = op.method.toUpperCase() as RouteDeclaration['method'];
  return declaredErrorCodes({ method, errors: [], public: !op.auth });
}

/**
 * The error responses (by status, ascending) of an operation answering `codes`: each with a
 * description naming its codes, the request-id, `x-should-retry` (and on 429/503 `retry-after`)
 * headers, and the envelope whose `error.code` is one of them.
 */
export function errorResponsesFor(codes: readonly ErrorCode[], headers: Json): Record<string, Json> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = STATUS_BY_CODE[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, Json> = {};
  for (const status of [...byStatus.keys()].sort((a, b) => a - b)) {
    const list = byStatus.get(status) ?? [];
    const retryAfter = status === 429 || status === 503 || list.some((c) => RETRY_AFTER_BY_CODE[c] !== undefined);
    responses[String(status)] = {
      description: `${STATUS_MEANING[status] ?? 'Error'}: ${list.map((c) => `\`${c}\``).join(', ')}`,
      headers: { ...headers, ...(retryAfter ? { 'retry-after': { $ref: '#/components/headers/RetryAfter' } } : {}) },
      content: {
        'application/json': {
          schema: {
            allOf: [
              { $ref: '#/components/schemas/ErrorEnvelope' },
              { type: 'object', properties: { error: { type: 'object', properties: { code: { enum: list } } } } },
            ],
          },
        },
      },
    };
  }
  return responses;
}
