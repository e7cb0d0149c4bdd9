/**
 * The hostile-input checks on bodies (`http-suites-hostile.ts`): the control, Content-Type values,
 * empty and malformed bodies, bodies over the limit, deep nesting, prototype poisoning, and
 * percent-encoding that does not decode. Data: each `run(ctx)` gets the suite's {@link HostileCtx}.
 */
import { gzipSync } from 'node:zlib';
import { expect } from 'vitest';
import { malformedPathError, parseJsonBody } from '../http/parse.js';
import { fill, isAdminRoute, keyOf, validBody } from './http-raw.js';
import type { HttpSuiteCheck } from './http-suites-kit.js';
import { MiB, json, type HostileCtx } from './http-suites-hostile.js';

export const hostileBodyChecks: HttpSuiteCheck<HostileCtx>[] = [
  {
    name: 'covers every served route (the inventory is the server\'s own) and each answers its valid request',
    async run(c) {
      const { h, routes, values, acknowledged, bodies, hostile, bodyRoutes, send } = c;
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
        const res = await send({
          method: r.method, path: fill(r, values), headers: { ...json, authorization: `Bearer ${h.keys[isAdminRoute(r) ? 'admin' : 'acc_owner']}` }, body: JSON.stringify(validBody(r, current)),
        });
        expect(res.status, `${keyOf(r)} → ${res.text.slice(0, 300)}`).toBeLessThan(300);
        if (keyOf(r) === 'POST /v1/awaken/sessions/{session_id}/live-inbox') acknowledged.push('queued');
      }
    },
  },

  {
    name: 'wrong, missing and odd Content-Type values on every route with a body → 4xx (415 unsupported_media_type for anything but application/json in UTF-8), nothing written',
    async run(c) {
      const { values, bodies, hostile, bodyRoutes, few } = c;
      const table = await bodies();
      /** Cases answered 415 `unsupported_media_type` (issue 15 item 4); the rest are 400. */
      const unsupported = new Set(['no Content-Type', 'text/plain', 'text/plain; charset=utf-8', 'form encoding', 'multipart', 'XML', 'a +json media type',
        'application/jsonx', 'a bare "json"', 'an unparseable value', 'an empty value', 'octet-stream', 'UTF-16 bytes labelled as such', 'Latin-1 bytes']);
      for (const r of few(bodyRoutes())) {
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
    },
  },

  {
    name: 'empty, absent, non-object and malformed bodies on every route with a body → 400, nothing written',
    async run(c) {
      const { values, hostile, bodyRoutes, one } = c;
      for (const r of one(bodyRoutes())) {
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
    },
  },

  {
    name: 'bodies over the 1 MiB limit on every route that takes one — accurate, lying and absent (chunked) Content-Length → 413, nothing written',
    async run(c) {
      const { routes, values, hostile, writeRoutes, few } = c;
      const big = (n: number) => Buffer.from(`{"pad":"${'x'.repeat(n)}"}`);
      for (const r of few(writeRoutes())) {
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
    },
  },

  {
    name: 'deeply nested JSON, as the body and inside each field → 4xx, never a crash, nothing written',
    async run(c) {
      const { values, bodies, hostile, bodyRoutes, one, mode } = c;
      const table = await bodies();
      const deepArray = (n: number) => '['.repeat(n) + ']'.repeat(n);
      const deepObject = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
      const deepProto = (n: number) => '{"a":'.repeat(n) + '{"__proto__":{"polluted":1}}' + '}'.repeat(n);
      for (const r of one(bodyRoutes())) {
        const path = fill(r, values);
        for (const [what, raw] of [['100,000 nested arrays', deepArray(100_000)], ['50,000 nested objects', deepObject(50_000)], ['__proto__ under 20,000 objects', deepProto(20_000)]] as const) {
          await hostile(`${keyOf(r)} with ${what}`, { method: r.method, path, headers: json, body: raw });
          // Inside each field: the pipeline's parse, in-process (and for a third party's run); an adapter's wire run sends the bodies only.
          for (const field of mode === 'wire' ? [] : Object.keys(r.body!.properties ?? {})) {
            const body = JSON.stringify({ ...(validBody(r, table) as object), [field]: '@@DEEP@@' }).replace('"@@DEEP@@"', raw);
            await hostile(`${keyOf(r)} with ${what} in ${field}`, { method: r.method, path, headers: json, body });
          }
        }
      }
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    },
  },

  {
    name: 'prototype-poisoning keys anywhere in the body → 400, nothing written, Object.prototype untouched',
    async run(c) {
      const { values, bodies, hostile, bodyRoutes, one } = c;
      const table = await bodies();
      for (const r of one(bodyRoutes())) {
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
    },
  },

  {
    name: 'the same answers as every adapter: a valid body with a __proto__ or constructor.prototype key and a path whose percent-encoding does not decode → 400 validation_error with the contract\'s message, nothing written',
    async run(c) {
      const { routes, values, bodies, hostile, few } = c;
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
      for (const r of few(routes.filter((x) => x.params.length > 0))) {
        for (const bad of ['%zz', '%', 'a%2', '%E0%A4%A', 'x%ZZy']) {
          const path = fill(r, values, { [r.params.length - 1]: bad });
          const res = await hostile(`${r.method} ${path}`, {
            method: r.method, path, ...(r.body ? { headers: json, body: JSON.stringify(validBody(r, table)) } : {}), headOnly: r.stream,
          });
          expect(res.status, `${r.method} ${path}`).toBe(400);
          expect(res.body.error, `${r.method} ${path}`).toMatchObject({ code: 'validation_error', message: malformedPathError().message });
        }
      }
    },
  },
];
