/**
 * Response serialisation. Every route declares its response schema in zod (the OpenAPI document is
 * generated from it); the answers are data the services and the store just produced.
 *
 * - `responseValidation: false` (production): a response is `JSON.stringify(data)`. No zod parse
 *   on the hot path: re-validating a 50-item page took a large share of a list (README
 *   "Benchmarks"; a compiled `fast-json-stringify` serialiser measured no faster than
 *   `JSON.stringify` for these bodies).
 * - `responseValidation: true` (the default outside `NODE_ENV=production`, so in tests): the data
 *   is parsed by the route's schema first and MUST come out unchanged — a field the schema does not
 *   know, a value it would coerce, default or transform, or a missing field fails the response with
 *   a 500 (`internal_error`, nothing of it shown to the client). So a test that passes proves the
 *   production answers carry exactly what the schema describes. The body sent is the same
 *   `JSON.stringify(data)` either way. Key order is not checked: it is the order of the objects the
 *   services return (the SQL stores build records in the schemas' order; before, zod re-ordered
 *   keys to the schema's, so a store building records in another order now shows that order).
 */
import { isDeepStrictEqual } from 'node:util';
import type { FastifySerializerCompiler } from 'fastify';
import type { ZodType } from 'zod';

/** The default of `responseValidation`: on unless `NODE_ENV` is `production`. */
export const defaultResponseValidation = (): boolean => process.env.NODE_ENV !== 'production';

/** Production serialiser: `JSON.stringify`, whatever the schema (schemas still document the route). */
export const stringifySerializerCompiler: FastifySerializerCompiler<unknown> = () => (data) => JSON.stringify(data);

/** A response that does not match its route's schema (`responseValidation: true` only). */
export class ResponseSchemaError extends Error {
  constructor(method: string, url: string, why: string, options?: { cause?: unknown }) {
    super(`Response of ${method} ${url} does not match its schema: ${why}`, options);
    this.name = 'ResponseSchemaError';
  }
}

/** The same data as JSON would carry it (drops `undefined`, turns dates into strings). */
const asJson = (value: unknown): unknown => {
  const text = JSON.stringify(value);
  return text === undefined ? undefined : JSON.parse(text);
};

/**
 * Test serialiser: parses `data` with the route's zod schema, and refuses data the parse changes
 * (compared as JSON, key order ignored). Throws {@link ResponseSchemaError}.
 */
export const validatingSerializerCompiler: FastifySerializerCompiler<unknown> = ({ schema, method, url }) => {
  const zod = schema as ZodType;
  return (data) => {
    const text = JSON.stringify(data);
    if (typeof zod?.safeParse !== 'function') return text;
    const result = zod.safeParse(data);
    if (!result.success) throw new ResponseSchemaError(method, url, result.error.message, { cause: result.error });
    // Same text: unchanged (the usual case, one stringify). Else compare as JSON, key order ignored.
    if (JSON.stringify(result.data) !== text && !isDeepStrictEqual(asJson(result.data), text === undefined ? undefined : JSON.parse(text))) {
      throw new ResponseSchemaError(method, url, 'the schema would change it (unknown, missing, coerced or defaulted fields)');
    }
    return text;
  };
};
