/**
 * The SDK against the HTTP contract (`@inbox-kit/core/http`, test-only import: the SDK imports
 * nothing at run time): its error-type fallback agrees with the contract's code → status →
 * `error.type` table for every code; and every response a real server (`createServer`, in-memory
 * store, real socket) sends the SDK while it runs a scenario validates against the response
 * documented for that operation in the server's OpenAPI document (success and error bodies).
 */
import { PlatformService, ProjectInboxService, createIdGenerator, createLocalEventBus, systemClock, ERROR_CODES } from '@inbox-kit/core';
import { STATUS_BY_CODE, errorKind } from '@inbox-kit/core/http';
import { createMemoryStore } from '@inbox-kit/core/memory';
import { createServer } from '@inbox-kit/http-fastify/server';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorFromResponse } from '../src/errors.js';
import { InboxKitApiError, createClient } from '../src/index.js';

type Json = Record<string, any>;

describe('the error table', () => {
  it('falls back to the contract\'s error.type for every code\'s status', async () => {
    for (const code of ERROR_CODES) {
      const status = STATUS_BY_CODE[code];
      // No `error.type` in the body: the SDK must choose what the server's table would.
      const res = new Response(JSON.stringify({ type: 'error', error: { code, message: 'm', details: [], request_id: 'req_1' } }), { status, headers: { 'content-type': 'application/json' } });
      const error = await errorFromResponse(res);
      expect(error, code).toBeInstanceOf(InboxKitApiError);
      expect(error.type, code).toBe(errorKind(status));
      expect(error.code).toBe(code);
    }
  });
});

describe('responses the SDK receives match the documented responses', () => {
  let app: Awaited<ReturnType<typeof createServer>>;
  let base: string;
  let secret: string;
  let adminSecret: string;
  let doc: Json;
  beforeAll(async () => {
    const deps = { store: createMemoryStore(), bus: createLocalEventBus(), clock: systemClock, ids: createIdGenerator() };
    const platform = new PlatformService(deps);
    await platform.createWorkspace({ id: 'ws_sdk', name: 'SDK' });
    await platform.createAccount({ id: 'acc_owner', name: 'Owner', workspace_ids: ['ws_sdk'] });
    await platform.createAccount({ id: 'acc_other', name: 'Other', workspace_ids: ['ws_sdk'] });
    secret = (await platform.issueApiKey({ workspace_id: 'ws_sdk', account_id: 'acc_owner' })).secret;
    await platform.createAccount({ id: 'acc_admin', name: 'Admin', workspace_ids: ['ws_sdk'] });
    adminSecret = (await platform.issueApiKey({ workspace_id: 'ws_sdk', account_id: 'acc_admin', kind: 'admin' })).secret;
    app = await createServer({ services: { platform, projectInbox: new ProjectInboxService(deps) }, underPressure: false });
    await app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
    doc = (await (await fetch(`${base}/openapi.json`)).json()) as Json;
  });
  afterAll(async () => app?.close());

  const ajv = new Ajv2020({ strict: false, allErrors: true });
  const deref = (value: Json): Json => {
    let v = value;
    while (v && typeof v.$ref === 'string') v = v.$ref.replace(/^#\//, '').split('/').reduce((o: Json, k: string) => o?.[k], doc);
    return v;
  };
  /** `value` with every `$ref` into the document replaced by what it names. */
  const inline = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(inline);
    if (value === null || typeof value !== 'object') return value;
    if (typeof (value as Json).$ref === 'string') return inline(deref(value as Json));
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, inline(v)]));
  };
  /** The documented JSON schema of `status` for `method path`. */
  function documented(method: string, pathname: string, status: number): Json | undefined {
    for (const [template, item] of Object.entries(doc.paths as Record<string, Json>)) {
      const regex = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
      const op = item[method.toLowerCase()];
      if (!op || !regex.test(pathname)) continue;
      const response = deref(op.responses?.[String(status)] ?? op.responses?.[`${String(status)[0]}XX`] ?? {});
      const schema = response.content?.['application/json']?.schema as Json | undefined;
      return schema === undefined ? undefined : (inline(schema) as Json);
    }
    return undefined;
  }

  it('for a scenario of SDK calls, successes and errors alike', async () => {
    const checked: string[] = [];
    const recordingFetch: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      const request = new Request(input, init);
      const pathname = new URL(request.url).pathname;
      const text = await res.clone().text();
      if (res.status !== 204 && (res.headers.get('content-type') ?? '').includes('json')) {
        const schema = documented(request.method, pathname, res.status);
        expect(schema, `${request.method} ${pathname} ${res.status} is documented`).toBeDefined();
        const valid = ajv.validate(schema!, JSON.parse(text));
        expect(valid, `${request.method} ${pathname} ${res.status}: ${ajv.errorsText()} in ${text.slice(0, 300)}`).toBe(true);
      }
      checked.push(`${request.method} ${pathname} ${res.status}`);
      return res;
    };
    const client = createClient({ baseUrl: base, apiKey: secret, fetch: recordingFetch });
    await client.me();
    const project = await client.projects.create({ name: 'Contract' });
    await client.projects.list();
    await client.projects.get(project.id);
    await client.projects.members.add(project.id, { accountId: 'acc_other', role: 'deriver' });
    await client.projects.members.list(project.id);
    const item = await client.projects.inbox.create(project.id, { type: 'contract.check', title: 'Check', payload: { n: 1 } });
    await client.projects.inbox.list(project.id);
    await client.projects.inbox.get(project.id, item.id);
    await client.projects.inbox.accept(project.id, item.id, { note: 'ok' });
    await client.projects.events.list(project.id);
    await client.projects.operationLogs.list(project.id);
    const session = await client.sessions.create({ projectId: project.id, title: 'Chat' });
    await client.sessions.list({ projectId: project.id });
    await client.sessions.get(session.id);
    await client.projects.members.remove(project.id, 'acc_other');
    await expect(client.projects.get('proj_missing')).rejects.toBeInstanceOf(InboxKitApiError);
    await expect(client.projects.inbox.accept(project.id, item.id)).rejects.toMatchObject({ status: 409 });
    await client.projects.archive(project.id);
    // The administration, with an admin key.
    const admin = createClient({ baseUrl: base, apiKey: adminSecret, fetch: recordingFetch });
    const account = await admin.admin.accounts.create({ name: 'New member' });
    await admin.admin.accounts.list();
    const issued = await admin.admin.keys.create(account.id, { kind: 'standard' });
    await admin.admin.keys.list({ accountId: account.id });
    const rotated = await admin.admin.keys.rotate(issued.key.id, { graceMs: 1_000 });
    await admin.admin.keys.revoke(rotated.key.id);
    await admin.admin.accounts.disable(account.id);
    await admin.admin.operationLogs.list({ limit: 2 });
    await expect(admin.admin.keys.revoke('key_missing')).rejects.toMatchObject({ status: 404, code: 'api_key_not_found' });
    await expect(client.admin.accounts.list()).rejects.toMatchObject({ status: 403 });
    expect(checked.length).toBeGreaterThanOrEqual(29);
    expect(checked).toContain(`GET /projects/proj_missing 404`);
  });
});
