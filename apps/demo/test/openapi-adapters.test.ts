/**
 * One contract, one document: the demo's services served by the Fastify adapter (`@fastify/swagger`
 * over the routes it registers from the table) and by the Hono adapter (`openApiDocument` of the
 * table) publish OpenAPI documents that agree on every path, method, operation id, request body
 * and response status, both at `GET /openapi.json` and public; and still agree embedded in a host
 * under a prefix (the Fastify plugin registered with `prefix`, the Hono app mounted with `route`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inboxKit } from '@inbox-kit/http-fastify';
import { inboxKitHono } from '@inbox-kit/http-hono';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDemo, loadConfig, type Demo } from '../src/index.js';
import { closeDemo } from './listen.js';

type Json = Record<string, any>;
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

/** `METHOD path` → { operationId, body, statuses } of every operation of a document. */
function operations(doc: Json): Map<string, { operationId: string; body: boolean; statuses: string[] }> {
  const out = new Map<string, { operationId: string; body: boolean; statuses: string[] }>();
  for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const method of METHODS) {
      const op = item[method];
      if (op) out.set(`${method.toUpperCase()} ${path}`, { operationId: op.operationId, body: op.requestBody !== undefined, statuses: Object.keys(op.responses).sort() });
    }
  }
  return out;
}

/** `{ const: x }` as `{ enum: [x] }` (how `@fastify/swagger` writes it; the two say the same), everywhere in `value`. */
function sameConst(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sameConst);
  if (value === null || typeof value !== 'object') return value;
  const out: Json = {};
  for (const [key, v] of Object.entries(value)) {
    if (key === 'const') out.enum = [v];
    else out[key] = sameConst(v);
  }
  return out;
}

describe('the OpenAPI documents of the two adapters', () => {
  let demo: Demo;
  let dataDir: string;
  let fastifyDoc: Json;
  let honoDoc: Json;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'inbox-kit-openapi-'));
    demo = await buildDemo(loadConfig({ DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent' }));
    const fastify = await demo.app.inject({ url: '/openapi.json' });
    expect(fastify.statusCode).toBe(200);
    fastifyDoc = fastify.json();
    const hono = await inboxKitHono({ ...demo.http }).app.request('/openapi.json');
    expect(hono.status).toBe(200);
    expect(hono.headers.get('content-type')).toMatch(/^application\/json/);
    expect(hono.headers.get('x-request-id')).toMatch(/^req_/);
    honoDoc = await hono.json();
  });

  afterAll(async () => {
    await closeDemo(demo);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('agree on paths, methods, operation ids, request bodies and status codes', () => {
    const fastify = operations(fastifyDoc);
    const hono = operations(honoDoc);
    expect([...hono.keys()].sort()).toEqual([...fastify.keys()].sort());
    for (const [operation, fromFastify] of fastify) expect(hono.get(operation), operation).toEqual(fromFastify);
    // The Session resource, the Live Inbox and the document itself are in both.
    for (const operation of ['POST /v1/sessions', 'DELETE /v1/sessions/{session_id}', 'PUT /v1/awaken/sessions/{session_id}/live-inbox/order', 'GET /openapi.json']) {
      expect(hono.has(operation), operation).toBe(true);
    }
  });

  it('agree on the head: version, security, tags and the error envelope', () => {
    expect(honoDoc.openapi).toBe('3.1.0');
    for (const key of ['security', 'tags']) expect(honoDoc[key], key).toEqual(fastifyDoc[key]);
    expect(honoDoc.info.title).toBe(fastifyDoc.info.title);
    expect(honoDoc.components.securitySchemes).toEqual(fastifyDoc.components.securitySchemes);
    expect(honoDoc.components.schemas.ErrorEnvelope).toEqual(fastifyDoc.components.schemas.ErrorEnvelope);
    expect(honoDoc.components.responses).toEqual(fastifyDoc.components.responses);
  });

  it('agree on parameters and success bodies of every operation', () => {
    for (const [path, item] of Object.entries(fastifyDoc.paths as Record<string, Json>)) {
      for (const method of METHODS) {
        const f = item[method];
        if (!f) continue;
        const h = honoDoc.paths[path][method];
        const names = (op: Json) => (op.parameters as Json[]).map((p) => (p.$ref ?? `${p.in}:${p.name}:${p.required}`) as string).sort();
        expect(names(h), `${method} ${path}`).toEqual(names(f));
        const status = Object.keys(f.responses).find((s) => /^2/.test(s))!;
        expect(Object.keys(h.responses[status].content ?? {}), `${method} ${path}`).toEqual(Object.keys(f.responses[status].content ?? {}));
        expect(sameConst(h.requestBody?.content?.['application/json']?.schema), `${method} ${path} body`).toEqual(sameConst(f.requestBody?.content?.['application/json']?.schema));
      }
    }
  });
});

describe('the OpenAPI documents of the two adapters embedded under a prefix', () => {
  let demo: Demo;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'inbox-kit-openapi-'));
    demo = await buildDemo(loadConfig({ DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent' }));
  });

  afterAll(async () => {
    await closeDemo(demo);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it.each(['/inbox', '/api/v2'])('agree on every operation under %s, listed with the prefix', async (prefix) => {
    const fastifyHost = Fastify();
    await fastifyHost.register(inboxKit, { ...demo.http, prefix, openapi: { docsPrefix: false } });
    const fastify = await fastifyHost.inject({ url: `${prefix}/openapi.json` });
    await fastifyHost.close();
    expect(fastify.statusCode).toBe(200);
    const honoHost = new Hono();
    honoHost.route(prefix, inboxKitHono({ ...demo.http }).app);
    const hono = await honoHost.request(`${prefix}/openapi.json`);
    expect(hono.status).toBe(200);
    const [fromFastify, fromHono] = [operations(fastify.json()), operations(await hono.json())];
    expect([...fromHono.keys()].sort()).toEqual([...fromFastify.keys()].sort());
    for (const [operation, f] of fromFastify) expect(fromHono.get(operation), operation).toEqual(f);
    for (const operation of [`GET ${prefix}/me`, `GET ${prefix}/openapi.json`, `POST ${prefix}/v1/sessions`]) expect(fromHono.has(operation), operation).toBe(true);
  });
});
