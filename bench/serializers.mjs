#!/usr/bin/env node
/**
 * `node bench/serializers.mjs`: the pipeline's response policy, per route and per adapter
 * (platform.md "HTTP adapters" → "Responses"; `responseText` of `@inbox-kit/core/http`). Needs the
 * built packages (`pnpm build`).
 *
 * 1. Per route: one scripted request of every route through `createHttpHandler` (the pipeline
 *    every adapter runs; inbox-kit on a SQLite temp file, the Live Inbox with a model whose step
 *    never ends), the answer's data kept (its body parsed back: the services' data is JSON). Then,
 *    per route and status, in alternating rounds on that data (same process, same data, a warm-up
 *    first), the µs per answer of: the check outside production (`responseText(schema, data,
 *    true)`: zod parse, then the bytes compared), production (`responseText(…, false)`:
 *    `JSON.stringify`), and a serialiser compiled from the route's JSON Schema
 *    (`fast-json-stringify`, what Fastify would compile; the bytes it gives must parse to the
 *    same JSON). The list page is filled with 50 items like the benchmark's (CJK titles, small
 *    payloads).
 * 2. Per adapter (the Fastify plugin `inboxKit`, the `createServer` preset, `inboxKitHono`), built
 *    under `NODE_ENV=production` with no `responseValidation` option, and again outside production:
 *    whether the answer is re-validated (a service answer with a field the schema does not know is
 *    answered 200 as it is in production, and 500 outside it). Exits 1 when an adapter re-validates
 *    in production.
 *
 * Options: --seconds=<s> per measurement (default 0.5).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import fastJsonStringify from 'fast-json-stringify';
import { z } from 'zod';
import {
  LiveInboxHost, PlatformService, ProjectInboxService, SessionRuntimeService, createIdGenerator, createLocalEventBus, systemClock,
} from '@inbox-kit/core';
import { createHttpHandler, httpRoutesFor, responseText } from '@inbox-kit/core/http';
import { inboxKit } from '@inbox-kit/http-fastify';
import { createServer } from '@inbox-kit/http-fastify/server';
import { inboxKitHono } from '@inbox-kit/http-hono';
import { openStore } from '@inbox-kit/storage-kysely';
import Fastify from 'fastify';

const seconds = Number(process.argv.find((a) => a.startsWith('--seconds='))?.split('=')[1] ?? 0.5);
const dir = mkdtempSync(join(os.tmpdir(), 'inbox-kit-serializers-'));
const { store } = await openStore({ sqliteFile: join(dir, 'inbox-kit.sqlite') });
const deps = { store, bus: createLocalEventBus(), clock: systemClock, ids: createIdGenerator() };
const never = { step: (_t, signal) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true })) };
const platform = new PlatformService(deps);
const runtime = new SessionRuntimeService({ ...deps, host: new LiveInboxHost(), model: never });
const services = { platform, projectInbox: new ProjectInboxService(deps), runtime };
const routes = new Map(httpRoutesFor(services).map((r) => [`${r.method} ${r.path}`, r]));

// — 1. per route —

/** `METHOD template status` → { schema, data } of the last answer. */
const seen = new Map();
let template;
const handler = createHttpHandler({
  services, responseValidation: false, loadShedding: false, openapi: false,
  observer: { request: ({ route }) => void (template = route) },
});

await platform.createWorkspace({ id: 'ws_main', name: 'Main' });
await platform.createAccount({ id: 'acc_owner', name: 'Owner', workspace_ids: ['ws_main'] });
await platform.createAccount({ id: 'acc_deriver', name: 'Deriver', workspace_ids: ['ws_main'] });
const owner = (await platform.issueApiKey({ workspace_id: 'ws_main', account_id: 'acc_owner' })).secret;
const deriver = (await platform.issueApiKey({ workspace_id: 'ws_main', account_id: 'acc_deriver' })).secret;

const bodyOf = (bytes) => ({ async* [Symbol.asyncIterator]() { yield bytes; } });

async function call(method, url, { key = owner, body } = {}) {
  const bytes = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  const headers = { authorization: `Bearer ${key}`, ...(bytes ? { 'content-type': 'application/json', 'content-length': String(bytes.byteLength) } : {}) };
  template = undefined;
  const answer = await handler.handle({ method, url, headers, body: bytes ? bodyOf(bytes) : null, remoteAddress: '127.0.0.1' });
  if (answer.status >= 300) throw new Error(`${method} ${url}: ${answer.status} ${answer.body}`);
  if (answer.body === undefined) return undefined;
  const data = JSON.parse(answer.body);
  const route = routes.get(`${method} ${template}`);
  if (route) seen.set(`${method} ${template} ${answer.status}`, { schema: route.response, data });
  return data;
}

await call('GET', '/me');
const { project } = await call('POST', '/projects', { body: { name: 'Main' } });
await call('GET', '/projects');
await call('GET', `/projects/${project.id}`);
await call('POST', `/projects/${project.id}/members`, { body: { account_id: 'acc_deriver', role: 'deriver' } });
await call('GET', `/projects/${project.id}/members`);
const { session } = await call('POST', '/sessions', { body: { project_id: project.id, title: '会话' } });
await call('GET', '/sessions');
await call('GET', `/sessions/${session.id}`);
const turn = await call('POST', `/sessions/${session.id}/floors`, { body: { content: { text: 'A turn' } } });
await call('GET', `/sessions/${session.id}/floors`);
await call('POST', `/sessions/${session.id}/floors/${turn.floor.id}/pages`, { body: { content: { text: 'Again' } } });
await call('GET', `/sessions/${session.id}/floors/${turn.floor.id}/pages`);
let item;
for (let i = 0; i < 50; i++) {
  ({ item } = await call('POST', `/projects/${project.id}/inbox`, {
    key: deriver,
    body: { type: 'derived_output.review', title: `候选摘要待确认 #${i}`, payload: { derived_output_id: `dout_${i}`, suggested_action: 'review' }, source_session_id: session.id },
  }));
}
await call('GET', `/projects/${project.id}/inbox?limit=50`);
await call('GET', `/projects/${project.id}/inbox/${item.id}`);
await call('PATCH', `/projects/${project.id}/inbox/${item.id}`, { body: { decision: 'accept', note: '已确认。' } });
await call('GET', `/projects/${project.id}/events?limit=50`);
await call('GET', `/projects/${project.id}/operation-logs?limit=50`);
await call('POST', `/v1/sessions/${session.id}/events`, { body: { events: [{ type: 'user.message', content: [{ type: 'text', text: 'Summarise the repository.' }] }] } });
for (let i = 0; i < 100 && !(await call('GET', `/v1/awaken/sessions/${session.id}/live-inbox`)).active; i++) await new Promise((r) => setTimeout(r, 10));
for (let i = 0; i < 10; i++) await call('POST', `/v1/awaken/sessions/${session.id}/live-inbox`, { body: { content: [{ type: 'text', text: `Queued note ${i}: mind the edge cases.` }] } });
await call('GET', `/v1/awaken/sessions/${session.id}/live-inbox`);
await call('GET', `/v1/sessions/${session.id}/events`);
await call('POST', `/projects/${project.id}/archive`);
await call('GET', '/health', { key: undefined });

/** Calls per second of `fn` over `s` seconds. */
function rate(s, fn) {
  const end = performance.now() + s * 1000;
  let n = 0;
  let now = performance.now();
  const started = now;
  while (now < end) {
    for (let i = 0; i < 10; i++) fn();
    n += 10;
    now = performance.now();
  }
  return n / ((now - started) / 1000);
}

/** A `fast-json-stringify` serialiser of `schema`'s JSON Schema (the output side), or a note why not. */
function compiled(schema) {
  try {
    return fastJsonStringify(z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any', target: 'draft-7' }));
  } catch (error) {
    return String(error.message).split('\n')[0].slice(0, 60);
  }
}

const rows = [];
for (const [route, { schema, data }] of [...seen].sort(([a], [b]) => a.localeCompare(b))) {
  const operationId = route;
  const check = (d) => responseText(schema, d, true, operationId);
  const production = (d) => responseText(schema, d, false, operationId);
  const fjs = compiled(schema);
  const fast = typeof fjs === 'function' ? fjs : undefined;
  let fastNote = typeof fjs === 'string' ? fjs : '';
  check(data); // a mismatch throws: the data is the answer a test would accept
  if (fast && JSON.stringify(JSON.parse(fast(data))) !== JSON.stringify(JSON.parse(production(data)))) fastNote = 'differs from JSON.stringify';
  const runs = { check: [], production: [], fast: [] };
  rate(seconds / 2, () => check(data));
  rate(seconds / 2, () => production(data));
  if (fast) rate(seconds / 2, () => fast(data));
  for (let round = 0; round < 3; round++) {
    runs.check.push(1e6 / rate(seconds / 3, () => check(data)));
    runs.production.push(1e6 / rate(seconds / 3, () => production(data)));
    if (fast) runs.fast.push(1e6 / rate(seconds / 3, () => fast(data)));
  }
  const best = (xs) => (xs.length ? Math.min(...xs) : undefined);
  rows.push({ route, bytes: Buffer.byteLength(production(data)), check_us: best(runs.check), production_us: best(runs.production), compiled_us: best(runs.fast), note: fastNote });
}

const pad = (s, n, left = false) => (left ? String(s ?? '–').padEnd(n) : String(s ?? '–').padStart(n));
const us = (v) => (v === undefined ? '–' : v.toFixed(1));
console.log(`response serialisation per answer (µs, best of 3 rounds of ${(seconds / 3).toFixed(2)} s; node ${process.version}, ${os.cpus().length} CPUs, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' / ')})`);
console.log('check = responseText(…, validate: true) (outside production); production = responseText(…, false) (JSON.stringify); compiled = fast-json-stringify of the route\'s JSON Schema');
console.log(`${pad('route', 62, true)}${pad('bytes', 8)}${pad('check', 9)}${pad('production', 12)}${pad('compiled', 10)}${pad('check − prod', 14)}  note`);
for (const r of rows) {
  console.log(`${pad(r.route, 62, true)}${pad(r.bytes, 8)}${pad(us(r.check_us), 9)}${pad(us(r.production_us), 12)}${pad(us(r.compiled_us), 10)}${pad(us(r.check_us - r.production_us), 14)}  ${r.note}`);
}
const withCompiled = rows.filter((r) => r.compiled_us !== undefined);
const sum = (key) => withCompiled.reduce((s, r) => s + r[key], 0);
console.log(`over the ${withCompiled.length} routes with a compiled serialiser: production ${us(sum('production_us'))} µs, compiled ${us(sum('compiled_us'))} µs (compiled ÷ production ${(sum('compiled_us') / sum('production_us')).toFixed(2)})`);
handler.close();

// — 2. per adapter: is the answer re-validated in production? —

/** Services whose `GET /me` answers a field its schema does not know (what a re-validating adapter refuses 500). */
const drifting = {
  ...services,
  platform: new Proxy(platform, {
    get(target, name) {
      const value = Reflect.get(target, name);
      if (name !== 'identity') return typeof value === 'function' ? value.bind(target) : value;
      return new Proxy(value, {
        get(identity, method) {
          const fn = Reflect.get(identity, method);
          if (method !== 'whoami') return typeof fn === 'function' ? fn.bind(identity) : fn;
          return async (...args) => ({ ...(await fn.apply(identity, args)), not_in_the_schema: true });
        },
      });
    },
  }),
};
const adapters = {
  'inboxKit (Fastify plugin)': async () => {
    const app = Fastify({ logger: false });
    await app.register(inboxKit, { services: drifting, openapi: false });
    return { status: async () => (await app.inject({ method: 'GET', url: '/me', headers: { authorization: `Bearer ${owner}` } })).statusCode, close: () => app.close() };
  },
  'createServer (Fastify preset)': async () => {
    const app = await createServer({ services: drifting, underPressure: false });
    return { status: async () => (await app.inject({ method: 'GET', url: '/me', headers: { authorization: `Bearer ${owner}` } })).statusCode, close: () => app.close() };
  },
  'inboxKitHono (Hono)': async () => {
    const hono = inboxKitHono({ services: drifting, openapi: false, loadShedding: false, reportError: () => {} });
    return { status: async () => (await hono.app.request('/me', { headers: { authorization: `Bearer ${owner}` } })).status, close: () => hono.close() };
  },
};
const savedEnv = process.env.NODE_ENV;
let revalidated = 0;
console.log('\nresponse policy per adapter (no responseValidation option; GET /me answering a field its schema does not know):');
for (const [name, build] of Object.entries(adapters)) {
  const statuses = {};
  for (const env of ['production', 'test']) {
    process.env.NODE_ENV = env;
    const adapter = await build();
    statuses[env] = await adapter.status();
    await adapter.close();
  }
  const ok = statuses.production === 200 && statuses.test === 500;
  if (statuses.production !== 200) revalidated++;
  console.log(`  ${pad(name, 32, true)} NODE_ENV=production: ${statuses.production} (${statuses.production === 200 ? 'JSON.stringify, not re-validated' : 're-validated!'}); NODE_ENV=test: ${statuses.test} (${statuses.test === 500 ? 'checked' : 'not checked!'})${ok ? '' : '  ← unexpected'}`);
}
process.env.NODE_ENV = savedEnv;

await runtime.close?.();
await store.close();
rmSync(dir, { recursive: true, force: true });
if (revalidated > 0) process.exitCode = 1;
