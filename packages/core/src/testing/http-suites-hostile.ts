/**
 * Hostile HTTP input on every route the server serves (the list comes from the server itself:
 * its OpenAPI document, checked by the adapter's own tests against its router): wrong, missing and odd
 * Content-Type values, empty and non-object bodies, bodies over the limit (accurate, lying and
 * absent Content-Length — chunked), deeply nested JSON, prototype-poisoning keys, integers beyond
 * 2^53, non-finite numbers, lone surrogates, U+0000, emoji at every length limit, non-integer and
 * huge path ids, paths whose percent-encoding does not decode, hostile query strings and cursors,
 * and requests Node's parser refuses. Each gets a
 * deliberate 4xx in the envelope with no stack or SQL, nothing is written (row counts of every
 * table through the kit's raw reader, else the Store port's `worldState`; Project Events published
 * and the Live Inbox window; checked around every request), and
 * the process stays up: afterwards `/health` is 200, valid requests work, and every message the
 * Live Inbox acknowledged reaches the Session ledger.
 *
 * The Live Inbox routes run against a real active queue: the world's Session Runtime holds a
 * Run of `sess_001` open (its model waits) for the whole suite. Moved here from `@inbox-kit/http-fastify`'s
 * `hostile-input.test.ts`; Node only (`node:http`, `node:net`, `node:zlib`).
 */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect} from 'vitest';
import { kitIt, layerRuns } from './http-kit.js';
import { encodeCursor, filterFingerprint } from '../cursor.js';
import { malformedPathError, parseJsonBody } from '../http/parse.js';
import type { HttpConformanceOptions } from './http-conformance-checks.js';
import {
  expect4xx, expectNoLeak, fill, isAdminRoute, keyOf, parseRawResponse, rawRequest, rawSocket, routeInventory, validBody,
  type JsonSchema, type ParamValues, type RawRequest, type RouteInfo,
} from './http-raw.js';
import { expectError, heldModel, startHttpWorld, type HeldModel, type HttpWorld, type WorldResponse } from './http-world.js';

const SESSION = 'sess_001';
const LI = `/v1/awaken/sessions/${SESSION}/live-inbox`;
const text = (t: string) => [{ type: 'text', text: t }];
const MiB = 1_048_576;

/** Valid bodies by route; `order` is computed from the queue at the time (every current id, reversed). */
type BodyTable = Record<string, unknown>;

/**
 * Hostile input on every route the adapter documents in its `/openapi.json` (see the file comment).
 * "Nothing written" is read through the `rowCounts` reader `openStore` gives (every table of the
 * database), else through the Store port (`worldState`), plus the Project Events published and the
 * Live Inbox window.
 */
export function hostileInputSuite(kit: HttpConformanceOptions): void {
  if (!layerRuns(kit.mode ?? 'sockets', 'wire')) return;
  const it = kitIt(kit, 'hostile input on every route', 'wire');
  describe('hostile input on every route', () => {
    let h: HttpWorld;
    let model: HeldModel;
    let routes: RouteInfo[];
    let values: ParamValues;
    let secrets: string[];
    /** Ids the Live Inbox acknowledged (200 { id }); each must reach the ledger in the end. */
    const acknowledged: string[] = [];

    beforeAll(async () => {
      model = heldModel();
      h = await startHttpWorld(kit, { model });
      routes = await routeInventory(h.url);
      secrets = Object.values(h.keys);
      const started = await h.request('POST', `/v1/sessions/${SESSION}/events`, { as: 'acc_owner', body: { events: [{ type: 'user.message', content: text('start') }] } });
      expect(started.status, started.text).toBe(200);
      await model.waiting();
      for (const t of ['first', 'second']) {
        const q = await h.request('POST', LI, { as: 'acc_owner', body: { content: text(t) } });
        expect(q.status, q.text).toBe(200);
        acknowledged.push(t);
      }
      const item = await h.request('POST', '/projects/proj_main/inbox', { as: 'acc_deriver', body: { type: 'probe' } });
      expect(item.status).toBe(201);
      values = {
        projects: 'proj_main', sessions: SESSION, inbox: item.body.item.id, members: 'acc_observer', floors: h.floors.A.id, 'live-inbox': '1',
        accounts: 'acc_probe', keys: h.keyIds.probe!,
      };
    });
    afterAll(async () => {
      model?.release();
      await h?.close();
    });

    /** What a refused request must leave as it was. */
    const worldState = async (): Promise<unknown> => {
      const rows = await h.rowCounts();
      if (rows === null) return h.worldState(LI);
      return { counts: rows, published: h.published.length, liveInbox: (await h.request('GET', LI, { as: 'acc_owner' })).body };
    };

    const bodyRoutes = () => routes.filter((r) => r.body !== undefined);
    const writeRoutes = () => routes.filter((r) => r.method !== 'GET' && !r.public);

    async function bodies(): Promise<BodyTable> {
      const snap = (await h.request('GET', LI, { as: 'acc_owner' })).body as { messages: { id: number }[] };
      return {
        'POST /projects': { name: 'Hostile test project' },
        'POST /projects/{id}/members': { account_id: 'acc_observer', role: 'observer' },
        'POST /sessions': { project_id: 'proj_main', title: 'hostile' },
        'POST /sessions/{id}/floors': { content: { text: 'turn' } },
        'POST /sessions/{id}/floors/{floor_id}/pages': { content: { text: 'again' } },
        'POST /projects/{id}/inbox': { type: 'hostile.probe', title: 'probe', payload: { a: 1 } },
        'PATCH /projects/{id}/inbox/{item_id}': { decision: 'archive', note: 'n' },
        'POST /v1/sessions/{session_id}/events': { events: [{ type: 'user.message', content: text('durable') }] },
        'POST /v1/awaken/sessions/{session_id}/live-inbox': { content: text('queued') },
        'PUT /v1/awaken/sessions/{session_id}/live-inbox/order': { order: snap.messages.map((m) => m.id).reverse() },
        'PUT /v1/awaken/sessions/{session_id}/live-inbox/{message_id}': { content: text('edited') },
        'POST /admin/accounts': { name: 'Hostile probe' },
        'POST /admin/accounts/{id}/keys': { kind: 'standard' },
        'POST /admin/keys/{id}/rotate': { grace_ms: 0 },
        'POST /stream-tokens': { ttl_seconds: 60 },
      };
    }

    /** The key a route is sent with: the owner's, or for an administration route the admin key (so the route's own rules answer, not the key's kind). */
    const keyFor = (path: string) => (path.startsWith('/admin/') ? 'admin' : 'acc_owner');

    /** Sends `r` as the owner (unless it says otherwise) and checks: a 4xx envelope, no leak, nothing written. */
    async function hostile(what: string, r: RawRequest, opts: { allow2xx?: boolean; as?: string } = {}): Promise<WorldResponse> {
      const before = await worldState();
      const res = await rawRequest(h.url, { ...r, headers: { authorization: `Bearer ${h.keys[opts.as ?? keyFor(r.path)]}`, ...r.headers } });
      if (opts.allow2xx && res.status < 300) expect(res.status, what).toBeGreaterThanOrEqual(200);
      else expect4xx(res, what, secrets);
      expect(await worldState(), `${what} wrote something`).toEqual(before);
      return res;
    }

    const json = { 'content-type': 'application/json' };

    it('covers every served route (the inventory is the server\'s own) and each answers its valid request', async () => {
      expect(routes.length).toBeGreaterThanOrEqual(20);
      const table = await bodies();
      // A route with a body must have a valid one in the table; a path parameter must have a value.
      for (const r of routes) {
        fill(r, values);
        if (r.body) validBody(r, table);
      }
      // Control: the valid request of every body route succeeds, so each hostile variant below fails
      // for its hostile part only.
      for (const r of bodyRoutes()) {
        const current = await bodies();
        const res = await rawRequest(h.url, {
          method: r.method, path: fill(r, values), headers: { ...json, authorization: `Bearer ${h.keys[isAdminRoute(r) ? 'admin' : 'acc_owner']}` }, body: JSON.stringify(validBody(r, current)),
        });
        expect(res.status, `${keyOf(r)} → ${res.text.slice(0, 300)}`).toBeLessThan(300);
        if (keyOf(r) === 'POST /v1/awaken/sessions/{session_id}/live-inbox') acknowledged.push('queued');
      }
    });

    it('wrong, missing and odd Content-Type values on every route with a body → 4xx (415 unsupported_media_type for anything but application/json in UTF-8), nothing written', async () => {
      const table = await bodies();
      /** Cases answered 415 `unsupported_media_type` (issue 15 item 4); the rest are 400. */
      const unsupported = new Set(['no Content-Type', 'text/plain', 'text/plain; charset=utf-8', 'form encoding', 'multipart', 'XML', 'a +json media type',
        'application/jsonx', 'a bare "json"', 'an unparseable value', 'an empty value', 'octet-stream', 'UTF-16 bytes labelled as such', 'Latin-1 bytes']);
      for (const r of bodyRoutes()) {
        const valid = JSON.stringify(validBody(r, table));
        const cases: [string, Record<string, string>, string | Uint8Array][] = [
          ['no Content-Type', {}, valid],
          ['text/plain', { 'content-type': 'text/plain' }, valid],
          ['text/plain; charset=utf-8', { 'content-type': 'text/plain; charset=utf-8' }, valid],
          ['form encoding', { 'content-type': 'application/x-www-form-urlencoded' }, 'a=1&b=2'],
          ['multipart', { 'content-type': 'multipart/form-data; boundary=x' }, `--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n${valid}\r\n--x--`],
          ['XML', { 'content-type': 'application/xml' }, '<a>1</a>'],
          ['a +json media type', { 'content-type': 'application/vnd.api+json' }, valid],
          ['application/jsonx', { 'content-type': 'application/jsonx' }, valid],
          ['a bare "json"', { 'content-type': 'json' }, valid],
          ['an unparseable value', { 'content-type': '///' }, valid],
          ['an empty value', { 'content-type': '' }, valid],
          ['octet-stream', { 'content-type': 'application/octet-stream' }, valid],
          ['UTF-16 bytes labelled as such', { 'content-type': 'application/json; charset=utf-16le' }, Buffer.from(valid, 'utf16le')],
          ['UTF-16 bytes with a BOM', { 'content-type': 'application/json' }, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(valid, 'utf16le')])],
          ['a gzip-encoded body', { 'content-type': 'application/json', 'content-encoding': 'gzip' }, gzipSync(valid)],
          ['Latin-1 bytes', { 'content-type': 'application/json; charset=latin1' }, Buffer.from(valid.replace(/}$/, ',"x":"\u00e9"}'), 'latin1')],
        ];
        for (const [what, headers, body] of cases) {
          const res = await hostile(`${keyOf(r)} with ${what}`, { method: r.method, path: fill(r, values), headers, body });
          if (unsupported.has(what)) {
            expect([res.status, res.body.error.type, res.body.error.code], `${keyOf(r)} with ${what}`).toEqual([415, 'invalid_request_error', 'unsupported_media_type']);
          } else {
            expect(res.status, `${keyOf(r)} with ${what}`).toBe(400);
          }
        }
      }
    });

    it('empty, absent, non-object and malformed bodies on every route with a body → 400, nothing written', async () => {
      for (const r of bodyRoutes()) {
        const path = fill(r, values);
        // A route whose body is optional takes no body at all (that is its valid request, above).
        if (r.bodyRequired) {
          await hostile(`${keyOf(r)} with no body at all`, { method: r.method, path });
          await hostile(`${keyOf(r)} with Content-Length: 0`, { method: r.method, path, headers: json, body: '' });
        }
        for (const body of ['null', '[]', '[{}]', '"x"', '42', 'true', '{', '{"a":1} x', "{'a':1}", '\u0000', '\ufeff', '{"a":1,}', 'NaN', '{"a":NaN}', '{"a":Infinity}', '{"a":01}', '{"a":"\\x41"}', '{"a":"\t"}']) {
          const res = await hostile(`${keyOf(r)} with body ${JSON.stringify(body)}`, { method: r.method, path, headers: json, body });
          expect(res.status).toBe(400);
        }
        // Not UTF-8.
        await hostile(`${keyOf(r)} with invalid UTF-8`, { method: r.method, path, headers: json, body: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]) });
        await hostile(`${keyOf(r)} with an overlong UTF-8 encoding`, { method: r.method, path, headers: json, body: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc0, 0xaf, 0x22, 0x7d]) });
        await hostile(`${keyOf(r)} with UTF-8-encoded surrogates`, { method: r.method, path, headers: json, body: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d]) });
      }
    });

    it('bodies over the 1 MiB limit on every route that takes one — accurate, lying and absent (chunked) Content-Length → 413, nothing written', async () => {
      const big = (n: number) => Buffer.from(`{"pad":"${'x'.repeat(n)}"}`);
      for (const r of writeRoutes()) {
        const path = fill(r, values);
        const what = keyOf(r);
        const a = await hostile(`${what} with a body over the limit`, { method: r.method, path, headers: json, body: big(MiB + 10) });
        expect(a.status).toBe(413);
        expect(a.body.error).toMatchObject({ type: 'request_too_large', code: 'payload_too_large' });
        const b = await hostile(`${what} announcing 2 MiB`, { method: r.method, path, headers: json, body: '{}', contentLength: 2 * MiB });
        expect(b.status).toBe(413);
        // Chunked: no Content-Length; the server must count and stop at the limit.
        function* chunks() {
          yield Buffer.from('{"pad":"');
          for (let sent = 0; sent < MiB + 200_000; sent += 65_536) yield Buffer.alloc(65_536, 0x78);
          yield Buffer.from('"}');
        }
        const c = await hostile(`${what} chunked past the limit`, { method: r.method, path, headers: json, chunks: chunks() });
        expect(c.status).toBe(413);
        expect(c.body.error.code).toBe('payload_too_large');
      }
      // Just under the limit, chunked, is read to the end (and refused only for what it says).
      const r = routes.find((x) => keyOf(x) === 'POST /projects/{id}/inbox')!;
      function* under() {
        const body = Buffer.from(JSON.stringify({ type: 't', payload: 'x'.repeat(300_000) }));
        for (let i = 0; i < body.length; i += 50_000) yield body.subarray(i, i + 50_000);
      }
      const u = await hostile('a chunked body under the limit whose payload is over 256 KiB', { method: 'POST', path: fill(r, values), headers: json, chunks: under() });
      expect(u.body.error.code).toBe('project_inbox_payload_too_large');
    });

    it('deeply nested JSON, as the body and inside each field → 4xx, never a crash, nothing written', async () => {
      const table = await bodies();
      const deepArray = (n: number) => '['.repeat(n) + ']'.repeat(n);
      const deepObject = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
      const deepProto = (n: number) => '{"a":'.repeat(n) + '{"__proto__":{"polluted":1}}' + '}'.repeat(n);
      for (const r of bodyRoutes()) {
        const path = fill(r, values);
        for (const [what, raw] of [['100,000 nested arrays', deepArray(100_000)], ['50,000 nested objects', deepObject(50_000)], ['__proto__ under 20,000 objects', deepProto(20_000)]] as const) {
          await hostile(`${keyOf(r)} with ${what}`, { method: r.method, path, headers: json, body: raw });
          for (const field of Object.keys(r.body!.properties ?? {})) {
            const body = JSON.stringify({ ...(validBody(r, table) as object), [field]: '@@DEEP@@' }).replace('"@@DEEP@@"', raw);
            await hostile(`${keyOf(r)} with ${what} in ${field}`, { method: r.method, path, headers: json, body });
          }
        }
      }
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('prototype-poisoning keys anywhere in the body → 400, nothing written, Object.prototype untouched', async () => {
      const table = await bodies();
      for (const r of bodyRoutes()) {
        const path = fill(r, values);
        const valid = JSON.stringify(validBody(r, table));
        const inner = valid.slice(1, -1);
        const raws = [
          `{"__proto__":{"polluted":true},${inner}}`,
          `{${inner},"__proto__":{"polluted":true}}`,
          `{${inner},"constructor":{"prototype":{"polluted":true}}}`,
          `{"\\u005f\\u005fproto__":{"polluted":true},${inner}}`,
          `{"__pro\\u0074o__":{"polluted":true},${inner}}`,
          `{${inner},"constructor":{"prototype":null}}`,
          ...Object.keys(r.body!.properties ?? {}).flatMap((field) => [
            JSON.stringify({ ...(validBody(r, table) as object), [field]: '@@P@@' }).replace('"@@P@@"', '{"__proto__":{"polluted":true}}'),
            JSON.stringify({ ...(validBody(r, table) as object), [field]: '@@P@@' }).replace('"@@P@@"', '[{"constructor":{"prototype":{"polluted":true}}}]'),
          ]),
        ];
        for (const raw of raws) {
          const res = await hostile(`${keyOf(r)} with ${raw.slice(0, 80)}`, { method: r.method, path, headers: json, body: raw });
          expect(res.status, raw).toBe(400);
        }
      }
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(Object.prototype).not.toHaveProperty('polluted');
    });

    it('the same answers as every adapter: a valid body with a __proto__ or constructor.prototype key and a path whose percent-encoding does not decode → 400 validation_error with the contract\'s message, nothing written', async () => {
      // The contract's own words (`parseJsonBody`, `malformedPathError` of `@inbox-kit/core/http`).
      let forbidden = '';
      try {
        parseJsonBody(new TextEncoder().encode('{"__proto__":{}}'), 'application/json');
      } catch (error) {
        forbidden = (error as Error).message;
      }
      expect(forbidden).toMatch(/valid JSON but contains a forbidden key/);
      for (const body of ['{"name":"x","__proto__":{"a":1}}', '{"__proto__":{"a":1},"name":"x"}', '{"name":"x","constructor":{"prototype":{"a":1}}}']) {
        const res = await hostile(`POST /projects with ${body}`, { method: 'POST', path: '/projects', headers: json, body });
        expect(res.status, body).toBe(400);
        expect(res.body.error, body).toMatchObject({ code: 'validation_error', message: forbidden });
      }
      const table = await bodies();
      for (const r of routes.filter((x) => x.params.length > 0)) {
        for (const bad of ['%zz', '%', 'a%2', '%E0%A4%A', 'x%ZZy']) {
          const path = fill(r, values, { [r.params.length - 1]: bad });
          const res = await hostile(`${r.method} ${path}`, {
            method: r.method, path, ...(r.body ? { headers: json, body: JSON.stringify(validBody(r, table)) } : {}), headOnly: r.stream,
          });
          expect(res.status, `${r.method} ${path}`).toBe(400);
          expect(res.body.error, `${r.method} ${path}`).toMatchObject({ code: 'validation_error', message: malformedPathError().message });
        }
      }
    });

    it('schema-driven field attacks on every body: unknown and missing fields, integers beyond 2^53, non-finite numbers, lone surrogates, U+0000 → 400, nothing written', async () => {
      const table = await bodies();
      /** `{}` in the schema: the field takes any JSON (payloads, turn content). */
      const isAny = (s: JsonSchema) => Object.keys(s).every((k) => ['description', 'title', 'default', 'examples'].includes(k));
      const typed = ['9007199254740993', '-9007199254740993', '1e400', '-1e400', '1.5', '-0.5', 'true', '{}', '"\\ud800"', '"x\\udc00y"', '"a\\u0000b"', '["\\ud800"]', '[9007199254740993]', '[1e400]', '[{"type":"text","text":"\\ud83d"}]', '[{"type":"text","text":"x","__proto__":{}}]'];
      const anyJson = ['"\\ud800"', '{"k":"\\udfff"}', '["\\ud83d\\ud83d"]', '{"\\ud800":1}', '1e400', '[-1e400]'];
      for (const r of bodyRoutes()) {
        const path = fill(r, values);
        const valid = validBody(r, table) as Record<string, unknown>;
        const with_ = (field: string, raw: string) => JSON.stringify({ ...valid, [field]: '@@V@@' }).replace('"@@V@@"', raw);
        const send = async (what: string, body: string) => {
          const res = await hostile(`${keyOf(r)} ${what}`, { method: r.method, path, headers: json, body });
          expect(res.status, `${keyOf(r)} ${what}`).toBe(400);
        };
        await send('with an unknown field', JSON.stringify({ ...valid, unknown_field: 1 }));
        await send('with an unknown field named like a field in camelCase', JSON.stringify({ ...valid, sourceSessionId: 'sess_001' }));
        for (const field of r.body!.required ?? []) {
          const { [field]: _dropped, ...rest } = valid;
          await send(`without ${field}`, JSON.stringify(rest));
        }
        for (const [field, schema] of Object.entries(r.body!.properties ?? {})) {
          for (const raw of isAny(schema) ? anyJson : typed) await send(`with ${field}: ${raw}`, with_(field, raw));
        }
      }
      // The integer array of the reorder: every id once, but one beyond 2^53, fractional or infinite.
      const order = routes.find((r) => keyOf(r) === 'PUT /v1/awaken/sessions/{session_id}/live-inbox/order')!;
      for (const raw of ['[1,9007199254740993]', '[9007199254740992,1]', '[1.0000000000000002,2]', '[1e400,2]', '[-1e400]', '[1,2,1e-400]']) {
        await hostile(`reorder ${raw}`, { method: 'PUT', path: fill(order, values), headers: json, body: `{"order":${raw}}` });
      }
    });

    it('emoji at every text length limit: the limit itself passes, one more code point is refused (nothing written)', async () => {
      const emoji = '😀';
      const family = '👨‍👩‍👧'; // five code points
      const cases: { what: string; method: string; path: string; body: (s: string) => unknown; field: string; max: number }[] = [
        { what: 'project name', method: 'POST', path: '/projects', body: (s) => ({ name: s }), field: 'name', max: 200 },
        { what: 'session title', method: 'POST', path: '/sessions', body: (s) => ({ project_id: 'proj_main', title: s }), field: 'title', max: 200 },
        { what: 'inbox item type', method: 'POST', path: '/projects/proj_main/inbox', body: (s) => ({ type: s }), field: 'type', max: 128 },
        { what: 'inbox item title', method: 'POST', path: '/projects/proj_main/inbox', body: (s) => ({ type: 't', title: s }), field: 'title', max: 200 },
        { what: 'decision note', method: 'PATCH', path: `/projects/proj_main/inbox/${values.inbox}`, body: (s) => ({ decision: 'archive', note: s }), field: 'note', max: 500 },
      ];
      for (const c of cases) {
        const families = family.repeat(Math.floor(c.max / 5)) + emoji.repeat(c.max % 5);
        // Exactly `max` code points: emoji, ZWJ families, precomposed and combining accents, padded with blanks that trimming removes.
        for (const atLimit of [emoji.repeat(c.max), families, `  😀${'é'.repeat(c.max - 3)}e\u0301 \t`]) {
          const ok = await rawRequest(h.url, { method: c.method, path: c.path, headers: { ...json, authorization: `Bearer ${h.keys.acc_owner}` }, body: JSON.stringify(c.body(atLimit)) });
          expect(ok.status, `${c.what} of ${c.max} code points → ${ok.text.slice(0, 200)}`).toBeLessThan(300);
        }
        for (const over of [emoji.repeat(c.max + 1), families + emoji, 'x'.repeat(c.max) + '😀', '😀'.repeat(c.max) + '\u0301', `  😀${'é'.repeat(c.max - 2)}e\u0301 `]) {
          const res = await hostile(`${c.what} of ${c.max + 1} code points`, { method: c.method, path: c.path, headers: json, body: JSON.stringify(c.body(over)) });
          expect(res.status).toBe(400);
          expect(res.body.error.code).toBe('validation_error');
        }
      }
      // The inbox list filter allows 512 code points: 512 emoji pass, 513 do not.
      expect((await h.request('GET', `/projects/proj_main/inbox?type=${encodeURIComponent(emoji.repeat(512))}`, { as: 'acc_owner' })).status).toBe(200);
      expectError(await h.request('GET', `/projects/proj_main/inbox?type=${encodeURIComponent(emoji.repeat(513))}`, { as: 'acc_owner' }), 400, 'validation_error');
    });

    it('non-integer, huge and malformed path ids on every route → 4xx, nothing written', async () => {
      const table = await bodies();
      const common = ['x'.repeat(129), 'x'.repeat(1100), '%00', 'a%00b', '%FF', '%E0%A4%A', '%F0%9F%98%80', '%C3%A9t%C3%A9', 'a%20b', '%20', '%09x', 'x%0Ay'];
      const integer = ['1.5', 'abc', '1e3', '0x10', '0b1', '99999999999999999999', '9007199254740993', '-9007199254740993', '+1', '%201', '1%20', '0', '-1', 'Infinity', 'NaN', '%EF%BC%91'];
      for (const r of routes.filter((x) => x.params.length > 0)) {
        for (let p = 0; p < r.params.length; p++) {
          const bad = r.params[p] === 'message_id' ? [...common, ...integer] : common;
          for (const value of bad) {
            await hostile(`${r.method} ${r.template} with ${r.params[p]} = ${value.slice(0, 30)}`, {
              method: r.method,
              path: fill(r, values, { [p]: value }),
              ...(r.body ? { headers: json, body: JSON.stringify(validBody(r, table)) } : {}),
              headOnly: r.stream,
            });
          }
        }
      }
      // A path far over Node's header limit gets the envelope too (431), from the server's client-error handler.
      const far = await hostile('a 20,000-character project id', { method: 'GET', path: `/projects/${'p'.repeat(20_000)}/inbox` });
      expect(far.status).toBe(431);
    });

    it('hostile query strings on every route → never a 5xx; integer parameters beyond 2^53 or not integers → 400; nothing written', async () => {
      const integerParams = new Set(['limit', 'after']);
      // Reads only: a write route has no query parameters, and ignores a query string like any other server would.
      expect(routes.filter((r) => r.method !== 'GET' && r.query.length > 0).map(keyOf)).toEqual([]);
      for (const r of routes.filter((x) => x.method === 'GET')) {
        const base = fill(r, values);
        const send = (query: string) => hostile(`${r.method} ${r.template}?${query.slice(0, 60)}`, { method: r.method, path: `${base}?${query}`, headOnly: r.stream }, { allow2xx: true });
        for (const q of ['__proto__=1', '__proto__[polluted]=1', 'constructor[prototype][polluted]=1', 'constructor=1', 'toString=1', 'hasOwnProperty=1', `unknown_param=1`]) {
          const res = await send(q);
          if (r.query.length > 0) expect(res.status, `${keyOf(r)}?${q}`).toBe(400);
        }
        for (const name of r.query) {
          for (const v of ['9007199254740993', '99999999999999999999', '-1', '1.5', '1e3', '0x10', '', '%00', 'a%00b', '%FF', '%E0%A4%A', 'x'.repeat(3000), '%F0%9F%98%80'.repeat(700)]) {
            const res = await send(`${name}=${v}`);
            if (integerParams.has(name)) expect(res.status, `${keyOf(r)}?${name}=${v.slice(0, 20)}`).toBe(400);
          }
          const dup = await send(`${name}=1&${name}=2`);
          expect(dup.status, `${keyOf(r)} with ${name} twice`).toBe(400);
        }
      }
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('cursors made of random bytes never cause a 500 (property), nor do minted cursors naming hostile positions', async () => {
      const paths = ['/projects/proj_main/inbox', '/projects/proj_main/operation-logs'];
      // 60 random cursors (a fixed seed, so a failure reproduces): random bytes, base64url or percent-encoded.
      let seed = 0x14c0ffee;
      const next = () => {
        seed = (Math.imul(seed, 1_664_525) + 1_013_904_223) >>> 0;
        return seed;
      };
      for (let run = 0; run < 60; run++) {
        const bytes = Uint8Array.from({ length: 1 + (next() % 400) }, () => next() & 0xff);
        const path = paths[next() % paths.length]!;
        const asBase64 = (next() & 1) === 1;
        const cursor = asBase64 ? Buffer.from(bytes).toString('base64url') : [...bytes].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
        const res = await rawRequest(h.url, { method: 'GET', path: `${path}?cursor=${cursor}`, headers: { authorization: `Bearer ${h.keys.acc_owner}` } });
        expect4xx(res, `cursor ${cursor.slice(0, 40)}`);
        expect(['invalid_cursor', 'validation_error']).toContain(res.body.error.code);
      }
      const fps = { '/projects/proj_main/inbox': filterFingerprint({}), '/projects/proj_main/operation-logs': filterFingerprint({ log: 'operation' }) };
      for (const [path, fp] of Object.entries(fps)) {
        for (const pos of [
          { created_at: 0, id: 'a\u0000b' }, { created_at: 0, id: 'é' }, { created_at: 0, id: '\ud800' }, { created_at: 2 ** 53, id: 'x' }, { created_at: 1e300, id: 'x' },
          { created_at: -1, id: 'x' }, { created_at: 0, id: 'x'.repeat(129) }, { created_at: 0, id: "' OR 1=1 --" }, { created_at: 0, id: '%' },
        ]) {
          const res = await rawRequest(h.url, { method: 'GET', path: `${path}?cursor=${encodeCursor('proj_main', fp, pos)}`, headers: { authorization: `Bearer ${h.keys.acc_owner}` } });
          expect(res.status, `${path} ${JSON.stringify(pos)} → ${res.text.slice(0, 200)}`).toBeLessThan(500);
          if (res.status >= 400) expect4xx(res, JSON.stringify(pos));
        }
        // The largest position a cursor may name is served (an empty page), on every engine.
        const edge = await rawRequest(h.url, { method: 'GET', path: `${path}?cursor=${encodeCursor('proj_main', fp, { created_at: Number.MAX_SAFE_INTEGER, id: '~'.repeat(128) })}`, headers: { authorization: `Bearer ${h.keys.acc_owner}` } });
        expect(edge.status, edge.text).toBe(200);
      }
    });

    it('requests Node\'s parser refuses (oversized request line or headers, garbage, smuggling) get the envelope', async () => {
      const before = await worldState();
      const headerFlood = await rawRequest(h.url, { method: 'GET', path: '/health', headers: { 'x-flood': 'y'.repeat(20_000) } });
      expect(headerFlood.status).toBe(431);
      expectError(headerFlood, 431, 'request_header_too_large');
      const auth = `Authorization: Bearer ${h.keys.acc_owner}\r\n`;
      for (const [what, wire, status] of [
        ['garbage', 'HELLO WORLD\r\n\r\n', 400],
        ['a bad HTTP version', 'GET /health HTTP/9.9\r\nHost: x\r\n\r\n', 400],
        ['a header without a colon', 'GET /health HTTP/1.1\r\nHost: x\r\nbroken header\r\n\r\n', 400],
        ['Content-Length and Transfer-Encoding together', `POST /projects HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`, 400],
        ['two different Content-Lengths', `POST /projects HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 20\r\n\r\n{}`, 400],
        ['a bad chunk size', `POST /projects HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`, 400],
        ['a 20 KB request line', `GET /projects?x=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 431],
      ] as const) {
        const raw = await rawSocket(h.url, wire);
        expect(raw, what).toMatch(/^HTTP\/1\.1 \d{3} /);
        const res = parseRawResponse(raw);
        expect(res.status, `${what}: ${raw.slice(0, 200)}`).toBe(status);
        expectError(res, status);
        expectNoLeak(res.text, secrets, what);
      }
      expect(await worldState()).toEqual(before);
    });

    it('after the barrage the process is up: /health 200, valid requests work, and every acknowledged Live Inbox message reaches the ledger', async () => {
      // The database is still readable, through the raw reader and the Store port.
      const rows = await h.rowCounts();
      expect(rows === null || Object.keys(rows).length > 0).toBe(true);
      expect((await h.worldState()).counts.projects).toBeGreaterThan(0);
      expect((await h.request('GET', '/health')).status).toBe(200);
      const created = await h.request('POST', '/projects/proj_main/inbox', { as: 'acc_deriver', body: { type: 'after.barrage', payload: { n: 1 } } });
      expect(created.status, created.text).toBe(201);
      expect((await h.request('GET', `/projects/proj_main/inbox/${created.body.item.id}`, { as: 'acc_owner' })).body.item.payload).toEqual({ n: 1 });
      const queued = await h.request('POST', LI, { as: 'acc_owner', body: { content: text('last') } });
      expect(queued.status, queued.text).toBe(200);
      acknowledged.push('last');
      const window = (await h.request('GET', LI, { as: 'acc_owner' })).body as { active: boolean; messages: { content: { text: string }[] }[] };
      expect(window.active).toBe(true);
      // Nothing hostile got into the queue: it holds only what valid requests queued or edited.
      const texts = window.messages.map((m) => m.content[0]!.text);
      expect(texts).toContain('last');
      for (const t of texts) expect([...acknowledged, 'edited']).toContain(t);

      // Let the Run go: the queue is drained and committed; nothing acknowledged is lost.
      model.release();
      await h.runtime!.whenIdle(SESSION);
      const history = await h.request('GET', `/v1/sessions/${SESSION}/events?limit=1000`, { as: 'acc_owner' });
      const committed = (history.body.data as { type: string; message_id: string | null; content: { text?: string }[] }[])
        .filter((e) => e.type === 'user.message' && /-inbox-\d+$/.test(e.message_id ?? ''))
        .map((e) => e.content[0]!.text);
      expect(committed.sort()).toEqual(window.messages.map((m) => m.content[0]!.text).sort());
      expect((await h.request('GET', LI, { as: 'acc_owner' })).body).toEqual({ active: false, version: 0, messages: [] });
      expect((await h.request('GET', '/health')).status).toBe(200);
    });
  });
}
