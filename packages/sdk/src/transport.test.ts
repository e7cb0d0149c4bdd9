/** Tests of headers, URL building and the retry policy (idempotent methods only, Retry-After, backoff). */
import { describe, expect, it } from 'vitest';
import { createClient, InboxKitApiError } from './index.js';
import { backoffMs, path, retryAfterMs } from './transport.js';
import { apiError, fakeFetch, json, noContent } from '../test/fake-fetch.js';

const overloaded = (retryAfter?: string) =>
  new Response(JSON.stringify({ type: 'error', error: { type: 'overloaded_error', code: 'overloaded', message: 'Busy', details: [], request_id: 'req_503' } }), {
    status: 503,
    headers: retryAfter === undefined ? {} : { 'retry-after': retryAfter },
  });

describe('headers and URLs', () => {
  it('sends auth, accept, the default account and custom headers; strips a trailing slash', async () => {
    const { fetch, requests } = fakeFetch(json({ items: [] }));
    const client = createClient({ baseUrl: 'http://api.test/base/', apiKey: 'sk_1', fetch, accountId: 'acc_default', headers: { 'x-trace': 't1' } });
    await client.projects.list();
    const req = requests[0]!;
    expect(req.url).toBe('http://api.test/base/projects');
    expect(req.method).toBe('GET');
    expect(req.headers.get('authorization')).toBe('Bearer sk_1');
    expect(req.headers.get('accept')).toBe('application/json');
    expect(req.headers.get('x-account-id')).toBe('acc_default');
    expect(req.headers.get('x-trace')).toBe('t1');
    expect(req.headers.get('content-type')).toBeNull();
    expect(req.body).toBeUndefined();
  });

  it('a per-call accountId overrides the default; idempotencyKey is sent on create', async () => {
    const { fetch, requests } = fakeFetch(json({ project: { id: 'proj_1' } }, 201));
    const client = createClient({ baseUrl: 'http://api.test', apiKey: 'sk_1', fetch, accountId: 'acc_default' });
    await client.projects.create({ name: 'P' }, { accountId: 'acc_other', idempotencyKey: 'idem-1' });
    const req = requests[0]!;
    expect(req.headers.get('x-account-id')).toBe('acc_other');
    expect(req.headers.get('idempotency-key')).toBe('idem-1');
    expect(req.headers.get('content-type')).toBe('application/json');
  });

  it('sends no x-account-id when none is set', async () => {
    const { fetch, requests } = fakeFetch(json({ items: [] }));
    await createClient({ baseUrl: 'http://api.test', apiKey: 'k', fetch }).projects.list();
    expect(requests[0]!.headers.has('x-account-id')).toBe(false);
  });

  it('URL-encodes ids', () => {
    expect(path`/projects/${'a/b c?'}/inbox/${'x#y'}`).toBe('/projects/a%2Fb%20c%3F/inbox/x%23y');
  });

  it('rejects missing baseUrl or apiKey', () => {
    const { fetch } = fakeFetch();
    expect(() => createClient({ baseUrl: '', apiKey: 'k', fetch })).toThrow(TypeError);
    expect(() => createClient({ baseUrl: 'http://x', apiKey: '', fetch })).toThrow(TypeError);
  });
});

describe('retry policy', () => {
  it('retries a GET on 503 honouring Retry-After: 0, then succeeds', async () => {
    const { fetch, requests } = fakeFetch(overloaded('0'), overloaded('0'), json({ items: [{ id: 'proj_1', created_at: 1 }] }));
    const client = createClient({ baseUrl: 'http://x', apiKey: 'k', fetch, retry: { retries: 2, baseDelayMs: 60_000 } });
    const started = Date.now();
    const page = await client.projects.list();
    expect(Date.now() - started).toBeLessThan(1000); // Retry-After: 0 wins over the 60 s backoff
    expect(requests).toHaveLength(3);
    expect(requests.every((r) => r.method === 'GET' && r.url === 'http://x/projects')).toBe(true);
    expect(page.items).toEqual([{ id: 'proj_1', createdAt: 1 }]);
  });

  it('gives up after `retries` retries and throws the last error', async () => {
    const { fetch, requests } = fakeFetch(overloaded('0'), overloaded('0'), overloaded('0'));
    const client = createClient({ baseUrl: 'http://x', apiKey: 'k', fetch });
    const err = await client.projects.get('proj_1').catch((e: unknown) => e);
    expect(requests).toHaveLength(3);
    expect(err).toBeInstanceOf(InboxKitApiError);
    expect(err).toMatchObject({ status: 503, code: 'overloaded', requestId: 'req_503' });
  });

  it('never retries a POST (or a PATCH)', async () => {
    const post = fakeFetch(overloaded('0'), json({}));
    const client = createClient({ baseUrl: 'http://x', apiKey: 'k', fetch: post.fetch });
    await expect(client.projects.inbox.create('proj_1', { type: 't' })).rejects.toMatchObject({ status: 503 });
    expect(post.requests).toHaveLength(1);

    const patch = fakeFetch(overloaded('0'), json({}));
    const client2 = createClient({ baseUrl: 'http://x', apiKey: 'k', fetch: patch.fetch });
    await expect(client2.projects.inbox.accept('proj_1', 'pinbox_1')).rejects.toMatchObject({ status: 503 });
    expect(patch.requests).toHaveLength(1);

    const net = fakeFetch(new TypeError('fetch failed'), json({}));
    const client3 = createClient({ baseUrl: 'http://x', apiKey: 'k', fetch: net.fetch, retry: { retries: 2, baseDelayMs: 0 } });
    await expect(client3.sessions.liveInbox.queue('sess_1', [{ type: 'text', text: 'hi' }])).rejects.toThrow('fetch failed');
    expect(net.requests).toHaveLength(1);
  });

  it('retries inbox.create when it carries an idempotencyKey (same key and body each time), and no other keyed POST', async () => {
    const keyed = fakeFetch(new TypeError('fetch failed'), overloaded('0'), json({ item: { id: 'pinbox_1' } }, 201));
    const client = createClient({ baseUrl: 'http://x', apiKey: 'k', fetch: keyed.fetch, retry: { retries: 2, baseDelayMs: 1 } });
    expect(await client.projects.inbox.create('proj_1', { type: 't', payload: { n: 1 } }, { idempotencyKey: 'idem-9' })).toEqual({ id: 'pinbox_1' });
    expect(keyed.requests).toHaveLength(3);
    for (const r of keyed.requests) {
      expect(r.method).toBe('POST');
      expect(r.headers.get('idempotency-key')).toBe('idem-9');
      expect(r.body).toEqual({ type: 't', payload: { n: 1 } });
    }

    // The server does not deduplicate the other creates, so a key does not make them retried.
    const project = fakeFetch(overloaded('0'), json({}));
    await expect(createClient({ baseUrl: 'http://x', apiKey: 'k', fetch: project.fetch, retry: { retries: 2, baseDelayMs: 1 } })
      .projects.create({ name: 'P' }, { idempotencyKey: 'idem-10' })).rejects.toMatchObject({ status: 503 });
    expect(project.requests).toHaveLength(1);
  });

  it('retries PUT and DELETE on 429, 502 and 504, and a GET on a network error', async () => {
    const put = fakeFetch(new Response(null, { status: 429, headers: { 'retry-after': '0' } }), new Response('bad gateway', { status: 502 }), noContent());
    await createClient({ baseUrl: 'http://x', apiKey: 'k', fetch: put.fetch, retry: { retries: 2, baseDelayMs: 1 } }).sessions.liveInbox.reorder('sess_1', [2, 1]);
    expect(put.requests.map((r) => r.method)).toEqual(['PUT', 'PUT', 'PUT']);
    expect(put.requests[2]!.body).toEqual({ order: [2, 1] });

    const del = fakeFetch(new Response(null, { status: 504 }), noContent());
    await createClient({ baseUrl: 'http://x', apiKey: 'k', fetch: del.fetch, retry: { retries: 1, baseDelayMs: 1 } }).projects.members.remove('proj_1', 'acc_2');
    expect(del.requests.map((r) => r.method)).toEqual(['DELETE', 'DELETE']);

    const net = fakeFetch(new TypeError('fetch failed'), json({ items: [] }));
    await createClient({ baseUrl: 'http://x', apiKey: 'k', fetch: net.fetch, retry: { retries: 2, baseDelayMs: 1 } }).projects.list();
    expect(net.requests).toHaveLength(2);
  });

  it('honours x-should-retry over the status: false is never retried (a 503, or a 409 on a DELETE), true is retried (a 500)', async () => {
    const refused = (status: number, code: string, retry: string) => new Response(JSON.stringify({ type: 'error', error: { type: 'api_error', code, message: 'm', details: [], request_id: 'req_x' } }), {
      status, headers: { 'x-should-retry': retry, 'retry-after': '0' },
    });
    const no = fakeFetch(refused(503, 'overloaded', 'false'));
    await expect(createClient({ baseUrl: 'http://x', apiKey: 'k', fetch: no.fetch, retry: { retries: 2, baseDelayMs: 1 } }).projects.list()).rejects.toMatchObject({ status: 503 });
    expect(no.requests).toHaveLength(1);
    const running = fakeFetch(refused(409, 'conflict', 'false'));
    await expect(createClient({ baseUrl: 'http://x', apiKey: 'k', fetch: running.fetch, retry: { retries: 2, baseDelayMs: 1 } }).projects.members.remove('proj_1', 'acc_1')).rejects.toMatchObject({ status: 409 });
    expect(running.requests).toHaveLength(1);
    const yes = fakeFetch(refused(500, 'internal_error', 'true'), json({ items: [], next_cursor: null }));
    await createClient({ baseUrl: 'http://x', apiKey: 'k', fetch: yes.fetch, retry: { retries: 2, baseDelayMs: 1 } }).projects.list();
    expect(yes.requests).toHaveLength(2);
  });

  it('does not retry other statuses, nor when retries is 0', async () => {
    const five = fakeFetch(apiError(500, 'internal_error', 'api_error', 'Boom'));
    await expect(createClient({ baseUrl: 'http://x', apiKey: 'k', fetch: five.fetch }).projects.list()).rejects.toMatchObject({ status: 500 });
    expect(five.requests).toHaveLength(1);

    const zero = fakeFetch(overloaded('0'));
    await expect(createClient({ baseUrl: 'http://x', apiKey: 'k', fetch: zero.fetch, retry: { retries: 0, baseDelayMs: 1 } }).projects.list()).rejects.toMatchObject({ status: 503 });
    expect(zero.requests).toHaveLength(1);
  });

  it('an abort during the retry wait rejects with the abort reason', async () => {
    const { fetch, requests } = fakeFetch(overloaded('30'));
    const controller = new AbortController();
    const client = createClient({ baseUrl: 'http://x', apiKey: 'k', fetch });
    const pending = client.projects.list({ signal: controller.signal });
    setTimeout(() => controller.abort(new Error('stop')), 10);
    await expect(pending).rejects.toThrow('stop');
    expect(requests).toHaveLength(1);
    expect(requests[0]!.signal).toBe(controller.signal);
  });

  it('computes Retry-After and jittered backoff', () => {
    expect(retryAfterMs(null)).toBeUndefined();
    expect(retryAfterMs('0')).toBe(0);
    expect(retryAfterMs('2')).toBe(2000);
    expect(retryAfterMs('1.5')).toBe(1500);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4_000)).toBe(6_000);
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(backoffMs(0, 100, () => 0)).toBe(50);
    expect(backoffMs(0, 100, () => 1)).toBe(100);
    expect(backoffMs(2, 100, () => 0.5)).toBe(300);
  });
});
