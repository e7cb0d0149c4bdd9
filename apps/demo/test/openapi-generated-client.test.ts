/**
 * The OpenAPI document against real answers (platform.md "OpenAPI"):
 * - the error-code enum of the envelope is exactly the core's code list (`ERROR_CODES`), on the
 *   Fastify document (the demo's) and the Hono one (`openApiDocument` of the same services);
 * - integer ids and query parameters are `type: integer` with bounds, the string rules are
 *   stated (`pattern`, descriptions), 405 with `Allow` is documented, create answers have `links`,
 *   the configured `assistant` agent is named on `POST /v1/sessions`;
 * - a client generated from it (`openapi-typescript` types + `openapi-fetch`) calls the demo, and
 *   the answers it got, written out as literals typed by the generated types, pass `tsc`.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ERROR_CODES } from '@inbox-kit/core';
import { httpRoutesFor, openApiDocument, openApiOptionsFor } from '@inbox-kit/core/http';
import createFetchClient from 'openapi-fetch';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDemo, loadConfig, type Demo } from '../src/index.js';
import { closeDemo, listen } from './listen.js';

type Json = Record<string, any>;
const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

let demo: Demo;
let base: string;
let dataDir: string;
let fastifyDoc: Json;
let honoDoc: Json;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'inbox-kit-openapi-'));
  demo = await buildDemo(loadConfig({ DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent' }));
  base = await listen(demo);
  fastifyDoc = await (await fetch(`${base}/openapi.json`)).json();
  const services = demo.http.services;
  honoDoc = openApiDocument(httpRoutesFor(services), openApiOptionsFor(services)) as Json;
});

afterAll(async () => {
  await closeDemo(demo);
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const docs = () => [['fastify', fastifyDoc], ['hono', honoDoc]] as const;

describe('the OpenAPI document says what the server does', () => {
  it('the error-code enum is exactly the core\'s code list (431 request_header_too_large, 408 request_timeout, 405 method_not_allowed included)', () => {
    for (const [name, doc] of docs()) {
      const codes = doc.components.schemas.ErrorEnvelope.properties.error.properties.code.enum as string[];
      expect([...codes].sort(), name).toEqual([...ERROR_CODES].sort());
      for (const code of ['request_header_too_large', 'request_timeout', 'method_not_allowed']) expect(codes, name).toContain(code);
    }
  });

  it('integer ids and query parameters with bounds, string rules, 405 with Allow, links, the assistant agent', () => {
    for (const [name, doc] of docs()) {
      const param = (path: string, method: string, n: string) => (doc.paths[path][method].parameters as Json[]).find((p) => p.name === n);
      const messageId = param('/v1/awaken/sessions/{session_id}/live-inbox/{message_id}', 'put', 'message_id');
      expect(messageId?.schema, name).toMatchObject({ type: 'integer', minimum: 1 });
      expect(param('/projects/{id}/inbox', 'get', 'limit')?.schema, name).toMatchObject({ type: 'integer', minimum: 1, maximum: 200 });
      expect(param('/v1/sessions/{session_id}/events', 'get', 'after')?.schema, name).toMatchObject({ type: 'integer', minimum: 0 });
      const projectBody = doc.paths['/projects'].post.requestBody.content['application/json'].schema;
      expect(projectBody.properties.name.pattern, name).toBeTypeOf('string');
      expect(new RegExp(projectBody.properties.name.pattern, 'u').test('   '), `${name}: blank is refused`).toBe(false);
      expect(projectBody.properties.name.description, name).toMatch(/U\+0000/);
      expect(doc.components.responses.MethodNotAllowed.headers.allow, name).toBeDefined();
      expect(doc.paths['/projects'].post.responses['201'].links.getProject, name).toMatchObject({ operationId: 'getProject' });
      expect(doc.paths['/projects/{id}/inbox'].post.responses['201'].links.decideInboxItem, name).toMatchObject({ operationId: 'decideInboxItem' });
      const agent = doc.paths['/v1/sessions'].post.requestBody.content['application/json'].schema.properties.agent;
      expect(agent.examples, name).toContain('assistant');
      expect(doc.components.headers.ShouldRetry.schema, name).toEqual({ type: 'string', enum: ['true', 'false'] });
    }
  });
});

describe('a generated client (openapi-typescript + openapi-fetch)', () => {
  it('calls the demo, and the answers it got type-check against the generated types', async () => {
    const key = demo.credentials.acc_owner!;
    const client = createFetchClient<any>({ baseUrl: base, headers: { authorization: `Bearer ${key}` } });
    const answers: Array<[string, string, number, unknown]> = [];
    const take = async (path: string, method: 'get' | 'post', status: number, call: Promise<{ data?: unknown; error?: unknown; response: Response }>) => {
      const { data, error, response } = await call;
      expect(response.status, `${method} ${path}: ${JSON.stringify(error)}`).toBe(status);
      answers.push([path, method, status, data]);
      return data as Json;
    };
    await take('/me', 'get', 200, client.GET('/me', {}));
    const project = await take('/projects', 'post', 201, client.POST('/projects', { body: { name: 'Generated' } }));
    await take('/projects', 'get', 200, client.GET('/projects', { params: { query: { limit: 5 } } }));
    await take('/projects/{id}', 'get', 200, client.GET('/projects/{id}', { params: { path: { id: project.project.id } } }));
    await take('/projects/{id}/members', 'get', 200, client.GET('/projects/{id}/members', { params: { path: { id: 'proj_main' } } }));
    await take('/projects/{id}/inbox', 'post', 201, client.POST('/projects/{id}/inbox', { params: { path: { id: 'proj_main' } }, body: { type: 'generated.probe', title: 'From a generated client' } }));
    await take('/projects/{id}/inbox', 'get', 200, client.GET('/projects/{id}/inbox', { params: { path: { id: 'proj_main' }, query: { limit: 10 } } }));
    await take('/projects/{id}/sessions', 'get', 200, client.GET('/projects/{id}/sessions', { params: { path: { id: 'proj_main' } } }));
    await take('/operation-logs', 'get', 200, client.GET('/operation-logs', { params: { query: { project_id: 'proj_main' } } }));
    await take('/stream-tokens', 'post', 201, client.POST('/stream-tokens', { body: { ttl_seconds: 60 } }));
    const session = await take('/v1/sessions', 'post', 200, client.POST('/v1/sessions', { body: { agent: 'assistant', environment_id: 'env_gen' } }));
    await take('/v1/sessions', 'get', 200, client.GET('/v1/sessions', { params: { query: { limit: 5 } } }));
    await take('/v1/sessions/{session_id}', 'get', 200, client.GET('/v1/sessions/{session_id}', { params: { path: { session_id: 'sess_001' } } }));
    await take('/v1/sessions/{session_id}/events', 'get', 200, client.GET('/v1/sessions/{session_id}/events', { params: { path: { session_id: session.id } } }));

    // Generated after the calls: the generation is seconds of synchronous work in this process, the
    // demo's own, whose load shedding would answer the calls 503 `overloaded` meanwhile.
    const types = astToString(await openapiTS(fastifyDoc as never));
    const dir = mkdtempSync(join(here, '.generated-'));
    try {
      writeFileSync(join(dir, 'api.d.ts'), types);
      const lines = answers.map(([path, method, status, data], i) =>
        `export const answer${i}: paths[${JSON.stringify(path)}][${JSON.stringify(method)}]['responses'][${status}]['content']['application/json'] = ${JSON.stringify(data)};`);
      writeFileSync(join(dir, 'answers.ts'), `import type { paths } from './api.js';\n${lines.join('\n')}\n`);
      const tsc = require.resolve('typescript/bin/tsc');
      const result = spawnSync(process.execPath, [tsc, '--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--skipLibCheck', join(dir, 'answers.ts')], { encoding: 'utf8' });
      expect(result.status, `${result.stdout}${result.stderr}`).toBe(0);
      // A negative control: an answer the types must refuse.
      writeFileSync(join(dir, 'wrong.ts'), `import type { paths } from './api.js';\nexport const wrong: paths['/me']['get']['responses'][200]['content']['application/json'] = { account: { id: 1 } };\n`);
      const refused = spawnSync(process.execPath, [tsc, '--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--skipLibCheck', join(dir, 'wrong.ts')], { encoding: 'utf8' });
      expect(refused.status).not.toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
