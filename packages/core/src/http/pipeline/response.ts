/**
 * The response policy of the pipeline, one decision for every adapter (platform.md "HTTP
 * adapters" → "Responses"): every route declares its response schema in zod.
 *
 * - off (the default when `NODE_ENV` is `production`): the body is `JSON.stringify(data)`, with
 *   no zod parse on the hot path (a compiled serialiser measured no faster for these bodies);
 * - on (the default elsewhere, so in tests): the data is parsed by the route's schema first and
 *   must come out unchanged — a field the schema does not know, a value it would coerce, default
 *   or transform, or a missing field throws {@link ResponseSchemaError} (answered 500
 *   `internal_error`, nothing of it shown). The body sent is the same `JSON.stringify(data)`
 *   either way, so a test that passes proves what production sends. Key order is not checked.
 */
import type { ZodType } from 'zod';

/** The default of `responseValidation`: on unless `NODE_ENV` is `production`. */
export function defaultResponseValidation(): boolean {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  return env?.NODE_ENV !== 'production';
}

/** A response that does not match its route's schema (`responseValidation: true` only). */
export class ResponseSchemaError extends Error {
  constructor(operationId: string, why: string, options?: { cause?: unknown }) {
    super(`Response of ${operationId} does not match its schema: ${why}`, options);
    this.name = 'ResponseSchemaError';
  }
}

/** Whether two parsed JSON values are equal, key order ignored. */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === (b as unknown[]).length && a.every((v, i) => sameJson(v, (b as unknown[])[i]));
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

const asJson = (text: string | undefined): unknown => (text === undefined ? undefined : JSON.parse(text));

/**
 * The body text of `data` for a route whose response schema is `schema`: `JSON.stringify(data)`;
 * with `validate`, only after `schema` parsed it unchanged (compared as JSON, key order ignored).
 * @throws ResponseSchemaError (validate only).
 */
export function responseText(schema: ZodType, data: unknown, validate: boolean, operationId: string): string {
  const text = JSON.stringify(data);
  if (!validate) return text;
  const result = schema.safeParse(data);
  if (!result.success) throw new ResponseSchemaError(operationId, result.error.message, { cause: result.error });
  if (JSON.stringify(result.data) !== text && !sameJson(asJson(JSON.stringify(result.data)), asJson(text))) {
    throw new ResponseSchemaError(operationId, 'the schema would change it (unknown, missing, coerced or defaulted fields)');
  }
  return text;
}

/**
 * {@link responseText} for a body the service already holds as JSON `text`: `text` itself; with
 * `validate`, only after `schema` parsed `JSON.parse(text)` unchanged.
 * @throws ResponseSchemaError (validate only).
 */
export function responseJson(schema: ZodType, text: string, validate: boolean, operationId: string): string {
  if (validate) responseText(schema, JSON.parse(text), true, operationId);
  return text;
}
