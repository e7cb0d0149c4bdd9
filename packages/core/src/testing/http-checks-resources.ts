/**
 * The HTTP kit's contract checks, part two (`httpConformanceChecks` lists them in order): the
 * Session resource, time filters, the Python SDK's rules, retries, stream tokens, CORS, and a
 * TavernHeadless-style reader.
 */
import { MAX_STREAM_TOKEN_TTL_SECONDS } from '../platform/stream-tokens.js';
import type { HttpConformanceCheck } from './http-conformance-checks.js';
import { expectError, fail, P, readFrames, send, text, type Reply } from './http-checks-support.js';

/** The checks of part two, in order. */
export const resourceChecks: HttpConformanceCheck[] = [
  {
    group: 'contract: Session resource',
    name: 'the Session resource (/v1/sessions): create, retrieve, list pages, update, archive, delete, and its errors in the envelope',
    async run(s) {
      const k = s.keys as Record<string, string>;
      const created = await send(s, 'POST', '/v1/sessions', { key: k.acc_owner, body: { agent: s.agent_id, environment_id: 'env_a', title: 'A', metadata: { team: 'qa' } } });
      if (created.status !== 200 || created.body.type !== 'session' || created.body.title !== 'A' || created.body.status !== 'idle' || created.body.agent?.id !== s.agent_id
        || created.body.environment_id !== 'env_a' || created.body.metadata.team !== 'qa' || created.body.workspace_id !== 'ws_demo' || created.body.project_id !== null || created.body.archived_at !== null) {
        fail('POST /v1/sessions', created, 'expected 200 with the Session as asked for');
      }
      const id = created.body.id as string;
      const got = await send(s, 'GET', `/v1/sessions/${id}`, { key: k.acc_owner });
      if (got.status !== 200 || JSON.stringify(got.body) !== JSON.stringify(created.body)) fail(`GET /v1/sessions/${id}`, got, 'expected the Session as created');
      // In a project: members read it, only the owner changes it; other tenants see nothing.
      const inProject = await send(s, 'POST', '/v1/sessions', { key: k.acc_owner, body: { agent: { type: 'agent', id: s.agent_id, version: 1 }, environment_id: 'env_p', project_id: s.project_id } });
      if (inProject.status !== 200 || inProject.body.project_id !== s.project_id) fail('POST /v1/sessions in a project', inProject, 'expected 200 in the project');
      const observed = await send(s, 'GET', `/v1/sessions/${inProject.body.id}`, { key: k.acc_observer });
      if (observed.status !== 200) fail('an observer reads a Session of its project', observed, 'expected 200');
      expectError('an observer updates', await send(s, 'POST', `/v1/sessions/${inProject.body.id}`, { key: k.acc_observer, body: { title: 'no' } }), 403, 'permission_denied');
      expectError('an observer creates in the project', await send(s, 'POST', '/v1/sessions', { key: k.acc_observer, body: { agent: s.agent_id, environment_id: 'e', project_id: s.project_id } }), 403, 'permission_denied');
      expectError('another tenant reads', await send(s, 'GET', `/v1/sessions/${id}`, { key: k.acc_stranger }), 404, 'session_not_found');
      expectError('another tenant deletes', await send(s, 'DELETE', `/v1/sessions/${id}`, { key: k.acc_stranger }), 404, 'session_not_found');
      // Bad requests.
      expectError('an unknown agent', await send(s, 'POST', '/v1/sessions', { key: k.acc_owner, body: { agent: 'no_such_agent', environment_id: 'e' } }), 404, 'agent_not_found');
      expectError('another agent version', await send(s, 'POST', '/v1/sessions', { key: k.acc_owner, body: { agent: { type: 'agent', id: s.agent_id, version: 9 }, environment_id: 'e' } }), 404, 'agent_not_found');
      expectError('vaults', await send(s, 'POST', '/v1/sessions', { key: k.acc_owner, body: { agent: s.agent_id, environment_id: 'e', vault_ids: ['v1'] } }), 400, 'unsupported_capability');
      expectError('an unknown field', await send(s, 'POST', '/v1/sessions', { key: k.acc_owner, body: { agent: s.agent_id, environment_id: 'e', sneaky: 1 } }), 400, 'validation_error');
      expectError('no environment_id', await send(s, 'POST', '/v1/sessions', { key: k.acc_owner, body: { agent: s.agent_id } }), 400, 'validation_error');
      expectError('an agent update', await send(s, 'POST', `/v1/sessions/${id}`, { key: k.acc_owner, body: { agent: { tools: [] } } }), 400, 'unsupported_capability');
      expectError('a bad list limit', await send(s, 'GET', '/v1/sessions?limit=0', { key: k.acc_owner }), 400, 'validation_error');
      expectError('a forged page', await send(s, 'GET', '/v1/sessions?page=forged', { key: k.acc_owner }), 400, 'invalid_cursor');
      expectError('no key', await send(s, 'GET', '/v1/sessions'), 401, 'authentication_required');
      // Update: title set, metadata patched (null deletes a key).
      const updated = await send(s, 'POST', `/v1/sessions/${id}`, { key: k.acc_owner, body: { title: 'Renamed', metadata: { team: null, stage: 'beta' } } });
      if (updated.status !== 200 || updated.body.title !== 'Renamed' || JSON.stringify(updated.body.metadata) !== '{"stage":"beta"}') fail(`POST /v1/sessions/${id}`, updated, 'expected the title set and the metadata patched');
      // List: cursor pages with every Session exactly once; archived ones only on request.
      for (let i = 0; i < 3; i++) {
        const more = await send(s, 'POST', '/v1/sessions', { key: k.acc_owner, body: { agent: s.agent_id, environment_id: `env_${i}` } });
        if (more.status !== 200) fail('POST /v1/sessions', more, 'expected 200');
      }
      const seen: string[] = [];
      let page: string | null = null;
      do {
        const res: Reply = await send(s, 'GET', `/v1/sessions?limit=2&order=asc${page ? `&page=${encodeURIComponent(page)}` : ''}`, { key: k.acc_owner });
        if (res.status !== 200 || res.body.data.length > 2 || res.body.prev_page !== null) fail('GET /v1/sessions?limit=2', res, 'expected a page of at most 2');
        seen.push(...res.body.data.map((d: { id: string }) => d.id));
        page = res.body.next_page;
      } while (page !== null && seen.length < 100);
      if (new Set(seen).size !== seen.length || !seen.includes(id) || !seen.includes(inProject.body.id)) fail('GET /v1/sessions pages', undefined, `every Session once, got ${seen.join(',')}`);
      const archived = await send(s, 'POST', `/v1/sessions/${id}/archive`, { key: k.acc_owner });
      if (archived.status !== 200 || typeof archived.body.archived_at !== 'string') fail(`POST /v1/sessions/${id}/archive`, archived, 'expected archived_at set');
      const without = await send(s, 'GET', '/v1/sessions?limit=100', { key: k.acc_owner });
      const withArchived = await send(s, 'GET', '/v1/sessions?limit=100&include_archived=true', { key: k.acc_owner });
      if (without.body.data.some((d: { id: string }) => d.id === id) || !withArchived.body.data.some((d: { id: string }) => d.id === id)) fail('GET /v1/sessions', without, 'an archived Session is listed only with include_archived=true');
      expectError('a message to an archived Session', await send(s, 'POST', `/v1/sessions/${id}/events`, { key: k.acc_owner, body: { events: [{ type: 'user.message', content: text('late') }] } }), 409, 'session_archived');
      // Delete: 409 while a Run runs; then gone from every read.
      const running = await send(s, 'POST', '/v1/sessions', { key: k.acc_owner, body: { agent: s.agent_id, environment_id: 'env_run', initial_events: [{ type: 'user.message', content: text('go') }] } });
      if (running.status !== 200 || running.body.status !== 'running') fail('POST /v1/sessions with initial_events', running, 'expected 200 with status running');
      const step = await s.model.next();
      expectError('deleting a running Session', await send(s, 'DELETE', `/v1/sessions/${running.body.id}`, { key: k.acc_owner }), 409, 'session_running');
      step.reply('done');
      const deleted = await send(s, 'DELETE', `/v1/sessions/${id}`, { key: k.acc_owner });
      if (deleted.status !== 200 || deleted.body.id !== id || deleted.body.type !== 'session_deleted') fail(`DELETE /v1/sessions/${id}`, deleted, 'expected { id, type: session_deleted }');
      expectError('reading a deleted Session', await send(s, 'GET', `/v1/sessions/${id}`, { key: k.acc_owner }), 404, 'session_not_found');
      expectError('deleting it again', await send(s, 'DELETE', `/v1/sessions/${id}`, { key: k.acc_owner }), 404, 'session_not_found');
    },
  },
  {
    group: 'contract: time filters',
    name: 'time filters (created_at[gt|gte|lt|lte]) are exact: sub-ms digits compared at full precision, offsets honoured, no offset read as UTC, impossible dates 400',
    async run(s) {
      const owner = s.keys.acc_owner!;
      const created = await send(s, 'POST', '/v1/sessions', { key: owner, body: { agent: s.agent_id, environment_id: 'env_kit' } });
      if (created.status !== 200) fail('create a Session', created, 'expected 200');
      const id = created.body.id as string;
      const interrupt = await send(s, 'POST', `/v1/sessions/${id}/events`, { key: owner, body: { events: [{ type: 'user.interrupt' }] } });
      if (interrupt.status !== 200) fail('send an event', interrupt, 'expected 200');
      const at = Date.parse(created.body.created_at as string);
      const processed = Date.parse(interrupt.body.data[0].processed_at as string);
      const iso = (ms: number) => new Date(ms).toISOString();
      // The same instant with a +05:30 offset; one ten-thousandth of a ms after it; one just before it.
      const offset = (ms: number) => `${iso(ms + 330 * 60_000).slice(0, -1)}+05:30`;
      const after = (ms: number) => `${iso(ms).slice(0, -1)}0001Z`;
      const before = (ms: number) => `${iso(ms - 1).slice(0, -1)}9999Z`;
      // What the Python SDK sends for a naive `datetime` (`isoformat()`: no offset, microseconds): read as UTC.
      const naive = (ms: number) => `${iso(ms).slice(0, -1)}000`;
      const cases: Array<[string, (ms: number) => string, boolean]> = [
        ['gte', iso, true], ['gt', iso, false], ['lte', iso, true], ['lt', iso, false],
        ['gte', naive, true], ['gt', naive, false], ['lte', naive, true], ['lt', naive, false],
        ['gte', offset, true], ['gt', offset, false], ['lte', offset, true], ['lt', offset, false],
        ['gte', after, false], ['gt', after, false], ['lte', after, true], ['lt', after, true],
        ['gte', before, true], ['gt', before, true], ['lte', before, false], ['lt', before, false],
      ];
      const routes: Array<[string, number, (body: any) => boolean]> = [
        ['/v1/sessions?limit=100&', at, (body) => body.data.some((x: { id: string }) => x.id === id)],
        [`/v1/sessions/${id}/events?`, processed, (body) => body.data.some((e: { type: string }) => e.type === 'user.interrupt')],
      ];
      for (const [path, ms, holds] of routes) {
        for (const [op, bound, included] of cases) {
          const q = new URLSearchParams({ [`created_at[${op}]`]: bound(ms) });
          const res = await send(s, 'GET', `${path}${q}`, { key: owner });
          if (res.status !== 200) fail(`GET ${path}${q}`, res, 'expected 200');
          if (holds(res.body) !== included) fail(`GET ${path}${q}`, res, included ? 'the bound must select the record' : 'the bound must leave the record out');
        }
        for (const bad of ['2026-02-30T00:00:00Z', '2026-02-29T12:00:00Z', '2026-04-31T00:00:00Z', '2026-01-01T24:00:00Z', '2026-01-01T00:60:00Z',
          '2026-12-31T23:59:60Z', '2026-01-01', '2026-01-01T00:00', '2026-01-01T00:00:00+24:00', 'yesterday']) {
          const q = new URLSearchParams({ 'created_at[gte]': bad });
          expectError(`GET ${path}${q}`, await send(s, 'GET', `${path}${q}`, { key: owner }), 400, 'validation_error');
        }
      }
    },
  },
  {
    group: 'contract: clients',
    name: 'clients unchanged (the Python SDK): beta=true accepted on every /v1 route, an unknown Session 404 session_not_found on every /v1 route, every Session has an agent snapshot and an environment_id',
    async run(s) {
      const owner = s.keys.acc_owner!;
      const created = await send(s, 'POST', '/v1/sessions?beta=true', { key: owner, body: { agent: s.agent_id, environment_id: 'env_py' } });
      if (created.status !== 200) fail('POST /v1/sessions?beta=true', created, 'expected 200');
      const id = created.body.id as string;
      for (const path of ['/v1/sessions?beta=true', `/v1/sessions/${id}?beta=true`, `/v1/sessions/${id}/events?beta=true`, '/v1/agents?beta=true', `/v1/agents/${s.agent_id}?beta=true`]) {
        const res = await send(s, 'GET', path, { key: owner });
        if (res.status !== 200) fail(`GET ${path}`, res, 'expected 200: beta=true is accepted and ignored');
      }
      const streamed = await readFrames(s, `/v1/sessions/${id}/events/stream?beta=true`, owner, 0);
      if (streamed.status !== 200) fail('GET …/events/stream?beta=true', undefined, 'expected 200');
      // Every /v1 route naming a Session that does not exist: 404 session_not_found (a body the route accepts where it takes one).
      const missing = 'sess_missing';
      const cases: Array<[string, string, unknown?]> = [
        ['GET', `/v1/sessions/${missing}`], ['POST', `/v1/sessions/${missing}`, { title: 'x' }], ['DELETE', `/v1/sessions/${missing}`],
        ['POST', `/v1/sessions/${missing}/archive`], ['GET', `/v1/sessions/${missing}/events`], ['GET', `/v1/sessions/${missing}/events/stream`],
        ['POST', `/v1/sessions/${missing}/events`, { events: [{ type: 'user.message', content: text('hi') }] }],
        ['GET', `/v1/awaken/sessions/${missing}/live-inbox`], ['POST', `/v1/awaken/sessions/${missing}/live-inbox`, { content: text('hi') }],
        ['PUT', `/v1/awaken/sessions/${missing}/live-inbox/order`, { order: [1] }], ['PUT', `/v1/awaken/sessions/${missing}/live-inbox/1`, { content: text('hi') }],
        ['DELETE', `/v1/awaken/sessions/${missing}/live-inbox/1`],
      ];
      for (const [method, path, body] of cases) {
        for (const query of ['', '?beta=true']) {
          const res = await send(s, method, `${path}${query}`, { key: owner, ...(body === undefined ? {} : { body }) });
          expectError(`${method} ${path}${query}`, res, 404, 'session_not_found');
          if (res.headers.get('x-should-retry') !== 'false') fail(`${method} ${path}${query}`, res, 'a 404 carries x-should-retry: false');
        }
      }
      // A Session made through POST /sessions answers the SDK's required fields too: the Runtime's agent, environment "default".
      const plain = await send(s, 'POST', '/sessions', { key: owner, body: { title: 'plain' } });
      if (plain.status !== 201) fail('POST /sessions', plain, 'expected 201');
      const seen = await send(s, 'GET', `/v1/sessions/${plain.body.session.id}?beta=true`, { key: owner });
      if (seen.status !== 200 || seen.body.agent?.type !== 'agent' || seen.body.agent?.id !== 'runtime' || typeof seen.body.agent?.version !== 'number'
        || typeof seen.body.agent?.model?.id !== 'string' || seen.body.environment_id !== 'default') {
        fail(`GET /v1/sessions/${plain.body.session.id}`, seen, 'expected agent { type: agent, id: runtime, version, model } and environment_id "default"');
      }
      const listed = await send(s, 'GET', '/v1/sessions?limit=100&beta=true', { key: owner });
      for (const session of listed.body.data as Array<{ id: string; agent: unknown; environment_id: unknown }>) {
        if (session.agent === null || typeof session.environment_id !== 'string') fail('GET /v1/sessions', listed, `Session ${session.id} lacks agent or environment_id`);
      }
    },
  },
  {
    group: 'contract: retries',
    name: 'retries: x-should-retry false on answers a retry cannot fix (4xx: 400, 401, 403, 404, 409 session_running), absent on success',
    async run(s) {
      const owner = s.keys.acc_owner!;
      const expectRetry = (what: string, res: Reply, value: string | null) => {
        if (res.headers.get('x-should-retry') !== value) fail(what, res, `expected x-should-retry ${value ?? 'absent'}, got ${res.headers.get('x-should-retry')}`);
      };
      expectRetry('GET /me', await send(s, 'GET', '/me', { key: owner }), null);
      expectRetry('no key', await send(s, 'GET', '/me'), 'false');
      expectRetry('a bad limit', await send(s, 'GET', `${P(s)}/inbox?limit=0`, { key: owner }), 'false');
      expectRetry('an observer deciding', await send(s, 'GET', `${P(s)}/inbox`, { key: s.keys.acc_observer }), 'false');
      expectRetry('an unknown project', await send(s, 'GET', '/projects/proj_missing', { key: owner }), 'false');
      const running = await send(s, 'POST', '/v1/sessions', { key: owner, body: { agent: s.agent_id, environment_id: 'env_r', initial_events: [{ type: 'user.message', content: text('go') }] } });
      const step = await s.model.next();
      const refused = await send(s, 'DELETE', `/v1/sessions/${running.body.id}`, { key: owner });
      expectError('deleting a running Session', refused, 409, 'session_running');
      expectRetry('deleting a running Session', refused, 'false');
      step.reply('done');
    },
  },
  {
    group: 'contract: stream tokens',
    name: 'stream tokens: POST /stream-tokens (at most 15 minutes) opens the caller\'s streams as ?access_token= only; never on other routes, never an API key in a URL; revoking the key ends them',
    async run(s) {
      const owner = s.keys.acc_owner!;
      const issued = await send(s, 'POST', '/stream-tokens', { key: owner });
      if (issued.status !== 201 || typeof issued.body.token !== 'string' || typeof issued.body.expires_at !== 'number') fail('POST /stream-tokens', issued, 'expected 201 { token, expires_at }');
      const ttl = issued.body.expires_at - Date.now();
      if (ttl > MAX_STREAM_TOKEN_TTL_SECONDS * 1000 || ttl < MAX_STREAM_TOKEN_TTL_SECONDS * 1000 - 60_000) fail('POST /stream-tokens', issued, 'expires_at must be 15 minutes on by default');
      const short = await send(s, 'POST', '/stream-tokens', { key: owner, body: { ttl_seconds: 60 } });
      if (short.status !== 201 || short.body.expires_at - Date.now() > 60_000) fail('POST /stream-tokens { ttl_seconds: 60 }', short, 'expected a token for at most 60 s');
      expectError('ttl_seconds 901', await send(s, 'POST', '/stream-tokens', { key: owner, body: { ttl_seconds: 901 } }), 400, 'validation_error');
      expectError('no key', await send(s, 'POST', '/stream-tokens'), 401, 'authentication_required');
      const token = encodeURIComponent(issued.body.token as string);
      // The project stream (the seeded project's events) and the Session stream open with it, no header.
      const res = await s.fetch(`${s.url}${P(s)}/events/stream?access_token=${token}`, { headers: { accept: 'text/event-stream' } });
      if (res.status !== 200) fail('the project stream with access_token', { status: res.status, headers: res.headers, text: await res.text(), body: undefined }, 'expected 200');
      await res.body?.cancel();
      const session = await s.fetch(`${s.url}/v1/sessions/${s.session_id}/events/stream?access_token=${token}`, { headers: { accept: 'text/event-stream' } });
      if (session.status !== 200) fail('the Session stream with access_token', undefined, `expected 200, got ${session.status}`);
      await session.body?.cancel();
      // Never on another route, and never an API key in a URL.
      expectError('access_token on a JSON route', await send(s, 'GET', `${P(s)}/events?access_token=${token}`), 401, 'invalid_credentials');
      expectError('an API key as access_token', await send(s, 'GET', `${P(s)}/events/stream?access_token=${encodeURIComponent(owner)}`), 401);
      expectError('a forged token', await send(s, 'GET', `${P(s)}/events/stream?access_token=${token.slice(0, -4)}AAAA`), 401, 'invalid_credentials');
      expectError('a token of an outsider', await send(s, 'GET', `${P(s)}/events/stream?access_token=${encodeURIComponent((await send(s, 'POST', '/stream-tokens', { key: s.keys.acc_outsider })).body.token)}`), 404);
      // Revoking the key ends its tokens: the admin revokes the owner's key.
      const keys = await send(s, 'GET', '/admin/keys?limit=200', { key: s.keys.admin });
      const mine = await send(s, 'GET', '/me', { key: owner });
      const key = (keys.body.items as Array<{ id: string; account_id: string; kind: string; revoked_at: unknown }>).find((k) => k.account_id === mine.body.account.id && k.kind === 'standard' && k.revoked_at === null);
      if (key === undefined) fail('GET /admin/keys', keys, "the owner's standard key is listed");
      const revoked = await send(s, 'DELETE', `/admin/keys/${key.id}`, { key: s.keys.admin });
      if (revoked.status >= 300) fail(`DELETE /admin/keys/${key.id}`, revoked, 'expected the key revoked');
      const deadline = Date.now() + 5_000;
      let after: Reply;
      do {
        after = await send(s, 'GET', `${P(s)}/events/stream?access_token=${token}`);
        if (after.status === 401) break;
        await new Promise((r) => setTimeout(r, 100));
      } while (Date.now() < deadline);
      expectError('a token of a revoked key', after, 401, 'invalid_credentials');
    },
  },
  {
    group: 'contract: CORS',
    layer: 'both',
    name: 'CORS off by default: no Access-Control-* header for any Origin, an OPTIONS preflight is 405 with Allow',
    async run(s) {
      const res = await send(s, 'GET', '/me', { key: s.keys.acc_owner, headers: { origin: 'http://app.example' } });
      if (res.status !== 200 || res.headers.get('access-control-allow-origin') !== null) fail('GET /me with an Origin', res, 'expected no CORS header');
      const preflight = await send(s, 'OPTIONS', '/me', { headers: { origin: 'http://app.example', 'access-control-request-method': 'GET' } });
      expectError('OPTIONS /me', preflight, 405, 'method_not_allowed');
      if (preflight.headers.get('access-control-allow-origin') !== null || preflight.headers.get('allow') !== 'GET, HEAD') fail('OPTIONS /me', preflight, 'expected Allow: GET, HEAD and no CORS header');
    },
  },
  {
    group: 'contract: CORS',
    layer: 'both',
    name: 'CORS with exact origins: an allowed Origin gets its own origin back and the exposed headers; its preflight 204 on every path; other origins nothing',
    settings: { cors: { origins: ['http://app.example', 'http://localhost:5173'] } },
    async run(s) {
      const owner = s.keys.acc_owner!;
      const ok = await send(s, 'GET', '/me', { key: owner, headers: { origin: 'http://app.example' } });
      if (ok.status !== 200 || ok.headers.get('access-control-allow-origin') !== 'http://app.example') fail('GET /me from an allowed origin', ok, 'expected Access-Control-Allow-Origin: http://app.example');
      const exposed = (ok.headers.get('access-control-expose-headers') ?? '').toLowerCase().split(/\s*,\s*/);
      for (const name of ['request-id', 'x-request-id', 'retry-after', 'x-should-retry']) if (!exposed.includes(name)) fail('GET /me from an allowed origin', ok, `${name} must be exposed`);
      if (ok.headers.get('access-control-allow-credentials') !== null) fail('GET /me', ok, 'credentials are off by default');
      const error = await send(s, 'GET', '/projects/proj_missing', { key: owner, headers: { origin: 'http://app.example' } });
      if (error.status !== 404 || error.headers.get('access-control-allow-origin') !== 'http://app.example') fail('an error from an allowed origin', error, 'errors carry the CORS headers too');
      for (const path of ['/me', `${P(s)}/events/stream`, `/v1/sessions/${s.session_id}/events`]) {
        const preflight = await send(s, 'OPTIONS', path, { headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' } });
        if (preflight.status !== 204 || preflight.headers.get('access-control-allow-origin') !== 'http://localhost:5173') fail(`OPTIONS ${path}`, preflight, 'expected 204 with the origin');
        if (!(preflight.headers.get('access-control-allow-methods') ?? '').includes('POST')) fail(`OPTIONS ${path}`, preflight, 'the methods are allowed');
        if (!(preflight.headers.get('access-control-allow-headers') ?? '').toLowerCase().includes('authorization')) fail(`OPTIONS ${path}`, preflight, 'Authorization is allowed');
        if (!/^\d+$/.test(preflight.headers.get('access-control-max-age') ?? '')) fail(`OPTIONS ${path}`, preflight, 'Access-Control-Max-Age is sent');
      }
      const other = await send(s, 'GET', '/me', { key: owner, headers: { origin: 'http://evil.example' } });
      if (other.status !== 200 || other.headers.get('access-control-allow-origin') !== null) fail('GET /me from another origin', other, 'expected no CORS header');
      const otherPreflight = await send(s, 'OPTIONS', '/me', { headers: { origin: 'http://evil.example', 'access-control-request-method': 'GET' } });
      if (otherPreflight.headers.get('access-control-allow-origin') !== null) fail('OPTIONS /me from another origin', otherPreflight, 'expected no CORS header');
    },
  },
  {
    group: 'contract: readers',
    name: 'a TavernHeadless-style reader (@tavern/sdk rules: projects with role and kind, members with id/workspace_id/status, GET /projects/:id/sessions, GET /operation-logs { data, meta }) gets every record',
    async run(s) {
      // What @tavern/sdk's project calls accept, re-stated from issue 31 (its reader drops a record that fails them).
      const ROLES = ['owner', 'deriver', 'observer'];
      const isProject = (p: any) => typeof p?.id === 'string' && typeof p?.name === 'string' && ROLES.includes(p?.role) && typeof p?.kind === 'string';
      const isMember = (m: any) => typeof m?.id === 'string' && typeof m?.workspace_id === 'string' && typeof m?.account_id === 'string' && ROLES.includes(m?.role) && typeof m?.status === 'string';
      const owner = s.keys.acc_owner!;
      // projects.get: the record itself carries role and kind.
      const got = await send(s, 'GET', P(s), { key: owner });
      if (got.status !== 200 || !isProject(got.body.project) || got.body.project.role !== 'owner' || got.body.project.kind !== 'project' || got.body.role !== 'owner') fail(`GET ${P(s)}`, got, 'expected the project record with role owner and kind project');
      const observed = await send(s, 'GET', P(s), { key: s.keys.acc_observer });
      if (observed.body.project?.role !== 'observer') fail(`GET ${P(s)} as the observer`, observed, 'role observer in the record');
      // projects.list: none dropped, for the owner and for a member.
      for (const [who, key] of [['owner', owner], ['deriver', s.keys.acc_deriver!]] as const) {
        const listed = await send(s, 'GET', '/projects', { key });
        const kept = (listed.body.items as unknown[]).filter(isProject);
        if (listed.status !== 200 || kept.length === 0 || kept.length !== listed.body.items.length) fail(`GET /projects as the ${who}`, listed, 'every item must pass the reader');
        if (!kept.some((p: any) => p.id === s.project_id && p.role === who)) fail(`GET /projects as the ${who}`, listed, `the kit project with role ${who}`);
      }
      // listMembers: none dropped; ids stable and distinct.
      const members = await send(s, 'GET', `${P(s)}/members`, { key: owner });
      const keptMembers = (members.body.items as unknown[]).filter(isMember) as Array<{ id: string; workspace_id: string }>;
      if (members.status !== 200 || keptMembers.length !== 3 || keptMembers.length !== members.body.items.length || keptMembers.some((m) => m.workspace_id !== 'ws_demo')) fail(`GET ${P(s)}/members`, members, 'the three seeded members, each passing the reader');
      const again = await send(s, 'GET', `${P(s)}/members`, { key: owner });
      if (JSON.stringify(again.body.items.map((m: any) => m.id)) !== JSON.stringify(keptMembers.map((m) => m.id)) || new Set(keptMembers.map((m) => m.id)).size !== 3) fail('member ids', again, 'the same distinct ids on every read');
      const added = await send(s, 'POST', `${P(s)}/members`, { key: owner, body: { account_id: 'acc_outsider', role: 'observer' } });
      if (added.status !== 201 || !isMember(added.body.member)) fail(`POST ${P(s)}/members`, added, 'the member record');
      // listSessions: GET /projects/:id/sessions, the same page as /sessions?project_id=.
      const sessions = await send(s, 'GET', `${P(s)}/sessions`, { key: s.keys.acc_observer });
      const viaQuery = await send(s, 'GET', `/sessions?project_id=${s.project_id}`, { key: s.keys.acc_observer });
      if (sessions.status !== 200 || !sessions.body.items.some((x: any) => x.id === s.session_id) || JSON.stringify(sessions.body) !== JSON.stringify(viaQuery.body)) fail(`GET ${P(s)}/sessions`, sessions, 'the project\'s Sessions, as /sessions?project_id=');
      expectError('an unknown project\'s sessions', await send(s, 'GET', '/projects/proj_missing/sessions', { key: owner }), 404, 'project_not_found');
      expectError('another tenant\'s project sessions', await send(s, 'GET', `${P(s)}/sessions`, { key: s.keys.acc_stranger }), 404, 'project_not_found');
      // operationLogs.list: GET /operation-logs?project_id= → { data, meta }, pages by meta.next_cursor, the same rows as the project's log.
      const rows: string[] = [];
      let cursor: string | null = null;
      do {
        const res: Reply = await send(s, 'GET', `/operation-logs?project_id=${s.project_id}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { key: owner });
        if (res.status !== 200 || !Array.isArray(res.body.data) || typeof res.body.meta !== 'object' || res.body.meta.limit !== 2 || res.body.meta.has_more !== (res.body.meta.next_cursor !== null)) fail('GET /operation-logs', res, 'expected { data, meta: { next_cursor, has_more, limit } }');
        rows.push(...res.body.data.map((r: { id: string }) => r.id));
        cursor = res.body.meta.next_cursor;
      } while (cursor !== null && rows.length < 100);
      const direct = await send(s, 'GET', `${P(s)}/operation-logs?limit=200`, { key: owner });
      if (JSON.stringify(rows) !== JSON.stringify(direct.body.items.map((r: { id: string }) => r.id)) || rows.length < 3) fail('GET /operation-logs pages', direct, 'the same rows as /projects/:id/operation-logs');
      expectError('the log without project_id', await send(s, 'GET', '/operation-logs', { key: owner }), 400, 'validation_error');
      expectError('the log as an observer', await send(s, 'GET', `/operation-logs?project_id=${s.project_id}`, { key: s.keys.acc_observer }), 403, 'permission_denied');
    },
  },
];
