/**
 * The HTTP layer under every SDK call: URL building (ids URL-encoded), auth and per-call headers,
 * JSON bodies, error parsing, and the retry policy — idempotent requests (GET, PUT, DELETE, and a
 * POST the server deduplicates by its `Idempotency-Key`) are retried on network errors, 429, 502,
 * 503 and 504 with exponential backoff and jitter, honouring `Retry-After`; an answer's
 * `x-should-retry` header wins over the status (`false`: never retried, `true`: retried whatever
 * the status); other POSTs and PATCH are never retried. Spec: platform.md "Identity and
 * credentials", "Errors" → "Retries".
 */
import { errorFromResponse, InboxKitApiError } from './errors.js';

/** The `fetch` the client calls; inject one for tests, proxies or older runtimes. */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** Retry policy of idempotent requests. */
export interface RetryOptions {
  /** Retries after the first attempt (default 2, so at most 3 attempts). 0 disables retries. */
  retries?: number;
  /** First backoff in ms (default 100); doubles per retry, with jitter in [½, 1] of it. */
  baseDelayMs?: number;
}

/** Transport configuration (the resolved client options). */
export interface TransportConfig {
  baseUrl: string;
  apiKey: string;
  fetch: FetchLike;
  accountId: string | undefined;
  headers: Record<string, string>;
  retries: number;
  baseDelayMs: number;
}

/** Query values; `undefined`/`null` are left out, arrays are sent comma-separated. */
export type QueryValue = string | number | boolean | readonly string[] | null | undefined;
export type Query = Record<string, QueryValue>;

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One request of {@link Transport.request}. */
export interface RequestSpec {
  query?: Query;
  /** Serialised as JSON; `undefined` sends no body. */
  body?: unknown;
  accountId?: string | undefined;
  idempotencyKey?: string | undefined;
  /**
   * Retry this POST like an idempotent request. Only for routes whose server deduplicates by
   * `Idempotency-Key` (and only when a key is sent): a repeat then returns the first result.
   */
  retryWithKey?: boolean | undefined;
  signal?: AbortSignal | undefined;
}

/** The per-call options every method accepts (see the SDK's `RequestOptions`). */
interface CallOptions {
  accountId?: string;
  signal?: AbortSignal;
}

/**
 * Splits the per-call options (`accountId`, `signal`) from the rest of a params object that mixes
 * them with filters (the seed's calling convention for lists and decisions).
 */
export function splitOptions<P extends CallOptions>(params: P | undefined): { opts: CallOptions; rest: Omit<P, 'accountId' | 'signal'> } {
  const { accountId, signal, ...rest } = params ?? ({} as P);
  const opts: CallOptions = {};
  if (accountId !== undefined) opts.accountId = accountId;
  if (signal !== undefined) opts.signal = signal;
  return { opts, rest };
}

/**
 * Every item of a keyset-paged list, page by page: calls `page(cursor)` from `start` (undefined:
 * the first page) and follows `nextCursor` until it is `null` (or repeats). Errors of any page
 * are thrown from the iteration.
 */
export async function* paginate<T>(page: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor: string | null }>, start?: string): AsyncGenerator<T, void, undefined> {
  let cursor = start;
  for (;;) {
    const current = await page(cursor);
    yield* current.items;
    if (current.nextCursor === null || current.nextCursor === cursor) return;
    cursor = current.nextCursor;
  }
}

/** A wire page `{ items, next_cursor }` in the SDK's shape. */
export function cursorPage<T>(body: Record<string, unknown>, items: T[]): { items: T[]; nextCursor: string | null } {
  return { items, nextCursor: (body['next_cursor'] as string | null | undefined) ?? null };
}

const IDEMPOTENT: ReadonlySet<HttpMethod> = new Set(['GET', 'PUT', 'DELETE']);
const RETRY_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);

/**
 * A path with every interpolated value URL-encoded: ``path`/projects/${id}/inbox` ``.
 */
export function path(strings: TemplateStringsArray, ...values: Array<string | number>): string {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += encodeURIComponent(String(value)) + (strings[i + 1] ?? '');
  });
  return out;
}

/**
 * Whether an error answer may be retried (an idempotent request with retries left): the server's
 * `x-should-retry` when it sends `true` or `false`, else whether the status is 429, 502, 503 or 504.
 */
export function shouldRetryResponse(status: number, header: string | null): boolean {
  if (header === 'true') return true;
  if (header === 'false') return false;
  return RETRY_STATUSES.has(status);
}

/** The wait a `Retry-After` header asks for, in ms (seconds or an HTTP date), or `undefined`. */
export function retryAfterMs(header: string | null, now: number = Date.now()): number | undefined {
  if (header === null) return undefined;
  const value = header.trim();
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Exponential backoff with jitter: `baseDelayMs · 2^attempt`, scaled by a random factor in [½, 1]. */
export function backoffMs(attempt: number, baseDelayMs: number, random: () => number = Math.random): number {
  const ceiling = baseDelayMs * 2 ** attempt;
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/** The reason an aborted signal carries (an `AbortError` when it carries none). */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/** Waits `ms`; rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal as AbortSignal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, Math.max(0, ms));
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Sends requests for one client: auth, default account, retries, JSON in and out. */
export class Transport {
  readonly config: TransportConfig;

  constructor(config: TransportConfig) {
    this.config = { ...config, baseUrl: config.baseUrl.replace(/\/+$/, '') };
  }

  /** Base URL + path + query string. */
  url(pathname: string, query?: Query): string {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value === undefined || value === null) continue;
      params.append(key, Array.isArray(value) ? value.join(',') : String(value));
    }
    const qs = params.toString();
    return `${this.config.baseUrl}${pathname}${qs ? `?${qs}` : ''}`;
  }

  /** The headers of one request: client defaults, auth, account, and the given extras. */
  headers(extra: { accountId?: string | undefined; accept: string; contentType?: string; idempotencyKey?: string | undefined; lastEventId?: string | undefined }): Headers {
    const headers = new Headers(this.config.headers);
    headers.set('authorization', `Bearer ${this.config.apiKey}`);
    headers.set('accept', extra.accept);
    const accountId = extra.accountId ?? this.config.accountId;
    if (accountId !== undefined) headers.set('x-account-id', accountId);
    if (extra.contentType !== undefined) headers.set('content-type', extra.contentType);
    if (extra.idempotencyKey !== undefined) headers.set('idempotency-key', extra.idempotencyKey);
    if (extra.lastEventId !== undefined) headers.set('last-event-id', extra.lastEventId);
    return headers;
  }

  /**
   * Sends one JSON request and returns the parsed body (`undefined` for 204 or an empty body).
   * Idempotent methods are retried per the policy; the abort signal also cancels retry waits.
   * @throws {InboxKitApiError} on a non-2xx answer (after retries) or a 2xx body that is not JSON;
   *   {@link LiveInboxInactiveError} on 410.
   * @throws the fetch error on a network failure after retries, or the signal's reason on abort.
   */
  async request<T>(method: HttpMethod, pathname: string, spec: RequestSpec = {}): Promise<T> {
    const url = this.url(pathname, spec.query);
    const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    const headers = this.headers({
      accountId: spec.accountId,
      accept: 'application/json',
      ...(body !== undefined ? { contentType: 'application/json' } : {}),
      idempotencyKey: spec.idempotencyKey,
    });
    const safe = IDEMPOTENT.has(method) || (method === 'POST' && spec.retryWithKey === true && spec.idempotencyKey !== undefined);
    const retries = safe ? Math.max(0, this.config.retries) : 0;
    const signal = spec.signal;

    for (let attempt = 0; ; attempt++) {
      if (signal?.aborted) throw abortReason(signal);
      let response: Response;
      try {
        const init: RequestInit = { method, headers };
        if (body !== undefined) init.body = body;
        if (signal !== undefined) init.signal = signal;
        response = await this.config.fetch(url, init);
      } catch (error) {
        if (signal?.aborted) throw abortReason(signal);
        if (attempt >= retries || isAbortError(error)) throw error;
        await sleep(backoffMs(attempt, this.config.baseDelayMs), signal);
        continue;
      }
      if (response.ok) return (await readJson(response)) as T;
      if (attempt < retries && shouldRetryResponse(response.status, response.headers.get('x-should-retry'))) {
        const wait = retryAfterMs(response.headers.get('retry-after')) ?? backoffMs(attempt, this.config.baseDelayMs);
        await discard(response);
        await sleep(wait, signal);
        continue;
      }
      throw await errorFromResponse(response);
    }
  }

  /**
   * Opens a `text/event-stream` GET (no retry here: the SSE consumer owns reconnection).
   * @throws {InboxKitApiError} when the answer is not 2xx.
   */
  async openStream(pathname: string, query: Query, opts: { accountId?: string | undefined; lastEventId?: string | undefined; signal: AbortSignal }): Promise<Response> {
    const headers = this.headers({ accountId: opts.accountId, accept: 'text/event-stream', lastEventId: opts.lastEventId });
    headers.set('cache-control', 'no-cache');
    const response = await this.config.fetch(this.url(pathname, query), { method: 'GET', headers, signal: opts.signal });
    if (!response.ok) throw await errorFromResponse(response);
    return response;
  }
}

function isAbortError(error: unknown): boolean {
  return error instanceof Error && error.name === 'AbortError';
}

async function discard(response: Response): Promise<void> {
  try {
    await response.body?.cancel();
  } catch {
    // nothing to release
  }
}

async function readJson(response: Response): Promise<unknown> {
  if (response.status === 204) return undefined;
  const text = await response.text();
  if (text.length === 0) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new InboxKitApiError({
      status: response.status,
      code: 'invalid_response_body',
      type: 'api_error',
      message: `HTTP ${response.status}: the response body is not JSON`,
      requestId: response.headers.get('x-request-id'),
      details: [],
      body: text,
    });
  }
}
