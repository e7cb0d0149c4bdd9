/**
 * The client and the assertions of the HTTP kit's checks (`http-checks-*.ts`): `send` drives the
 * subject with `fetch` (in-process or over its socket), `expectSuccess` checks a route's documented
 * status and response schema, `expectError` the one envelope and the code → status →
 * `error.type` table, `readFrames` reads SSE frames; a failure throws {@link HttpConformanceError}.
 */
import { createParser } from 'eventsource-parser';
import type { ContentBlock } from '../live-inbox/content.js';
import { HTTP_ROUTES, type HttpRoute } from '../http/routes.js';
import { STATUS_BY_CODE, errorEnvelopeSchema, errorKind, SHOULD_RETRY_HEADER, shouldRetry } from '../http/errors.js';
import type { ErrorCode } from '../errors.js';
import type { HttpConformanceSubject } from './http-conformance-checks.js';

/** A check failed: `message` says which request and what differed. */
export class HttpConformanceError extends Error {
  override readonly name = 'HttpConformanceError';
}

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

export interface Send {
  key?: string;
  body?: unknown;
  /** Sent as is (string or bytes) with `content-type: application/json` unless headers say otherwise. */
  raw?: string | Uint8Array;
  headers?: Record<string, string>;
}

export async function send(subject: HttpConformanceSubject, method: string, path: string, options: Send = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...(options.key ? { authorization: `Bearer ${options.key}` } : {}) };
  let body: string | Uint8Array | undefined;
  if (options.raw !== undefined) body = options.raw;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined) headers['content-type'] = 'application/json';
  Object.assign(headers, options.headers);
  const res = await subject.fetch(`${subject.url}${path}`, { method, headers, body: body as BodyInit | undefined });
  const text = await res.text();
  let parsed: unknown = text;
  if ((res.headers.get('content-type') ?? '').includes('json') && text !== '') parsed = JSON.parse(text);
  return { status: res.status, headers: res.headers, text, body: parsed };
}

export function fail(what: string, res: Reply | undefined, message: string): never {
  throw new HttpConformanceError(`${what}: ${message}${res ? ` (status ${res.status}, body ${res.text.slice(0, 500)})` : ''}`);
}

const matches = (route: HttpRoute, method: string, path: string) =>
  route.method === method && new RegExp(`^${route.path.replace(/:[a-z_]+/g, '[^/]+')}$`).test(path.split('?')[0]!);

/** The route of the table that `method path` reaches (a static segment wins over a parameter). */
export function routeOf(method: string, path: string): HttpRoute {
  const params = (r: HttpRoute) => r.path.split(':').length;
  const route = HTTP_ROUTES.filter((r) => matches(r, method, path)).sort((a, b) => params(a) - params(b))[0];
  if (route === undefined) throw new HttpConformanceError(`no route of the table matches ${method} ${path}`);
  return route;
}

/** Calls a route and checks the documented status and that the body parses with the route's response schema. */
export async function expectSuccess(subject: HttpConformanceSubject, covered: Set<string>, method: string, path: string, options: Send = {}): Promise<Reply> {
  const route = routeOf(method, path);
  const res = await send(subject, method, path, options);
  const what = `${method} ${path}`;
  if (res.status !== route.status) fail(what, res, `expected ${route.status}`);
  if (!/^[A-Za-z0-9._:-]{1,128}$/.test(res.headers.get('x-request-id') ?? '')) fail(what, res, 'no x-request-id header');
  if (route.status === 204) {
    if (res.text !== '') fail(what, res, 'a 204 must have no body');
  } else {
    if (!(res.headers.get('content-type') ?? '').startsWith('application/json')) fail(what, res, 'expected a JSON body');
    const parsed = route.response.safeParse(res.body);
    if (!parsed.success) fail(what, res, `the body does not match the route's response schema: ${parsed.error.message}`);
  }
  covered.add(`${route.method} ${route.path}`);
  return res;
}

/** Checks an error answer: the envelope, `code` (when given) and its status, `error.type`, and the request id header. */
export function expectError(what: string, res: Reply, status: number, code?: ErrorCode): void {
  if (res.status !== status) fail(what, res, `expected ${status}${code ? ` ${code}` : ''}`);
  const parsed = errorEnvelopeSchema.safeParse(res.body);
  if (!parsed.success) fail(what, res, `not the error envelope: ${parsed.error.message}`);
  const error = parsed.data.error;
  if (code !== undefined && error.code !== code) fail(what, res, `expected code ${code}`);
  if (STATUS_BY_CODE[error.code] !== status && !(status === 400 && error.code === 'validation_error')) fail(what, res, `code ${error.code} belongs to status ${STATUS_BY_CODE[error.code]}`);
  if (error.type !== errorKind(status)) fail(what, res, `error.type must be ${errorKind(status)}`);
  if (res.headers.get('x-request-id') !== error.request_id) fail(what, res, 'x-request-id differs from error.request_id');
  const retry = shouldRetry(status);
  if ((res.headers.get(SHOULD_RETRY_HEADER) ?? undefined) !== (retry === undefined ? undefined : String(retry))) fail(what, res, `${SHOULD_RETRY_HEADER} must be ${retry ?? 'absent'} on a ${status}`);
  if (/\bat .*\.[jt]s:\d+|SELECT |INSERT /.test(res.text)) fail(what, res, 'an error body shows a stack or SQL');
}

export const text = (t: string): ContentBlock[] => [{ type: 'text', text: t }];

/** An SSE frame as a client sees it: `id` as a number (NaN without one), `event` (`message` when unnamed), `data` JSON-parsed. */
export interface SseFrame {
  id: number;
  event: string;
  data: any;
}

/**
 * Reads an SSE body with `eventsource-parser` (the parser clients use), pushing each event frame to
 * `frames` as it arrives, until `stop()` is true after a chunk, the body ends, or the read fails
 * (an abort included). `retry` receives a `retry:` hint (ms). Resolves when reading stopped.
 */
export async function collectSseFrames(body: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>, frames: SseFrame[], options: { stop?: () => boolean; retry?: (ms: number) => void } = {}): Promise<void> {
  const parser = createParser({
    onEvent: (e) => frames.push({ id: e.id === undefined ? NaN : Number(e.id), event: e.event ?? 'message', data: e.data === '' ? null : JSON.parse(e.data) }),
    onRetry: options.retry,
  });
  const decoder = new TextDecoder();
  try {
    for await (const chunk of body as AsyncIterable<Uint8Array>) {
      parser.feed(decoder.decode(chunk, { stream: true }));
      if (options.stop?.()) return;
    }
  } catch {
    // aborted or reset: the frames so far stand
  }
}

/** Reads SSE frames until `count` event frames arrived; returns them, the response headers and the `retry:` hint sent before them (ms, or undefined). */
export async function readFrames(subject: HttpConformanceSubject, path: string, key: string, count: number, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; frames: SseFrame[]; retry: number | undefined }> {
  const abort = new AbortController();
  const res = await subject.fetch(`${subject.url}${path}`, { headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream', ...headers }, signal: abort.signal });
  if (res.status !== 200 || res.body === null) {
    const body = await res.text();
    abort.abort();
    throw new HttpConformanceError(`GET ${path}: expected a 200 stream (status ${res.status}, body ${body.slice(0, 300)})`);
  }
  const frames: SseFrame[] = [];
  let retry: number | undefined;
  try {
    if (count > 0) await collectSseFrames(res.body, frames, { stop: () => frames.length >= count, retry: (ms) => { if (frames.length === 0) retry = ms; } });
  } finally {
    abort.abort();
    await res.body.cancel().catch(() => {});
  }
  return { status: res.status, headers: res.headers, frames, retry };
}

export const P = (s: HttpConformanceSubject) => `/projects/${s.project_id}`;
export const LI = (s: HttpConformanceSubject) => `/v1/awaken/sessions/${s.session_id}/live-inbox`;
