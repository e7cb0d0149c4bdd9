/**
 * The hostile-input checks on fields, paths and queries (`http-suites-hostile.ts`): schema-driven
 * field attacks, emoji at length limits, malformed path ids, hostile queries and cursors, requests
 * Node's parser refuses, and the process after the barrage. Data: each `run(ctx)` gets {@link HostileCtx}.
 */
import { expect } from 'vitest';
import { encodeCursor, filterFingerprint } from '../cursor.js';
import { expect4xx, expectNoLeak, fill, keyOf, parseRawResponse, rawSocket, validBody, type JsonSchema } from './http-raw.js';
import { expectError } from './http-world.js';
import type { HttpSuiteCheck } from './http-suites-kit.js';
import { LI, SESSION, json, text, type HostileCtx } from './http-suites-hostile.js';

export const hostileFieldChecks: HttpSuiteCheck<HostileCtx>[] = [
  {
    name: 'schema-driven field attacks on every body: unknown and missing fields, integers beyond 2^53, non-finite numbers, lone surrogates, U+0000 → 400, nothing written',
    async run(c) {
      const { routes, values, bodies, hostile, bodyRoutes, one, mode } = c;
      const table = await bodies();
      /** `{}` in the schema: the field takes any JSON (payloads, turn content). */
      const isAny = (s: JsonSchema) => Object.keys(s).every((k) => ['description', 'title', 'default', 'examples'].includes(k));
      const typed = ['9007199254740993', '-9007199254740993', '1e400', '-1e400', '1.5', '-0.5', 'true', '{}', '"\\ud800"', '"x\\udc00y"', '"a\\u0000b"', '["\\ud800"]', '[9007199254740993]', '[1e400]', '[{"type":"text","text":"\\ud83d"}]', '[{"type":"text","text":"x","__proto__":{}}]'];
      const anyJson = ['"\\ud800"', '{"k":"\\udfff"}', '["\\ud83d\\ud83d"]', '{"\\ud800":1}', '1e400', '[-1e400]'];
      for (const r of one(bodyRoutes())) {
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
          const raws = isAny(schema) ? anyJson : typed;
          for (const raw of mode === 'wire' ? raws.slice(0, 2) : raws) await send(`with ${field}: ${raw}`, with_(field, raw));
        }
      }
      // The integer array of the reorder: every id once, but one beyond 2^53, fractional or infinite.
      const order = routes.find((r) => keyOf(r) === 'PUT /v1/awaken/sessions/{session_id}/live-inbox/order')!;
      for (const raw of ['[1,9007199254740993]', '[9007199254740992,1]', '[1.0000000000000002,2]', '[1e400,2]', '[-1e400]', '[1,2,1e-400]']) {
        await hostile(`reorder ${raw}`, { method: 'PUT', path: fill(order, values), headers: json, body: `{"order":${raw}}` });
      }
    },
  },

  {
    name: 'emoji at every text length limit: the limit itself passes, one more code point is refused (nothing written)',
    async run(c) {
      const { h, values, hostile, send, mode } = c;
      const emoji = '😀';
      const family = '👨‍👩‍👧'; // five code points
      const cases: { what: string; method: string; path: string; body: (s: string) => unknown; field: string; max: number }[] = [
        { what: 'project name', method: 'POST', path: '/projects', body: (s) => ({ name: s }), field: 'name', max: 200 },
        { what: 'session title', method: 'POST', path: '/sessions', body: (s) => ({ project_id: 'proj_main', title: s }), field: 'title', max: 200 },
        { what: 'inbox item type', method: 'POST', path: '/projects/proj_main/inbox', body: (s) => ({ type: s }), field: 'type', max: 128 },
        { what: 'inbox item title', method: 'POST', path: '/projects/proj_main/inbox', body: (s) => ({ type: 't', title: s }), field: 'title', max: 200 },
        { what: 'decision note', method: 'PATCH', path: `/projects/proj_main/inbox/${values.inbox}`, body: (s) => ({ decision: 'archive', note: s }), field: 'note', max: 500 },
      ];
      // Over sockets in an adapter's wire run, one case (the text is the pipeline's; the bytes the framework's).
      for (const c of mode === 'wire' ? cases.slice(0, 1) : cases) {
        const families = family.repeat(Math.floor(c.max / 5)) + emoji.repeat(c.max % 5);
        // Exactly `max` code points: emoji, ZWJ families, precomposed and combining accents, padded with blanks that trimming removes.
        for (const atLimit of [emoji.repeat(c.max), families, `  😀${'é'.repeat(c.max - 3)}e\u0301 \t`]) {
          const ok = await send({ method: c.method, path: c.path, headers: { ...json, authorization: `Bearer ${h.keys.acc_owner}` }, body: JSON.stringify(c.body(atLimit)) });
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
    },
  },

  {
    name: 'non-integer, huge and malformed path ids on every route → 4xx, nothing written',
    async run(c) {
      const { routes, values, bodies, hostile, few, mode } = c;
      const table = await bodies();
      const common = ['x'.repeat(129), 'x'.repeat(1100), '%00', 'a%00b', '%FF', '%E0%A4%A', '%F0%9F%98%80', '%C3%A9t%C3%A9', 'a%20b', '%20', '%09x', 'x%0Ay'];
      const integer = ['1.5', 'abc', '1e3', '0x10', '0b1', '99999999999999999999', '9007199254740993', '-9007199254740993', '+1', '%201', '1%20', '0', '-1', 'Infinity', 'NaN', '%EF%BC%91'];
      for (const r of few(routes.filter((x) => x.params.length > 0))) {
        for (let p = 0; p < r.params.length; p++) {
          // The raw bytes of a path are the framework's (a sample of them over an adapter's sockets); every case, and what an integer id accepts, in-process.
          const wireBytes = ['x'.repeat(1100), '%00', '%FF', '%E0%A4%A', 'a%20b', 'x%0Ay'];
          const bad = mode === 'wire' ? wireBytes : r.params[p] === 'message_id' ? [...common, ...integer] : common;
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
      // A path far over Node's header limit gets the envelope too (431), from the server's client-error handler (a socket only).
      if (mode !== 'in-process') {
        const far = await hostile('a 20,000-character project id', { method: 'GET', path: `/projects/${'p'.repeat(20_000)}/inbox` });
        expect(far.status).toBe(431);
      }
    },
  },

  {
    name: 'hostile query strings on every route → never a 5xx; integer parameters beyond 2^53 or not integers → 400; nothing written',
    async run(c) {
      const { routes, values, hostile, few, mode } = c;
      const integerParams = new Set(['limit', 'after']);
      // Reads only: a write route has no query parameters, and ignores a query string like any other server would.
      expect(routes.filter((r) => r.method !== 'GET' && r.query.length > 0).map(keyOf)).toEqual([]);
      for (const r of few(routes.filter((x) => x.method === 'GET'))) {
        const base = fill(r, values);
        const send = (query: string) => hostile(`${r.method} ${r.template}?${query.slice(0, 60)}`, { method: r.method, path: `${base}?${query}`, headOnly: r.stream }, { allow2xx: true });
        const keys = ['__proto__=1', '__proto__[polluted]=1', 'constructor[prototype][polluted]=1', 'constructor=1', 'toString=1', 'hasOwnProperty=1', `unknown_param=1`];
        for (const q of mode === 'wire' ? keys.slice(0, 3) : keys) {
          const res = await send(q);
          if (r.query.length > 0) expect(res.status, `${keyOf(r)}?${q}`).toBe(400);
        }
        for (const name of r.query) {
          const hostileValues = ['9007199254740993', '99999999999999999999', '-1', '1.5', '1e3', '0x10', '', '%00', 'a%00b', '%FF', '%E0%A4%A', 'x'.repeat(3000), '%F0%9F%98%80'.repeat(700)];
          // An adapter's wire run: the bytes its framework decodes (a NUL, a bad escape, a long value), the rest in-process.
          for (const v of mode === 'wire' ? hostileValues.filter((x) => ['1.5', '%00', '%E0%A4%A', 'x'.repeat(3000)].includes(x)) : hostileValues) {
            const res = await send(`${name}=${v}`);
            if (integerParams.has(name)) expect(res.status, `${keyOf(r)}?${name}=${v.slice(0, 20)}`).toBe(400);
          }
          const dup = await send(`${name}=1&${name}=2`);
          expect(dup.status, `${keyOf(r)} with ${name} twice`).toBe(400);
        }
      }
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    },
  },

  {
    name: 'cursors made of random bytes never cause a 500 (property), nor do minted cursors naming hostile positions',
    async run(c) {
      const { h, send, mode } = c;
      const paths = ['/projects/proj_main/inbox', '/projects/proj_main/operation-logs'];
      // 60 random cursors (a fixed seed, so a failure reproduces; 10 in an adapter's wire run): random bytes, base64url or percent-encoded.
      let seed = 0x14c0ffee;
      const next = () => {
        seed = (Math.imul(seed, 1_664_525) + 1_013_904_223) >>> 0;
        return seed;
      };
      for (let run = 0; run < (mode === 'wire' ? 10 : 60); run++) {
        const bytes = Uint8Array.from({ length: 1 + (next() % 400) }, () => next() & 0xff);
        const path = paths[next() % paths.length]!;
        const asBase64 = (next() & 1) === 1;
        const cursor = asBase64 ? Buffer.from(bytes).toString('base64url') : [...bytes].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
        const res = await send({ method: 'GET', path: `${path}?cursor=${cursor}`, headers: { authorization: `Bearer ${h.keys.acc_owner}` } });
        expect4xx(res, `cursor ${cursor.slice(0, 40)}`);
        expect(['invalid_cursor', 'validation_error']).toContain(res.body.error.code);
      }
      const fps = { '/projects/proj_main/inbox': filterFingerprint({}), '/projects/proj_main/operation-logs': filterFingerprint({ log: 'operation' }) };
      for (const [path, fp] of Object.entries(fps)) {
        for (const pos of [
          { created_at: 0, id: 'a\u0000b' }, { created_at: 0, id: 'é' }, { created_at: 0, id: '\ud800' }, { created_at: 2 ** 53, id: 'x' }, { created_at: 1e300, id: 'x' },
          { created_at: -1, id: 'x' }, { created_at: 0, id: 'x'.repeat(129) }, { created_at: 0, id: "' OR 1=1 --" }, { created_at: 0, id: '%' },
        ]) {
          const res = await send({ method: 'GET', path: `${path}?cursor=${encodeCursor('proj_main', fp, pos)}`, headers: { authorization: `Bearer ${h.keys.acc_owner}` } });
          expect(res.status, `${path} ${JSON.stringify(pos)} → ${res.text.slice(0, 200)}`).toBeLessThan(500);
          if (res.status >= 400) expect4xx(res, JSON.stringify(pos));
        }
        // The largest position a cursor may name is served (an empty page), on every engine.
        const edge = await send({ method: 'GET', path: `${path}?cursor=${encodeCursor('proj_main', fp, { created_at: Number.MAX_SAFE_INTEGER, id: '~'.repeat(128) })}`, headers: { authorization: `Bearer ${h.keys.acc_owner}` } });
        expect(edge.status, edge.text).toBe(200);
      }
    },
  },

  {
    name: 'requests Node\'s parser refuses (oversized request line or headers, garbage, smuggling) get the envelope',
    layer: 'wire',
    async run(c) {
      const { h, secrets, worldState, send } = c;
      const before = await worldState();
      const headerFlood = await send({ method: 'GET', path: '/health', headers: { 'x-flood': 'y'.repeat(20_000) } });
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
    },
  },

  {
    name: 'after the barrage the process is up: /health 200, valid requests work, and every acknowledged Live Inbox message reaches the ledger',
    async run(c) {
      const { h, acknowledged, model, hostile } = c;
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
    },
  },
];
