/**
 * The SDK against the server's OpenAPI document: every SDK method is driven through a recording
 * fake `fetch`; each request it sends must be a documented operation (method + path template),
 * with only documented query parameters and a body that validates against the documented request
 * body; and every documented operation (but the server's own /health, /openapi.json and /docs)
 * must be sent by some SDK method. The document comes from a real server (`createServer` over the
 * in-memory store, with the Session Runtime), so it is the one that validates requests.
 */
import {
  LiveInboxHost, PlatformService, ProjectInboxService, SessionRuntimeService, createIdGenerator, createLocalEventBus, systemClock,
} from '@inbox-kit/core';
import { createMemoryStore } from '@inbox-kit/core/testing';
import { createServer } from '@inbox-kit/http-fastify/server';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { createClient, type InboxKitClient } from '../src/index.js';
import { apiError, fakeFetch, json, type RecordedRequest } from './fake-fetch.js';

type Json = Record<string, any>;
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
/**
 * Operations of the server itself, not of the API the SDK wraps; and the project family's aliases
 * for TavernHeadless clients (platform.md "Projects" → "Records"), whose data the SDK reads through
 * `sessions.list({ projectId })` and `projects.operationLogs.list`.
 */
const NOT_FOR_THE_SDK = (path: string) => path === '/health' || path === '/ready' || path === '/openapi.json' || path.startsWith('/docs')
  || path === '/projects/{id}/sessions' || path === '/operation-logs';

let doc: Json;

beforeAll(async () => {
  const deps = { store: createMemoryStore(), bus: createLocalEventBus(), clock: systemClock, ids: createIdGenerator() };
  const runtime = new SessionRuntimeService({ ...deps, host: new LiveInboxHost(), model: { step: async () => ({ content: [], continue: false }) } });
  const app = await createServer({ services: { platform: new PlatformService(deps), projectInbox: new ProjectInboxService(deps), runtime } });
  try {
    const res = await app.inject({ url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    doc = res.json();
  } finally {
    await app.close();
    await runtime.close();
  }
});

// — driving the SDK —

const content = [{ type: 'text' as const, text: 'Focus on the summary.' }];
const image = { type: 'image' as const, source: { type: 'base64' as const, media_type: 'image/png', data: 'iVBORw0KGgo=' } };

/**
 * One call per SDK method, with every optional field set so each body field and query parameter
 * the SDK can send is checked. Keyed by the method's path on the client.
 */
const calls: Record<string, (c: InboxKitClient) => Promise<unknown>> = {
  me: (c) => c.me(),
  createStreamToken: (c) => c.createStreamToken({ ttlSeconds: 60 }),
  'projects.create': (c) => c.projects.create({ name: 'Main' }, { idempotencyKey: 'k1' }),
  'projects.list': (c) => c.projects.list({ limit: 10, cursor: 'c1' }),
  'projects.listAll': async (c) => {
    for await (const _ of c.projects.listAll({ limit: 5 })) break;
  },
  'projects.get': (c) => c.projects.get('proj_1'),
  'projects.archive': (c) => c.projects.archive('proj_1'),
  'projects.members.add': (c) => c.projects.members.add('proj_1', { accountId: 'acc_2', role: 'deriver' }),
  'projects.members.list': (c) => c.projects.members.list('proj_1', { limit: 10, cursor: 'c1' }),
  'projects.members.listAll': async (c) => {
    for await (const _ of c.projects.members.listAll('proj_1')) break;
  },
  'projects.members.remove': (c) => c.projects.members.remove('proj_1', 'acc_2'),
  'projects.inbox.create': (c) =>
    c.projects.inbox.create('proj_1', {
      type: 'derived_output.review', title: 'Candidate', payload: { derivedOutputId: 'dout_1' },
      sourceEventId: 'evt_1', sourceSessionId: 'sess_1', sourceFloorId: 'floor_1', sourcePageId: 'page_1',
    }),
  'projects.inbox.list': (c) =>
    c.projects.inbox.list('proj_1', { status: 'pending', type: 'x', senderAccountId: 'acc_2', sourceSessionId: 'sess_1', limit: 10, cursor: 'c1' }),
  'projects.inbox.listAll': async (c) => {
    for await (const _ of c.projects.inbox.listAll('proj_1', { status: 'pending', limit: 5 })) break;
  },
  'projects.inbox.get': (c) => c.projects.inbox.get('proj_1', 'item_1'),
  'projects.inbox.accept': (c) => c.projects.inbox.accept('proj_1', 'item_1', { note: 'ok' }),
  'projects.inbox.reject': (c) => c.projects.inbox.reject('proj_1', 'item_1', { note: null }),
  'projects.inbox.archive': (c) => c.projects.inbox.archive('proj_1', 'item_1'),
  'projects.events.list': (c) => c.projects.events.list('proj_1', { after: 3, types: ['a', 'b'], sessionId: 'sess_1', limit: 20 }),
  'projects.events.stream': async (c) => {
    for await (const _ of c.projects.events.stream('proj_1', { after: 2, types: ['a'], sessionId: 'sess_1' })) break;
  },
  'projects.operationLogs.list': (c) => c.projects.operationLogs.list('proj_1', { limit: 5, cursor: 'c1' }),
  'projects.operationLogs.listAll': async (c) => {
    for await (const _ of c.projects.operationLogs.listAll('proj_1', { limit: 5 })) break;
  },
  'sessions.create': (c) => c.sessions.create({ projectId: 'proj_1', title: 'Chat' }),
  'sessions.list': (c) => c.sessions.list({ projectId: 'proj_1', limit: 10, cursor: 'c1' }),
  'sessions.listAll': async (c) => {
    for await (const _ of c.sessions.listAll({ projectId: 'proj_1' })) break;
  },
  'sessions.get': (c) => c.sessions.get('sess_1'),
  'sessions.floors.list': (c) => c.sessions.floors.list('sess_1', { limit: 10, cursor: 'c1' }),
  'sessions.floors.listAll': async (c) => {
    for await (const _ of c.sessions.floors.listAll('sess_1')) break;
  },
  'sessions.floors.commit': (c) => c.sessions.floors.commit('sess_1', { content: { text: 'hi' }, branch: 'main' }),
  'sessions.pages.list': (c) => c.sessions.pages.list('sess_1', 'floor_1', { limit: 10, cursor: 'c1' }),
  'sessions.pages.listAll': async (c) => {
    for await (const _ of c.sessions.pages.listAll('sess_1', 'floor_1')) break;
  },
  'sessions.pages.add': (c) => c.sessions.pages.add('sess_1', 'floor_1', { content: { text: 'v2' } }),
  'sessions.events.send': (c) => c.sessions.events.send('sess_1', [{ type: 'user.message', content: [...content, image] }, { type: 'user.interrupt' }]),
  'sessions.events.interrupt': (c) => c.sessions.events.interrupt('sess_1'),
  'sessions.events.list': (c) => c.sessions.events.list('sess_1', { page: 'np_10', limit: 20, order: 'desc' }),
  'sessions.events.stream': async (c) => {
    for await (const _ of c.sessions.events.stream('sess_1', { after: 4 })) break;
  },
  'sessions.liveInbox.get': (c) => c.sessions.liveInbox.get('sess_1'),
  'sessions.liveInbox.queue': (c) => c.sessions.liveInbox.queue('sess_1', content),
  'sessions.liveInbox.replace': (c) => c.sessions.liveInbox.replace('sess_1', 7, content),
  'sessions.liveInbox.withdraw': (c) => c.sessions.liveInbox.withdraw('sess_1', 7),
  'sessions.liveInbox.reorder': (c) => c.sessions.liveInbox.reorder('sess_1', [8, 7]),
  // Answered 410 (see `answer`), so it falls back to the durable route: both requests count.
  'sessions.liveInbox.queueOrSend': (c) => c.sessions.liveInbox.queueOrSend('sess_1', content),
  'admin.accounts.create': (c) => c.admin.accounts.create({ name: 'Ada' }),
  'admin.accounts.list': (c) => c.admin.accounts.list({ limit: 5, cursor: 'c1' }),
  'admin.accounts.listAll': async (c) => {
    for await (const _ of c.admin.accounts.listAll({ limit: 5 })) break;
  },
  'admin.accounts.disable': (c) => c.admin.accounts.disable('acc_2'),
  'admin.accounts.enable': (c) => c.admin.accounts.enable('acc_2'),
  'admin.keys.create': (c) => c.admin.keys.create('acc_2', { kind: 'service' }),
  'admin.keys.list': (c) => c.admin.keys.list({ accountId: 'acc_2', includeRevoked: true, limit: 5, cursor: 'c1' }),
  'admin.keys.listAll': async (c) => {
    for await (const _ of c.admin.keys.listAll({ accountId: 'acc_2' })) break;
  },
  'admin.keys.rotate': (c) => c.admin.keys.rotate('key_1', { graceMs: 60_000 }),
  'admin.keys.revoke': (c) => c.admin.keys.revoke('key_1'),
  'admin.operationLogs.list': (c) => c.admin.operationLogs.list({ limit: 5, cursor: 'c1' }),
};

/** A plausible answer to any request: an SSE frame for streams, 410 for a live queue, else JSON. */
function answer(req: RecordedRequest): Response {
  if (req.headers.get('accept') === 'text/event-stream') {
    return new Response('retry: 10\n\nid: 1\nevent: x\ndata: {"id":"e1"}\n\n', { status: 200, headers: { 'content-type': 'text/event-stream' } });
  }
  if (req.method === 'POST' && /\/live-inbox$/.test(new URL(req.url).pathname)) {
    return apiError(410, 'live_inbox_inactive', 'invalid_request_error', 'No native attempt');
  }
  return json({ items: [], next_cursor: null, data: [], next_page: null, has_more: false, id: 1, active: false, version: 0, messages: [] });
}

/** Every method of the client, as dotted paths (`projects.inbox.create`), found by reflection. */
function sdkMethods(client: InboxKitClient): string[] {
  const out: string[] = [];
  const walk = (obj: object, prefix: string) => {
    const proto = Object.getPrototypeOf(obj) as object | null;
    const own = proto === null || proto === Object.prototype ? [] : Object.getOwnPropertyNames(proto);
    const names = new Set([...Object.getOwnPropertyNames(obj), ...own]);
    for (const name of names) {
      if (name === 'constructor') continue;
      const value = (obj as Record<string, unknown>)[name];
      if (typeof value === 'function') out.push(prefix + name);
      else if (value !== null && typeof value === 'object') walk(value, `${prefix}${name}.`);
    }
  };
  walk(client, '');
  return out.sort();
}

// — matching requests to the document —

interface Operation {
  method: string;
  path: string;
  op: Json;
  regex: RegExp;
  literalSegments: number;
}

function operations(): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const method of METHODS) {
      if (!item[method]) continue;
      const regex = new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '([^/]+)')}$`);
      out.push({ method, path, op: item[method], regex, literalSegments: path.split('/').filter((s) => s && !s.startsWith('{')).length });
    }
  }
  return out;
}

// Path and query values arrive as text: an `integer` parameter is matched by its digits (as servers read it).
const pathAjv = new Ajv2020({ strict: false, coerceTypes: true });
const queryAjv = new Ajv2020({ strict: false, allErrors: true, coerceTypes: true });

/**
 * The documented operation a request hits: a template whose path parameters accept the request's
 * values (by their documented schemas), preferring the most literal template (as the router does).
 */
function operationOf(req: RecordedRequest): Operation | undefined {
  const pathname = new URL(req.url).pathname;
  return operations()
    .filter((o) => {
      if (o.method !== req.method.toLowerCase()) return false;
      const values = o.regex.exec(pathname);
      if (!values) return false;
      const names = [...o.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      const params = ((o.op.parameters ?? []) as Json[]).map(deref).filter((p) => p.in === 'path');
      return names.every((name, i) => {
        const schema = params.find((p) => p.name === name)?.schema;
        return schema !== undefined && pathAjv.validate(schema, decodeURIComponent(values[i + 1]!));
      });
    })
    .sort((a, b) => b.literalSegments - a.literalSegments)[0];
}

function deref(value: Json): Json {
  let v = value;
  while (v && typeof v.$ref === 'string') v = v.$ref.replace(/^#\//, '').split('/').reduce((o: Json, k: string) => o?.[k], doc);
  return v;
}

describe('the SDK against the OpenAPI document', () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  const recorded = new Map<string, RecordedRequest[]>();

  beforeAll(async () => {
    for (const [name, call] of Object.entries(calls)) {
      const steps = Array.from({ length: 4 }, () => answer);
      const { fetch, requests } = fakeFetch(...steps);
      const client = createClient({ baseUrl: 'http://api.test', apiKey: 'ik_test', fetch, accountId: 'acc_1', retry: { retries: 0 } });
      await call(client).catch(() => undefined); // only the requests matter
      recorded.set(name, requests);
    }
  });

  it('drives every SDK method (a new method needs a line in `calls`)', () => {
    const client = createClient({ baseUrl: 'http://api.test', apiKey: 'ik_test', fetch: fakeFetch().fetch });
    expect(sdkMethods(client)).toEqual(Object.keys(calls).sort());
    for (const [name, requests] of recorded) expect(requests.length, name).toBeGreaterThan(0);
    expect(recorded.get('sessions.liveInbox.queueOrSend')!.map((r) => `${r.method} ${new URL(r.url).pathname}`)).toEqual([
      'POST /v1/awaken/sessions/sess_1/live-inbox', 'POST /v1/sessions/sess_1/events',
    ]);
  });

  it('sends only documented operations, query parameters, headers and bodies', () => {
    const problems: string[] = [];
    for (const [name, requests] of recorded) {
      for (const req of requests) {
        const where = `${name}: ${req.method} ${req.url}`;
        const match = operationOf(req);
        if (!match) {
          problems.push(`${where}: no such operation in the document`);
          continue;
        }
        const parameters = ((match.op.parameters ?? []) as Json[]).map(deref);
        // Query parameters: documented by name, and their values valid.
        for (const [key, value] of new URL(req.url).searchParams) {
          const param = parameters.find((p) => p.in === 'query' && p.name === key);
          if (!param) problems.push(`${where}: query parameter "${key}" is not documented`);
          else if (!queryAjv.validate(param.schema, value)) problems.push(`${where}: query ${key}=${value}: ${queryAjv.errorsText()}`);
        }
        // Headers beyond HTTP's own: documented header parameters.
        for (const header of ['x-account-id', 'last-event-id']) {
          if (req.headers.has(header) && !(header === 'last-event-id' || parameters.some((p) => p.in === 'header' && p.name === header))) {
            problems.push(`${where}: header ${header} is not documented`);
          }
        }
        // Body: documented, and valid against the documented schema (field names included).
        const requestBody = match.op.requestBody && deref(match.op.requestBody);
        if (req.body !== undefined) {
          const schema = requestBody?.content?.['application/json']?.schema;
          if (!schema) problems.push(`${where}: sends a body the document does not describe`);
          else if (!ajv.validate(deref(schema), req.body)) problems.push(`${where}: body ${JSON.stringify(req.body)}: ${ajv.errorsText()}`);
        } else if (requestBody?.required) {
          problems.push(`${where}: sends no body but the document requires one`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('has a method for every documented operation', () => {
    const exercised = new Set<string>();
    for (const requests of recorded.values()) {
      for (const req of requests) {
        const match = operationOf(req);
        if (match) exercised.add(`${match.method} ${match.path}`);
      }
    }
    const documented = operations().filter((o) => !NOT_FOR_THE_SDK(o.path)).map((o) => `${o.method} ${o.path}`);
    expect(documented.length).toBeGreaterThan(25);
    expect(documented.filter((o) => !exercised.has(o))).toEqual([]);
  });
});
