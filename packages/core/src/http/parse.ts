/**
 * Reading request parts the way every adapter must (platform.md "Errors", "Connections and request
 * bodies"): each part is checked with its route schema (400 `validation_error`, one detail per
 * problem, `path` prefixed with the part: `body.title`, `querystring.limit`), and a JSON body must
 * be `application/json`, valid UTF-8, valid JSON and free of prototype-poisoning keys.
 */
import type { z } from 'zod';
import { InboxKitError } from '../errors.js';
import { findInexactJsonNumber } from '../json-numbers.js';
import { markParsed } from '../validation.js';

/** The request parts a route may declare a schema for. */
export type RequestPart = 'params' | 'querystring' | 'headers' | 'body';

/**
 * Parses one part with its schema.
 * @returns the parsed (defaulted, coerced) value.
 * @throws InboxKitError `validation_error` (400) `Invalid <part>` with one detail per issue.
 */
export function parseRequestPart<S extends z.ZodType>(part: RequestPart, schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) {
    // A body or a query is parsed once: the service it goes to sees that it is this schema's output (`parseOrThrow`).
    if (part === 'body' || part === 'querystring') markParsed(schema, result.data);
    return result.data;
  }
  throw new InboxKitError('validation_error', `Invalid ${part}`, result.error.issues.map((issue) => ({
    path: [part, ...issue.path.map(String)].join('.'),
    message: issue.message,
    code: issue.code,
  })));
}

/** A query string as an object: a key given once is a string, a repeated key an array of strings. */
export function queryObject(params: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [key, value] of params) {
    const seen = out[key];
    out[key] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return out;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const FORBIDDEN_KEY = 'Body is valid JSON but contains a forbidden key (__proto__, or constructor with prototype)';

/** False when no key of the JSON `text` can be `__proto__` or `constructor` (neither appears, nor any `\u` escape). */
function mayHoldForbiddenKey(text: string): boolean {
  return text.includes('__proto__') || text.includes('constructor') || text.includes('\\u');
}

/** `JSON.parse` reviver refusing a `__proto__` key, or a `constructor` key whose value has a `prototype`. */
function rejectForbiddenKeys(key: string, value: unknown): unknown {
  if (key === '__proto__') throw new SyntaxError(FORBIDDEN_KEY);
  if (key === 'constructor' && typeof value === 'object' && value !== null && Object.hasOwn(value, 'prototype')) {
    throw new SyntaxError(FORBIDDEN_KEY);
  }
  return value;
}

/**
 * Decodes a JSON request body. An empty body is `undefined` (the route's body schema then decides).
 * @param contentType the `Content-Type` header (must be `application/json`, parameters allowed).
 * @throws InboxKitError `unsupported_media_type` (415) for another type or a charset other than
 *   UTF-8; `validation_error` (400) for invalid UTF-8, invalid JSON, a `__proto__` /
 *   `constructor.prototype` key, or a number a double cannot hold exactly (platform.md "JSON numbers").
 */
export function parseJsonBody(bytes: Uint8Array, contentType: string | undefined): unknown {
  if (bytes.byteLength === 0) return undefined;
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') throw new InboxKitError('unsupported_media_type', 'Unsupported Content-Type; send application/json');
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? '')?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw new InboxKitError('unsupported_media_type', 'Unsupported Content-Type charset; send application/json in UTF-8');
  }
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new InboxKitError('validation_error', 'Request body is not valid UTF-8');
  }
  let parsed: unknown;
  try {
    // The key check walks every value (a reviver costs ~3× the parse): only a text that could
    // hold such a key — literally or through a `\u` escape — needs it.
    parsed = mayHoldForbiddenKey(text) ? JSON.parse(text, rejectForbiddenKeys) : JSON.parse(text);
  } catch (error) {
    const message = error instanceof SyntaxError && error.message === FORBIDDEN_KEY ? error.message : 'Body is not valid JSON';
    throw new InboxKitError('validation_error', message);
  }
  const inexact = findInexactJsonNumber(text);
  if (inexact !== undefined) {
    throw new InboxKitError('validation_error', 'A number cannot be stored exactly', [{
      path: ['body', ...inexact.path].join('.'),
      message: `${inexact.literal.length > 40 ? `${inexact.literal.slice(0, 40)}…` : inexact.literal} cannot be stored exactly (JSON numbers are IEEE-754 doubles: integers up to ±9007199254740991, about 15–17 significant digits); send it as a string`,
      code: 'inexact_number',
    }]);
  }
  return parsed;
}

/**
 * The error for a request path whose percent-encoding does not decode (`/projects/%zz`, a
 * truncated UTF-8 sequence such as `%E0%A4%A`): 400 `validation_error` in the envelope, the same
 * on every adapter (platform.md "Errors": a malformed URL is a 400). Adapters answer it before
 * routing, so such a request never reaches a route (nor a 404).
 */
export function malformedPathError(): InboxKitError {
  return new InboxKitError('validation_error', 'The URL path is not valid: malformed percent-encoding');
}

/** True when every segment of `path` (the path alone, without the query) percent-decodes. */
export function isWellFormedPath(path: string): boolean {
  // Without a `%` there is nothing to decode (the common case: no exception frame to set up).
  if (!path.includes('%')) return true;
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}
