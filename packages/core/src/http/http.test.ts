import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ERROR_CODES, InboxKitError } from '../errors.js';
import {
  authenticateRequest, cachedRequestAuthentication,
  clientErrorResponse, ERROR_KINDS, HTTP_ROUTES, STATUS_BY_CODE, envelopeForStatus, envelopeOf, errorEnvelopeSchema, errorKind, eventFrame, forwardHeadersFor,
  forwardRequestOf, forwardedPrincipal, httpRoutesFor, readCredentials, requestIdFor, resumePosition, resyncFor, routeNotFound,
} from './index.js';

describe('the error table', () => {
  it('gives every code a status and every status an error.type from ERROR_KINDS', () => {
    for (const code of ERROR_CODES) {
      const status = STATUS_BY_CODE[code];
      expect(status, code).toBeGreaterThanOrEqual(400);
      expect(ERROR_KINDS).toContain(errorKind(status));
    }
    expect(errorKind(404)).toBe('not_found_error');
    expect(errorKind(410)).toBe('invalid_request_error');
    expect(errorKind(502)).toBe('api_error');
  });

  it('maps a domain error to its status, hides 5xx messages, and makes anything else a bare 500', () => {
    const missing = envelopeOf(new InboxKitError('project_not_found', 'Project not found', [{ path: 'params.id', message: 'x' }]), 'req_1');
    expect(missing).toEqual({
      status: 404, unexpected: false, headers: { 'x-should-retry': 'false' },
      body: { type: 'error', error: { type: 'not_found_error', code: 'project_not_found', message: 'Project not found', details: [{ path: 'params.id', message: 'x' }], request_id: 'req_1' } },
    });
    const ownership = envelopeOf(new InboxKitError('session_ownership_unavailable', 'SELECT secret FROM x'), 'req_2');
    expect(ownership.status).toBe(500);
    expect(ownership.body.error.message).toBe('Internal server error');
    const unknown = envelopeOf(new Error('boom at /srv/app.js:1'), 'req_3');
    expect(unknown).toMatchObject({ status: 500, unexpected: true, body: { error: { code: 'internal_error', message: 'Internal server error' } } });
    for (const answer of [missing, ownership, unknown]) expect(errorEnvelopeSchema.safeParse(answer.body).success).toBe(true);
  });

  it('keeps a framework status in the envelope', () => {
    expect(envelopeForStatus(414, 'r').status).toBe(400);
    expect(envelopeForStatus(413, 'r').body.error.code).toBe('payload_too_large');
    expect(envelopeForStatus(415, 'r').body.error.code).toBe('unsupported_media_type');
    expect(envelopeForStatus(400, 'r', 'Body is not valid JSON').body.error.message).toBe('Body is not valid JSON');
    expect(envelopeForStatus(400, 'r', 'x'.repeat(400)).body.error.message).toBe('Malformed request');
    expect(envelopeForStatus(502, 'r')).toMatchObject({ status: 500, unexpected: true });
    expect(routeNotFound('GET', '/nope?x=1', 'r').error).toMatchObject({ code: 'not_found', message: 'Route GET /nope not found' });
  });
});

describe('request ids and credentials', () => {
  it('keeps a safe caller id and replaces anything else', () => {
    expect(requestIdFor('abc-1.2:3_x')).toBe('abc-1.2:3_x');
    for (const bad of [undefined, '', 'a b', 'x'.repeat(129), ['a', 'b']]) expect(requestIdFor(bad)).toMatch(/^req_[A-Za-z0-9_-]{21}$/);
  });

  it('prefers a Bearer token over x-api-key and reads the acting account', () => {
    expect(readCredentials({ authorization: 'Bearer  k1 ', 'x-api-key': 'k2', 'x-account-id': 'acc_1' })).toEqual({ apiKey: 'k1', actingAccountId: 'acc_1', options: {} });
    expect(readCredentials({ authorization: 'Basic xyz', 'x-api-key': 'k2', 'x-account-id': '' })).toEqual({ apiKey: 'k2', actingAccountId: undefined, options: {} });
    expect(readCredentials({ authorization: 'Bearer ' })).toEqual({ apiKey: undefined, actingAccountId: undefined, options: {} });
    expect(readCredentials({ 'x-api-key': ['a', 'b'] })).toEqual({ apiKey: undefined, actingAccountId: undefined, options: {} });
    expect(readCredentials({ 'x-api-key': 'k', 'anthropic-workspace-id': 'ws_1' }).options).toEqual({ workspace_id: 'ws_1' });
  });

  it('reads the Bearer token of every form as `^Bearer\\s+(.*)$` (case-insensitive, trimmed) reads it', () => {
    const byPattern = (auth: string) => /^Bearer\s+(.*)$/is.exec(auth)?.[1]?.trim() || undefined;
    for (const auth of ['Bearer k1', 'Bearer  k1 ', 'Bearer\tk1', 'bearer k1', 'BEARER k1', 'Bearer \u00a0k1\u2028', 'Bearer ', 'Bearer', 'Bearer  \n ', 'Bearer k1\nk2', 'Bearerk1', ' Bearer k1', 'Basic k1']) {
      expect(readCredentials({ authorization: auth }).apiKey, JSON.stringify(auth)).toBe(byPattern(auth));
    }
  });

  it('a key sent without the Bearer scheme is refused with what the header must look like; no header at all reaches the platform', async () => {
    const seen: Array<string | undefined> = [];
    const platform = {
      authenticate: async (secret: string | undefined) => {
        seen.push(secret);
        throw new InboxKitError('authentication_required', 'An API key is required');
      },
      authenticateStreamToken: async () => { throw new Error('unused'); },
    };
    for (const authorization of ['ik_secret', 'Basic eHl6', 'Token ik_secret']) {
      const refused = await authenticateRequest(platform, { headers: { authorization }, url: '/me', stream: false }).catch((e: unknown) => e);
      expect(refused).toMatchObject({ code: 'authentication_required', message: expect.stringContaining('Bearer <api key>') });
    }
    expect(seen).toEqual([]);
    await expect(authenticateRequest(platform, { headers: {}, url: '/me', stream: false })).rejects.toMatchObject({ message: 'An API key is required' });
    expect(seen).toEqual([undefined]);
  });
});

describe('cachedRequestAuthentication', () => {
  const principal = { workspace_id: 'ws_1', account_id: 'acc_1', key_id: 'key_1', key_kind: 'service' as const };
  /** A platform whose check without I/O records what it was built for and answers `answer`. */
  function platformWith(answer: () => typeof principal | undefined) {
    const built: unknown[] = [];
    const unused = async (): Promise<never> => { throw new Error('unused'); };
    return {
      built,
      platform: {
        authenticate: unused, authenticateStreamToken: unused,
        cachedAuthentication: (credential: unknown, options?: unknown) => {
          built.push([credential, options]);
          return answer;
        },
      },
    };
  }
  const token = 'ikst_payload.signature';

  it('builds the check from the credential authenticateRequest reads (key, acting account, workspace; a stream token on a stream)', () => {
    const { platform, built } = platformWith(() => principal);
    const check = cachedRequestAuthentication(platform, { headers: { authorization: 'Bearer ik_k', 'x-account-id': 'acc_2', 'anthropic-workspace-id': 'ws_1' }, url: '/me', stream: false });
    expect(check?.()).toBe(principal);
    cachedRequestAuthentication(platform, { headers: { 'x-api-key': 'ik_k' }, url: '/p/events', stream: true, expiry: false });
    cachedRequestAuthentication(platform, { headers: {}, url: `/p/events?access_token=${token}`, stream: true, expiry: false });
    expect(built).toEqual([
      [{ api_key: 'ik_k', as_account_id: 'acc_2' }, { workspace_id: 'ws_1' }],
      [{ api_key: 'ik_k', as_account_id: undefined }, {}],
      [{ stream_token: token }, {}],
    ]);
  });

  it('offers no check where authenticateRequest must run: no credential, a malformed one, a token whose expiry counts, a platform without one', () => {
    const { platform, built } = platformWith(() => principal);
    const none = [
      { headers: {}, url: '/me', stream: false },
      { headers: { authorization: 'Token ik_k' }, url: '/me', stream: false },
      { headers: {}, url: `/me?access_token=${token}`, stream: false },
      { headers: { authorization: 'Bearer ik_k' }, url: `/p/events?access_token=${token}`, stream: true, expiry: false },
      { headers: {}, url: `/p/events?access_token=${token}&access_token=${token}`, stream: true, expiry: false },
      { headers: {}, url: `/p/events?access_token=${token}`, stream: true },
    ];
    for (const input of none) expect(cachedRequestAuthentication(platform, input), JSON.stringify(input)).toBeUndefined();
    expect(built).toEqual([]);
    const { cachedAuthentication: _, ...older } = platform;
    expect(cachedRequestAuthentication(older, { headers: { authorization: 'Bearer ik_k' }, url: '/me', stream: false })).toBeUndefined();
  });

  it('a stream token naming another acting account than its own gets no answer (authenticateRequest refuses it)', () => {
    const { platform } = platformWith(() => principal);
    const input = (account: string) => ({ headers: { 'x-account-id': account }, url: `/p/events?access_token=${token}`, stream: true, expiry: false });
    expect(cachedRequestAuthentication(platform, input('acc_1'))?.()).toBe(principal);
    expect(cachedRequestAuthentication(platform, input('acc_2'))?.()).toBeUndefined();
  });
});

describe('SSE framing and resume', () => {
  it('frames an event on one data line', () => {
    expect(eventFrame({ id: 7, type: 'inbox.created', data: { a: 'x\ny' } })).toBe('id: 7\nevent: inbox.created\ndata: {"a":"x\\ny"}\n\n');
  });

  it('resumes after the later of ?after= and Last-Event-ID, refuses a malformed header, and resyncs past the latest', () => {
    expect(resumePosition(3, '9')).toBe(9);
    expect(resumePosition(12, '9')).toBe(12);
    expect(resumePosition(undefined, undefined)).toBe(0);
    for (const bad of ['-1', '1e3', '9'.repeat(16)]) expect(() => resumePosition(undefined, bad)).toThrow(/Last-Event-ID/);
    expect(resyncFor(5, 9)).toBeUndefined();
    expect(resyncFor(12, 9)).toEqual({ type: 'resync', reason: 'ahead_of_latest', requested_after: 12, latest: 9 });
  });
});

describe('forwarding headers', () => {
  const principal = { workspace_id: 'ws_1', account_id: 'acc_1', key_id: 'key_1', key_kind: 'standard' as const };

  it('round-trips the principal only with the right secret and well-formed headers', () => {
    const headers = forwardHeadersFor('s3cret', principal);
    expect(forwardedPrincipal(headers, 's3cret')).toEqual(principal);
    expect(forwardedPrincipal(headers, 's3cre')).toBeUndefined();
    expect(forwardedPrincipal({ ...headers, 'x-inbox-kit-forward-key-kind': 'root' }, 's3cret')).toBeUndefined();
    expect(forwardedPrincipal({ ...headers, 'x-inbox-kit-forward-account-id': 'a b' }, 's3cret')).toBeUndefined();
  });

  it('replays each operation on the route it came in on', () => {
    expect(forwardRequestOf('ses/1', { type: 'withdraw', message_id: 4 })).toEqual({ method: 'DELETE', path: '/v1/awaken/sessions/ses%2F1/live-inbox/4' });
    expect(forwardRequestOf('s', { type: 'reorder', body: { order: [1] } } as never)).toMatchObject({ method: 'PUT', path: '/v1/awaken/sessions/s/live-inbox/order' });
    const routes = new Set(HTTP_ROUTES.filter((r) => r.forwardable).map((r) => `${r.method} ${r.path}`));
    for (const op of [{ type: 'snapshot' }, { type: 'queue', body: {} }, { type: 'send_events', body: {} }] as const) {
      const { method, path } = forwardRequestOf('s', op as never);
      const pattern = [...routes].find((r) => new RegExp(`^${r.replace(/:[a-z_]+/g, '[^/]+')}$`).test(`${method} ${path}`));
      expect(pattern, `${method} ${path}`).toBeDefined();
    }
  });
});

describe('the route table', () => {
  it('has one entry per method and path, each with a response schema and matching path parameters', () => {
    const seen = new Set<string>();
    for (const route of HTTP_ROUTES) {
      const key = `${route.method} ${route.path}`;
      expect(seen.has(key), key).toBe(false);
      seen.add(key);
      expect(route.response).toBeInstanceOf(z.ZodType);
      const names = [...route.path.matchAll(/:([a-z_]+)/g)].map((m) => m[1]).sort();
      const declared = route.params ? Object.keys((route.params as z.ZodObject).shape).sort() : [];
      expect(declared, key).toEqual(names);
      if (route.status === 204) expect(route.response.safeParse(undefined).success, key).toBe(true);
    }
    expect(new Set(HTTP_ROUTES.map((r) => r.operationId)).size).toBe(HTTP_ROUTES.length);
  });

  it('serves the runtime routes only with a runtime, and the Session resource only with managedSessions too', () => {
    const without = httpRoutesFor({} as never);
    expect(without.some((r) => r.path.startsWith('/v1/'))).toBe(false);
    expect(httpRoutesFor({ managedSessions: {} } as never).some((r) => r.path.startsWith('/v1/'))).toBe(false);
    const runtimeOnly = httpRoutesFor({ runtime: {} } as never);
    expect(runtimeOnly.filter((r) => r.requiresManagedSessions)).toEqual([]);
    expect(runtimeOnly).toHaveLength(HTTP_ROUTES.length - 12);
    expect(httpRoutesFor({ runtime: {}, managedSessions: {} } as never)).toHaveLength(HTTP_ROUTES.length);
    expect(HTTP_ROUTES.filter((r) => r.requiresManagedSessions).map((r) => `${r.method} ${r.path}`).sort()).toEqual([
      'DELETE /v1/sessions/:session_id', 'GET /v1/agents', 'GET /v1/agents/:agent_id', 'GET /v1/agents/:agent_id/versions', 'GET /v1/sessions', 'GET /v1/sessions/:session_id',
      'POST /v1/agents', 'POST /v1/agents/:agent_id', 'POST /v1/agents/:agent_id/archive', 'POST /v1/sessions', 'POST /v1/sessions/:session_id',
      'POST /v1/sessions/:session_id/archive',
    ]);
    expect(HTTP_ROUTES.filter((r) => r.public).map((r) => r.path)).toEqual(['/health', '/ready']);
  });
});

describe('reading request parts', () => {
  it('prefixes validation details with the part', async () => {
    const { parseRequestPart } = await import('./parse.js');
    let caught: unknown;
    try {
      parseRequestPart('body', z.strictObject({ title: z.string() }), { title: 1 });
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({ code: 'validation_error', message: 'Invalid body', details: [{ path: 'body.title', code: 'invalid_type' }] });
  });

  it('keeps repeated query keys as arrays', async () => {
    const { queryObject } = await import('./parse.js');
    expect(queryObject(new URLSearchParams('a=1&b=2&a=3'))).toEqual({ a: ['1', '3'], b: '2' });
  });

  it('accepts JSON only, as valid UTF-8, without prototype keys', async () => {
    const { parseJsonBody } = await import('./parse.js');
    const bytes = (s: string) => new TextEncoder().encode(s);
    expect(parseJsonBody(bytes('{"a":[1]}'), 'application/json; charset=utf-8')).toEqual({ a: [1] });
    expect(parseJsonBody(new Uint8Array(0), undefined)).toBeUndefined();
    const codeOf = (f: () => unknown) => {
      try {
        f();
      } catch (error) {
        return (error as InboxKitError).code;
      }
      return 'none';
    };
    expect(codeOf(() => parseJsonBody(bytes('{}'), 'text/plain'))).toBe('unsupported_media_type');
    expect(codeOf(() => parseJsonBody(new Uint8Array([0x22, 0xff, 0x22]), 'application/json'))).toBe('validation_error');
    expect(codeOf(() => parseJsonBody(bytes('{"a":'), 'application/json'))).toBe('validation_error');
    expect(codeOf(() => parseJsonBody(bytes('{"__proto__":{"x":1}}'), 'application/json'))).toBe('validation_error');
    expect(codeOf(() => parseJsonBody(bytes('{"constructor":{"prototype":{}}}'), 'application/json'))).toBe('validation_error');
    expect(parseJsonBody(bytes('{"constructor":"fine"}'), 'application/json')).toEqual({ constructor: 'fine' });
    expect(codeOf(() => parseJsonBody(bytes('{}'), 'application/json; charset=latin1'))).toBe('unsupported_media_type');
    expect(parseJsonBody(bytes('{"n":1}'), 'application/json; charset="UTF-8"')).toEqual({ n: 1 });
    expect(codeOf(() => parseJsonBody(bytes('{"n":12345678901234567890}'), 'application/json'))).toBe('validation_error');
  });

  it('refuses the forbidden keys however they are spelled, nested or escaped', async () => {
    const { parseJsonBody } = await import('./parse.js');
    const bytes = (s: string) => new TextEncoder().encode(s);
    const refused = [
      '{"\\u005f_proto__":{"x":1}}', '{"__pr\\u006fto__":1}', '{"a":[{"b":{"__proto__":null}}]}',
      '{"constructo\\u0072":{"prototype":{}}}', '{"x":{"\\u0063onstructor":{"prototype":1}}}',
    ];
    for (const text of refused) {
      expect(() => parseJsonBody(bytes(text), 'application/json'), text).toThrow('forbidden key');
    }
    // The same texts without a forbidden key parse as JSON.parse does (escapes and all).
    for (const text of ['{"\\u0061":"\\u00e9"}', '{"note":"mentions __proto__ and constructor in a value"}', '{"a":[1,{"b":"c"}]}']) {
      expect(parseJsonBody(bytes(text), 'application/json'), text).toEqual(JSON.parse(text));
    }
  });
});

describe('clientErrorResponse', () => {
  it('answers a parser-refused request in the envelope, bytes counted, connection closed', () => {
    const cases: [string | undefined, number, string][] = [
      ['HPE_HEADER_OVERFLOW', 431, 'request_header_too_large'], ['ERR_HTTP_REQUEST_TIMEOUT', 408, 'request_timeout'],
      ['HPE_INVALID_METHOD', 400, 'validation_error'], [undefined, 400, 'validation_error'],
    ];
    for (const [errorCode, status, code] of cases) {
      const raw = clientErrorResponse(errorCode, 'req_é1');
      const [head, body] = raw.split('\r\n\r\n') as [string, string];
      expect(head.startsWith(`HTTP/1.1 ${status} `)).toBe(true);
      expect(head).toContain('\r\nConnection: close');
      expect(head).toContain('\r\nx-request-id: req_é1\r\nrequest-id: req_é1');
      expect(head).toContain(`\r\nContent-Length: ${Buffer.byteLength(body)}`);
      expect(JSON.parse(body)).toMatchObject({ error: { code, request_id: 'req_é1' } });
    }
  });
});
