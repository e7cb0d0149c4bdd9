#!/usr/bin/env node
/**
 * `node bench/serializers.mjs`: what checking responses against their zod schemas costs, per
 * route — the serialiser of `fastify-type-provider-zod` (`safeParse`, then `JSON.stringify` of the
 * parsed copy; what every answer paid before `responseValidation`) against `JSON.stringify` (what
 * production does now). Needs the built packages (`pnpm build`).
 *
 * A server like the README's (inbox-kit plugin on a SQLite temp file, the Live Inbox with a model
 * whose step never ends) answers one scripted request per route through `inject`; an `onRoute`
 * hook gives every route a serialiser that keeps the schema and the last data it serialised. Then,
 * per route and status, both serialisers run in alternating rounds on that data (same process,
 * same data, a warm-up first) and the µs per answer of each is printed, with the saving. The
 * list page is filled with 50 items like the benchmark's (CJK titles, small payloads).
 *
 * Options: --seconds=<s> per measurement (default 0.5).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import Fastify from 'fastify';
import { serializerCompiler as zodSerializerCompiler } from 'fastify-type-provider-zod';
import {
  LiveInboxHost, PlatformService, ProjectInboxService, SessionRuntimeService, createIdGenerator, createLocalEventBus, systemClock,
} from '@inbox-kit/core';
import { inboxKit } from '@inbox-kit/http-fastify';
import { openStore } from '@inbox-kit/storage-kysely';

const seconds = Number(process.argv.find((a) => a.startsWith('--seconds='))?.split('=')[1] ?? 0.5);
const dir = mkdtempSync(join(os.tmpdir(), 'inbox-kit-serializers-'));
const { store } = await openStore({ sqliteFile: join(dir, 'inbox-kit.sqlite') });
const deps = { store, bus: createLocalEventBus(), clock: systemClock, ids: createIdGenerator() };
const never = { step: (_t, signal) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true })) };
const platform = new PlatformService(deps);
const runtime = new SessionRuntimeService({ ...deps, host: new LiveInboxHost(), model: never });

/** `METHOD url status` → { schema, data } of the last answer. */
const seen = new Map();
const app = Fastify({ logger: false });
app.addHook('onRoute', (route) => {
  route.serializerCompiler = ({ schema, method, url, httpStatus }) => (data) => {
    seen.set(`${method} ${url} ${httpStatus}`, { schema, data: structuredClone(data) });
    return JSON.stringify(data);
  };
});
await app.register(inboxKit, { services: { platform, projectInbox: new ProjectInboxService(deps), runtime }, openapi: false, responseValidation: false });
await app.ready();

await platform.createWorkspace({ id: 'ws_main', name: 'Main' });
await platform.createAccount({ id: 'acc_owner', name: 'Owner', workspace_ids: ['ws_main'] });
await platform.createAccount({ id: 'acc_deriver', name: 'Deriver', workspace_ids: ['ws_main'] });
const owner = (await platform.issueApiKey({ workspace_id: 'ws_main', account_id: 'acc_owner' })).secret;
const deriver = (await platform.issueApiKey({ workspace_id: 'ws_main', account_id: 'acc_deriver' })).secret;

async function call(method, url, { key = owner, body } = {}) {
  const res = await app.inject({ method, url, headers: { authorization: `Bearer ${key}` }, ...(body === undefined ? {} : { payload: body }) });
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.statusCode === 204 ? undefined : res.json();
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
await app.inject({ method: 'GET', url: '/health' });

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

const rows = [];
for (const [route, { schema, data }] of [...seen].sort(([a], [b]) => a.localeCompare(b))) {
  if (data === undefined) continue;
  const [method, url, status] = route.split(' ');
  const zod = zodSerializerCompiler({ schema, method, url, httpStatus: status });
  const plain = (d) => JSON.stringify(d);
  if (zod(data) !== plain(data)) console.warn(`${route}: the zod serialiser's bytes differ from JSON.stringify's`);
  const us = { zod: [], plain: [] };
  rate(seconds / 2, () => zod(data));
  rate(seconds / 2, () => plain(data));
  for (let round = 0; round < 3; round++) {
    us.zod.push(1e6 / rate(seconds / 3, () => zod(data)));
    us.plain.push(1e6 / rate(seconds / 3, () => plain(data)));
  }
  const best = (xs) => Math.min(...xs);
  rows.push({ route, bytes: Buffer.byteLength(plain(data)), zod_us: best(us.zod), stringify_us: best(us.plain) });
}

const pad = (s, n, left = false) => (left ? String(s).padEnd(n) : String(s).padStart(n));
console.log(`response serialisation per answer (µs, best of 3 rounds of ${seconds / 3} s; node ${process.version}, ${os.cpus().length} CPUs)`);
console.log(`${pad('route', 58, true)}${pad('bytes', 8)}${pad('zod check', 11)}${pad('stringify', 11)}${pad('saved', 9)}`);
for (const r of rows) {
  console.log(`${pad(r.route, 58, true)}${pad(r.bytes, 8)}${pad(r.zod_us.toFixed(1), 11)}${pad(r.stringify_us.toFixed(1), 11)}${pad((r.zod_us - r.stringify_us).toFixed(1), 9)}`);
}
await runtime.close?.();
await app.close();
await store.close();
rmSync(dir, { recursive: true, force: true });
